import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { SATURATION_FORMAT_OPTIONS } from '../../queryOptions';
import { VllmSaturationFormat } from '../../types';
import { OptionsProps } from './types';

/** Saturation: the verdict table, the evidence series, or both (the backend's default). */
export function SaturationOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Output"
        labelWidth={12}
        tooltip="The thresholds behind each verdict are data-source settings (Saturation thresholds)."
        invalid={Boolean(errors.format)}
        error={errors.format}
      >
        <RadioButtonGroup<VllmSaturationFormat>
          options={SATURATION_FORMAT_OPTIONS}
          value={(query.format as VllmSaturationFormat | undefined) ?? 'both'}
          onChange={(format) => onChange({ format })}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
