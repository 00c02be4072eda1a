import { useCallback, useEffect, useRef } from 'react';
import { ComboboxOption } from '@grafana/ui';

/**
 * Async options for a filter picker: the dashboard's variables first, then the values the backend knows. The list
 * is fetched when the menu first opens (not on mount, so a dashboard with many queries sends no requests until
 * someone edits one) and kept per `cacheKey`, so typing filters locally instead of asking the backend again; a
 * new key (e.g. other models selected) fetches again. A failed fetch is not cached, so reopening retries.
 */
export function useListOptions(
  fetchValues: () => Promise<string[]>,
  cacheKey: string,
  variableRefs: string[],
  group: string
): (input: string) => Promise<Array<ComboboxOption<string>>> {
  const cache = useRef(new Map<string, Promise<string[]>>());
  // The fetcher closes over the current query; keep the latest without making the loader change on every render.
  const fetchRef = useRef(fetchValues);
  useEffect(() => {
    fetchRef.current = fetchValues;
  });

  const variablesKey = variableRefs.join('\n');
  return useCallback(
    async (input: string) => {
      let pending = cache.current.get(cacheKey);
      if (!pending) {
        pending = fetchRef.current();
        cache.current.set(cacheKey, pending);
        pending.catch(() => cache.current.delete(cacheKey));
      }
      const values = await pending;
      const needle = input.trim().toLowerCase();
      const options: Array<ComboboxOption<string>> = [
        ...variablesKey
          .split('\n')
          .filter((v) => v !== '')
          .map((v) => ({ value: v, label: v, group: 'Variables' })),
        ...values.map((v) => ({ value: v, label: v, group })),
      ];
      return needle === '' ? options : options.filter((o) => o.value.toLowerCase().includes(needle));
    },
    [cacheKey, variablesKey, group]
  );
}
