import React, { ChangeEvent } from 'react';
import { InlineField, Input } from '@grafana/ui';

export const LABEL_WIDTH = 20;
export const INPUT_WIDTH = 40;

export interface TextSettingFieldProps {
  label: string;
  tooltip: string;
  id: string;
  value: string | undefined;
  placeholder: string;
  onChange: (event: ChangeEvent<HTMLInputElement>) => void;
  /** Shown under the field; the value is still saved, the backend's "Save & test" has the last word. */
  error?: string;
}

/** One labelled text input; the placeholder shows the default the backend uses when the field is empty. */
export function TextSettingField({ label, tooltip, id, value, placeholder, onChange, error }: TextSettingFieldProps) {
  return (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip} invalid={Boolean(error)} error={error}>
      <Input id={id} width={INPUT_WIDTH} value={value ?? ''} placeholder={placeholder} onChange={onChange} />
    </InlineField>
  );
}
