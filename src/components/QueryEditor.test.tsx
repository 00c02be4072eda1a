import React from 'react';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { setTemplateSrv } from '@grafana/runtime';

import { OPTIONS_COMPONENTS, QueryEditor } from './QueryEditor';
import { QUERY_TYPE_KEYS } from '../queryTypes.gen';
import { FakeResources, FakeTemplateSrv, makeDataSource } from '../testing/fixtures';
import { pick, pickOne } from '../testing/combobox';
import { VllmQuery } from '../types';

const RESOURCES: FakeResources = {
  models: ['llama-3-8b', 'mistral-7b'],
  instances: (params) => (params.model?.includes('mistral-7b') ? ['gpu-b:8000'] : ['gpu-a:8000', 'gpu-b:8000']),
  engines: ['0', '1'],
};

function setup(query: VllmQuery, extra: { annotationMode?: boolean } = {}) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds, getResource } = makeDataSource(RESOURCES);
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} {...extra} />);
  return { onChange, onRunQuery, getResource };
}

/** The query passed in the most recent onChange call. */
function lastQuery(onChange: jest.Mock): VllmQuery {
  expect(onChange).toHaveBeenCalled();
  return onChange.mock.calls[onChange.mock.calls.length - 1][0];
}

/** Labels of the fields on screen, to check that a query type shows exactly its own options. */
const FIELD_LABELS = [
  'Group by',
  'Models',
  'Instances',
  'Engines',
  'Quantiles',
  'Latency',
  'Live wait',
  'k',
  'Rank by',
  'Aggregation',
  'Output',
  'Source',
  'Format',
  'Expr',
  'Legend',
  'Unit',
  'Min step',
];
function shownFields() {
  return FIELD_LABELS.filter((label) => screen.queryByText(label, { selector: 'label' }) !== null);
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ model: 'llama-3-8b', node: ['gpu-a:8000', 'gpu-b:8000'], q: '0.95' }));
});

describe('QueryEditor: query type', () => {
  it('shows the defaults for a query saved without type and grouping', () => {
    setup({ refId: 'A' } as VllmQuery);
    expect(screen.getByLabelText('Query')).toHaveValue('Queue depth');
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.getByLabelText('Legend')).toHaveValue('');
  });

  it.each([
    ['Wait time', 'waitTime'],
    ['Preemptions', 'preemptions'],
    ['Top-k', 'topk'],
    ['GPU', 'gpu'],
    ['PromQL', 'promql'],
  ])('calls onChange with the new query type when %s is picked, and runs the query', async (label, queryType) => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'instance', legend: '{{model}}', k: 3 };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', label);
    expect(onChange).toHaveBeenCalledTimes(1);
    // Only the type changes; everything else, including fields this type does not show, is kept.
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType });
    // A new PromQL query has no expression yet: nothing to run until one is typed.
    expect(onRunQuery).toHaveBeenCalledTimes(queryType === 'promql' ? 0 : 1);
  });

  it('resets a grouping top-k does not accept when switching to top-k', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model' };
    const { onChange } = setup(query);
    await pickOne('Query', 'Top-k');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'topk', grouping: 'instance' });
  });

  it.each<[VllmQuery['queryType'], VllmQuery['queryType']]>([
    ['gpu', 'topk'],
    ['topk', 'gpu'],
  ])('drops format when switching from %s to %s, where it means something else', async (from, to) => {
    const query: VllmQuery = { refId: 'A', queryType: from, format: 'table' };
    const { onChange } = setup(query);
    await pickOne('Query', to === 'gpu' ? 'GPU' : 'Top-k');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: to, format: undefined });
  });

  it('ignores Enter when the picker highlights nothing (filtered list shorter than the selected index)', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'gpu' };
    const { onChange } = setup(query);
    const input = screen.getByLabelText('Query');
    await userEvent.click(input);
    fireEvent.change(input, { target: { value: 'Top' } });
    await userEvent.keyboard('{Enter}'); // Combobox would hand over undefined here
    expect(onChange).not.toHaveBeenCalled();
    expect(screen.getByText('Source', { selector: 'label' })).toBeInTheDocument(); // still the GPU editor
  });

  it('keeps an accepted grouping when switching to top-k', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'instance_engine' };
    const { onChange } = setup(query);
    await pickOne('Query', 'Top-k');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'topk' });
  });

  it.each<[VllmQuery['queryType'], Partial<VllmQuery>, string[]]>([
    ['queue', {}, ['Group by', 'Models', 'Instances', 'Engines', 'Legend', 'Min step']],
    [
      'waitTime',
      {},
      [
        'Group by',
        'Models',
        'Instances',
        'Engines',
        'Quantiles',
        'Latency',
        'Live wait',
        'Format',
        'Legend',
        'Min step',
      ],
    ],
    // A heatmap has no quantiles and no live wait.
    [
      'waitTime',
      { format: 'heatmap' },
      ['Group by', 'Models', 'Instances', 'Engines', 'Latency', 'Format', 'Legend', 'Min step'],
    ],
    // Preemption events are per instance and engine whatever the grouping, and have no legend.
    ['preemptions', {}, ['Models', 'Instances', 'Engines', 'Output', 'Min step']],
    ['preemptions', { asSeries: true }, ['Group by', 'Models', 'Instances', 'Engines', 'Output', 'Legend', 'Min step']],
    [
      'topk',
      {},
      ['Group by', 'Models', 'Instances', 'Engines', 'k', 'Rank by', 'Aggregation', 'Output', 'Legend', 'Min step'],
    ],
    // GPU: instances only; a table has no legend, and node agents have no step.
    ['gpu', {}, ['Group by', 'Instances', 'Source', 'Format']],
    [
      'gpu',
      { format: 'series', source: 'prometheus' },
      ['Group by', 'Instances', 'Source', 'Format', 'Legend', 'Min step'],
    ],
    ['gpu', { format: 'series', source: 'dcgm' }, ['Group by', 'Instances', 'Source', 'Format', 'Legend', 'Min step']],
  ])('shows only the options %s takes (%j)', (queryType, extra, fields) => {
    setup({ refId: 'A', queryType, ...extra });
    expect(shownFields()).toEqual(fields);
  });
});

