import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon, type TestDaemon } from './helpers/daemon.ts';
import { makeRepo } from './helpers/git.ts';

// A project whose .grove.json copies `copy`, with the main checkout's untracked files made by `fill`.
async function project(t: test.TestContext, d: TestDaemon, copy: string[], fill: (repo: string) => void) {
  const repo = makeRepo(t, { files: { '.gitignore': 'data/\n.worktreeinclude\n', '.grove.json': JSON.stringify({ copy }) } });
  fill(repo);
  return { repo, p: await addProject(d, repo) };
}

async function create(d: TestDaemon, projectId: string, name: string) {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  const setup = await d.socket('GET', `/api/tasks/${r.json.id}/setup`);
  return { task: r.json, log: setup.json.lines.map((l: any) => l.text) as string[], bytes: setup.text.length };
}

// 120 Mi lines: split whole, they are more elements than a V8 array holds (a fatal error that
// took the daemon down). A sparse file of zeros would be one line, so this one is written out.
function hugeInclude(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.from('a\n'.repeat(1024 * 1024));
  for (let i = 0; i < 120; i++) writeSync(fd, chunk);
  closeSync(fd);
}

test('copy: a 240 MiB .worktreeinclude is refused unread, the creation goes on and says so; the daemon stays up for the next one', async (t) => {
  const d = await startDaemon(t);
  const { p } = await project(t, d, ['data/'], (repo) => {
    hugeInclude(path.join(repo, '.worktreeinclude'));
    mkdirSync(path.join(repo, 'data'));
    writeFileSync(path.join(repo, 'data', 'a.env'), 'A=1\n');
  });
  for (const name of ['first', 'second']) {
    const { task, log } = await create(d, p.id, name);
    assert.equal(task.status, 'ready');
    assert.deepEqual(log, ['grove: copied data/a.env', 'grove: not copied: .worktreeinclude (it is larger than 1048576 bytes, the limit of .grove.json: its patterns are not used)']);
  }
  assert.equal((await d.socket('GET', '/api/health')).json.status, 'ok');
});

test('copy: a 5 GiB sparse file is not copied (the worktree stays small) and the log says why', async (t) => {
  const d = await startDaemon(t);
  const { repo, p } = await project(t, d, ['data/'], (repo) => {
    mkdirSync(path.join(repo, 'data'));
    writeFileSync(path.join(repo, 'data', 'disk.img'), '');
    truncateSync(path.join(repo, 'data', 'disk.img'), 5 * 1024 ** 3);
  });
  const { task, log } = await create(d, p.id, 'sparse');
  const kib = Number(execFileSync('du', ['-sk', path.join(repo, task.worktree_path)], { encoding: 'utf8' }).split('\t')[0]);
  assert.ok(kib < 10 * 1024, `the worktree takes ${kib} KiB`);
  assert.deepEqual(log, ['grove: not copied: data/disk.img (a sparse file of 5368709120 bytes (0 on disk): a copy would write out its holes)']);
});

test('copy: 100,000 files are copied and the setup log names the first 20, then counts', async (t) => {
  const d = await startDaemon(t);
  const { repo, p } = await project(t, d, ['data/'], (repo) => {
    mkdirSync(path.join(repo, 'data'));
    for (let i = 0; i < 100_000; i++) writeFileSync(path.join(repo, 'data', `f${i}`), `${i}\n`);
  });
  const { task, log, bytes } = await create(d, p.id, 'many');
  assert.equal(task.status, 'ready');
  assert.equal(log.length, 21, log.join('\n'));
  assert.equal(log.at(-1), '... and 99980 more copied (100000 files, 588890 bytes in all)'.replace(/^/, 'grove: '));
  assert.ok(bytes < 10_000, `the setup log is ${bytes} bytes`);
  assert.equal(execFileSync('sh', ['-c', 'ls | wc -l'], { cwd: path.join(repo, task.worktree_path, 'data'), encoding: 'utf8' }).trim(), '100000');
});
