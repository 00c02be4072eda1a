import React, { useState } from 'react';
import { InlineField, InlineFieldRow, Input, TextArea } from '@grafana/ui';

import { OptionsProps } from './types';

/**
 * PromQL: an expression for panels no vLLM query type covers, and the unit of its result. The expression is
 * committed on blur (or Shift+Enter), like Grafana's Prometheus editor, so a half-typed expression is not run.
 */
export function PromQLOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  const stored = query.expr ?? '';
  const [draft, setDraft] = useState(stored);
  // A change from outside replaces the draft (state derived from props, adjusted during render as React advises).
  const [lastStored, setLastStored] = useState(stored);
  if (stored !== lastStored) {
    setLastStored(stored);
    setDraft(stored);
  }
  const commit = () => {
    if (draft !== stored) {
      onChange({ expr: draft });
    }
  };

  return (
    <>
      <InlineFieldRow>
        <InlineField
          label="Expr"
          labelWidth={12}
          grow
          tooltip="PromQL. Dashboard variables are allowed; $__rate_interval, $__interval and $__range follow the plugin's step."
          invalid={Boolean(errors.expr)}
          error={errors.expr}
        >
          <TextArea
            id="vllm-expr"
            rows={3}
            value={draft}
            placeholder="sum by (model_name) (rate(vllm:generation_tokens_total[$__rate_interval]))"
            invalid={Boolean(errors.expr)}
            onChange={(event) => setDraft(event.currentTarget.value)}
            onBlur={commit}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && event.shiftKey) {
                event.preventDefault();
                commit();
              }
            }}
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField label="Unit" labelWidth={12} tooltip="Grafana unit of the result, e.g. reqps, short or s.">
          <Input
            id="vllm-unit"
            width={16}
            value={query.unit ?? ''}
            placeholder="none"
            onChange={(event) => onChange({ unit: event.currentTarget.value || undefined }, false)}
            onBlur={() => onChange({}, true)}
          />
        </InlineField>
      </InlineFieldRow>
    </>
  );
}
