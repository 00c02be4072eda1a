import { AnnotationQuery } from '@grafana/data';

import { annotationSupport } from './annotations';
import { VllmQuery } from './types';

type Anno = AnnotationQuery<VllmQuery>;

const anno = (target?: Partial<VllmQuery>): Anno =>
  ({ name: 'Preemptions', enable: true, iconColor: 'red', target }) as Anno;

describe('annotationSupport', () => {
  it('defaults new annotation queries to preemption events', () => {
    expect(annotationSupport.getDefaultQuery?.()).toEqual({ queryType: 'preemptions', asSeries: false });
  });

  it('gives an annotation without a query the preemption query, keeping its other settings', () => {
    const fixed = annotationSupport.prepareAnnotation!(anno());
    expect(fixed).toEqual({ ...anno(), target: { refId: 'Anno', queryType: 'preemptions', asSeries: false } });
  });

  it('fills in the type of a target that lacks one and keeps its fields', () => {
    const fixed = annotationSupport.prepareAnnotation!(anno({ refId: 'X', models: ['m'] }));
    expect(fixed.target).toEqual({ refId: 'X', queryType: 'preemptions', asSeries: false, models: ['m'] });
  });

  it('returns the very same object when nothing needs fixing (Grafana would otherwise save in a loop)', () => {
    const ok = anno({ refId: 'Anno', queryType: 'queue' });
    expect(annotationSupport.prepareAnnotation!(ok)).toBe(ok);
  });

  it('always asks for preemption events, never the rate series', () => {
    const query = annotationSupport.prepareQuery!(anno({ refId: 'Anno', queryType: 'preemptions', asSeries: true }));
    expect(query).toEqual({ refId: 'Anno', queryType: 'preemptions', asSeries: false });
  });

  it('never asks for the per-request distribution either', () => {
    const query = annotationSupport.prepareQuery!(
      anno({ refId: 'Anno', queryType: 'preemptions', asSeries: true, perRequest: true })
    );
    expect(query).toStrictEqual({ refId: 'Anno', queryType: 'preemptions', asSeries: false });
  });

  it('passes other query types through and skips an annotation without a query', () => {
    const target = { refId: 'Anno', queryType: 'topk' as const, asSeries: true };
    expect(annotationSupport.prepareQuery!(anno(target))).toBe(target);
    expect(annotationSupport.prepareQuery!(anno())).toBeUndefined();
  });
});
