import React from 'react';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { PreemptionOptions } from './PreemptionOptions';
import { VllmQuery } from '../../types';

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  render(<PreemptionOptions query={query} onChange={onChange} />);
  return onChange;
}

describe('PreemptionOptions', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'preemptions' };

  it.each([
    [{}, 'Annotations'],
    [{ asSeries: true }, 'Rate series'],
    [{ asSeries: true, perRequest: true }, 'Per request'],
  ])('shows %j as %s', (fields, label) => {
    setup({ ...base, ...fields });
    expect(screen.getByRole('radio', { name: label })).toBeChecked();
  });

  it.each([
    ['Per request', { asSeries: true, perRequest: true }],
    ['Rate series', { asSeries: true, perRequest: undefined }],
    ['Annotations', { asSeries: false, perRequest: undefined }],
  ])('stores %s as %j', async (label, want) => {
    const onChange = setup({ ...base, asSeries: label === 'Annotations', perRequest: label !== 'Per request' });
    await userEvent.click(screen.getByRole('radio', { name: label }));
    expect(onChange).toHaveBeenCalledWith(want);
  });
});
