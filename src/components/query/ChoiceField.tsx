import React from 'react';
import { Combobox, ComboboxOption, InlineField } from '@grafana/ui';

interface Props {
  label: string;
  id: string;
  tooltip: string;
  /** The stored value, or undefined for the backend default. */
  value: string | undefined;
  defaultValue: string;
  options: Array<ComboboxOption<string>>;
  variableRefs: string[];
  error?: string;
  onChange: (value: string) => void;
}

/**
 * One choice out of a fixed set (latency family, rank-by signal, aggregation), or a dashboard variable. No custom
 * values: with them, typing part of a label ("Time") would offer the typed text as the first, highlighted entry.
 * A value stored by hand that is neither (e.g. in a provisioned dashboard) is still shown, and validation flags it.
 */
export function ChoiceField({
  label,
  id,
  tooltip,
  value,
  defaultValue,
  options,
  variableRefs,
  error,
  onChange,
}: Props) {
  const all: Array<ComboboxOption<string>> = [
    ...options,
    ...variableRefs.map((v) => ({ value: v, label: v, group: 'Variables' })),
  ];
  return (
    <InlineField label={label} labelWidth={14} tooltip={tooltip} invalid={Boolean(error)} error={error}>
      <Combobox
        id={id}
        width={26}
        options={all}
        value={value ?? defaultValue}
        // Combobox hands over undefined when Enter is pressed while its highlight points past the filtered list.
        onChange={(option: ComboboxOption<string> | undefined) => option && onChange(option.value)}
      />
    </InlineField>
  );
}
