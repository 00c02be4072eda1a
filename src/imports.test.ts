import { existsSync, readFileSync, readdirSync, statSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';

/**
 * src/ must have no import circle, type-only imports included: a circle makes module initialisation order depend
 * on which file is loaded first, and it ties the editors to the DataSource class. The editors depend on the
 * interfaces in types.ts (VllmDataSourceApi, VllmResourceApi) instead.
 */

const SRC = resolve(__dirname);
const EXTENSIONS = ['.ts', '.tsx'];

// import … from '…', export … from '…', import '…', import('…'), require('…'); multi-line import lists included.
const SPECIFIERS = [
  /\b(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\b(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g,
];

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      return sourceFiles(path);
    }
    return EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names, or undefined for a package or a non-source file (JSON, CSS, images). */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) {
    return undefined;
  }
  const base = resolve(dirname(from), specifier);
  const candidates = [...EXTENSIONS.map((ext) => base + ext), ...EXTENSIONS.map((ext) => join(base, 'index' + ext))];
  return candidates.find((path) => existsSync(path));
}

/** The relative imports of one file's text. */
function importsOf(file: string, text: string): string[] {
  const out = new Set<string>();
  for (const pattern of SPECIFIERS) {
    for (const match of text.matchAll(pattern)) {
      const target = resolveSpecifier(file, match[1]);
      if (target) {
        out.add(target);
      }
    }
  }
  return [...out];
}

/** The first circle found by depth-first search, as the list of files from its start back to it; [] when none. */
function findCycle(graph: Graph): string[] {
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (node: string): string[] => {
    const at = onPath.indexOf(node);
    if (at >= 0) {
      return [...onPath.slice(at), node];
    }
    if (done.has(node)) {
      return [];
    }
    onPath.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle.length > 0) {
        return cycle;
      }
    }
    onPath.pop();
    done.add(node);
    return [];
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle.length > 0) {
      return cycle;
    }
  }
  return [];
}

describe('findCycle', () => {
  const tests: Array<{ name: string; edges: Record<string, string[]>; want: string[] }> = [
    { name: 'no edges', edges: { a: [] }, want: [] },
    { name: 'a diamond is no circle', edges: { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, want: [] },
    { name: 'self import', edges: { a: ['a'] }, want: ['a', 'a'] },
    { name: 'two files', edges: { a: ['b'], b: ['a'] }, want: ['a', 'b', 'a'] },
    { name: 'behind a tail', edges: { a: ['b'], b: ['c'], c: ['d'], d: ['b'] }, want: ['b', 'c', 'd', 'b'] },
  ];
  it.each(tests)('$name', ({ edges, want }) => {
    expect(findCycle(new Map(Object.entries(edges)))).toEqual(want);
  });
});

describe('importsOf', () => {
  it('reads type-only, multi-line, re-export and dynamic imports, and skips packages', () => {
    const file = join(SRC, 'components', 'QueryEditor.tsx');
    const text = [
      "import React from 'react';",
      "import type { DataSource } from '../datasource';",
      'import {\n  VllmQuery,\n  VllmGrouping,\n} from "../types";',
      "export { annotationSupport } from '../annotations';",
      "const lazy = import('./query/SloOptions');",
    ].join('\n');
    const got = importsOf(file, text).map((path) => relative(SRC, path));
    expect(got.sort()).toEqual(['annotations.ts', 'components/query/SloOptions.tsx', 'datasource.ts', 'types.ts']);
  });
});

describe('src imports', () => {
  it('have no circle', () => {
    const graph: Graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file, readFileSync(file, 'utf8'))]));
    expect(graph.size).toBeGreaterThan(10);
    expect(findCycle(graph).map((path) => relative(SRC, path))).toEqual([]);
  });
});
