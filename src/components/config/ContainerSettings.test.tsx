import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { ContainerSettings, formatContainerMap, parseContainerMap } from './ContainerSettings';
import { makeSettings } from '../../testing/fixtures';

function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<ContainerSettings options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

function lastJsonData(onOptionsChange: jest.Mock) {
  return onOptionsChange.mock.calls[onOptionsChange.mock.calls.length - 1][0].jsonData;
}

describe('ContainerSettings', () => {
  it('writes containerMap entries by cgroup path or name, keeping the other settings', () => {
    const { onOptionsChange, options } = setup({
      jsonData: { roleLabel: 'llm_isvc_role', containerLabels: 'kubelet' },
    });
    fireEvent.change(screen.getByLabelText('Container map'), {
      target: { value: ' 10.0.0.1:8000 = /vllm/engine-0 \n\n10.0.0.2:8000=vllm-1' },
    });
    expect(lastJsonData(onOptionsChange)).toEqual({
      ...options.jsonData,
      containerMap: [
        { instance: '10.0.0.1:8000', id: '/vllm/engine-0' },
        { instance: '10.0.0.2:8000', name: 'vllm-1' },
      ],
    });
  });

  it('shows a saved map and removes it when cleared', () => {
    const { onOptionsChange } = setup({ jsonData: { containerMap: [{ instance: 'h:8000', id: '/a' }] } });
    expect(screen.getByLabelText('Container map')).toHaveValue('h:8000 = /a');
    fireEvent.change(screen.getByLabelText('Container map'), { target: { value: '' } });
    expect(lastJsonData(onOptionsChange)).not.toHaveProperty('containerMap');
  });

  it('names a bad line and a container mapped twice', () => {
    setup({ jsonData: { containerMap: [{ instance: 'h:8000', id: '/a' }] } });
    fireEvent.change(screen.getByLabelText('Container map'), { target: { value: 'h:8000 = /a\nno-equals-sign' } });
    expect(
      screen.getByText('Line 2: write "instance = /cgroup/path" or "instance = container-name"')
    ).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Container map'), { target: { value: 'h:8000 = /a\ng:8000 = /a' } });
    expect(screen.getByText('Line 2: /a is mapped twice; a container belongs to one vLLM server')).toBeInTheDocument();
  });

  it('switches the label names to legacy', async () => {
    const { onOptionsChange, options } = setup({ jsonData: { containerLabels: 'kubelet' } });
    await userEvent.click(screen.getByRole('radio', { name: 'legacy' }));
    expect(lastJsonData(onOptionsChange)).toEqual({ ...options.jsonData, containerLabels: 'legacy' });
  });

  it.each([
    ['', []],
    ['a = /x', [{ instance: 'a', id: '/x' }]],
    [
      'a = x\n b = /y ',
      [
        { instance: 'a', name: 'x' },
        { instance: 'b', id: '/y' },
      ],
    ],
  ])('parseContainerMap(%p) round-trips', (text, map) => {
    expect(parseContainerMap(text)).toEqual({ map });
    expect(parseContainerMap(formatContainerMap(map))).toEqual({ map });
  });

  it.each(['= /x', 'a =', 'a /x'])('parseContainerMap(%p) names the line', (text) => {
    expect(parseContainerMap(text).error).toMatch(/^Line 1: /);
  });

  it('refuses more mappings than the backend accepts', () => {
    const text = Array.from({ length: 501 }, (_, i) => `h:${i} = /c${i}`).join('\n');
    expect(parseContainerMap(text).error).toMatch(/At most 500/);
  });
});
