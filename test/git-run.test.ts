import './helpers/env.ts';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { git as run } from '../daemon/git/run.ts';
import { git, makeRepo } from './helpers/git.ts';
import { gone, marker, processesMatching } from './helpers/state.ts';

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
