import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { CONTAINER_FORMAT_OPTIONS } from '../../queryOptions';
import { VllmContainerFormat } from '../../types';
import { OptionsProps } from './types';

/** Container (cAdvisor): series per server, container and signal (the backend's default) or one table row each. */
export function ContainerOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Output"
        labelWidth={12}
        tooltip="Needs cAdvisor scraped: the kubelet's /metrics/cadvisor on Kubernetes, or standalone cAdvisor (see the data source's container map)."
        invalid={Boolean(errors.format)}
        error={errors.format}
      >
        <RadioButtonGroup<VllmContainerFormat>
          options={CONTAINER_FORMAT_OPTIONS}
          value={(query.format as VllmContainerFormat | undefined) ?? 'series'}
          onChange={(format) => onChange({ format })}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
