import assert from 'node:assert/strict';
import test from 'node:test';
import { normaliseOrigin, readOrigin } from '../../daemon/git/origin.ts';
import { git, makeRepo } from '../helpers/git.ts';

const REPO = '/srv/code/app';

test('the forms of one GitHub repository normalise to one name, with no user, password, port or .git', () => {
  const forms = [
    'git@github.com:a/b.git',
    'git@github.com:a/b',
    'https://github.com/a/b',
    'https://github.com/a/b.git',
    'https://github.com/a/b/',
    'https://user:s3cret-token@github.com/a/b.git',
    'ssh://git@github.com/a/b.git',
    'ssh://git@github.com:22/a/b.git',
    'git+ssh://git@GitHub.com/a/b.git',
    'git://github.com/a/b.git',
    'http://github.com:80/a/b',
    '  https://github.com/a/b.git\n',
  ];
  for (const url of forms) assert.equal(normaliseOrigin(url, REPO), 'github.com/a/b', url);
});

test('the path keeps its case and depth; hosts differ; ~user paths and IPv6 hosts are kept', () => {
  assert.equal(normaliseOrigin('git@github.com:Acme/Widgets.git', REPO), 'github.com/Acme/Widgets');
  assert.equal(normaliseOrigin('https://gitlab.example.com/group/sub/proj.git', REPO), 'gitlab.example.com/group/sub/proj');
  assert.equal(normaliseOrigin('git@gitlab.example.com:group/sub/proj.git', REPO), 'gitlab.example.com/group/sub/proj');
  assert.equal(normaliseOrigin('ssh://me@box.lan/~me/repo.git', REPO), 'box.lan/~me/repo');
  assert.equal(normaliseOrigin('ssh://git@[::1]:2222/a/b.git', REPO), '::1/a/b');
  assert.notEqual(normaliseOrigin('git@github.com:a/b.git', REPO), normaliseOrigin('git@github.com:a/c.git', REPO));
});

test('a local origin is its absolute path without .git, resolved against the repository', () => {
  assert.equal(normaliseOrigin('/srv/git/app.git', REPO), '/srv/git/app');
  assert.equal(normaliseOrigin('/srv/git/app/', REPO), '/srv/git/app');
  assert.equal(normaliseOrigin('/srv/git/app/.git', REPO), '/srv/git/app');
  assert.equal(normaliseOrigin('file:///srv/git/app.git', REPO), '/srv/git/app');
  assert.equal(normaliseOrigin('../origin.git', REPO), '/srv/code/origin');
  assert.equal(normaliseOrigin('./x', REPO), '/srv/code/app/x');
  assert.equal(normaliseOrigin('', REPO), null);
});

test("readOrigin: the repository's origin as git reads it, null without one", async (t) => {
  const repo = makeRepo(t);
  assert.equal(await readOrigin(repo), null);
  git(repo, 'remote', 'add', 'origin', 'https://tok@github.com/a/b.git');
  assert.equal(await readOrigin(repo), 'github.com/a/b');
  // git's own rewriting applies: the URL is the one git would fetch from.
  git(repo, 'config', 'url.git@github.com:.insteadOf', 'gh:');
  git(repo, 'remote', 'set-url', 'origin', 'gh:c/d');
  assert.equal(await readOrigin(repo), 'github.com/c/d');
});
