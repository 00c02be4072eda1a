import { ComponentType } from 'react';
import {
  CustomVariableSupport,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceApi,
  QueryEditorProps,
} from '@grafana/data';
import { Observable, from, map } from 'rxjs';

import { VariableQueryEditor } from './components/VariableQueryEditor';
import { DEFAULT_VARIABLE_QUERY, VllmDataSourceOptions, VllmQuery, VllmResourceApi, VllmVariableQuery } from './types';

/**
 * Query variables list models, instances or engines from the backend's resource routes, not from a data query:
 * the lists are what the backend already knows about the fleet, and no PromQL is written in the browser.
 */
type BaseDataSource = DataSourceApi<VllmQuery, VllmDataSourceOptions>;

export class VllmVariableSupport extends CustomVariableSupport<
  BaseDataSource,
  VllmVariableQuery,
  VllmQuery,
  VllmDataSourceOptions
> {
  // Grafana renders the editor with the data source that owns this support, i.e. our DataSource; the base type
  // (DataSourceApi.variables) only knows it as a DataSourceApi, hence the cast.
  editor = VariableQueryEditor as unknown as ComponentType<
    QueryEditorProps<BaseDataSource, VllmQuery, VllmDataSourceOptions, VllmVariableQuery>
  >;

  constructor(private readonly datasource: VllmResourceApi) {
    super();
  }

  /**
   * The query a new variable starts with. The base type declares the panel query type, but Grafana stores the
   * result as the variable's query (the one our editor and metricFindQuery read), hence the cast.
   */
  getDefaultQuery(): Partial<VllmQuery> {
    return DEFAULT_VARIABLE_QUERY as unknown as Partial<VllmQuery>;
  }

  query(request: DataQueryRequest<VllmVariableQuery>): Observable<DataQueryResponse> {
    const [target] = request.targets;
    return from(this.datasource.metricFindQuery(target, { scopedVars: request.scopedVars, range: request.range })).pipe(
      map((values) => ({ data: values }))
    );
  }
}
