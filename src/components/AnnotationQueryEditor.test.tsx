import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { setTemplateSrv } from '@grafana/runtime';

import { AnnotationQueryEditor } from './AnnotationQueryEditor';
import { FakeTemplateSrv, makeDataSource } from '../testing/fixtures';
import { annotationSupport } from '../annotations';
import { VllmQuery } from '../types';

beforeEach(() => setTemplateSrv(new FakeTemplateSrv({})));

/** Renders the editor the way Grafana's annotation editor does: the default query under the annotation's target. */
function setup(target: Partial<VllmQuery> = {}) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource({ models: ['llama-3-8b'] });
  const query = { ...annotationSupport.getDefaultQuery!(), refId: 'Anno', ...target } as VllmQuery;
  render(<AnnotationQueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery, query };
}

describe('AnnotationQueryEditor', () => {
  it('is the data source annotation editor', () => {
    expect(annotationSupport.QueryEditor).toBe(AnnotationQueryEditor);
  });

  it('starts with preemption events and offers no series switch', () => {
    setup();
    expect(screen.getByLabelText('Query')).toHaveValue('Preemptions');
    expect(screen.queryByRole('radio', { name: 'Rate series' })).not.toBeInTheDocument();
    expect(screen.queryByText('Group by')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Models')).toBeInTheDocument();
  });

  it('edits the annotation query like a panel query', async () => {
    const { onChange, onRunQuery, query } = setup();
    const minStep = screen.getByLabelText('Min step');
    fireEvent.change(minStep, { target: { value: '1m' } });
    expect(onChange).toHaveBeenLastCalledWith({ ...query, interval: '1m' });
    fireEvent.blur(minStep);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('still shows the full editor for other query types', () => {
    setup({ queryType: 'topk' });
    expect(screen.getByLabelText('k')).toBeInTheDocument();
    expect(screen.getByText('Group by')).toBeInTheDocument();
  });
});
