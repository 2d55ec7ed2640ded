import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { TestDaemon } from './daemon.ts';
import { git, makeRepo, makeTempDir } from './git.ts';
import { pidsWorkingIn, waitPidGone } from './state.ts';

// A point inside a landing where git waits until the test kills it: a script (a smudge filter, a
// hook) that, while armed, says it is in and then blocks on a fifo that nobody writes.
export function gate(t: TestContext, blockIf: string, after: string) {
  const dir = makeTempDir(t);
  const armed = path.join(dir, 'armed');
  const started = path.join(dir, 'started');
  execFileSync('mkfifo', [started, path.join(dir, 'never')]);
  const script = path.join(dir, 'gate.sh');
  writeFileSync(script, `#!/bin/sh\nif [ -e '${armed}' ] && ${blockIf}; then echo in > '${started}'; read x < '${path.join(dir, 'never')}'; fi\n${after}\n`);
  chmodSync(script, 0o755);
  return {
    script,
    arm: () => writeFileSync(armed, ''),
    // Resolves once git is inside the script; disarmed then, so that recovery's git passes.
    async entered() {
      await readFile(started, 'utf8');
      rmSync(armed);
    },
  };
}

// A repository whose slow.txt goes through a smudge filter that blocks while armed: git is caught
// writing that file (a rebase's or a merge's checkout), its index lock held, files half-written.
export function slowRepo(t: TestContext) {
  const repo = makeRepo(t, { files: { 'slow.txt': 'a\n', 'f.txt': 'f\n', '.gitattributes': 'slow.txt filter=slow\n' } });
  const g = gate(t, 'true', 'exec cat');
  git(repo, 'config', 'filter.slow.smudge', g.script);
  git(repo, 'config', 'filter.slow.clean', 'cat');
  return { repo, gate: g };
}

// kill -9 of the daemon and of every git (with its hooks and filters) it runs in the repository.
export async function killAll(d: TestDaemon | null, repo: string): Promise<void> {
  const stopped = d?.stop('SIGKILL');
  const pids = pidsWorkingIn(repo);
  assert.ok(pids.length > 0, 'a git of grove was running');
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  if (stopped) assert.equal(await stopped, 'SIGKILL');
  await Promise.all(pids.map((pid) => waitPidGone(pid)));
}
