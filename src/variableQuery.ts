import { DEFAULT_VARIABLE_QUERY, VllmVariableQuery, VllmVariableResource } from './types';

/*
 * Normalising a query variable's stored query lives apart from variables.ts: the variable editor needs it, and
 * variables.ts imports the editor, so keeping it there would close an import circle.
 */
const RESOURCES: VllmVariableResource[] = ['models', 'instances', 'engines', 'clusters', 'namespaces'];

/**
 * Accepts whatever Grafana stores as a variable's query: our object, nothing (a new variable), or a string (a
 * variable created by hand or provisioned as "instances"); unknown input lists models.
 */
export function normalizeVariableQuery(query: VllmVariableQuery | string | undefined | null): VllmVariableQuery {
  if (typeof query === 'string') {
    const resource = RESOURCES.find((r) => r === query.trim());
    return { ...DEFAULT_VARIABLE_QUERY, resource: resource ?? 'models' };
  }
  if (!query || !RESOURCES.includes(query.resource)) {
    return { ...DEFAULT_VARIABLE_QUERY, ...query, resource: 'models' };
  }
  return query;
}
