import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pickOne } from '../../testing/combobox';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

describe('QueryEditor: container', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'container' };

  it('shows the backend defaults: series, one answer per instance, a legend', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Series' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Model' })).not.toBeInTheDocument();
    expect(screen.getByLabelText('Legend')).toBeInTheDocument();
  });

  it('switches to the table, which has no legend, and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: 'Table' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, format: 'table' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    setup({ ...base, format: 'table' });
    expect(screen.queryAllByLabelText('Legend')).toHaveLength(1);
  });

  it('drops another type’s format when switched to', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'lora', format: 'table' };
    const { onChange } = setup(query);
    await pickOne('Query', 'Container');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'container', format: undefined });
  });

  it('flags what the backend would reject', () => {
    expect(validateQuery({ ...base, format: 'whatif' }).format).toMatch(/format/);
    expect(validateQuery({ ...base, grouping: 'model' }).grouping).toMatch(/not available/);
    expect(validateQuery({ ...base, format: 'table' })).toEqual({});
  });
});
