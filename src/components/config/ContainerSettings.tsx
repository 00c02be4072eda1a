import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, RadioButtonGroup, TextArea } from '@grafana/ui';

import { VllmContainerLabels, VllmContainerMapping, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { LABEL_WIDTH } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

const LABEL_OPTIONS: Array<{ label: string; value: VllmContainerLabels; description: string }> = [
  { label: 'kubelet', value: 'kubelet', description: 'pod, container (Kubernetes 1.16 and later)' },
  { label: 'legacy', value: 'legacy', description: 'pod_name, container_name (kubelets before 1.16)' },
];

/** The most entries the backend accepts (models.MaxContainerMap). */
export const MAX_CONTAINER_MAP = 500;

/** The map as the text area shows it: one "instance = /cgroup/path" or "instance = name" a line. */
export function formatContainerMap(map: VllmContainerMapping[] | undefined): string {
  return (map ?? []).map((m) => `${m.instance} = ${m.id ?? m.name ?? ''}`).join('\n');
}

/**
 * Reads the text area: one mapping a line, "instance = container", where a container starting with / is a cgroup
 * path (cAdvisor's id label) and anything else a container name. Blank lines are skipped. The error names the first
 * bad line, or a container mapped twice, as the backend would refuse them.
 */
export function parseContainerMap(text: string): { map: VllmContainerMapping[]; error?: string } {
  const map: VllmContainerMapping[] = [];
  const seen = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') {
      continue;
    }
    const eq = line.indexOf('=');
    const instance = eq < 0 ? '' : line.slice(0, eq).trim();
    const container = eq < 0 ? '' : line.slice(eq + 1).trim();
    if (instance === '' || container === '') {
      return { map, error: `Line ${i + 1}: write "instance = /cgroup/path" or "instance = container-name"` };
    }
    if (seen.has(container)) {
      return { map, error: `Line ${i + 1}: ${container} is mapped twice; a container belongs to one vLLM server` };
    }
    seen.add(container);
    map.push(container.startsWith('/') ? { instance, id: container } : { instance, name: container });
  }
  if (map.length > MAX_CONTAINER_MAP) {
    return { map, error: `At most ${MAX_CONTAINER_MAP} mappings; relabel a larger fleet so a label joins it` };
  }
  return { map };
}

/**
 * How the container query joins cAdvisor's series to the vLLM servers: the kubelet's label names, and a map for
 * containers no label joins (standalone cAdvisor watching Docker containers or raw cgroups).
 */
export function ContainerSettings({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const [text, setText] = React.useState(formatContainerMap(jsonData.containerMap));
  const { error } = parseContainerMap(text);
  const onMapChange = (event: React.FormEvent<HTMLTextAreaElement>) => {
    const raw = event.currentTarget.value;
    setText(raw);
    const parsed = parseContainerMap(raw);
    const next = { ...jsonData };
    if (parsed.map.length === 0) {
      delete next.containerMap;
    } else {
      next.containerMap = parsed.map;
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <ConfigSection
      title="Containers (cAdvisor)"
      description="For the container query, the fleet table's container columns and the saturation evidence."
      isCollapsible
      isInitiallyOpen={Boolean(jsonData.containerLabels || jsonData.containerMap?.length)}
    >
      <InlineField
        label="Container labels"
        labelWidth={LABEL_WIDTH}
        tooltip="How cAdvisor names a Kubernetes pod and container; the kubelet's current names unless it is older than 1.16."
      >
        <RadioButtonGroup<VllmContainerLabels>
          options={LABEL_OPTIONS}
          value={jsonData.containerLabels ?? 'kubelet'}
          onChange={(containerLabels) => onOptionsChange({ ...options, jsonData: { ...jsonData, containerLabels } })}
        />
      </InlineField>
      <InlineField
        label="Container map"
        labelWidth={LABEL_WIDTH}
        tooltip="Only where no label joins a container to its vLLM server (standalone cAdvisor). One line each: the server's instance, =, then the container's cgroup path (cAdvisor's id, starting with /) or its name. Docker containers named like the instance's host join without it."
        invalid={Boolean(error)}
        error={error}
      >
        <TextArea
          id="vllm-container-map"
          cols={60}
          rows={4}
          value={text}
          placeholder={'10.0.3.7:8000 = /vllm/engine-0\n10.0.3.8:8000 = vllm-1'}
          onChange={onMapChange}
        />
      </InlineField>
    </ConfigSection>
  );
}
