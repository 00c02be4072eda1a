import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { RulesSetting } from './RulesSetting';
import { makeSettings } from '../../testing/fixtures';

function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<RulesSetting options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

function lastChange(mock: jest.Mock) {
  expect(mock).toHaveBeenCalled();
  return mock.mock.calls[mock.mock.calls.length - 1][0];
}

describe('RulesSetting', () => {
  it('is on when never set, with the default prefix as a placeholder', () => {
    const { onOptionsChange } = setup();
    expect(screen.getByLabelText('Recording rules')).toBeChecked();
    expect(screen.getByLabelText('Rule name prefix')).toHaveAttribute('placeholder', 'engine:');
    expect(onOptionsChange).not.toHaveBeenCalled();
  });

  it('writes false when switched off and hides the prefix', () => {
    const { onOptionsChange, options } = setup({ jsonData: { rulePrefix: 'fleet:' } });
    fireEvent.click(screen.getByLabelText('Recording rules'));
    expect(lastChange(onOptionsChange).jsonData).toEqual({ ...options.jsonData, recordingRules: false });
  });

  it('hides the prefix while off', () => {
    setup({ jsonData: { recordingRules: false } });
    expect(screen.queryByLabelText('Rule name prefix')).not.toBeInTheDocument();
  });

  it('writes the prefix trimmed, clears it when emptied and flags a bad one', () => {
    const { onOptionsChange } = setup({ jsonData: { rulePrefix: 'fleet:' } });
    fireEvent.change(screen.getByLabelText('Rule name prefix'), { target: { value: ' team:' } });
    expect(lastChange(onOptionsChange).jsonData.rulePrefix).toBe('team:');
    fireEvent.change(screen.getByLabelText('Rule name prefix'), { target: { value: '' } });
    expect(lastChange(onOptionsChange).jsonData).not.toHaveProperty('rulePrefix');
  });

  it('flags a prefix Prometheus would not accept', () => {
    setup({ jsonData: { rulePrefix: 'engine-' } });
    expect(screen.getByText("Letters, digits, '_' and ':' only, e.g. engine:")).toBeInTheDocument();
  });
});
