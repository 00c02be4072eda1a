import { DataSourcePlugin } from '@grafana/data';

import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { DataSource } from './datasource';
import { VllmDataSourceOptions, VllmQuery, VllmSecureJsonData } from './types';

// Entry point Grafana loads (dist/module.js): ties the data source class to its editors.
export const plugin = new DataSourcePlugin<DataSource, VllmQuery, VllmDataSourceOptions, VllmSecureJsonData>(DataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
