import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { markInUse, pruneBundles } from '../daemon/bundle-cache.mjs';

// A pid that ran and has exited.
function deadPid(): number {
  const r = spawnSync('true');
  assert.ok(r.pid, 'spawned');
  return r.pid;
}

test('a bundle folder a running daemon marked survives the pruning; unmarked and dead-marked ones go', (t) => {
  const cache = mkdtempSync(path.join(tmpdir(), 'grove-bundles-'));
  t.after(() => rmSync(cache, { recursive: true, force: true }));
  const dir = (name: string) => {
    const d = path.join(cache, name);
    mkdirSync(d);
    writeFileSync(path.join(d, 'main.mjs'), '');
    return d;
  };
  const current = dir('daemon-current');
  const running = dir('daemon-running'); // an older version a live daemon still runs from
  const dead = dir('daemon-dead'); // its daemon has exited
  const unmarked = dir('daemon-unmarked');
  const building = dir('daemon-next.123.tmp'); // another start's build in progress
  const other = dir('unrelated');
  const gone = deadPid();
  markInUse(running); // this test's process plays the live daemon
  markInUse(dead, gone);
  markInUse(current, gone); // a stale mark in the folder kept

  pruneBundles(cache, current);

  assert.ok(existsSync(running), 'a live daemon keeps its folder');
  assert.ok(existsSync(current), 'the current bundle is kept');
  assert.ok(!existsSync(dead), 'a folder whose daemon has exited is removed');
  assert.ok(!existsSync(unmarked), 'an unmarked folder is removed');
  assert.ok(existsSync(building) && existsSync(other), 'builds in progress and other files are left alone');
  assert.deepEqual(readdirSync(current).sort(), ['main.mjs'], "the stale mark is removed");
  assert.deepEqual(readdirSync(running).sort(), [`in-use.${process.pid}`, 'main.mjs']);
});
