import { DataQueryRequest, DataQueryResponse, LiveChannelScope, StreamingFrameAction } from '@grafana/data';
import { DataSourceWithBackend, LiveDataStreamOptions, setTemplateSrv } from '@grafana/runtime';
import { lastValueFrom, of, toArray } from 'rxjs';

import { DataSource } from './datasource';
import { base64url, isLive, liveAddress, livePath } from './live';
import { VllmQuery } from './types';
import { FakeTemplateSrv, makeInstanceSettings } from './testing/fixtures';

const getDataStream = jest.fn();

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getGrafanaLiveSrv: () => ({ getDataStream }),
}));

/** The options a path carries, decoded as the backend decodes them (pkg/live). */
function optionsOf(path: string): unknown {
  return JSON.parse(Buffer.from(path.slice(path.indexOf('/') + 1), 'base64url').toString('utf8'));
}

function request(targets: VllmQuery[]): DataQueryRequest<VllmQuery> {
  return { requestId: 'r1', targets, maxDataPoints: 300, scopedVars: {} } as unknown as DataQueryRequest<VllmQuery>;
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ model: 'llama-3-8b' }));
  getDataStream.mockReset();
  getDataStream.mockImplementation((o: LiveDataStreamOptions) =>
    of({ data: [{ name: o.addr.path, fields: [], length: 0 }] })
  );
});

describe('live paths', () => {
  it('are the kind and the base64url options, as pkg/live reads them', () => {
    // The same literal is parsed by pkg/live's TestFrontendPath: the two sides agree on the format.
    const q: VllmQuery = {
      refId: 'A',
      queryType: 'queue',
      live: true,
      grouping: 'instance',
      models: ['m/1'],
      hide: false,
    };
    expect(livePath(q)).toBe('queue/eyJncm91cGluZyI6Imluc3RhbmNlIiwibW9kZWxzIjpbIm0vMSJdfQ');
    expect(optionsOf(livePath(q))).toEqual({ grouping: 'instance', models: ['m/1'] });
  });

  it('are the same for the same query whatever the key order or refId, so panels share a channel', () => {
    const a: VllmQuery = { refId: 'A', queryType: 'fleet', worst: 3, live: true, instances: ['a'] };
    const b: VllmQuery = { instances: ['a'], live: true, queryType: 'fleet', refId: 'B', worst: 3 };
    expect(livePath(a)).toBe(livePath(b));
  });

  it('carry any filter value in channel-path characters', () => {
    const path = livePath({ refId: 'A', queryType: 'queue', matchers: 'pod=~"vllm-.*", team="é+/ü"' });
    expect(path).toMatch(/^queue\/[A-Za-z0-9_-]+$/);
    expect(optionsOf(path)).toEqual({ matchers: 'pod=~"vllm-.*", team="é+/ü"' });
    expect(base64url('>>?')).toBe('Pj4_');
  });

  it('put options too long for a channel in the data, their SHA-256 in the path', () => {
    // pkg/live's TestFrontendPath parses the same hash and options.
    const models = [
      'meta-llama/Llama-3.1-8B-Instruct',
      'Qwen/Qwen2.5-7B-Instruct',
      'mistralai/Mistral-7B-Instruct-v0.3',
    ];
    const long: VllmQuery = { refId: 'A', queryType: 'queue', live: true, grouping: 'instance_engine', models };
    const addr = liveAddress('vllm-uid', long);
    expect(`ds/vllm-uid/${livePath(long)}`.length).toBeGreaterThan(160);
    expect(addr.path).toBe('queue/sha256/gjwqFkmljk8Fy96kOOQ_14rBQEH5ByQTvrAkSB4Kpic');
    expect(addr.data).toEqual({
      options:
        'eyJncm91cGluZyI6Imluc3RhbmNlX2VuZ2luZSIsIm1vZGVscyI6WyJtZXRhLWxsYW1hL0xsYW1hLTMuMS04Qi1JbnN0cnVjdCIsIlF3ZW4vUXdlbjIuNS03Qi1JbnN0cnVjdCIsIm1pc3RyYWxhaS9NaXN0cmFsLTdCLUluc3RydWN0LXYwLjMiXX0',
    });
    const short = liveAddress('vllm-uid', { refId: 'A', queryType: 'queue', live: true });
    expect(short.path).toBe('queue/e30');
    expect(short.data).toBeUndefined();
  });

  it('stream only queue and fleet', () => {
    expect(isLive({ refId: 'A', queryType: 'queue', live: true })).toBe(true);
    expect(isLive({ refId: 'A', queryType: 'fleet', live: true })).toBe(true);
    expect(isLive({ refId: 'A', queryType: 'queue' })).toBe(false);
    expect(isLive({ refId: 'A', queryType: 'waitTime', live: true })).toBe(false);
  });
});

describe('DataSource.query with live queries', () => {
  let ds: DataSource;
  let backend: jest.SpyInstance;
  beforeEach(() => {
    ds = new DataSource(makeInstanceSettings());
    backend = jest
      .spyOn(DataSourceWithBackend.prototype, 'query')
      .mockImplementation((r: DataQueryRequest) =>
        of({ data: r.targets.map((t) => ({ refId: t.refId, fields: [], length: 0 })) })
      );
  });
  afterEach(() => backend.mockRestore());

  it('merges the live streams with the polled queries', async () => {
    const targets: VllmQuery[] = [
      { refId: 'A', queryType: 'queue', live: true, models: ['$model'] },
      { refId: 'B', queryType: 'fleet', live: true, worst: 5 },
      { refId: 'C', queryType: 'waitTime', live: true },
    ];
    const out: DataQueryResponse[] = await lastValueFrom(ds.query(request(targets)).pipe(toArray()));

    expect(getDataStream).toHaveBeenCalledTimes(2);
    const [queue, fleet] = getDataStream.mock.calls.map((c) => c[0] as LiveDataStreamOptions);
    expect(queue.addr.scope).toBe(LiveChannelScope.DataSource);
    expect(queue.addr.stream).toBe('vllm-uid');
    expect(optionsOf(queue.addr.path)).toEqual({ models: ['llama-3-8b'] });
    expect(queue.buffer).toEqual({ action: StreamingFrameAction.Append, maxLength: 300 });
    expect(fleet.addr.path.startsWith('fleet/')).toBe(true);
    expect(fleet.buffer).toEqual({ action: StreamingFrameAction.Replace });

    expect(backend).toHaveBeenCalledTimes(1);
    expect((backend.mock.calls[0][0] as DataQueryRequest<VllmQuery>).targets.map((t) => t.refId)).toEqual(['C']);
    const refIds = out.flatMap((r) => r.data.map((f: { refId?: string }) => f.refId)).sort();
    expect(refIds).toEqual(['A', 'B', 'C']);
  });

  it('polls as before when no query is live, and never streams a hidden one', async () => {
    await lastValueFrom(ds.query(request([{ refId: 'A', queryType: 'queue', live: true, hide: true }])));
    await lastValueFrom(ds.query(request([{ refId: 'B', queryType: 'queue' }])));
    expect(getDataStream).not.toHaveBeenCalled();
    expect(backend).toHaveBeenCalledTimes(2);
  });

  it('answers a live query the backend would refuse with its error, without subscribing', async () => {
    const out = await lastValueFrom(ds.query(request([{ refId: 'A', queryType: 'fleet', live: true, worst: -1 }])));
    expect(getDataStream).not.toHaveBeenCalled();
    expect(out.errors?.[0].message).toContain('worst');
    expect(out.errors?.[0].refId).toBe('A');
  });
});
