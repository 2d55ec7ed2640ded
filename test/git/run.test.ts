import '../helpers/env.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gitCapped, git as run } from '../../daemon/git/run.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { gone, marker, processesMatching, waitPidGone } from '../helpers/state.ts';

test('a stopped git stops its filters with it and answers at once, its output marked stopped', { timeout: 60_000 }, async (t) => {
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=slow\n' } });
  const m = marker(t);
  git(repo, 'config', 'filter.slow.clean', `sleep ${m}; cat`);
  writeFileSync(path.join(repo, 'x.txt'), 'x\n');
  const stop = new AbortController();
  const started = Date.now();
  const res = run(repo, ['add', 'x.txt'], { signal: stop.signal });
  // The filter runs: git is held in it.
  for (const deadline = Date.now() + 10_000; processesMatching(m).length === 0; ) {
    assert.ok(Date.now() < deadline, 'the clean filter never started');
    await new Promise((r) => setTimeout(r, 25));
  }
  stop.abort(new Error('the client has gone'));
  const r = await res;
  assert.equal(r.stopped, true, JSON.stringify(r));
  assert.notEqual(r.exitCode, 0);
  assert.match(r.stderr, /cancelled/);
  await gone(m);
  assert.ok(Date.now() - started < 20_000, `answered after ${Date.now() - started} ms`);
  assert.equal(git(repo, 'status', '--porcelain', 'x.txt'), '?? x.txt', 'nothing was added, no index.lock left');
});

test('a git that runs past its bound is stopped with what it started, even a child that left its group and holds its pipes', { timeout: 60_000 }, async (t) => {
  const repo = makeRepo(t);
  const m = marker(t);
  const started = Date.now();
  const r = await run(repo, ['-c', `alias.hold=!setsid sleep ${m}1 & exec sleep ${m}2`, 'hold'], { signal: AbortSignal.timeout(500) });
  const took = Date.now() - started;
  assert.equal(r.stopped, true, JSON.stringify(r));
  assert.match(r.stderr, /timed out/);
  assert.ok(took < 10_000, `answered after ${took} ms`);
  await gone(m);
});

test('a git that exits while something it started holds its pipes answers with its output, without waiting for them', { timeout: 60_000 }, async (t) => {
  const repo = makeRepo(t);
  const m = marker(t);
  const started = Date.now();
  const r = await run(repo, ['-c', `alias.hold=!setsid sleep ${m} & echo started`, 'hold']);
  const took = Date.now() - started;
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, 'started');
  assert.equal(r.stopped, undefined);
  assert.ok(took < 10_000, `answered after ${took} ms`);
});

test('a signal already aborted runs nothing', async (t) => {
  const repo = makeRepo(t);
  const stop = new AbortController();
  stop.abort();
  const r = await run(repo, ['rev-parse', 'HEAD'], { signal: stop.signal });
  assert.equal(r.stopped, true);
  assert.equal(r.stdout, '');
  // and without one, git answers as before: output without its final newline, stderr on failure
  assert.equal((await run(repo, ['rev-parse', 'HEAD'])).stdout, git(repo, 'rev-parse', 'HEAD'));
  const bad = await run(repo, ['rev-parse', '--verify', 'nope']);
  assert.equal(bad.exitCode, 128);
  assert.match(bad.stderr, /fatal: Needed a single revision/);
});

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
  const hashing = gitCapped(repo, ['hash-object', '--path=x.slow', 'x.slow'], { maxBytes: MiB, signal: ac.signal });
  const deadline = Date.now() + 10_000;
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
    assert.ok(Date.now() < deadline, 'the filter started');
    await new Promise((r) => setTimeout(r, 20));
  }
  ac.abort();
  const r = await hashing;
  assert.equal(r.aborted, true);
  assert.equal(r.exitCode, null);
  await waitPidGone(Number(readFileSync(pidFile, 'utf8')));

  const already = await gitCapped(repo, ['rev-parse', 'HEAD'], { maxBytes: MiB, signal: AbortSignal.abort() });
  assert.equal(already.aborted, true, 'a signal aborted before the start stops git at once');
});
