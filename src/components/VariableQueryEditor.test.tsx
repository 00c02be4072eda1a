import React from 'react';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { setTemplateSrv } from '@grafana/runtime';

import { VariableQueryEditor } from './VariableQueryEditor';
import { FakeTemplateSrv, makeDataSource } from '../testing/fixtures';
import { pick } from '../testing/combobox';
import { VllmVariableQuery } from '../types';

beforeEach(() => setTemplateSrv(new FakeTemplateSrv({ model: ['llama-3-8b', 'mistral-7b'] })));

function setup(query: VllmVariableQuery | string) {
  const onChange = jest.fn();
  const { ds, getResource } = makeDataSource({
    models: ['llama-3-8b', 'mistral-7b'],
    instances: ['gpu-a:8000', 'gpu-b:8000'],
  });
  render(
    <VariableQueryEditor
      datasource={ds}
      query={query as VllmVariableQuery}
      onChange={onChange}
      onRunQuery={jest.fn()}
    />
  );
  return { onChange, getResource };
}

describe('VariableQueryEditor', () => {
  it('treats a new variable (empty query) as a model list', () => {
    setup('');
    expect(screen.getByRole('radio', { name: 'Models' })).toBeChecked();
    expect(screen.queryByLabelText('Of models')).not.toBeInTheDocument();
  });

  it('switches to instances and offers the model narrowing', async () => {
    const { onChange } = setup({ refId: 'V', resource: 'models' });
    await userEvent.click(screen.getByRole('radio', { name: 'Instances' }));
    expect(onChange).toHaveBeenCalledWith({ refId: 'V', resource: 'instances' });
  });

  it('narrows instances by a model variable', async () => {
    const { onChange } = setup({ refId: 'V', resource: 'instances' });
    expect(screen.queryByLabelText('Of instances')).not.toBeInTheDocument();
    await pick('Of models', '$model');
    expect(onChange).toHaveBeenCalledWith({ refId: 'V', resource: 'instances', models: ['$model'] });
  });

  it('narrows engines by instances of the selected models', async () => {
    const query: VllmVariableQuery = { refId: 'V', resource: 'engines', models: ['$model'] };
    const { onChange, getResource } = setup(query);
    await pick('Of instances', 'gpu-b:8000');
    // The instance list is narrowed by the model variable's current values.
    expect(getResource).toHaveBeenCalledWith('instances', { model: ['llama-3-8b', 'mistral-7b'] });
    expect(onChange).toHaveBeenCalledWith({ ...query, instances: ['gpu-b:8000'] });
  });

  it('clears a narrowing list back to "all"', async () => {
    const query: VllmVariableQuery = { refId: 'V', resource: 'instances', models: ['llama-3-8b'] };
    const { onChange } = setup(query);
    await userEvent.click(screen.getByRole('button', { name: 'Remove llama-3-8b' }));
    expect(onChange).toHaveBeenCalledWith({ ...query, models: undefined });
  });
});
