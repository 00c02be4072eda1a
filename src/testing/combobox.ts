import { act, fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

/** Waits past the Combobox's 200 ms search debounce so async options have loaded. */
export async function waitForOptions() {
  await act(() => new Promise((resolve) => setTimeout(resolve, 260)));
}

/**
 * Enters search text in one input event (as a paste would) rather than one key stroke per character: each key
 * stroke re-renders and re-filters the whole menu, which made the editor tests slow enough to time out on a
 * busy two-core machine, and typing character by character adds nothing these tests check.
 */
function search(input: HTMLElement, text: string) {
  fireEvent.change(input, { target: { value: text } });
}

/**
 * Picks an option of a MultiCombobox the way a keyboard user does: focus, search, arrow to the first match, Enter.
 * Clicking option rows does not work in jsdom: the menu is virtualised and jsdom has no layout, so no rows are
 * rendered (the browser check, e2e/browser-check.mjs, clicks real rows). With `createCustomValue`, text that
 * matches no option exactly is offered as the first entry, so searching a full value picks that value either way.
 */
export async function pick(label: string, text: string) {
  const input = screen.getByLabelText(label);
  await userEvent.click(input);
  search(input, text);
  await waitForOptions();
  await userEvent.keyboard('{ArrowDown}{Enter}');
}

/**
 * Picks an option of a single-value Combobox: focus, search, Home to highlight the first match, Enter. Home is
 * needed: Combobox highlights the selected option's index in the full list, which after filtering can point past
 * the end of the shorter list (then Enter selects nothing).
 */
export async function pickOne(label: string, text: string) {
  const input = screen.getByLabelText(label);
  await userEvent.click(input);
  search(input, text);
  await userEvent.keyboard('{Home}{Enter}');
}
