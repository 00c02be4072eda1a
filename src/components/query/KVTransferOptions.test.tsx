import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pickOne } from '../../testing/combobox';
import { groupingOptionsFor } from '../../queryOptions';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

const base: VllmQuery = { refId: 'A', queryType: 'kvTransfer' };

describe('QueryEditor: kvTransfer', () => {
  it('shows the backend defaults: grouped by role, quantiles 0.5, 0.9, 0.99', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Role' })).toBeChecked();
    expect(screen.getByLabelText('Quantiles')).toHaveAttribute('placeholder', '0.5, 0.9, 0.99');
  });

  it('is offered as a query type and keeps the other fields', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', legend: '{{role}}' };
    const { onChange, onRunQuery } = setup(query);
    await pickOne('Query', 'KV transfer');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'kvTransfer' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('commits the quantiles as numbers on blur and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    const input = screen.getByLabelText('Quantiles');
    await userEvent.type(input, '0.5, 0.99');
    fireEvent.blur(input);
    expect(onChange).toHaveBeenCalledWith({ ...base, quantiles: [0.5, 0.99] });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a quantile the backend would reject', () => {
    expect(validateQuery({ ...base, quantiles: [1] }).quantiles).toBeDefined();
    expect(validateQuery({ ...base, quantiles: [0.5] }).quantiles).toBeUndefined();
  });
});

describe('role grouping', () => {
  it.each([
    ['queue', true],
    ['waitTime', true],
    ['kvTransfer', true],
    ['saturation', true],
    ['topk', false],
    ['fleet', false],
    ['host', false],
  ] as const)('%s offers role: %p', (queryType, offered) => {
    expect(groupingOptionsFor(queryType).some((o) => o.value === 'role')).toBe(offered);
    expect(validateQuery({ refId: 'A', queryType, grouping: 'role' }).grouping === undefined).toBe(offered);
  });
});
