import { screen } from '@testing-library/react';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pickOne } from '../../testing/combobox';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

const setup = renderQueryEditor;
withoutVariables();

const base: VllmQuery = { refId: 'A', queryType: 'waitTime' };

describe('QueryEditor: waitTime format', () => {
  it('shows quantiles and the live wait for the default series format', () => {
    setup(base);
    expect(screen.getByLabelText('Quantiles')).toBeInTheDocument();
    expect(screen.getByLabelText('Live wait')).toBeInTheDocument();
  });

  it('hides the quantiles and the live wait for a heatmap, keeping the latency family', () => {
    setup({ ...base, format: 'heatmap', family: 'ttft' });
    expect(screen.queryByLabelText('Quantiles')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Live wait')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Latency')).toBeInTheDocument();
  });

  it('picks the heatmap format and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await pickOne('Format', 'Heatmap');
    expect(onChange).toHaveBeenCalledWith({ ...base, format: 'heatmap' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a format the backend would reject', () => {
    expect(validateQuery({ ...base, format: 'histogram' as VllmQuery['format'] }).format).toBeDefined();
    expect(validateQuery({ ...base, format: 'heatmap' }).format).toBeUndefined();
  });
});
