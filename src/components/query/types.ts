import { QueryErrors } from '../../queryValidation';
import { VllmQuery } from '../../types';

/** Props of the per-type option groups. */
export interface OptionsProps {
  query: VllmQuery;
  errors: QueryErrors;
  variableRefs: string[];
  /**
   * Applies a change to the query. `run` asks for the query to run afterwards (it does not while the query is
   * invalid); free-text fields pass false while typing and run on blur.
   */
  onChange: (patch: Partial<VllmQuery>, run?: boolean) => void;
}
