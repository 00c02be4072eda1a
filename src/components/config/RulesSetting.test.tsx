import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { RulesSetting, rulesPolicy } from './RulesSetting';
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
  it('is exact when never set, with the default prefix as a placeholder', () => {
    const { onOptionsChange } = setup();
    expect(screen.getByRole('radio', { name: 'Exact' })).toBeChecked();
    expect(screen.getByLabelText('Rule name prefix')).toHaveAttribute('placeholder', 'engine:');
    expect(onOptionsChange).not.toHaveBeenCalled();
  });

  it.each([
    [undefined, 'exact'],
    [true, 'exact'],
    [false, 'off'],
    ['exact', 'exact'],
    ['nearest', 'nearest'],
    ['off', 'off'],
  ] as const)('reads %p, as the backend does, as %s', (value, policy) => {
    expect(rulesPolicy(value)).toBe(policy);
  });

  it('shows the boolean earlier versions wrote as its policy', () => {
    setup({ jsonData: { recordingRules: true } });
    expect(screen.getByRole('radio', { name: 'Exact' })).toBeChecked();
  });

  it('writes nearest when chosen and keeps the prefix', () => {
    const { onOptionsChange, options } = setup({ jsonData: { rulePrefix: 'fleet:' } });
    fireEvent.click(screen.getByRole('radio', { name: 'Nearest' }));
    expect(lastChange(onOptionsChange).jsonData).toEqual({ ...options.jsonData, recordingRules: 'nearest' });
  });

  it('reads false as off and writes the chosen policy by name', () => {
    const { onOptionsChange, options } = setup({ jsonData: { recordingRules: false } });
    expect(screen.getByRole('radio', { name: 'Off' })).toBeChecked();
    fireEvent.click(screen.getByRole('radio', { name: 'Exact' }));
    expect(lastChange(onOptionsChange).jsonData).toEqual({ ...options.jsonData, recordingRules: 'exact' });
  });

  it.each([false, 'off'] as const)('hides the prefix while off (%p)', (recordingRules) => {
    setup({ jsonData: { recordingRules } });
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
