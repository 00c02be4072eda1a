import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pickOne } from '../../testing/combobox';
import { groupingOptionsFor } from '../../queryOptions';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

describe('QueryEditor: lora', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'lora' };

  it('shows the backend defaults: the table, one answer per instance', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Table' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Model' })).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Legend')).not.toBeInTheDocument();
  });

  it('switches to series and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: 'Series' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, format: 'series' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('drops another type’s format when switched to', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'gpu', format: 'table' };
    const { onChange } = setup(query);
    await pickOne('Query', 'LoRA adapters');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'lora', format: undefined });
  });

  it('flags what the backend would reject', () => {
    expect(validateQuery({ ...base, format: 'both' }).format).toBeDefined();
    expect(validateQuery({ ...base, format: 'series' }).format).toBeUndefined();
    expect(validateQuery({ ...base, grouping: 'model' }).grouping).toBeDefined();
    expect(groupingOptionsFor('lora').map((o) => o.value)).toEqual(['instance']);
  });
});

describe('QueryEditor: specDecode', () => {
  it('is offered as a query type, keeps the other fields and groups like the series types', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model', legend: '{{model_name}}' };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'Speculative decoding');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'specDecode' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    expect(groupingOptionsFor('specDecode').map((o) => o.value)).toEqual(
      expect.arrayContaining(['none', 'model', 'instance', 'instance_engine'])
    );
  });

  it('shows the grouping and the legend', () => {
    setup({ refId: 'A', queryType: 'specDecode', grouping: 'instance_engine' });
    expect(screen.getByRole('radio', { name: 'Engine' })).toBeChecked();
    expect(screen.getByLabelText('Legend')).toBeInTheDocument();
  });
});
