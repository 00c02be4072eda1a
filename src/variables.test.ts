import { normalizeVariableQuery } from './variableQuery';

describe('normalizeVariableQuery', () => {
  it.each([
    [undefined, { refId: 'VllmVariableQuery', resource: 'models' }],
    ['', { refId: 'VllmVariableQuery', resource: 'models' }],
    ['engines', { refId: 'VllmVariableQuery', resource: 'engines' }],
    [' instances ', { refId: 'VllmVariableQuery', resource: 'instances' }],
    ['label_values(x)', { refId: 'VllmVariableQuery', resource: 'models' }],
    [
      { refId: 'A', resource: 'gpus' },
      { refId: 'A', resource: 'models' },
    ],
  ])('reads %j as %j', (input, expected) => {
    expect(normalizeVariableQuery(input as never)).toEqual(expected);
  });

  it('returns a valid query unchanged', () => {
    const q = { refId: 'A', resource: 'instances' as const, models: ['$model'] };
    expect(normalizeVariableQuery(q)).toBe(q);
  });
});
