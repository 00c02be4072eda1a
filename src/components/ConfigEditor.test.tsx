import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { ConfigEditor, DOCS_URL } from './ConfigEditor';
import { makeSettings } from '../testing/fixtures';

/** Renders the editor with a mock onOptionsChange and returns the mock. */
function setup(overrides: Parameters<typeof makeSettings>[0] = {}) {
  const onOptionsChange = jest.fn();
  const options = makeSettings(overrides);
  render(<ConfigEditor options={options} onOptionsChange={onOptionsChange} />);
  return { onOptionsChange, options };
}

/** Opens a collapsed section or sub-section by its title, as a user does with its chevron. */
function expand(title: string) {
  fireEvent.click(screen.getByRole('button', { name: `Expand section ${title}` }));
}

/** The options object passed in the most recent onOptionsChange call. */
function lastChange(mock: jest.Mock) {
  expect(mock).toHaveBeenCalled();
  return mock.mock.calls[mock.mock.calls.length - 1][0];
}

describe('ConfigEditor', () => {
  it('shows the backend defaults as placeholders without writing them', () => {
    const { onOptionsChange } = setup();
    expand('Profile overrides');
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
    ['Selector', 'selector', 'cluster="eu-1", namespace="inference"'],
  ])('writes %s to jsonData.%s', (label, key, value) => {
    const { onOptionsChange, options } = setup({ jsonData: { metricPrefix: 'vllm:' } });
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    const next = lastChange(onOptionsChange);
    expect(next.jsonData[key]).toBe(value);
    // Other settings survive the change.
    expect(next.jsonData).toEqual({ ...options.jsonData, [key]: value });
    expect(next.secureJsonData).toEqual(options.secureJsonData);
  });

  it('writes the stack profile and shows auto, without writing it, when none is set', async () => {
    const { onOptionsChange } = setup({ jsonData: { selector: 'namespace="inference"' } });
    expect(screen.getByRole('radio', { name: 'Auto' })).toBeChecked();
    expect(onOptionsChange).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('radio', { name: 'production-stack' }));
    expect(lastChange(onOptionsChange).jsonData).toEqual({
      selector: 'namespace="inference"',
      profile: 'production-stack',
    });
  });

  it('writes the Prometheus URL to url and mirrors it into jsonData.prometheusUrl', () => {
    const { onOptionsChange } = setup();
    fireEvent.change(screen.getByPlaceholderText('http://localhost:9090'), {
      target: { value: 'http://prometheus:9090' },
    });
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
    expand('Node agents');
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

  it('hints when the selector is not label matchers, and not when it is', () => {
    setup({ jsonData: { selector: 'cluster=eu-1' } });
    expect(screen.getByText('Use PromQL label matchers', { exact: false })).toBeInTheDocument();
  });

  it('shows no hint for a valid selector', () => {
    setup({ jsonData: { selector: '{cluster="eu-1", namespace=~"a|b"}' } });
    expect(screen.queryByText('Use PromQL label matchers', { exact: false })).not.toBeInTheDocument();
  });

  it('shows no hint for valid values', () => {
    setup({
      jsonData: { scrapeInterval: '1m30s', queryTimeout: '2m', instanceLabel: 'pod', metricPrefix: 'ray_vllm:' },
    });
    expect(screen.queryByText('Use a duration', { exact: false })).not.toBeInTheDocument();
    expect(screen.queryByText('label name', { exact: false })).not.toBeInTheDocument();
    expect(screen.queryByText('Only letters', { exact: false })).not.toBeInTheDocument();
  });

  describe('max concurrent queries', () => {
    it('shows the default as a placeholder and writes a number', () => {
      const { onOptionsChange, options } = setup({ jsonData: { metricPrefix: 'vllm:' } });
      expand('Load on Prometheus');
      const input = screen.getByLabelText('Max concurrent queries');
      expect(input).toHaveAttribute('placeholder', '10');
      fireEvent.change(input, { target: { value: '15' } });
      const next = lastChange(onOptionsChange);
      expect(next.jsonData).toEqual({ ...options.jsonData, maxConcurrentQueries: 15 });
    });

    it('clears the setting when emptied, so the backend default applies', () => {
      const { onOptionsChange } = setup({ jsonData: { maxConcurrentQueries: 5 } });
      fireEvent.change(screen.getByLabelText('Max concurrent queries'), { target: { value: '' } });
      expect(lastChange(onOptionsChange).jsonData).not.toHaveProperty('maxConcurrentQueries');
    });

    it.each([[0], [101], [2.5]])('flags %s as out of the range the backend accepts', (value) => {
      setup({ jsonData: { maxConcurrentQueries: value } });
      expect(screen.getByText('Use a whole number from 1 to 100')).toBeInTheDocument();
    });

    it.each([[1], [20], [100]])('accepts %s', (value) => {
      setup({ jsonData: { maxConcurrentQueries: value } });
      expect(screen.queryByText('Use a whole number from 1 to 100')).not.toBeInTheDocument();
    });
  });

  describe('incremental querying', () => {
    it('is on when never set, with the overlap default as a placeholder', () => {
      const { onOptionsChange } = setup();
      expand('Load on Prometheus');
      expect(screen.getByLabelText('Incremental querying')).toBeChecked();
      expect(screen.getByLabelText('Query overlap window')).toHaveAttribute('placeholder', '10m');
      expect(onOptionsChange).not.toHaveBeenCalled();
    });

    it('writes false when switched off', () => {
      const { onOptionsChange, options } = setup({ jsonData: { incrementalQueryOverlapWindow: '5m' } });
      fireEvent.click(screen.getByLabelText('Incremental querying'));
      expect(lastChange(onOptionsChange).jsonData).toEqual({ ...options.jsonData, incrementalQuerying: false });
    });

    it('hides the overlap while off', () => {
      setup({ jsonData: { incrementalQuerying: false } });
      expect(screen.getByLabelText('Incremental querying')).not.toBeChecked();
      expect(screen.queryByLabelText('Query overlap window')).not.toBeInTheDocument();
    });

    it('writes the overlap trimmed and clears it when emptied', () => {
      const { onOptionsChange } = setup({ jsonData: { incrementalQueryOverlapWindow: '5m' } });
      fireEvent.change(screen.getByLabelText('Query overlap window'), { target: { value: ' 2m ' } });
      expect(lastChange(onOptionsChange).jsonData.incrementalQueryOverlapWindow).toBe('2m');
      fireEvent.change(screen.getByLabelText('Query overlap window'), { target: { value: '' } });
      expect(lastChange(onOptionsChange).jsonData).not.toHaveProperty('incrementalQueryOverlapWindow');
    });

    it('flags an overlap that is not a duration', () => {
      setup({ jsonData: { incrementalQueryOverlapWindow: 'soon' } });
      expect(screen.getByText('Use a duration such as 10m or 1h')).toBeInTheDocument();
    });
  });

  describe('stall window', () => {
    it('sits in the diagnosis thresholds with the backend default as a placeholder, without writing it', () => {
      const { onOptionsChange } = setup();
      expect(screen.queryByLabelText('Stall window')).not.toBeInTheDocument();
      expand('Diagnosis thresholds');
      expect(screen.getByLabelText('Stall window')).toHaveAttribute('placeholder', '3m');
      expect(onOptionsChange).not.toHaveBeenCalled();
    });

    it('writes the stall window trimmed, keeping the other settings, and clears it when emptied', () => {
      const { onOptionsChange, options } = setup({ jsonData: { stallWindow: '5m', saturationQueue: 2 } });
      fireEvent.change(screen.getByLabelText('Stall window'), { target: { value: ' 10m ' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ ...options.jsonData, stallWindow: '10m' });
      fireEvent.change(screen.getByLabelText('Stall window'), { target: { value: '' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ saturationQueue: 2 });
    });

    it.each([['soon'], ['0s'], ['3 m'], ['-1m']])('flags %s, which is not a positive duration', (value) => {
      setup({ jsonData: { stallWindow: value } });
      expect(screen.getByText('Use a duration such as 3m or 5m')).toBeInTheDocument();
    });

    it.each([
      ['20s', undefined, 'Use at least two scrape intervals (2 × 15s)'],
      ['1m30s', '1m', 'Use at least two scrape intervals (2 × 1m)'],
    ])('flags %s with scrape interval %s as shorter than two scrapes', (stallWindow, scrapeInterval, error) => {
      setup({ jsonData: { stallWindow, scrapeInterval } });
      expect(screen.getByText(error)).toBeInTheDocument();
    });

    it.each([
      ['3m', undefined],
      ['30s', undefined],
      ['2m', '1m'],
      ['1h', '1d'],
    ])('accepts %s with scrape interval %s', (stallWindow, scrapeInterval) => {
      setup({ jsonData: { stallWindow, scrapeInterval } });
      expect(screen.getByLabelText('Stall window')).toHaveValue(stallWindow);
      expect(screen.queryByText(/Use a duration such as 3m|Use at least two scrape intervals/)).not.toBeInTheDocument();
    });
  });

  describe('node agents', () => {
    it('shows discovery when no URL is listed, as the backend does, with the defaults as placeholders', () => {
      const { onOptionsChange } = setup();
      expand('Node agents');
      expect(screen.getByRole('radio', { name: 'Prometheus discovery' })).toBeChecked();
      expect(screen.getByLabelText('Prometheus job')).toHaveAttribute('placeholder', 'vllm-node-agent');
      expect(screen.queryByLabelText('Agent URLs')).not.toBeInTheDocument();
      expect(screen.getByLabelText('Agent timeout')).toHaveAttribute('placeholder', '2s');
      expect(onOptionsChange).not.toHaveBeenCalled();
    });

    it('shows the static list when URLs are saved', () => {
      setup({ jsonData: { agentUrls: ['http://gpu-1:9400'] } });
      expect(screen.getByRole('radio', { name: 'Static list' })).toBeChecked();
      expect(screen.getByText('http://gpu-1:9400')).toBeInTheDocument();
      expect(screen.queryByLabelText('Prometheus job')).not.toBeInTheDocument();
    });

    it('switches to a static list', async () => {
      const { onOptionsChange } = setup({ jsonData: { agentJob: 'gpu-agents' } });
      await userEvent.click(screen.getByRole('radio', { name: 'Static list' }));
      expect(lastChange(onOptionsChange).jsonData).toEqual({ agentMode: 'static', agentJob: 'gpu-agents' });
    });

    it('explains that an empty static list falls back to discovery', () => {
      setup({ jsonData: { agentMode: 'static', agentJob: 'gpu-agents' } });
      expect(screen.getByLabelText('Agent URLs')).toBeInTheDocument();
      expect(screen.getByText(/agents are discovered from the Prometheus job/)).toHaveTextContent('gpu-agents');
    });

    it('adds agent URLs to jsonData.agentUrls', async () => {
      const { onOptionsChange } = setup({ jsonData: { agentUrls: ['http://gpu-1:9400'] } });
      await userEvent.type(screen.getByLabelText('Agent URLs'), 'http://gpu-2:9400{Enter}');
      const next = lastChange(onOptionsChange);
      expect(next.jsonData.agentUrls).toEqual(['http://gpu-1:9400', 'http://gpu-2:9400']);
      expect(next.secureJsonData).toBeUndefined();
    });

    it('removes an agent URL', async () => {
      const { onOptionsChange } = setup({ jsonData: { agentUrls: ['http://gpu-1:9400', 'http://gpu-2:9400'] } });
      await userEvent.click(screen.getAllByRole('button', { name: /Remove tag/i })[0]);
      expect(lastChange(onOptionsChange).jsonData.agentUrls).toEqual(['http://gpu-2:9400']);
    });

    it('flags agent URLs that are not http(s) URLs with a host', () => {
      setup({ jsonData: { agentUrls: ['http://gpu-1:9400', 'gpu-2:9400', 'http://user:pw@gpu-3'] } });
      expect(screen.getByText(/Not an http\(s\) URL/)).toHaveTextContent('gpu-2:9400, http://user:pw@gpu-3');
    });

    it('switching to discovery clears the URL list, which the backend would otherwise use instead', async () => {
      const { onOptionsChange } = setup({ jsonData: { agentUrls: ['http://gpu-1:9400'], scrapeInterval: '30s' } });
      await userEvent.click(screen.getByRole('radio', { name: 'Prometheus discovery' }));
      expect(lastChange(onOptionsChange).jsonData).toEqual({
        agentMode: 'discovery',
        agentUrls: undefined,
        scrapeInterval: '30s',
      });
    });

    it('in discovery mode edits the job name', () => {
      const { onOptionsChange } = setup({ jsonData: { agentMode: 'discovery' } });
      fireEvent.change(screen.getByLabelText('Prometheus job'), { target: { value: ' gpu-agents ' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ agentMode: 'discovery', agentJob: 'gpu-agents' });
    });

    it('in discovery mode edits the agent selector, and a cleared one is unset', () => {
      const { onOptionsChange } = setup({ jsonData: { agentMode: 'discovery' } });
      fireEvent.change(screen.getByLabelText('Agent selector'), { target: { value: ' cluster="eu-1" ' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ agentMode: 'discovery', agentSelector: 'cluster="eu-1"' });
      fireEvent.change(screen.getByLabelText('Agent selector'), { target: { value: ' ' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ agentMode: 'discovery', agentSelector: undefined });
    });

    it('flags an agent selector that is not label matchers', () => {
      setup({ jsonData: { agentMode: 'discovery', agentSelector: 'sum(up)' } });
      expect(screen.getByText(/Use PromQL label matchers/)).toBeInTheDocument();
    });

    it('writes the agent timeout to jsonData', () => {
      const { onOptionsChange } = setup();
      expand('Node agents');
      fireEvent.change(screen.getByLabelText('Agent timeout'), { target: { value: '500ms' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ agentTimeout: '500ms' });
    });

    it.each(['fast', '0s', '2m'])('hints when the agent timeout is %p (backend: 1ms to 1m)', (agentTimeout) => {
      setup({ jsonData: { agentTimeout } });
      expect(screen.getByText('Use a duration up to 1m, such as 2s or 500ms')).toBeInTheDocument();
    });
  });
  describe('layout', () => {
    it('shows the sections in the order an admin needs them', () => {
      setup();
      const titles = screen.getAllByRole('heading', { level: 3 }).map((h) => h.textContent);
      expect(titles).toEqual([
        'Connection',
        'Authentication',
        'vLLM stack',
        'Queries and performance',
        'Node agents',
        'Diagnosis thresholds',
        'GPUs and cost',
        'Containers (cAdvisor)',
        'Additional settings',
      ]);
      expect(screen.getByRole('link', { name: 'view the documentation' })).toHaveAttribute('href', DOCS_URL);
    });

    it('puts the profile and the selector first in the vLLM stack section, auto first among the profiles', () => {
      setup();
      const labels = screen
        .getAllByText(/^(Stack profile|Selector|Instance label|Scrape interval)$/)
        .map((e) => e.textContent);
      // The profile overrides (instance label, metric prefix) start collapsed, after the selector.
      expect(labels).toEqual(['Stack profile', 'Selector', 'Scrape interval']);
      const radios = screen.getAllByRole('radio');
      const profiles = ['Auto', 'Prometheus', 'production-stack', 'llm-d', 'KServe', 'Ray Serve'];
      profiles.forEach((name, i) => expect(radios[i]).toBe(screen.getByRole('radio', { name })));
    });

    it('keeps an explicit profile, which wins over detection', () => {
      setup({ jsonData: { profile: 'ray-serve' } });
      expect(screen.getByRole('radio', { name: 'Ray Serve' })).toBeChecked();
      expect(screen.getByRole('radio', { name: 'Auto' })).not.toBeChecked();
    });

    it('writes auto when chosen after another profile', async () => {
      const { onOptionsChange } = setup({ jsonData: { profile: 'kserve' } });
      await userEvent.click(screen.getByRole('radio', { name: 'Auto' }));
      expect(lastChange(onOptionsChange).jsonData).toEqual({ profile: 'auto' });
    });

    it.each([
      ['Profile overrides', 'Instance label'],
      ['Load on Prometheus', 'Max concurrent queries'],
      ['Node agents', 'Agent timeout'],
      ['Diagnosis thresholds', 'KV cache near full'],
      ['Additional settings', 'Allowed cookies'],
    ])('collapses %s while it holds only defaults', (title, field) => {
      setup();
      expect(screen.queryByLabelText(field)).not.toBeInTheDocument();
      expand(title);
      expect(screen.getByLabelText(field)).toBeInTheDocument();
    });

    it.each([
      ['Profile overrides', { instanceLabel: 'pod' }, 'Instance label'],
      ['Load on Prometheus', { incrementalQuerying: false }, 'Incremental querying'],
      ['Node agents', { agentJob: 'gpu-agents' }, 'Agent timeout'],
      ['Diagnosis thresholds', { saturationQueue: 4 }, 'Queue'],
      ['Diagnosis thresholds', { stallWindow: '5m' }, 'Stall window'],
      ['Additional settings', { keepCookies: ['session'] }, 'Allowed cookies'],
    ])('opens %s when a value in it is saved', (title, jsonData, field) => {
      setup({ jsonData });
      expect(screen.getByLabelText(field)).toBeInTheDocument();
      expect(screen.getByRole('button', { name: `Collapse section ${title}` })).toBeInTheDocument();
    });

    it('opens the node agents when only the token is saved', () => {
      setup({ secureJsonFields: { agentToken: true } });
      expect(screen.getByLabelText('Node agent token')).toBeInTheDocument();
    });

    it('keeps the values of collapsed sections when another setting changes', () => {
      const saved = {
        instanceLabel: 'pod',
        maxConcurrentQueries: 5,
        agentUrls: ['http://gpu-1:9400'],
        saturationKvHigh: 0.8,
        keepCookies: ['session'],
      };
      const { onOptionsChange } = setup({ jsonData: saved, secureJsonFields: { agentToken: true } });
      for (const title of [
        'Profile overrides',
        'Load on Prometheus',
        'Node agents',
        'Diagnosis thresholds',
        'Additional settings',
      ]) {
        fireEvent.click(screen.getByRole('button', { name: `Collapse section ${title}` }));
      }
      expect(screen.queryByLabelText('Instance label')).not.toBeInTheDocument();
      expect(screen.queryByLabelText('KV cache near full')).not.toBeInTheDocument();
      fireEvent.change(screen.getByLabelText('Scrape interval'), { target: { value: '30s' } });
      const next = lastChange(onOptionsChange);
      expect(next.jsonData).toEqual({ ...saved, scrapeInterval: '30s' });
      expect(next.secureJsonFields).toEqual({ agentToken: true });
    });

    it('keeps a value typed in a section after the section is collapsed', () => {
      const onOptionsChange = jest.fn();
      const { rerender } = render(<ConfigEditor options={makeSettings()} onOptionsChange={onOptionsChange} />);
      expand('Diagnosis thresholds');
      fireEvent.change(screen.getByLabelText('Queue'), { target: { value: '3' } });
      const typed = lastChange(onOptionsChange);
      rerender(<ConfigEditor options={typed} onOptionsChange={onOptionsChange} />);
      fireEvent.click(screen.getByRole('button', { name: 'Collapse section Diagnosis thresholds' }));
      fireEvent.change(screen.getByLabelText('Query timeout'), { target: { value: '1m' } });
      expect(lastChange(onOptionsChange).jsonData).toEqual({ saturationQueue: 3, queryTimeout: '1m' });
    });
  });

  describe('authentication', () => {
    it('offers no auth, basic auth and OAuth forwarding, and no cross-site credentials', async () => {
      setup();
      await userEvent.click(screen.getByLabelText('Authentication method'));
      const options = screen.getAllByRole('option').map((o) => o.textContent);
      expect(options.join('|')).toMatch(/No Authentication/);
      expect(options.join('|')).toMatch(/Basic authentication/);
      expect(options.join('|')).toMatch(/Forward OAuth Identity/);
      expect(options.join('|')).not.toMatch(/cross-site/);
    });

    it('shows cross-site credentials when a saved data source uses them, so they can be switched off', () => {
      setup({ withCredentials: true });
      expect(screen.getByText('Enable cross-site access control requests')).toBeInTheDocument();
    });

    it('switches to basic auth with the keys Grafana reads', async () => {
      const { onOptionsChange } = setup({ jsonData: { selector: 'job="vllm"' } });
      await userEvent.click(screen.getByLabelText('Authentication method'));
      await userEvent.click(screen.getByRole('option', { name: /Basic authentication/ }));
      const next = lastChange(onOptionsChange);
      expect(next.basicAuth).toBe(true);
      expect(next.withCredentials).toBe(false);
      expect(next.jsonData).toEqual({ selector: 'job="vllm"', oauthPassThru: false });
    });

    it('writes the basic-auth user to basicAuthUser', () => {
      const { onOptionsChange } = setup({ basicAuth: true });
      fireEvent.change(screen.getByPlaceholderText('User'), { target: { value: 'grafana' } });
      expect(lastChange(onOptionsChange).basicAuthUser).toBe('grafana');
    });

    it('keeps a CA certificate in secureJsonData and the switch in jsonData', async () => {
      const { onOptionsChange } = setup({ jsonData: { tlsAuthWithCACert: true } });
      const cert = '-----BEGIN CERTIFICATE-----';
      fireEvent.change(screen.getByPlaceholderText('Begins with --- BEGIN CERTIFICATE ---'), {
        target: { value: cert },
      });
      const next = lastChange(onOptionsChange);
      expect(next.secureJsonData).toEqual({ tlsCACert: cert });
      expect(next.jsonData).toEqual({ tlsAuthWithCACert: true });
    });
  });

  describe('additional settings', () => {
    it('writes the allowed cookies to jsonData.keepCookies', async () => {
      const { onOptionsChange } = setup();
      expand('Additional settings');
      await userEvent.type(screen.getByLabelText('Allowed cookies'), 'session{Enter}');
      expect(lastChange(onOptionsChange).jsonData).toEqual({ keepCookies: ['session'] });
    });
  });
});
