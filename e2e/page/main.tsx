/*
 * Test page for the browser check (e2e/browser-check.mjs): the real ConfigEditor and QueryEditor, with a fake
 * backend, and the current settings / query as JSON so the driver can check what the editors wrote.
 */
import React, { useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { CoreApp } from '@grafana/data';
import { GlobalStyles } from '@grafana/ui';

import { ConfigEditor } from '../../src/components/ConfigEditor';
import { QueryEditor } from '../../src/components/QueryEditor';
import { VllmQuery } from '../../src/types';
import { initialSettings, installTemplateVariables, makeFakeDataSource, resourceCalls } from './fakes';

installTemplateVariables();
// The driver reads which resource routes the editors asked for.
const runLog: VllmQuery[] = [];
Object.assign(window, { __vllmResourceCalls: resourceCalls, __vllmRuns: runLog });

function App() {
  const datasource = useMemo(() => makeFakeDataSource(), []);
  const [settings, setSettings] = useState(initialSettings);
  const [query, setQuery] = useState<VllmQuery>(
    () => ({ refId: 'A', ...datasource.getDefaultQuery(CoreApp.Dashboard) }) as VllmQuery
  );
  const [runs, setRuns] = useState(0);
  // Like Grafana, run what the editor last handed to onChange; the log tells the driver which queries ran.
  const latest = useRef(query);
  const onChange = (next: VllmQuery) => {
    latest.current = next;
    setQuery(next);
  };
  const onRunQuery = () => {
    runLog.push(latest.current);
    setRuns((n) => n + 1);
  };

  return (
    <>
      <GlobalStyles />
      <main style={{ padding: 16, display: 'flex', flexDirection: 'column', gap: 24, maxWidth: 1200 }}>
        <section data-testid="config-editor" style={{ padding: 8 }}>
          <h3>Config editor</h3>
          <ConfigEditor options={settings} onOptionsChange={setSettings} />
        </section>
        <section data-testid="query-editor" style={{ padding: 8, minHeight: 260 }}>
          <h3>Query editor</h3>
          <QueryEditor datasource={datasource} query={query} onChange={onChange} onRunQuery={onRunQuery} />
        </section>
        <section>
          <pre data-testid="query-json">{JSON.stringify(query)}</pre>
          <pre data-testid="settings-json">
            {JSON.stringify({ jsonData: settings.jsonData, secureJsonFields: settings.secureJsonFields })}
          </pre>
          <pre data-testid="runs">{runs}</pre>
        </section>
        {/* Room below, so the query editor can be scrolled to the top and its menus open downwards. */}
        <div style={{ height: 800 }} />
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
