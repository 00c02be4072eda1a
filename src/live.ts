import { LiveChannelAddress, LiveChannelScope, StreamingFrameAction, StreamingFrameOptions } from '@grafana/data';

import { sha256 } from './sha256';
import { VllmQuery, VllmQueryType } from './types';

/**
 * Grafana Live for the data source: a queue or fleet query with `live` on is streamed from the backend's channel
 * ds/<uid>/<path> (pkg/live), pushed every scrape interval, instead of being polled. The path is
 * `<kind>/<options>`, options being the query's JSON (its options, without refId, datasource, hide or live) with
 * sorted keys, encoded base64url without padding (RFC 4648 §5), so every filter value fits a channel path and the
 * same query on two panels is one channel: Grafana runs one stream per channel whatever its subscribers. Grafana
 * refuses a channel longer than 160 characters; options that would make one go in the subscription's data,
 * `{"options": "<options>"}`, and the path is `<kind>/sha256/<base64url SHA-256 of options>`.
 */

/** The longest channel (ds/<uid>/<path>) Grafana accepts. */
export const MAX_CHANNEL_LENGTH = 160;

/** The query types that can be streamed: their answer is current state. */
export const LIVE_KINDS: readonly VllmQueryType[] = ['queue', 'fleet'];

/** Whether the query is streamed rather than polled. */
export function isLive(query: VllmQuery): boolean {
  return query.live === true && LIVE_KINDS.includes(query.queryType);
}

/** Fields of a panel's query that are not the query's options. */
const NOT_OPTIONS = new Set(['refId', 'datasource', 'hide', 'live', 'key', 'queryType']);

/** The encoded options of an interpolated live query: base64url of its options' JSON, keys sorted. */
export function liveOptions(query: VllmQuery): string {
  const options: Record<string, unknown> = {};
  for (const key of Object.keys(query).sort()) {
    const value = (query as unknown as Record<string, unknown>)[key];
    if (!NOT_OPTIONS.has(key) && value !== undefined) {
      options[key] = value;
    }
  }
  return base64url(JSON.stringify(options));
}

/** The channel path of an interpolated live query with its options in the path (see pkg/live ParseChannel). */
export function livePath(query: VllmQuery): string {
  return `${query.queryType}/${liveOptions(query)}`;
}

/**
 * The channel address of a live query on the data source `uid`: ds/<uid>/<path>, the options in the path when the
 * channel fits Grafana's limit, else their SHA-256 in the path and the options in the data. Grafana 12 names the uid
 * `stream`; Grafana 11 reads `namespace`, so both are set.
 */
export function liveAddress(uid: string, query: VllmQuery): LiveChannelAddress {
  const base = { scope: LiveChannelScope.DataSource, stream: uid, namespace: uid };
  const path = livePath(query);
  if (`ds/${uid}/${path}`.length <= MAX_CHANNEL_LENGTH) {
    return { ...base, path };
  }
  const options = liveOptions(query);
  return { ...base, path: `${query.queryType}/sha256/${optionsHash(options)}`, data: { options } };
}

/**
 * How the panel keeps what the channel pushes: the queue is a time series, each tick's points appended (up to the
 * panel's max data points); the fleet table is current state, each tick replacing the last.
 */
export function liveBuffer(query: VllmQuery, maxDataPoints: number | undefined): Partial<StreamingFrameOptions> {
  if (query.queryType === 'fleet') {
    return { action: StreamingFrameAction.Replace };
  }
  return { action: StreamingFrameAction.Append, maxLength: maxDataPoints && maxDataPoints > 0 ? maxDataPoints : 1000 };
}

function bytesToBase64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The path part of encoded options sent in the data: base64url of the SHA-256 of their (ASCII) text. */
function optionsHash(options: string): string {
  return bytesToBase64url(sha256(Uint8Array.from(options, (c) => c.charCodeAt(0))));
}

/** base64url without padding of the UTF-8 bytes of text. */
export function base64url(text: string): string {
  const bytes = encodeURIComponent(text).replace(/%([0-9A-F]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16))
  );
  return btoa(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
