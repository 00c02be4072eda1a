import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { setTemplateSrv } from '@grafana/runtime';

import { QueryEditor } from './QueryEditor';
import { ConfigEditor } from './ConfigEditor';
import { thresholdError } from './config/SaturationSettings';
import { FakeResources, FakeTemplateSrv, makeDataSource, makeSettings } from '../testing/fixtures';
import { pickOne } from '../testing/combobox';
import { validateQuery } from '../queryValidation';
import { VllmQuery } from '../types';

const RESOURCES: FakeResources = { models: ['llama-3-8b'], instances: ['gpu-a:8000'], engines: ['0'] };

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource(RESOURCES);
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

function last<T>(mock: jest.Mock): T {
  expect(mock).toHaveBeenCalled();
  return mock.mock.calls[mock.mock.calls.length - 1][0];
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({}));
});

describe('QueryEditor: fleet', () => {
  it('switching to fleet drops a grouping the fleet table cannot take, and runs at once', async () => {
    const { onChange, onRunQuery } = setup({ refId: 'A', queryType: 'queue', grouping: 'model' });
    await pickOne('Query', 'Fleet');
    const q = last<VllmQuery>(onChange);
    expect(q.queryType).toBe('fleet');
    expect(q.grouping).toBeUndefined();
    expect(validateQuery(q)).toEqual({});
    expect(onRunQuery).toHaveBeenCalled();
  });

  it('shows filters and matchers but no grouping, legend or output', () => {
    setup({ refId: 'A', queryType: 'fleet' });
    expect(screen.queryByText('Group by', { selector: 'label' })).toBeNull();
    expect(screen.queryByText('Legend', { selector: 'label' })).toBeNull();
    expect(screen.queryByText('Output', { selector: 'label' })).toBeNull();
    expect(screen.getByText('Models', { selector: 'label' })).toBeInTheDocument();
  });

  it('rejects a grouping or format the backend refuses', () => {
    expect(validateQuery({ refId: 'A', queryType: 'fleet', grouping: 'model' }).grouping).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'fleet', format: 'series' }).format).toContain('table');
  });
});

describe('QueryEditor: saturation', () => {
  it('defaults to series and table, grouped by instance', async () => {
    const { onChange, onRunQuery } = setup({ refId: 'A', queryType: 'queue', grouping: 'none' });
    await pickOne('Query', 'Saturation');
    const q = last<VllmQuery>(onChange);
    expect(q).toEqual({ refId: 'A', queryType: 'saturation', grouping: 'instance' });
    expect(onRunQuery).toHaveBeenCalled();
  });

  it('writes the output format', () => {
    const { onChange } = setup({ refId: 'A', queryType: 'saturation' });
    expect(screen.getByRole('radio', { name: 'Series + table' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Model' })).toBeNull();
    fireEvent.click(screen.getByRole('radio', { name: 'Table only' }));
    expect(last<VllmQuery>(onChange).format).toBe('table');
  });

  it('rejects an unknown output format and a fleet-wide grouping', () => {
    const errors = validateQuery({ refId: 'A', queryType: 'saturation', format: 'pie' as never, grouping: 'none' });
    expect(errors.format).toContain('pie');
    expect(errors.grouping).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'saturation', format: '$fmt' as never })).toEqual({});
  });
});

describe('ConfigEditor: saturation thresholds', () => {
  it('shows the defaults as placeholders and writes numbers', () => {
    const onOptionsChange = jest.fn();
    const options = makeSettings({ jsonData: {} });
    render(<ConfigEditor options={options} onOptionsChange={onOptionsChange} />);
    // The section starts collapsed while no threshold is saved.
    fireEvent.click(screen.getByRole('button', { name: 'Expand section Diagnosis thresholds' }));
    expect(screen.getByLabelText('KV cache near full')).toHaveAttribute('placeholder', '0.9');
    expect(screen.getByLabelText('Queue')).toHaveAttribute('placeholder', '1');
    expect(screen.getByLabelText('Preemptions/s')).toHaveAttribute('placeholder', '0.01');
    expect(screen.getByLabelText('Idle below')).toHaveAttribute('placeholder', '0.1');
    fireEvent.change(screen.getByLabelText('KV cache near full'), { target: { value: '0.95' } });
    expect(last<{ jsonData: Record<string, unknown> }>(onOptionsChange).jsonData.saturationKvHigh).toBe(0.95);
  });

  it('clears a threshold back to its default', () => {
    const onOptionsChange = jest.fn();
    render(
      <ConfigEditor options={makeSettings({ jsonData: { saturationQueue: 3 } })} onOptionsChange={onOptionsChange} />
    );
    fireEvent.change(screen.getByLabelText('Queue'), { target: { value: '' } });
    expect(last<{ jsonData: Record<string, unknown> }>(onOptionsChange).jsonData).not.toHaveProperty('saturationQueue');
  });

  it.each([
    [0.9, 1, undefined],
    [1, 1, undefined],
    [1.5, 1, 'at most 1'],
    [0, undefined, 'above 0'],
    [-2, undefined, 'above 0'],
    [Number.NaN, undefined, 'above 0'],
  ])('threshold %p (max %p) → %p', (value, max, error) => {
    const got = thresholdError(value, max);
    if (error === undefined) {
      expect(got).toBeUndefined();
    } else {
      expect(got).toContain(error);
    }
  });
});
