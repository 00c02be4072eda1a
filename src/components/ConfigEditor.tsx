import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { DataSourceDescription } from '@grafana/plugin-ui';
import { Divider } from '@grafana/ui';

import { VllmDataSourceOptions, VllmSecureJsonData } from '../types';
import { AgentSettings } from './config/AgentSettings';
import { ContainerSettings } from './config/ContainerSettings';
import { CostSettings } from './config/CostSettings';
import { AdvancedHttpSection, AuthSection, ConnectionSection } from './config/HttpSettings';
import { QuerySettings } from './config/QuerySettings';
import { SaturationSettings } from './config/SaturationSettings';
import { StackSettings } from './config/StackSettings';

type Props = DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>;

/** Where the settings are documented, linked from the top of the page. */
export const DOCS_URL = 'https://github.com/inferops/vllm-datasource#readme';

/**
 * Data-source settings page, in the sections Grafana's own data sources use (@grafana/plugin-ui): where Prometheus
 * is and how to reach it, then the vLLM stack (profile and selector decide whether anything is found), how queries
 * are sent, the node agents, the diagnosis thresholds, the GPUs' count and price, how cAdvisor's containers join the servers, and rarely needed HTTP options. Sections that hold only
 * defaults start collapsed; every value is kept whether its section is open or not.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const section = { options, onOptionsChange };
  return (
    <>
      <DataSourceDescription dataSourceName="vLLM" docsLink={DOCS_URL} hasRequiredFields />
      <Divider spacing={4} />
      <ConnectionSection {...section} />
      <Divider spacing={4} />
      <AuthSection {...section} />
      <Divider spacing={4} />
      <StackSettings {...section} />
      <Divider spacing={4} />
      <QuerySettings {...section} />
      <Divider spacing={4} />
      <AgentSettings {...section} />
      <Divider spacing={4} />
      <SaturationSettings {...section} />
      <Divider spacing={4} />
      <CostSettings {...section} />
      <Divider spacing={4} />
      <ContainerSettings {...section} />
      <Divider spacing={4} />
      <AdvancedHttpSection {...section} />
    </>
  );
}
