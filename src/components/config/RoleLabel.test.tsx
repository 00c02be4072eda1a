import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { StackSettings } from './StackSettings';
import { makeSettings } from '../../testing/fixtures';

function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<StackSettings options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

describe('StackSettings: role label', () => {
  it('is shown open when set and writes jsonData.roleLabel, trimmed, keeping the other settings', () => {
    const { onOptionsChange, options } = setup({ jsonData: { roleLabel: 'llm_isvc_role' } });
    const input = screen.getByLabelText('Role label');
    expect(input).toHaveValue('llm_isvc_role');
    fireEvent.change(input, { target: { value: ' pd_role ' } });
    const next = onOptionsChange.mock.calls[onOptionsChange.mock.calls.length - 1][0];
    expect(next.jsonData).toEqual({ ...options.jsonData, roleLabel: 'pd_role' });
  });

  it('shows the label the backend tries first as a placeholder, without writing it', () => {
    const { onOptionsChange } = setup({ jsonData: { instanceLabel: 'pod' } });
    expect(screen.getByLabelText('Role label')).toHaveAttribute('placeholder', 'llm_isvc_role');
    expect(onOptionsChange).not.toHaveBeenCalled();
  });

  it("hints when the role label is the pod label's own name, which Prometheus cannot store", () => {
    setup({ jsonData: { roleLabel: 'llm-d.ai/role' } });
    expect(screen.getByText('Use a Prometheus label name', { exact: false })).toBeInTheDocument();
  });
});
