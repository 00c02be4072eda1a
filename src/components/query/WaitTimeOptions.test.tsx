import { screen } from '@testing-library/react';

import { renderQueryEditor, withoutVariables } from '../../testing/editor';
import { pick, pickOne } from '../../testing/combobox';
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

describe('QueryEditor: waitTime by priority', () => {
  it('offers the priority split and filter for the series format only', () => {
    setup(base);
    expect(screen.getByLabelText('By priority')).toBeInTheDocument();
    expect(screen.getByLabelText('Priorities')).toBeInTheDocument();
    setup({ ...base, format: 'heatmap' });
    expect(screen.getAllByLabelText('By priority')).toHaveLength(1);
  });

  it('hides them for inter-token latency, which vLLM does not label by priority', () => {
    setup({ ...base, family: 'itl' });
    expect(screen.queryByLabelText('By priority')).not.toBeInTheDocument();
  });

  it('picks a class with regular-expression characters and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await pick('Priorities', 'Above high');
    expect(onChange).toHaveBeenCalledWith({ ...base, priorities: ['<-1'] });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('flags a raw priority the backend would reject', () => {
    expect(validateQuery({ ...base, priorities: ['5'] }).priorities).toBeDefined();
    expect(validateQuery({ ...base, priorities: ['<-1', '>1'] }).priorities).toBeUndefined();
  });
});
