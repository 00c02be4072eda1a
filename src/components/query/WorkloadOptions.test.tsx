import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

const base: VllmQuery = { refId: 'A', queryType: 'workload' };

describe('QueryEditor: workload by priority', () => {
  it('splits the tokens view by priority and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByLabelText('By priority'));
    expect(onChange).toHaveBeenCalledWith({ ...base, byPriority: true });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('has no priority fields on a length heatmap', () => {
    setup({ ...base, view: 'prompt' });
    expect(screen.queryByLabelText('By priority')).not.toBeInTheDocument();
    expect(screen.getByLabelText('View')).toBeInTheDocument();
  });

  it('flags a class the backend would reject', () => {
    expect(validateQuery({ ...base, priorities: ['-2'] }).priorities).toBeDefined();
    expect(validateQuery({ ...base, priorities: ['-1'] }).priorities).toBeUndefined();
  });
});
