import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { DEFAULT_WORKLOAD_VIEW, WORKLOAD_VIEW_OPTIONS } from '../../workloadOptions';
import { VllmQuery } from '../../types';
import { ChoiceField } from './ChoiceField';
import { PriorityFields } from './PriorityFields';
import { OptionsProps } from './types';

/**
 * Workload: which view. The default (token means, requests/s, error share) is time series; the two length views are
 * heatmaps, one frame per group, for Grafana's heatmap panel. The series view can be split or filtered by vLLM priority.
 */
export function WorkloadOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <ChoiceField
        label="View"
        id="vllm-workload-view"
        tooltip="Tokens and errors: series of mean prompt and output tokens per request, finished requests per second and the share of finished requests vLLM ended in error. Prompt / output lengths: how many requests finished in each length bucket per step, as a heatmap (use the Heatmap panel; set Min interval to get exact counts per step)."
        value={query.view}
        defaultValue={DEFAULT_WORKLOAD_VIEW}
        options={WORKLOAD_VIEW_OPTIONS}
        variableRefs={variableRefs}
        error={errors.view}
        onChange={(view) => onChange({ view: view as VllmQuery['view'] })}
      />
      {(query.view ?? DEFAULT_WORKLOAD_VIEW) === DEFAULT_WORKLOAD_VIEW && (
        <PriorityFields queryType="workload" query={query} errors={errors} onChange={onChange} />
      )}
    </InlineFieldRow>
  );
}
