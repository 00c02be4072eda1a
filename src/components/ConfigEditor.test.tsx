import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { ConfigEditor } from './ConfigEditor';
import { makeSettings } from '../testing/fixtures';

/** Renders the editor with a mock onOptionsChange and returns the mock. */
function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<ConfigEditor options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

/** The options object passed in the most recent onOptionsChange call. */
function lastChange(mock: jest.Mock) {
  expect(mock).toHaveBeenCalled();
  return mock.mock.calls[mock.mock.calls.length - 1][0];
}

describe('ConfigEditor', () => {
  it('shows the backend defaults as placeholders without writing them', () => {
    const { onOptionsChange } = setup();
    expect(screen.getByLabelText('Scrape interval')).toHaveAttribute('placeholder', '15s');
    expect(screen.getByLabelText('Query timeout')).toHaveAttribute('placeholder', '30s');
    expect(screen.getByLabelText('Instance label')).toHaveAttribute('placeholder', 'instance');
    expect(screen.getByLabelText('Metric prefix')).toHaveAttribute('placeholder', 'vllm:');
    expect(screen.getByPlaceholderText('http://localhost:9090')).toBeInTheDocument();
    expect(onOptionsChange).not.toHaveBeenCalled();
  });

  it.each([
    ['Scrape interval', 'scrapeInterval', '30s'],
    ['Query timeout', 'queryTimeout', '1m'],
    ['Instance label', 'instanceLabel', 'pod'],
    ['Metric prefix', 'metricPrefix', 'ray_vllm:'],
  ])('writes %s to jsonData.%s', (label, key, value) => {
    const { onOptionsChange, options } = setup({ jsonData: { metricPrefix: 'vllm:' } });
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    const next = lastChange(onOptionsChange);
    expect(next.jsonData[key]).toBe(value);
    // Other settings survive the change.
    expect(next.jsonData).toEqual({ ...options.jsonData, [key]: value });
    expect(next.secureJsonData).toEqual(options.secureJsonData);
  });

  it('writes the Prometheus URL to url and mirrors it into jsonData.prometheusUrl', () => {
    const { onOptionsChange } = setup();
    fireEvent.change(screen.getByPlaceholderText('http://localhost:9090'), {
      target: { value: 'http://prometheus:9090' },
    });
    // The HTTP settings component commits the URL on blur.
    fireEvent.blur(screen.getByPlaceholderText('http://localhost:9090'));
    const next = lastChange(onOptionsChange);
    expect(next.url).toBe('http://prometheus:9090');
    expect(next.jsonData.prometheusUrl).toBe('http://prometheus:9090');
  });

  it('keeps the basic-auth password in secureJsonData', async () => {
    const { onOptionsChange } = setup({ basicAuth: true, basicAuthUser: 'admin', url: 'http://prom:9090' });
    await userEvent.type(screen.getByPlaceholderText('Password'), 'x');
    const next = lastChange(onOptionsChange);
    expect(next.secureJsonData.basicAuthPassword).toBe('x');
    expect(JSON.stringify(next.jsonData)).not.toContain('basicAuthPassword');
  });

  it('puts the node agent token in secureJsonData and never in jsonData', () => {
    const { onOptionsChange } = setup({ jsonData: { scrapeInterval: '15s' } });
    fireEvent.change(screen.getByLabelText('Node agent token'), { target: { value: 's3cr3t-token' } });
    const next = lastChange(onOptionsChange);
    expect(next.secureJsonData).toEqual({ agentToken: 's3cr3t-token' });
    expect(next.jsonData).toEqual({ scrapeInterval: '15s' });
    expect(JSON.stringify(next.jsonData)).not.toContain('s3cr3t-token');
  });

  it('shows a saved token as configured and resets it', async () => {
    const { onOptionsChange } = setup({
      secureJsonFields: { agentToken: true, basicAuthPassword: true },
      secureJsonData: { agentToken: 'stale' },
    });
    // A configured secret is never shown; the field offers "Reset" instead.
    expect(screen.queryByDisplayValue('stale')).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Reset' }));
    const next = lastChange(onOptionsChange);
    expect(next.secureJsonFields).toEqual({ agentToken: false, basicAuthPassword: true });
    expect(next.secureJsonData.agentToken).toBe('');
  });

  it.each([
    ['Scrape interval', 'soon', 'Use a duration such as 15s'],
    ['Query timeout', '0s', 'Use a duration such as 15s'],
    ['Instance label', 'kubernetes-pod', 'Use a Prometheus label name'],
    ['Metric prefix', 'vllm-', "Only letters, digits, '_' and ':'"],
  ])('hints when %s is %p', (label, value, hint) => {
    const keys: Record<string, string> = {
      'Scrape interval': 'scrapeInterval',
      'Query timeout': 'queryTimeout',
      'Instance label': 'instanceLabel',
      'Metric prefix': 'metricPrefix',
    };
    setup({ jsonData: { [keys[label]]: value } });
    expect(screen.getByText(hint, { exact: false })).toBeInTheDocument();
  });

  it('shows no hint for valid values', () => {
    setup({
      jsonData: { scrapeInterval: '1m30s', queryTimeout: '2m', instanceLabel: 'pod', metricPrefix: 'ray_vllm:' },
    });
    expect(screen.queryByText('Use a duration', { exact: false })).not.toBeInTheDocument();
    expect(screen.queryByText('label name', { exact: false })).not.toBeInTheDocument();
    expect(screen.queryByText('Only letters', { exact: false })).not.toBeInTheDocument();
  });
});
