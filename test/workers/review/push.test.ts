import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pushTask } from '../../../workers/review/push.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

// A remote whose *name* reads as an option of git push: given to git as an argument, it would
// run a command of the repository's choosing in place of the remote's receive-pack.
function evilRemote(t: test.TestContext) {
  const repo = makeRepo(t);
  const dir = makeTempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '-q', '--bare', remote);
  const ran = path.join(dir, 'ran');
  const name = `--receive-pack=touch ${ran}`;
  git(repo, 'config', `remote.${name}.url`, remote);
  git(repo, 'branch', 'work');
  return { repo, remote, ran, name };
}

test("a repository's only remote, named like an option, is not pushed to and runs nothing", async (t) => {
  const { repo, remote, ran, name } = evilRemote(t);
  assert.deepEqual(git(repo, 'remote').split('\n'), [name]);
  const r = await pushTask({ repo, branch: 'work' });
  assert.equal(existsSync(ran), false, 'the remote name ran a command');
  assert.deepEqual(r, { ok: false, code: 'NO_REMOTE', message: 'no remote to push to (it has none)' });
  assert.equal(git(remote, 'for-each-ref'), '', 'nothing reached the remote');
});

test("a branch's configured remote named like an option is not pushed to and runs nothing", async (t) => {
  const { repo, ran, name } = evilRemote(t);
  const dir = makeTempDir(t);
  git(dir, 'init', '-q', '--bare', 'origin.git');
  git(repo, 'remote', 'add', 'origin', path.join(dir, 'origin.git'));
  git(repo, 'config', 'branch.work.remote', name);
  const r = await pushTask({ repo, branch: 'work' });
  assert.equal(existsSync(ran), false, 'the remote name ran a command');
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.code, 'NO_REMOTE');
});

test('a remote that is a plain name is pushed to, with --end-of-options before it', async (t) => {
  const repo = makeRepo(t);
  const dir = makeTempDir(t);
  git(dir, 'init', '-q', '--bare', 'origin.git');
  git(repo, 'remote', 'add', 'origin', path.join(dir, 'origin.git'));
  git(repo, 'branch', 'work');
  const r = await pushTask({ repo, branch: 'work' });
  assert.deepEqual(r, { ok: true, remote: 'origin', branch: 'work' });
  assert.equal(git(repo, 'rev-parse', 'work@{upstream}'), git(repo, 'rev-parse', 'work'));
});
