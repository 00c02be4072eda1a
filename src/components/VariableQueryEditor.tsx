import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup, Stack } from '@grafana/ui';

import { VllmQueryEditorProps, VllmVariableQuery, VllmVariableResource } from '../types';
import { normalizeVariableQuery } from '../variableQuery';
import { FilterField } from './query/FilterField';

type Props = VllmQueryEditorProps<VllmVariableQuery>;

const RESOURCE_OPTIONS: Array<{ value: VllmVariableResource; label: string; description: string }> = [
  { value: 'models', label: 'Models', description: 'Every served model' },
  { value: 'instances', label: 'Instances', description: 'vLLM servers, optionally of some models' },
  { value: 'engines', label: 'Engines', description: 'Engine indexes, optionally of some models and instances' },
  { value: 'clusters', label: 'Clusters', description: 'Values of the cluster label on vLLM series (none without it)' },
  {
    value: 'namespaces',
    label: 'Namespaces',
    description: 'Values of the namespace label on vLLM series (none without it)',
  },
];

/**
 * Query variable editor: what to list, and for instances and engines an optional narrowing by model (and instance),
 * which may use other variables to build chained variables such as "instances of $model".
 */
export function VariableQueryEditor({ query: rawQuery, datasource, onChange }: Props) {
  // Grafana hands a new variable an empty string or nothing; treat it as "list models".
  const query = normalizeVariableQuery(rawQuery);
  const variableRefs = datasource.getVariableRefs();
  const models = datasource.interpolateList(query.models);
  const change = (patch: Partial<VllmVariableQuery>) => onChange({ ...query, ...patch });

  return (
    <Stack direction="column" gap={0}>
      <InlineField label="List" labelWidth={14}>
        <RadioButtonGroup
          options={RESOURCE_OPTIONS}
          value={query.resource}
          onChange={(resource) => change({ resource })}
        />
      </InlineField>
      {query.resource !== 'models' && (
        <InlineFieldRow>
          <FilterField
            label="Of models"
            id="vllm-variable-models"
            tooltip="Only list what serves these models. Empty: all."
            group="Models"
            values={query.models}
            fetchValues={() => datasource.getModels()}
            cacheKey="models"
            variableRefs={variableRefs}
            onChange={(values) => change({ models: values })}
          />
          {query.resource === 'engines' && (
            <FilterField
              label="Of instances"
              id="vllm-variable-instances"
              tooltip="Only list engines of these instances. Empty: all."
              group="Instances"
              values={query.instances}
              fetchValues={() => datasource.getInstances(models)}
              cacheKey={JSON.stringify(['instances', models])}
              variableRefs={variableRefs}
              onChange={(values) => change({ instances: values })}
            />
          )}
        </InlineFieldRow>
      )}
    </Stack>
  );
}
