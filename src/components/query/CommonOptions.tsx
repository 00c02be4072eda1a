import React from 'react';
import { InlineField, InlineFieldRow, Input } from '@grafana/ui';

import { OptionsProps } from './types';

interface Props extends Pick<OptionsProps, 'query' | 'errors' | 'onChange'> {
  showLegend: boolean;
  showMinStep: boolean;
  showMatchers: boolean;
}

/**
 * Legend and min step. Both are free text: the query changes as you type but runs on blur, so typing does not send
 * a query per key stroke.
 */
export function CommonOptions({ query, errors, onChange, showLegend, showMinStep, showMatchers }: Props) {
  if (!showLegend && !showMinStep && !showMatchers) {
    return null;
  }
  return (
    <InlineFieldRow>
      {showMatchers && (
        <InlineField
          label="Label matchers"
          labelWidth={16}
          tooltip='PromQL label matchers on any label, added to every series the query reads, e.g. namespace="inference", pod=~"vllm-.*". Dashboard variables are allowed: namespace=~"$namespace". Empty: no extra matchers.'
          invalid={Boolean(errors.matchers)}
          error={errors.matchers}
        >
          <Input
            id="vllm-matchers"
            width={40}
            value={query.matchers ?? ''}
            placeholder='namespace="inference"'
            onChange={(event) => onChange({ matchers: event.currentTarget.value || undefined }, false)}
            onBlur={() => onChange({}, true)}
          />
        </InlineField>
      )}
      {showLegend && (
        <InlineField
          label="Legend"
          labelWidth={12}
          tooltip="Series name template, e.g. {{model}} on {{instance}}. Dashboard variables are allowed."
        >
          <Input
            id="vllm-legend"
            width={30}
            value={query.legend ?? ''}
            placeholder="Auto"
            onChange={(event) => onChange({ legend: event.currentTarget.value }, false)}
            onBlur={() => onChange({}, true)}
          />
        </InlineField>
      )}
      {showMinStep && (
        <InlineField
          label="Min step"
          labelWidth={12}
          tooltip="Lower bound of the query step, e.g. 30s, 1m or $__rate_interval. Empty: picked from the time range and the scrape interval."
          invalid={Boolean(errors.interval)}
          error={errors.interval}
        >
          <Input
            id="vllm-interval"
            width={16}
            value={query.interval ?? ''}
            placeholder="auto"
            onChange={(event) => onChange({ interval: event.currentTarget.value || undefined }, false)}
            onBlur={() => onChange({}, true)}
          />
        </InlineField>
      )}
    </InlineFieldRow>
  );
}
