/*
 * Client-side checks for the config editor. They mirror the backend's validation (pkg/models/settings.go) so a
 * mistake shows up next to the field while typing instead of only as a failed "Save & test". The backend stays
 * the authority: these functions only decide whether to show a hint, they never block saving.
 */

/** Go duration ("1m30s", "500ms", "1.5h") or Grafana's day/week/month/year units ("1d", "2w"), like gtime.ParseDuration. */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const GRAFANA_LONG_DURATION = /^\d+[dwMy]$/;
const ALL_ZERO = /^((0+(\.0*)?)(ns|us|µs|ms|s|m|h|d|w|M|y))+$/;

/** True when empty (the backend default applies) or a positive duration such as 15s or 1m. */
export function isValidDuration(value: string | undefined): boolean {
  const v = (value ?? '').trim();
  if (v === '') {
    return true;
  }
  return (GO_DURATION.test(v) || GRAFANA_LONG_DURATION.test(v)) && !ALL_ZERO.test(v);
}

/** True when empty or a Prometheus label name. */
export function isValidLabelName(value: string | undefined): boolean {
  return !value || /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(value);
}

/** True when empty or a valid start of a metric name (letters, digits, '_' and ':'), e.g. "vllm:". */
export function isValidMetricPrefix(value: string | undefined): boolean {
  return !value || /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(value);
}
