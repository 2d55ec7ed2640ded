import assert from 'node:assert/strict';
import test from 'node:test';
import { Type } from '@sinclair/typebox';
import { compile, createAjv } from '../../daemon/runtime/validation.ts';

const Body = Type.Object(
  {
    name: Type.String({ minLength: 1, pattern: '^[a-z]+$' }),
    count: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
    env: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Z]+$' }), Type.String(), { additionalProperties: false })),
    tags: Type.Optional(Type.Unsafe<Record<string, boolean>>({ type: 'object', propertyNames: { pattern: '^[a-z]+$' } })),
  },
  { additionalProperties: false },
);

test('validation: every issue at once, each with a JSON pointer to the field itself and a plain message', () => {
  const validate = compile(createAjv(), Body);
  assert.equal(validate({ name: 'ok', count: 3 }), true);
  assert.deepEqual(validate.issues(), []);

  assert.equal(validate({ count: 11, 'a/b~c': 1 }), false);
  assert.deepEqual(
    validate.issues().sort((a, b) => a.path.localeCompare(b.path)),
    [
      { path: '/a~1b~0c', message: 'is not an allowed field' },
      { path: '/count', message: 'must be <= 10' },
      { path: '/name', message: 'is required' },
    ],
  );
  assert.equal(validate({ name: 'Bad Name' }), false);
  assert.deepEqual(validate.issues(), [{ path: '/name', message: 'has a value or characters that are not allowed' }]);
  assert.equal(validate({ name: 'ok', env: { lower: 'x' } }), false);
  assert.deepEqual(validate.issues(), [{ path: '/env/lower', message: 'is not an allowed field' }]);
  // A bad property name is named once, by its pattern error, not again by propertyNames.
  assert.equal(validate({ name: 'ok', tags: { Bad: true } }), false);
  assert.deepEqual(validate.issues(), [{ path: '/tags', message: 'has a value or characters that are not allowed' }]);
  assert.equal(validate('text'), false);
  assert.deepEqual(validate.issues(), [{ path: '/', message: 'must be object' }]);
});

test('validation: bodies are never coerced; query strings are, but an infinite number is refused', () => {
  const body = compile(createAjv(), Body);
  assert.equal(body({ name: 'ok', count: '3' }), false, 'a string is not a number in a body');
  assert.deepEqual(body.issues(), [{ path: '/count', message: 'must be number' }]);

  const Query = Type.Object({ limit: Type.Optional(Type.Number({ minimum: 1 })) }, { additionalProperties: false });
  const query = compile(createAjv({ coerce: true }), Query);
  const q: Record<string, unknown> = { limit: '5' };
  assert.equal(query(q), true);
  assert.deepEqual(q, { limit: 5 }, 'coerced in place');
  for (const raw of ['Infinity', '1e400']) {
    assert.equal(query({ limit: raw }), false, raw);
    assert.deepEqual(query.issues(), [{ path: '/limit', message: 'must be a finite number' }]);
  }
  assert.equal(query({ limit: '2' }), true, 'the next value is judged afresh');
  assert.deepEqual(query.issues(), []);
});
