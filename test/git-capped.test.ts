import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gitCapped } from '../daemon/git/run.ts';
import { git, makeRepo, makeTempDir } from './helpers/git.ts';
import { waitPidGone } from './helpers/state.ts';

const MiB = 1024 * 1024;

// A repository holding a 3 MiB blob of random bytes, and that blob's id.
function repoWithBlob(t: test.TestContext) {
  const repo = makeRepo(t);
  const file = path.join(repo, 'blob.bin');
  const bytes = randomBytes(3 * MiB);
  writeFileSync(file, bytes);
  return { repo, bytes, oid: git(repo, 'hash-object', '-w', file) };
}

test("gitCapped: git's stdout as it wrote it, whole under the cap; past the cap cut there, with git killed", async (t) => {
  const { repo, bytes, oid } = repoWithBlob(t);
  const whole = await gitCapped(repo, ['cat-file', 'blob', oid], { maxBytes: 10 * MiB });
  assert.deepEqual({ exitCode: whole.exitCode, truncated: whole.truncated, aborted: whole.aborted }, { exitCode: 0, truncated: false, aborted: false });
  assert.ok(whole.stdout.equals(bytes));

  const exact = await gitCapped(repo, ['cat-file', 'blob', oid], { maxBytes: bytes.length });
  assert.equal(exact.truncated, false, 'exactly the cap is not cut');
  assert.ok(exact.stdout.equals(bytes));

  const cut = await gitCapped(repo, ['cat-file', 'blob', oid], { maxBytes: MiB });
  assert.equal(cut.truncated, true);
  assert.equal(cut.exitCode, null, 'killed, not finished');
  assert.ok(cut.stdout.equals(bytes.subarray(0, MiB)));

  const failed = await gitCapped(repo, ['cat-file', 'blob', 'no-such-object'], { maxBytes: MiB });
  assert.equal(failed.exitCode, 128);
  assert.match(failed.stderr, /no-such-object/);
});

test('gitCapped: an aborted signal kills git and what it started (its process group)', async (t) => {
  const repo = makeRepo(t, { files: { '.gitattributes': '*.slow filter=slow\n', 'x.slow': 'x\n' } });
  const dir = makeTempDir(t);
  const pidFile = path.join(dir, 'filter-pid');
  // A clean filter that never ends on its own: `git hash-object --path` runs it.
  git(repo, 'config', 'filter.slow.clean', `echo $$ > '${pidFile}'; exec sleep 600`);
  const ac = new AbortController();
  const run = gitCapped(repo, ['hash-object', '--path=x.slow', 'x.slow'], { maxBytes: MiB, signal: ac.signal });
  const deadline = Date.now() + 10_000;
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
    assert.ok(Date.now() < deadline, 'the filter started');
    await new Promise((r) => setTimeout(r, 20));
  }
  ac.abort();
  const r = await run;
  assert.equal(r.aborted, true);
  assert.equal(r.exitCode, null);
  await waitPidGone(Number(readFileSync(pidFile, 'utf8')));

  const already = await gitCapped(repo, ['rev-parse', 'HEAD'], { maxBytes: MiB, signal: AbortSignal.abort() });
  assert.equal(already.aborted, true, 'a signal aborted before the start stops git at once');
});
