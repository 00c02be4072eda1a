import React from 'react';
import { render, screen } from '@testing-library/react';
import { setTemplateSrv } from '@grafana/runtime';

import { QueryEditor } from '../QueryEditor';
import { FakeTemplateSrv, makeDataSource } from '../../testing/fixtures';
import { pickOne } from '../../testing/combobox';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource({ models: [], instances: [], engines: [] });
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({}));
});

const base: VllmQuery = { refId: 'A', queryType: 'waitTime' };

describe('QueryEditor: waitTime format', () => {
  it('shows quantiles and the live wait for the default series format', () => {
    setup(base);
    expect(screen.getByLabelText('Quantiles')).toBeInTheDocument();
    expect(screen.getByLabelText('Live wait')).toBeInTheDocument();
  });

  it('hides the quantiles and the live wait for a heatmap, keeping the latency family', () => {
    setup({ ...base, format: 'heatmap', family: 'ttft' });
    expect(screen.queryByLabelText('Quantiles')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Live wait')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Latency')).toBeInTheDocument();
  });

  it('picks the heatmap format and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await pickOne('Format', 'Heatmap');
    expect(onChange).toHaveBeenCalledWith({ ...base, format: 'heatmap' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a format the backend would reject', () => {
    expect(validateQuery({ ...base, format: 'histogram' as VllmQuery['format'] }).format).toBeDefined();
    expect(validateQuery({ ...base, format: 'heatmap' }).format).toBeUndefined();
  });
});
