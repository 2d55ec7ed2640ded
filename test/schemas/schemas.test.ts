import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { Kind } from '@sinclair/typebox';
import { ROOT } from '../../daemon/runtime/root.ts';

// The daemon's Ajv skips the meta-schema check at start (daemon/validation.ts); this is that check,
// for every schema in schemas/, so a malformed keyword fails here instead.
test('every schema in schemas/ is a valid JSON Schema (draft-07 meta-schema)', async () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, unicodeRegExp: true });
  let checked = 0;
  for (const file of readdirSync(path.join(ROOT, 'schemas')).filter((f) => f.endsWith('.ts')).sort()) {
    const mod = (await import(pathToFileURL(path.join(ROOT, 'schemas', file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value !== 'object' || value === null || !(Kind in value)) continue;
      assert.equal(ajv.validateSchema(value), true, `${file} ${name}: ${ajv.errorsText(ajv.errors)}`);
      checked++;
    }
  }
  assert.ok(checked >= 20, `only ${checked} schemas found`);
  // The check itself rejects what it is there to catch.
  assert.equal(ajv.validateSchema({ type: 'string', minLength: 'three' }), false);
});
