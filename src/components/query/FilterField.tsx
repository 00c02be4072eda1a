import React from 'react';
import { ComboboxOption, InlineField, MultiCombobox } from '@grafana/ui';

import { useListOptions } from './useListOptions';

interface Props {
  label: string;
  id: string;
  tooltip: string;
  values: string[] | undefined;
  /** Fetches the values the backend knows (a resource route). */
  fetchValues: () => Promise<string[]>;
  /** Changes when the fetched list would differ (narrowing by other filters), so it is fetched again. */
  cacheKey: string;
  variableRefs: string[];
  /** Heading of the fetched values in the menu, e.g. "Models". */
  group: string;
  error?: string;
  onChange: (values: string[] | undefined) => void;
}

/**
 * A multi-value filter: values from the backend, dashboard variables, or anything typed (a model not yet serving,
 * an instance behind a relabel rule). An empty selection is stored as undefined, which means "no filter".
 */
export function FilterField({
  label,
  id,
  tooltip,
  values,
  fetchValues,
  cacheKey,
  variableRefs,
  group,
  error,
  onChange,
}: Props) {
  const loadOptions = useListOptions(fetchValues, cacheKey, variableRefs, group);
  const onSelect = (options: Array<ComboboxOption<string>>) => {
    const next = options.map((o) => o.value);
    onChange(next.length > 0 ? next : undefined);
  };
  return (
    <InlineField label={label} labelWidth={12} tooltip={tooltip} invalid={Boolean(error)} error={error}>
      <MultiCombobox
        id={id}
        width="auto"
        minWidth={24}
        maxWidth={60}
        placeholder="All"
        options={loadOptions}
        value={values ?? []}
        onChange={onSelect}
        createCustomValue
        isClearable
      />
    </InlineField>
  );
}
