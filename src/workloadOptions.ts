/*
 * The workload query's choices and default, from the backend's table of query types (queryTypes.json, generated from
 * pkg/models/querytable.go); the wording is the editor's. The backend applies the same default when the view is left
 * out, so a new query shows data without the editor writing it.
 */
import { choiceOptions, optionSpec } from './queryOptions';
import { VllmWorkloadView } from './types';

export const DEFAULT_WORKLOAD_VIEW = optionSpec('workload', 'view').default as VllmWorkloadView;

export const WORKLOAD_VIEW_OPTIONS = choiceOptions<VllmWorkloadView>('workload', 'view', {
  tokens: {
    label: 'Tokens and errors',
    description: 'Mean prompt and output tokens per request, finished requests/s, error share (time series)',
  },
  prompt: { label: 'Prompt lengths', description: 'Requests per prompt-length bucket per step (heatmap)' },
  generation: {
    label: 'Output lengths',
    description: 'Requests per generated-length bucket per step (heatmap)',
  },
});
