import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { QueryEditor } from './QueryEditor';
import { DataSource } from '../datasource';
import { makeInstanceSettings } from '../testing/fixtures';
import { VllmQuery } from '../types';

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  render(
    <QueryEditor
      datasource={new DataSource(makeInstanceSettings())}
      query={query}
      onChange={onChange}
      onRunQuery={onRunQuery}
    />
  );
  return { onChange, onRunQuery };
}

describe('QueryEditor', () => {
  it('shows the defaults for a query saved without type and grouping', () => {
    setup({ refId: 'A' } as VllmQuery);
    expect(screen.getByRole('combobox')).toHaveValue('Queue depth');
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.getByLabelText('Legend')).toHaveValue('');
  });

  it.each([
    ['Wait time', 'waitTime'],
    ['Preemptions', 'preemptions'],
    ['Top-k', 'topk'],
    ['GPU', 'gpu'],
  ])('calls onChange with the new query type when %s is picked, and runs the query', async (label, queryType) => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'instance', legend: '{{model}}', k: 3 };
    const { onChange, onRunQuery } = setup(query);

    // Pick by keyboard, as a user would: type to filter, Enter to take the highlighted option. (Clicking an option
    // does not work in jsdom: the menu is virtualised and jsdom has no layout, so no option rows are rendered.)
    await userEvent.click(screen.getByRole('combobox'));
    await userEvent.keyboard(`${label}{Enter}`);

    expect(onChange).toHaveBeenCalledTimes(1);
    // Only the type changes; everything else, including fields this editor does not show, is kept.
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('changes the grouping', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'preemptions', grouping: 'instance' };
    const { onChange, onRunQuery } = setup(query);
    await userEvent.click(screen.getByRole('radio', { name: 'Engine' }));
    expect(onChange).toHaveBeenCalledWith({ ...query, grouping: 'instance_engine' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('offers only instance and engine grouping for top-k', () => {
    setup({ refId: 'A', queryType: 'topk', grouping: 'instance' });
    expect(screen.getAllByRole('radio')).toHaveLength(2);
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Engine' })).toBeInTheDocument();
    expect(screen.queryByRole('radio', { name: 'Fleet' })).not.toBeInTheDocument();
    expect(screen.queryByRole('radio', { name: 'Model' })).not.toBeInTheDocument();
  });

  it('resets a grouping top-k does not accept when switching to top-k', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model' };
    const { onChange } = setup(query);
    await userEvent.click(screen.getByRole('combobox'));
    await userEvent.keyboard('Top-k{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'topk', grouping: 'instance' });
  });

  it('keeps an accepted grouping when switching to top-k', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'instance_engine' };
    const { onChange } = setup(query);
    await userEvent.click(screen.getByRole('combobox'));
    await userEvent.keyboard('Top-k{Enter}');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'topk' });
  });

  it('edits the legend and runs the query only on blur', () => {
    const query: VllmQuery = { refId: 'A', queryType: 'topk' };
    const { onChange, onRunQuery } = setup(query);
    const legend = screen.getByLabelText('Legend');
    fireEvent.change(legend, { target: { value: '{{instance}}' } });
    expect(onChange).toHaveBeenCalledWith({ ...query, legend: '{{instance}}' });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(legend);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});
