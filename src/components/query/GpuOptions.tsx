import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { DEFAULT_GPU_FORMAT, DEFAULT_GPU_SOURCE, GPU_FORMAT_OPTIONS, GPU_SOURCE_OPTIONS } from '../../queryOptions';
import { OptionsProps } from './types';

/** GPU: where the numbers come from and whether they are a table (latest values) or time series. */
export function GpuOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Source"
        labelWidth={10}
        tooltip="Node agents answer with current values; Prometheus has the series it scraped from the agents, over the time range."
        invalid={Boolean(errors.source)}
        error={errors.source}
      >
        <RadioButtonGroup
          options={GPU_SOURCE_OPTIONS}
          value={query.source ?? DEFAULT_GPU_SOURCE}
          onChange={(source) => onChange({ source })}
        />
      </InlineField>
      <InlineField label="Format" labelWidth={10} invalid={Boolean(errors.format)} error={errors.format}>
        <RadioButtonGroup
          options={GPU_FORMAT_OPTIONS}
          value={query.format ?? DEFAULT_GPU_FORMAT}
          onChange={(format) => onChange({ format })}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
