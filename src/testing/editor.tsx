import React from 'react';
import { render } from '@testing-library/react';
import { setTemplateSrv } from '@grafana/runtime';

import { QueryEditor } from '../components/QueryEditor';
import { VllmQuery } from '../types';
import { FakeTemplateSrv, makeDataSource } from './fixtures';

/** Renders the query editor for query over a data source with no models, instances or engines; returns its callbacks. */
export function renderQueryEditor(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource({ models: [], instances: [], engines: [] });
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

/** Gives every test of the file a template service without dashboard variables. */
export function withoutVariables() {
  beforeEach(() => {
    setTemplateSrv(new FakeTemplateSrv({}));
  });
}
