import React from 'react';
import { DataSourcePluginOptionsEditorProps, DataSourceSettings } from '@grafana/data';
import {
  Auth,
  AuthMethod,
  ConfigSection,
  ConfigSubSection,
  ConnectionSettings,
  convertLegacyAuthProps,
} from '@grafana/plugin-ui';
import { InlineField, TagsInput } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { INPUT_WIDTH, LABEL_WIDTH } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;
type Settings = DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData>;

/**
 * The Prometheus URL. It is the data source's url, which the backend reads through the SDK's HTTP client options;
 * it is mirrored into jsonData.prometheusUrl, the backend's fallback and the key provisioning files use.
 */
export function ConnectionSection({ options, onOptionsChange }: Props) {
  const onChange = (next: Settings) =>
    onOptionsChange({ ...next, jsonData: { ...next.jsonData, prometheusUrl: next.url } });
  return (
    <ConnectionSettings
      config={options}
      onChange={onChange}
      urlLabel="Prometheus URL"
      urlPlaceholder={DEFAULT_SETTINGS.prometheusUrl}
      urlTooltip="Base URL of the Prometheus-compatible API that scrapes your vLLM servers: Prometheus, Thanos Query, Mimir (with its /prometheus path) or VictoriaMetrics."
      description="Where the vLLM metrics are: this data source queries them through Grafana's server, never from the browser."
    />
  );
}

/**
 * The auth methods a backend data source can use. Cross-site credentials only apply to requests from the browser,
 * which this plugin never makes, so it is offered only to switch away from it when a saved data source has it.
 */
function visibleMethods(options: Settings): AuthMethod[] {
  const methods = [AuthMethod.NoAuth, AuthMethod.BasicAuth, AuthMethod.OAuthForward];
  return options.withCredentials ? [...methods, AuthMethod.CrossSiteCredentials] : methods;
}

/**
 * Authentication, TLS and custom headers for the requests to Prometheus, with the keys Grafana's own data sources
 * use (basicAuth, jsonData.tls*, httpHeaderName<n>; passwords, keys and header values in secureJsonData).
 */
export function AuthSection({ options, onOptionsChange }: Props) {
  const props = convertLegacyAuthProps({ config: options, onChange: onOptionsChange });
  return <Auth {...props} visibleMethods={visibleMethods(options)} />;
}

/**
 * HTTP options few need: the cookies Grafana may forward. The request timeout is not here: Query timeout (under
 * Queries and performance) sets it for every request to Prometheus.
 */
export function AdvancedHttpSection({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const cookies = jsonData.keepCookies ?? [];
  return (
    <ConfigSection title="Additional settings" isCollapsible isInitiallyOpen={cookies.length > 0}>
      <ConfigSubSection title="Advanced HTTP settings">
        <InlineField
          label="Allowed cookies"
          labelWidth={LABEL_WIDTH}
          tooltip="Grafana drops the user's cookies from requests to data sources; the cookies named here are forwarded."
        >
          <TagsInput
            id="vllm-keep-cookies"
            width={INPUT_WIDTH}
            placeholder="Cookie name, Enter to add"
            tags={cookies}
            onChange={(keepCookies) => onOptionsChange({ ...options, jsonData: { ...jsonData, keepCookies } })}
          />
        </InlineField>
      </ConfigSubSection>
    </ConfigSection>
  );
}
