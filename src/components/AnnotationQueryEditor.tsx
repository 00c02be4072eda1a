import React from 'react';

import { VllmQueryEditorProps } from '../types';
import { QueryEditor } from './QueryEditor';

type Props = VllmQueryEditorProps;

/**
 * The annotation query editor is the query editor in annotation mode. Grafana fills a new annotation's query from
 * annotationSupport.getDefaultQuery (preemption events), so there is nothing else to set up here.
 */
export function AnnotationQueryEditor(props: Props) {
  return <QueryEditor {...props} annotationMode />;
}
