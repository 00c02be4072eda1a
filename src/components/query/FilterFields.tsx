import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { QueryErrors } from '../../queryValidation';
import { VllmResourceApi } from '../../types';
import { FilterField } from './FilterField';

export type FilterKey = 'models' | 'instances' | 'engines';

interface Props {
  datasource: VllmResourceApi;
  /** Which filters the query type takes (GPU queries only filter by instance). */
  show: FilterKey[];
  models?: string[];
  instances?: string[];
  engines?: string[];
  errors?: QueryErrors;
  onChange: (key: FilterKey, values: string[] | undefined) => void;
}

/**
 * The model, instance and engine filters. Each list is narrowed by the filters before it (instances of the chosen
 * models, engines of the chosen instances), resolving variables first so "$model" narrows by its current value.
 */
export function FilterFields({ datasource, show, models, instances, engines, errors = {}, onChange }: Props) {
  const variableRefs = datasource.getVariableRefs();
  const resolvedModels = datasource.interpolateList(models);
  const resolvedInstances = datasource.interpolateList(instances);
  const common = { variableRefs };

  if (show.length === 0) {
    return null;
  }
  return (
    <InlineFieldRow>
      {show.includes('models') && (
        <FilterField
          {...common}
          label="Models"
          id="vllm-filter-models"
          tooltip="Only these served models. Empty: all models."
          group="Models"
          values={models}
          fetchValues={() => datasource.getModels()}
          cacheKey="models"
          error={errors.models}
          onChange={(v) => onChange('models', v)}
        />
      )}
      {show.includes('instances') && (
        <FilterField
          {...common}
          label="Instances"
          id="vllm-filter-instances"
          tooltip="Only these vLLM servers (values of the instance label). Empty: all instances."
          group="Instances"
          values={instances}
          fetchValues={() => datasource.getInstances(resolvedModels)}
          cacheKey={JSON.stringify(['instances', resolvedModels])}
          error={errors.instances}
          onChange={(v) => onChange('instances', v)}
        />
      )}
      {show.includes('engines') && (
        <FilterField
          {...common}
          label="Engines"
          id="vllm-filter-engines"
          tooltip="Only these engine indexes (data-parallel engines inside a server). Empty: all engines."
          group="Engines"
          values={engines}
          fetchValues={() => datasource.getEngines(resolvedModels, resolvedInstances)}
          cacheKey={JSON.stringify(['engines', resolvedModels, resolvedInstances])}
          error={errors.engines}
          onChange={(v) => onChange('engines', v)}
        />
      )}
    </InlineFieldRow>
  );
}
