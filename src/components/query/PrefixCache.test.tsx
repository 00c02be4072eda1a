import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pickOne } from '../../testing/combobox';
import { groupingOptionsFor } from '../../queryOptions';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

// prefixCache has no options of its own: the editor's grouping, filters, legend and min step are all it takes
// (pkg/models/prefixcache.go), so it needs no options component.
describe('QueryEditor: prefixCache', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'prefixCache' };

  it('is offered as a query type and keeps the other fields', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model', legend: '{{model_name}}' };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'Prefix cache');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'prefixCache' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows the backend default (instance), the series groupings, the legend and no output choice', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    for (const name of ['Fleet', 'Model', 'Engine']) {
      expect(screen.getByRole('radio', { name })).toBeInTheDocument();
    }
    expect(screen.getByLabelText('Legend')).toBeInTheDocument();
    expect(screen.queryByText('Output')).not.toBeInTheDocument();
  });

  it('changes the grouping and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: 'Fleet' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, grouping: 'none' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('accepts the groupings the backend accepts', () => {
    expect(groupingOptionsFor('prefixCache').map((o) => o.value)).toEqual(
      expect.arrayContaining(['none', 'model', 'instance', 'instance_engine'])
    );
    expect(validateQuery({ ...base, grouping: 'instance_engine' })).toEqual({});
  });
});
