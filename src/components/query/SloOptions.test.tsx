import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { setTemplateSrv } from '@grafana/runtime';

import { QueryEditor } from '../QueryEditor';
import { FakeTemplateSrv, makeDataSource } from '../../testing/fixtures';
import { pickOne } from '../../testing/combobox';
import { VllmQuery } from '../../types';

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource({ models: [], instances: [], engines: [] });
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery, ds };
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ t: '0.5', target: '0.995', w: '7d' }));
});

const base: VllmQuery = { refId: 'A', queryType: 'slo' };

describe('QueryEditor: slo', () => {
  it('shows the backend defaults, grouped by model, so a new query shows data at once', () => {
    setup(base);
    expect(screen.getByLabelText('Latency')).toHaveValue('Time to first token');
    expect(screen.getByLabelText('Threshold (s)')).toHaveAttribute('placeholder', '1');
    expect(screen.getByLabelText('Target')).toHaveAttribute('placeholder', '0.99');
    expect(screen.getByLabelText('Window')).toHaveAttribute('placeholder', '28d');
    expect(screen.getByRole('radio', { name: 'Model' })).toBeChecked();
  });

  it('is offered as a query type and keeps the other fields', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', legend: '{{model_name}}' };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'SLO');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'slo' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('commits the threshold as a number on blur, runs, and says where it snaps', async () => {
    const { onChange, onRunQuery } = setup(base);
    const input = screen.getByLabelText('Threshold (s)');
    await userEvent.type(input, '0.7');
    fireEvent.blur(input);
    expect(onChange).toHaveBeenCalledWith({ ...base, threshold: 0.7 });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows the snap hint for a threshold off the bounds', () => {
    setup({ ...base, family: 'itl', threshold: 0.06 });
    expect(screen.getByText('0.06 s is not a bucket bound of this histogram: 0.05 s will be used')).toBeInTheDocument();
  });

  it('flags a target of 99 and does not run the query', async () => {
    const { onChange, onRunQuery } = setup(base);
    const input = screen.getByLabelText('Target');
    await userEvent.type(input, '99{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, target: 99 });
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('shows the error of an objective kind the backend does not know (from hand-written JSON)', () => {
    setup({ ...base, objective: 'uptime' as never });
    expect(screen.getByText('Unknown objective "uptime"; pick one from the list or a variable')).toBeInTheDocument();
  });

  it('shows the error of a stored bad window', () => {
    setup({ ...base, window: '5m' });
    expect(screen.getByText('Window must be from 1h to 366d')).toBeInTheDocument();
  });

  it('clearing the window goes back to the default', () => {
    const { onChange } = setup({ ...base, window: '7d' });
    const input = screen.getByLabelText('Window');
    fireEvent.change(input, { target: { value: '' } });
    fireEvent.blur(input);
    expect(onChange).toHaveBeenCalledWith({ ...base, window: undefined });
  });
});

describe('QueryEditor: slo availability', () => {
  it('switching to availability hides latency and threshold and shows the three-nines default target', async () => {
    const { onChange, onRunQuery } = setup(base);
    expect(screen.getByRole('radio', { name: 'Latency threshold' })).toBeChecked();
    await userEvent.click(screen.getByRole('radio', { name: 'Availability' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, objective: 'availability' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('an availability objective has no latency or threshold field and defaults its target to 0.999', () => {
    setup({ ...base, objective: 'availability' });
    expect(screen.getByRole('radio', { name: 'Availability' })).toBeChecked();
    expect(screen.queryByLabelText('Latency')).toBeNull();
    expect(screen.queryByLabelText('Threshold (s)')).toBeNull();
    expect(screen.getByLabelText('Target')).toHaveAttribute('placeholder', '0.999');
  });

  it('ignores a bad threshold left from a latency objective, as the backend does, and still checks the target', async () => {
    const { onChange, onRunQuery } = setup({ ...base, objective: 'availability', threshold: 0 });
    expect(screen.queryByText(/Threshold must be/)).toBeNull();
    const input = screen.getByLabelText('Target');
    await userEvent.type(input, '99.9{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, objective: 'availability', threshold: 0, target: 99.9 });
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('going back to latency removes the objective field', async () => {
    const query: VllmQuery = { ...base, objective: 'availability' };
    const { onChange } = setup(query);
    await userEvent.click(screen.getByRole('radio', { name: 'Latency threshold' }));
    expect(onChange).toHaveBeenCalledWith({ ...query, objective: undefined });
  });
});

describe('QueryEditor: workload', () => {
  const workload: VllmQuery = { refId: 'A', queryType: 'workload' };

  it('is offered as a query type and shows the default view, grouped by instance', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', models: ['m'] };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'Workload');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'workload' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows the tokens view by default', () => {
    setup(workload);
    expect(screen.getByLabelText('View')).toHaveValue('Tokens and errors');
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
  });

  it('picks a heatmap view and runs', async () => {
    const { onChange, onRunQuery } = setup(workload);
    await pickOne('View', 'Prompt lengths');
    expect(onChange).toHaveBeenCalledWith({ ...workload, view: 'prompt' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a stored unknown view and does not run it', () => {
    setup({ ...workload, view: 'heatmap' as VllmQuery['view'] });
    expect(screen.getByText('Unknown view "heatmap"; pick one from the list or a variable')).toBeInTheDocument();
  });

  it('resolves a view variable', () => {
    setTemplateSrv(new FakeTemplateSrv({ v: 'generation' }));
    const { ds } = setup(workload);
    expect(ds.applyTemplateVariables({ ...workload, view: '$v' }, {}).view).toBe('generation');
  });
});

describe('QueryEditor: host', () => {
  it('is offered as a query type, grouped by instance only, and runs at once', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', instances: ['gpu-a:8000'] };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'Host');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'host' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows only the instance grouping', () => {
    setup({ refId: 'A', queryType: 'host' });
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Model' })).toBeNull();
  });
});

describe('applyTemplateVariables: slo', () => {
  it('resolves threshold, target and window, and numbers become numbers', () => {
    const { ds } = setup(base);
    const out = ds.applyTemplateVariables({ ...base, threshold: '$t', target: '${target}', window: '$w' }, {});
    expect(out.threshold).toBe(0.5);
    expect(out.target).toBe(0.995);
    expect(out.window).toBe('7d');
  });
});

describe('QueryEditor: slo by priority', () => {
  it('computes the objective per priority class', async () => {
    const base: VllmQuery = { refId: 'A', queryType: 'slo' };
    const { onChange } = setup(base);
    await userEvent.click(screen.getByLabelText('By priority'));
    expect(onChange).toHaveBeenCalledWith({ ...base, byPriority: true });
  });

  it('has no priority fields for inter-token latency', () => {
    setup({ refId: 'A', queryType: 'slo', family: 'itl' });
    expect(screen.queryByLabelText('By priority')).not.toBeInTheDocument();
  });
});
