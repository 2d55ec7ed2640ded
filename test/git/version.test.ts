import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gitProblem, parseGitVersion } from '../../daemon/git/version.ts';
import { makeHome, spawnDaemon, stopProcess } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';

test('parseGitVersion and gitProblem: 2.38 or newer is needed', (t) => {
  assert.deepEqual(parseGitVersion('git version 2.39.5\n'), [2, 39]);
  assert.deepEqual(parseGitVersion('git version 2.43.0.windows.1'), [2, 43]);
  assert.equal(parseGitVersion('not git'), null);
  assert.equal(gitProblem(), null, 'the git of this machine will do');
  const fake = makeTempDir(t);
  for (const [said, problem] of [
    ['git version 2.37.9', /git 2\.37 is too old; grove needs git 2\.38/],
    ['git version 1.9.0', /git 1\.9 is too old/],
    ['git version 3.0.0', null],
    ['hello', /cannot tell the version of git/],
  ] as const) {
    writeFileSync(path.join(fake, 'git'), `#!/bin/sh\necho "${said}"\n`);
    chmodSync(path.join(fake, 'git'), 0o755);
    const got = gitProblem({ PATH: fake });
    if (problem === null) assert.equal(got, null, said);
    else assert.match(got ?? '', problem, said);
  }
  assert.match(gitProblem({ PATH: makeTempDir(t) }) ?? '', /git is not on PATH/);
});

test('a git older than 2.38 stops the daemon at start with exit 69 and the reason', async (t) => {
  const fake = makeTempDir(t);
  writeFileSync(path.join(fake, 'git'), '#!/bin/sh\necho "git version 2.30.2"\n');
  chmodSync(path.join(fake, 'git'), 0o755);
  const d = spawnDaemon(makeHome(t), { PATH: `${fake}:${process.env.PATH}` });
  t.after(() => stopProcess(d.proc, d.exited));
  assert.equal(await d.exited, 69);
  assert.match(d.stderr(), /grove: git 2\.30 is too old; grove needs git 2\.38 or newer/);
});
