import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { CostSettings, costError, gpusError } from './CostSettings';
import { makeSettings } from '../../testing/fixtures';

function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<CostSettings options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

function lastJsonData(onOptionsChange: jest.Mock) {
  return onOptionsChange.mock.calls[onOptionsChange.mock.calls.length - 1][0].jsonData;
}

describe('CostSettings', () => {
  it('writes gpusPerServer and gpuHourlyCost as numbers, keeping the other settings', () => {
    const { onOptionsChange, options } = setup({ jsonData: { roleLabel: 'llm_isvc_role' } });
    fireEvent.change(screen.getByLabelText('GPUs per server'), { target: { value: ' 8 ' } });
    expect(lastJsonData(onOptionsChange)).toEqual({ ...options.jsonData, gpusPerServer: 8 });
    fireEvent.change(screen.getByLabelText('GPU hourly cost'), { target: { value: '2.5' } });
    expect(lastJsonData(onOptionsChange)).toMatchObject({ gpuHourlyCost: 2.5 });
  });

  it('removes a cleared field, so the backend default applies', () => {
    const { onOptionsChange } = setup({ jsonData: { gpusPerServer: 4, gpuHourlyCost: 3 } });
    expect(screen.getByLabelText('GPUs per server')).toHaveValue('4');
    fireEvent.change(screen.getByLabelText('GPU hourly cost'), { target: { value: '' } });
    expect(lastJsonData(onOptionsChange)).not.toHaveProperty('gpuHourlyCost');
  });

  it('shows the default GPU count as a placeholder and names a bad value', () => {
    setup({ jsonData: { gpusPerServer: 1.5 } });
    expect(screen.getByLabelText('GPU hourly cost')).toHaveAttribute('placeholder', 'not priced');
    expect(screen.getByText('A whole number of GPUs, 1 to 1024')).toBeInTheDocument();
  });

  it.each([
    [undefined, undefined],
    [1, undefined],
    [1024, undefined],
    [0, 'A whole number of GPUs, 1 to 1024'],
    [2.5, 'A whole number of GPUs, 1 to 1024'],
    [NaN, 'A whole number of GPUs, 1 to 1024'],
  ])('gpusError(%p) is %p', (value, want) => {
    expect(gpusError(value)).toBe(want);
  });

  it.each([
    [undefined, undefined],
    [0, undefined],
    [10000, undefined],
    [-1, 'A price per GPU-hour, 0 to 10000'],
    [NaN, 'A price per GPU-hour, 0 to 10000'],
  ])('costError(%p) is %p', (value, want) => {
    expect(costError(value)).toBe(want);
  });
});
