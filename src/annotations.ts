import { AnnotationQuery, AnnotationSupport } from '@grafana/data';

import { AnnotationQueryEditor } from './components/AnnotationQueryEditor';
import { DEFAULT_ANNOTATION_QUERY, VllmQuery } from './types';

type Annotation = AnnotationQuery<VllmQuery>;

/**
 * Annotation support: the query editor in annotation mode, preemption events by default. Queries run through the
 * backend like panel queries; Grafana turns the returned event frame (time, timeEnd, title, text, tags) into
 * annotations with its standard field mapping.
 */
export const annotationSupport: AnnotationSupport<VllmQuery> = {
  QueryEditor: AnnotationQueryEditor,

  getDefaultQuery: () => DEFAULT_ANNOTATION_QUERY,

  /**
   * Gives an annotation without a usable query (a new one, or one saved before this plugin had an editor) the
   * preemption query. It returns the same object when nothing needs fixing: Grafana's annotation editor calls this
   * on every change and treats a new object as a fix to save, so always copying would loop.
   */
  prepareAnnotation(json: Annotation): Annotation {
    if (json?.target?.queryType) {
      return json;
    }
    return { ...json, target: { refId: 'Anno', ...DEFAULT_ANNOTATION_QUERY, ...json?.target } as VllmQuery };
  },

  /**
   * Preemptions come back as events only with asSeries and perRequest off; the annotation editor hides that switch,
   * and this keeps a value copied from a panel query from turning the annotation into series Grafana cannot show as events.
   */
  prepareQuery(anno: Annotation): VllmQuery | undefined {
    const target = anno.target;
    if (!target) {
      return undefined;
    }
    if (target.queryType !== 'preemptions') {
      return target;
    }
    const { perRequest: _perRequest, ...events } = target;
    return { ...events, asSeries: false };
  },
};
