import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { LORA_FORMAT_OPTIONS } from '../../queryOptions';
import { VllmLoRAFormat } from '../../types';
import { OptionsProps } from './types';

/** LoRA: the table of adapters per server now (the backend's default) or their counts over time. */
export function LoRAOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Output"
        labelWidth={12}
        tooltip="vLLM reports LoRA adapters only when it runs with --enable-lora; V0 servers without it are left out."
        invalid={Boolean(errors.format)}
        error={errors.format}
      >
        <RadioButtonGroup<VllmLoRAFormat>
          options={LORA_FORMAT_OPTIONS}
          value={(query.format as VllmLoRAFormat | undefined) ?? 'table'}
          onChange={(format) => onChange({ format })}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
