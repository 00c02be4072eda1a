import React from 'react';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { setTemplateSrv } from '@grafana/runtime';

import { QueryEditor } from '../QueryEditor';
import { FakeTemplateSrv, makeDataSource } from '../../testing/fixtures';
import { pickOne } from '../../testing/combobox';
import { validateQuery } from '../../queryValidation';
import { VllmQuery } from '../../types';

function setup(query: VllmQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const { ds } = makeDataSource({ models: [], instances: [], engines: [] });
  render(<QueryEditor datasource={ds} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({}));
});

describe('QueryEditor: container', () => {
  const base: VllmQuery = { refId: 'A', queryType: 'container' };

  it('shows the backend defaults: series, one answer per instance, a legend', () => {
    setup(base);
    expect(screen.getByRole('radio', { name: 'Series' })).toBeChecked();
    expect(screen.getByRole('radio', { name: 'Instance' })).toBeChecked();
    expect(screen.queryByRole('radio', { name: 'Model' })).not.toBeInTheDocument();
    expect(screen.getByLabelText('Legend')).toBeInTheDocument();
  });

  it('switches to the table, which has no legend, and runs', async () => {
    const { onChange, onRunQuery } = setup(base);
    await userEvent.click(screen.getByRole('radio', { name: 'Table' }));
    expect(onChange).toHaveBeenCalledWith({ ...base, format: 'table' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    setup({ ...base, format: 'table' });
    expect(screen.queryAllByLabelText('Legend')).toHaveLength(1);
  });

  it('drops another type’s format when switched to', async () => {
    const query: VllmQuery = { refId: 'A', queryType: 'lora', format: 'table' };
    const { onChange } = setup(query);
    await pickOne('Query', 'Container');
    expect(onChange).toHaveBeenCalledWith({ ...query, queryType: 'container', format: undefined });
  });

  it('flags what the backend would reject', () => {
    expect(validateQuery({ ...base, format: 'whatif' }).format).toMatch(/format/);
    expect(validateQuery({ ...base, grouping: 'model' }).grouping).toMatch(/not available/);
    expect(validateQuery({ ...base, format: 'table' })).toEqual({});
  });
});
