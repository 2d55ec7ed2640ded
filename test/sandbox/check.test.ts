import '../helpers/env.ts';
import assert from 'node:assert/strict';
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { checkSandbox, findBwrap, findProgram } from '../../daemon/sandbox/check.ts';
import { makeTempDir } from '../helpers/git.ts';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

test('this machine confines: bwrap and socat are found on PATH and bwrap creates the namespaces', async () => {
  const c = await checkSandbox({ path: PATH });
  assert.deepEqual(c, { ok: true, bwrap: findBwrap(PATH), socat: findProgram('socat', PATH) });
  assert.ok(c.ok && path.isAbsolute(c.bwrap) && path.basename(c.bwrap) === 'bwrap');
});

test('with a PATH that lacks bwrap, bubblewrap is missing and the answer says what to install', async (t) => {
  const empty = makeTempDir(t);
  const c = await checkSandbox({ path: `${empty}${path.delimiter}relative/bin` });
  assert.equal(c.ok, false);
  assert.ok(!c.ok && c.missing === 'bubblewrap', JSON.stringify(c));
  assert.ok(!c.ok && c.detail.includes('apt-get install bubblewrap'), c.ok ? '' : c.detail);
});

test('with bwrap but no socat on PATH, socat is missing and the answer says what to install', async (t) => {
  const dir = makeTempDir(t);
  symlinkSync(findBwrap(PATH)!, path.join(dir, 'bwrap'));
  const c = await checkSandbox({ path: dir });
  assert.ok(!c.ok && c.missing === 'socat' && c.detail.includes('apt-get install socat'), JSON.stringify(c));
});

test('a bwrap that cannot create namespaces is reported, with what it said, not thrown', async (t) => {
  // A stand-in on PATH that fails as bwrap does where user namespaces are refused.
  const dir = makeTempDir(t);
  const fake = path.join(dir, 'bwrap');
  writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
  chmodSync(fake, 0o755);
  const c = await checkSandbox({ path: `${dir}${path.delimiter}${PATH}` });
  assert.equal(c.ok, false);
  assert.ok(!c.ok && c.missing === 'namespaces' && c.detail.includes('No permissions to create new namespace') && c.detail.includes(fake), JSON.stringify(c));
});

test('a file named bwrap that is not executable is passed over', async (t) => {
  const dir = makeTempDir(t);
  writeFileSync(path.join(dir, 'bwrap'), '');
  chmodSync(path.join(dir, 'bwrap'), 0o644);
  assert.equal(findBwrap(dir), null);
});
