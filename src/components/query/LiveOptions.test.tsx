import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

describe('QueryEditor: Live', () => {
  it.each(['queue', 'fleet'] as const)('turns Live on for %s and runs', async (queryType) => {
    const base: VllmQuery = { refId: 'A', queryType };
    const { onChange, onRunQuery } = setup(base);
    const live = screen.getByLabelText('Live');
    expect(live).not.toBeChecked();
    await userEvent.click(live);
    expect(onChange).toHaveBeenCalledWith({ ...base, live: true });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows Live on when the query streams', () => {
    setup({ refId: 'A', queryType: 'queue', live: true });
    expect(screen.getByLabelText('Live')).toBeChecked();
  });

  it('has no Live switch for a type that cannot stream', () => {
    setup({ refId: 'A', queryType: 'topk' });
    expect(screen.queryByLabelText('Live')).not.toBeInTheDocument();
  });
});

describe('QueryEditor: fleet worst rows', () => {
  it('sets how many worst rows to keep', async () => {
    const base: VllmQuery = { refId: 'A', queryType: 'fleet' };
    const { onChange } = setup(base);
    const worst = screen.getByLabelText('Worst');
    await userEvent.type(worst, '5');
    await userEvent.tab();
    expect(onChange).toHaveBeenCalledWith({ ...base, worst: 5 });
  });

  it('refuses a negative count as the backend does', () => {
    expect(validateQuery({ refId: 'A', queryType: 'fleet', worst: -1 }).worst).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'fleet', worst: 3 }).worst).toBeUndefined();
  });
});

describe('QueryEditor: queue by priority', () => {
  it('splits the queue by priority and runs', async () => {
    const base: VllmQuery = { refId: 'A', queryType: 'queue' };
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByLabelText('By priority'));
    expect(onChange).toHaveBeenCalledWith({ ...base, byPriority: true });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('has no priority fields on the fleet table', () => {
    setup({ refId: 'A', queryType: 'fleet' });
    expect(screen.queryByLabelText('By priority')).not.toBeInTheDocument();
  });
});
