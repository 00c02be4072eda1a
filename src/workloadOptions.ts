/*
 * The workload query's choices and default, mirroring pkg/models/workload.go (WorkloadViews). The backend applies the
 * same default when the view is left out, so a new query shows data without the editor writing it.
 */
import { VllmWorkloadView } from './types';

export const DEFAULT_WORKLOAD_VIEW: VllmWorkloadView = 'tokens';

export const WORKLOAD_VIEW_OPTIONS: Array<{ value: VllmWorkloadView; label: string; description: string }> = [
  {
    value: 'tokens',
    label: 'Tokens and errors',
    description: 'Mean prompt and output tokens per request, finished requests/s, error share (time series)',
  },
  { value: 'prompt', label: 'Prompt lengths', description: 'Requests per prompt-length bucket per step (heatmap)' },
  {
    value: 'generation',
    label: 'Output lengths',
    description: 'Requests per generated-length bucket per step (heatmap)',
  },
];