describe('QueryEditor: options per query type', () => {
  it('has an options component for every query type of the table, and no other', () => {
    expect(Object.keys(OPTIONS_COMPONENTS).sort()).toEqual([...QUERY_TYPE_KEYS].sort());
  });

  it.each(QUERY_TYPE_KEYS)('renders the editor for %s', (queryType) => {
    setup({ refId: 'A', queryType });
    expect(screen.getByText('Query', { selector: 'label' })).toBeInTheDocument();
  });

  it('shows no options of their own for the types that have none', () => {
    for (const queryType of ['host', 'prefixCache', 'specDecode'] as const) {
      expect(OPTIONS_COMPONENTS[queryType].name).toBe('NoOptions');
    }
    // queue and fleet have Live (and fleet its worst rows): LiveOptions.test.tsx
    expect(OPTIONS_COMPONENTS.queue.name).toBe('QueueOptions');
    expect(OPTIONS_COMPONENTS.fleet.name).toBe('FleetOptions');
  });
});

describe('QueryEditor: grouping', () => {
  it('changes the grouping and runs the query', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'instance' };
    const { onChange, onRunQuery } = setup(query);
    await userEvent.click(screen.getByRole('radio', { name: 'Engine' }));
    expect(onChange).toHaveBeenCalledWith({ ...query, grouping: 'instance_engine' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('offers only instance and engine grouping for top-k', () => {
    setup({ refId: 'A', queryType: 'topk', grouping: 'instance' });
    const group = screen.getByText('Group by', { selector: 'label' }).parentElement!;
    const radios = Array.from(group.querySelectorAll('input[type=radio]')).map((r) => r.id);
    expect(radios).toHaveLength(2);
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Fleet' })).not.toBeInTheDocument();
    expect(screen.queryByRole('radio', { name: 'Model' })).not.toBeInTheDocument();
  });
});

describe('QueryEditor: filters', () => {
  it('loads models from the backend only when the picker opens, and adds the picked one', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue' };
    const { onChange, onRunQuery, getResource } = setup(query);
    expect(getResource).not.toHaveBeenCalled();
    await pick('Models', 'mistral-7b');
    expect(getResource).toHaveBeenCalledWith('models', {});
    expect(lastQuery(onChange)).toEqual({ ...query, models: ['mistral-7b'] });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('narrows instances by the selected models, resolving variables first', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', models: ['$model', 'mistral-7b'] };
    const { onChange, getResource } = setup(query);
    await pick('Instances', 'gpu-b:8000');
    expect(getResource).toHaveBeenCalledWith('instances', { model: ['llama-3-8b', 'mistral-7b'] });
    expect(lastQuery(onChange).instances).toEqual(['gpu-b:8000']);
  });

  it('narrows engines by models and instances', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', models: ['llama-3-8b'], instances: ['$node'] };
    const { onChange, getResource } = setup(query);
    await pick('Engines', '1');
    expect(getResource).toHaveBeenCalledWith('engines', {
      model: ['llama-3-8b'],
      instance: ['gpu-a:8000', 'gpu-b:8000'],
    });
    expect(lastQuery(onChange).engines).toEqual(['1']);
  });

  it('offers dashboard variables and keeps values already picked', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', models: ['mistral-7b'] };
    const { onChange } = setup(query);
    await pick('Models', '$model');
    expect(lastQuery(onChange).models).toEqual(['mistral-7b', '$model']);
  });

  it('accepts a custom value the backend does not list', async () => {
    const { onChange } = setup({ refId: 'A', queryType: 'queue' });
    await pick('Models', 'qwen-72b');
    expect(lastQuery(onChange).models).toEqual(['qwen-72b']);
  });

  it('still accepts typed values when the backend cannot list any', async () => {
    const onChange = jest.fn();
    const { ds } = makeDataSource({}); // every route 404s
    jest.spyOn(console, 'error').mockImplementation(() => {}); // Combobox logs the failed load
    render(
      <QueryEditor
        datasource={ds}
        query={{ refId: 'A', queryType: 'queue' }}
        onChange={onChange}
        onRunQuery={jest.fn()}
      />
    );
    await pick('Models', 'phi-3');
    expect(lastQuery(onChange).models).toEqual(['phi-3']);
  });

  it('flags an empty filter value next to the field and does not run the query', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', instances: ['gpu-a:8000', ''] };
    const { onChange, onRunQuery } = setup(query);
    expect(screen.getByText(/Empty values are not allowed/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('radio', { name: 'Model' }));
    expect(onChange).toHaveBeenCalledWith({ ...query, grouping: 'model' });
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('edits label matchers, runs on blur, and flags text that is not matchers without running it', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue' };
    const { onChange, onRunQuery } = setup(query);
    const input = screen.getByLabelText('Label matchers');
    fireEvent.change(input, { target: { value: 'namespace=~"$ns"' } });
    expect(lastQuery(onChange).matchers).toBe('namespace=~"$ns"');
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(input);
    expect(onRunQuery).toHaveBeenCalled();
  });

  it('shows the matcher error next to the field', () => {
    setup({ refId: 'A', queryType: 'waitTime', matchers: 'namespace=inference' });
    expect(screen.getByText('Use PromQL label matchers', { exact: false })).toBeInTheDocument();
  });

  it('shows a current value as a pill without asking the backend', () => {
    // One value: jsdom has no layout, so MultiCombobox measures 0 px and folds further pills into a "+n" counter.
    const { getResource } = setup({ refId: 'A', queryType: 'queue', models: ['$model'] });
    expect(screen.getByText('$model')).toBeInTheDocument();
    expect(getResource).not.toHaveBeenCalled();
  });
});

describe('QueryEditor: wait time', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'waitTime' };

  it('shows the backend defaults', () => {
    setup(base);
    expect(screen.getByLabelText('Quantiles')).toHaveValue('');
    expect(screen.getByLabelText('Quantiles')).toHaveAttribute('placeholder', '0.5, 0.9, 0.99');
    expect(screen.getByLabelText('Latency')).toHaveValue('Queue time');
    expect(screen.getByLabelText('Live wait')).not.toBeChecked();
  });

  it('parses the quantile list on blur and runs the query', async () => {
    const { onChange, onRunQuery } = setup(base);
    const input = screen.getByLabelText('Quantiles');
    await userEvent.type(input, '0.5, 0.95 0.999');
    expect(onChange).not.toHaveBeenCalled(); // nothing is committed while typing
    fireEvent.blur(input);
    expect(onChange).toHaveBeenCalledWith({ ...base, quantiles: [0.5, 0.95, 0.999] });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('commits on Enter and keeps variables as text', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.type(screen.getByLabelText('Quantiles'), '0.5, $q{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, quantiles: [0.5, '$q'] });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('clearing the quantiles goes back to the default', async () => {
    const query = { ...base, quantiles: [0.9] };
    const { onChange } = setup(query);
    const input = screen.getByLabelText('Quantiles');
    expect(input).toHaveValue('0.9');
    await userEvent.clear(input);
    fireEvent.blur(input);
    expect(onChange).toHaveBeenCalledWith({ ...query, quantiles: undefined });
  });

  it.each([
    [[0.5, 1], 'Quantile 1 is outside (0, 1)'],
    [[0, 0.5], 'Quantile 0 is outside (0, 1)'],
    [[1.5], 'Quantile 1.5 is outside (0, 1)'],
    [['p99'], '"p99" is not a number'],
  ])('flags quantiles %j and does not run the query', async (quantiles, message) => {
    const { onRunQuery } = setup({ ...base, quantiles });
    expect(screen.getByText(message, { exact: false })).toBeInTheDocument();
    await userEvent.click(screen.getByLabelText('Live wait'));
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('stores an invalid list as typed but does not run it', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.type(screen.getByLabelText('Quantiles'), '0.5, 2{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, quantiles: [0.5, 2] });
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('picks a latency family', async () => {
    const { onChange, onRunQuery } = setup(base);
    await pickOne('Latency', 'Time to first');
    expect(onChange).toHaveBeenCalledWith({ ...base, family: 'ttft' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('offers a dashboard variable as the family', async () => {
    const { onChange } = setup(base);
    await pickOne('Latency', '$model');
    expect(onChange).toHaveBeenCalledWith({ ...base, family: '$model' });
  });

  it('flags a family that is neither known nor a variable', () => {
    setup({ ...base, family: 'latency' as VllmQuery['family'] });
    expect(screen.getByText(/Unknown latency family "latency"/)).toBeInTheDocument();
  });

  it('switches live wait on', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByLabelText('Live wait'));
    expect(onChange).toHaveBeenCalledWith({ ...base, live: true });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});

describe('QueryEditor: preemptions', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'preemptions' };

  it('defaults to annotation events and switches to the rate series', async () => {
    const { onChange, onRunQuery } = setup(base);
    expect(screen.getByRole('radio', { name: 'Annotations' })).toBeChecked();
    await userEvent.click(screen.getByRole('radio', { name: 'Rate series' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, asSeries: true });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('switches back to events', async () => {
    const { onChange } = setup({ ...base, asSeries: true });
    await userEvent.click(screen.getByRole('radio', { name: 'Annotations' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, asSeries: false });
  });
});

describe('QueryEditor: top-k', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'topk' };

  it('shows the backend defaults', () => {
    setup(base);
    expect(screen.getByLabelText('k')).toHaveValue('');
    expect(screen.getByLabelText('k')).toHaveAttribute('placeholder', '5');
    expect(screen.getByLabelText('Rank by')).toHaveValue('Waiting requests');
    expect(screen.getByLabelText('Aggregation')).toHaveValue('Max');
    expect(screen.getByRole('radio', { name: 'Series + table' })).toBeChecked();
  });

  it('sets k as a number and runs the query', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.type(screen.getByLabelText('k'), '10{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, k: 10 });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('accepts a variable for k', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.type(screen.getByLabelText('k'), '$k{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...base, k: '$k' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it.each([0, 101, 2.5, 'ten'])('flags k = %p and does not run the query', async (k) => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.type(screen.getByLabelText('k'), `${k}{Enter}`);
    expect(onChange).toHaveBeenCalledWith({ ...base, k });
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('shows the k error next to the field', () => {
    setup({ ...base, k: 0 });
    expect(screen.getByText('k must be a whole number from 1 to 100')).toBeInTheDocument();
  });

  it('picks the ranking signal and aggregation', async () => {
    const { onChange } = setup(base);
    await pickOne('Rank by', 'KV-cache');
    expect(onChange).toHaveBeenLastCalledWith({ ...base, rankBy: 'kv_usage' });
    await pickOne('Aggregation', 'Average');
    expect(onChange).toHaveBeenLastCalledWith({ ...base, aggregation: 'avg' });
  });

  it.each([
    ['Series only', { asSeries: true, format: undefined }],
    ['Table only', { asSeries: false, format: 'table' }],
  ])('switches the output to %s', async (label, patch) => {
    const { onChange } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: label }));
    expect(onChange).toHaveBeenCalledWith({ ...base, ...patch });
  });

  it('switches back to series and table, clearing format', async () => {
    const query: VllmQuery = { ...base, format: 'table' };
    const { onChange } = setup(query);
    expect(screen.getByRole('radio', { name: 'Table only' })).toBeChecked();
    await userEvent.click(screen.getByRole('radio', { name: 'Series + table' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, asSeries: false, format: undefined });
  });

  it('reads format "series" from hand-written JSON as series only', () => {
    setup({ ...base, format: 'series' });
    expect(screen.getByRole('radio', { name: 'Series only' })).toBeChecked();
  });
});

describe('QueryEditor: GPU', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'gpu' };

  it('defaults to node agents and a table', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Node agents' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Table' })).toBeChecked();
  });

  it('changes source and format', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: 'Prometheus' }));
    expect(onChange).toHaveBeenLastCalledWith({ ...base, source: 'prometheus' });
    await userEvent.click(screen.getByRole('radio', { name: 'Time series' }));
    expect(onChange).toHaveBeenLastCalledWith({ ...base, format: 'series' });
    expect(onRunQuery).toHaveBeenCalledTimes(2);
  });

  it('shows a filter it does not use while it holds a value the backend rejects', async () => {
    // The backend validates every filter whatever the type; hiding the field would hide the error.
    const { onChange, onRunQuery } = setup({ ...base, models: [''] });
    expect(screen.getByLabelText('Models')).toBeInTheDocument();
    expect(screen.getByText(/Empty values/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('radio', { name: 'Model' }));
    expect(onRunQuery).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: /^Remove/ }));
    expect(onChange).toHaveBeenLastCalledWith({ ...base, models: undefined });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});

describe('QueryEditor: PromQL', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'promql' };

  it('asks for an expression and does not run without one', async () => {
    const { onRunQuery } = setup(base);
    expect(screen.getByText('Enter a PromQL expression')).toBeInTheDocument();
    fireEvent.blur(screen.getByLabelText('Min step'));
    expect(onRunQuery).not.toHaveBeenCalled();
  });

  it('commits the expression on blur and runs it', async () => {
    const { onChange, onRunQuery } = setup(base);
    const expr = screen.getByLabelText('Expr');
    await userEvent.type(expr, 'sum(up)');
    expect(onChange).not.toHaveBeenCalled(); // nothing is committed (or run) while typing
    fireEvent.blur(expr);
    expect(onChange).toHaveBeenCalledWith({ ...base, expr: 'sum(up)' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('commits on Shift+Enter', async () => {
    const { onChange } = setup(base);
    const expr = screen.getByLabelText('Expr');
    fireEvent.change(expr, { target: { value: 'up' } });
    fireEvent.keyDown(expr, { key: 'Enter', shiftKey: true });
    expect(onChange).toHaveBeenCalledWith({ ...base, expr: 'up' });
  });

  it('sets the unit', () => {
    const query = { ...base, expr: 'up' };
    const { onChange, onRunQuery } = setup(query);
    const unit = screen.getByLabelText('Unit');
    fireEvent.change(unit, { target: { value: 'reqps' } });
    expect(onChange).toHaveBeenCalledWith({ ...query, unit: 'reqps' });
    fireEvent.blur(unit);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});

describe('QueryEditor: legend and min step', () => {
  it('edits the legend and runs the query only on blur', () => {
    const query: VllmQuery = { refId: 'A', queryType: 'topk' };
    const { onChange, onRunQuery } = setup(query);
    const legend = screen.getByLabelText('Legend');
    fireEvent.change(legend, { target: { value: '{{instance}}' } });
    expect(onChange).toHaveBeenCalledWith({ ...query, legend: '{{instance}}' });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(legend);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('edits the min step and runs on blur', () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue' };
    const { onChange, onRunQuery } = setup(query);
    const input = screen.getByLabelText('Min step');
    fireEvent.change(input, { target: { value: '$__rate_interval' } });
    expect(onChange).toHaveBeenCalledWith({ ...query, interval: '$__rate_interval' });
    fireEvent.blur(input);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a min step that is not a duration and does not run it', () => {
    const { onRunQuery } = setup({ refId: 'A', queryType: 'queue', interval: 'soon' });
    expect(screen.getByText(/Use a duration such as 30s/)).toBeInTheDocument();
    fireEvent.blur(screen.getByLabelText('Min step'));
    expect(onRunQuery).not.toHaveBeenCalled();
  });
});

describe('QueryEditor: annotation mode', () => {
  it('hides the series switch, grouping and legend for preemption events', async () => {
    const { onChange } = setup({ refId: 'Anno', queryType: 'preemptions' }, { annotationMode: true });
    expect(shownFields()).toEqual(['Models', 'Instances', 'Engines', 'Min step']);
    await pick('Models', 'llama-3-8b');
    await waitFor(() => expect(lastQuery(onChange).models).toEqual(['llama-3-8b']));
  });
});
