import React, { KeyboardEvent, useState } from 'react';
import { Input } from '@grafana/ui';

interface Props {
  id: string;
  /** The stored value as text. */
  value: string;
  placeholder?: string;
  width?: number;
  invalid?: boolean;
  /** Called with the typed text on blur or Enter, only when it differs from the stored value. */
  onCommit: (text: string) => void;
}

/**
 * A text input that keeps what is typed locally and hands it over on blur or Enter. Fields that are parsed (the
 * quantile list, k) cannot round-trip a half-typed value: "0." would become 0 and the caret would jump.
 */
export function CommitInput({ id, value, placeholder, width, invalid, onCommit }: Props) {
  const [draft, setDraft] = useState(value);
  // A change from outside (undo, a query copied in) replaces the draft. Adjusting state during render, as React
  // recommends for state derived from props, avoids rendering the stale draft once first.
  const [stored, setStored] = useState(value);
  if (value !== stored) {
    setStored(value);
    setDraft(value);
  }

  const commit = () => {
    if (draft !== value) {
      onCommit(draft);
    }
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      commit();
    }
  };
  return (
    <Input
      id={id}
      width={width}
      value={draft}
      placeholder={placeholder}
      invalid={invalid}
      onChange={(event) => setDraft(event.currentTarget.value)}
      onBlur={commit}
      onKeyDown={onKeyDown}
    />
  );
}
