import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { AGENT, allLines, gate, readSse, waitSessionEnd } from '../helpers/sessions.ts';
import { consistentState, processesMatching } from '../helpers/state.ts';

// Writes until the file system says ENOSPC; the file is the space to give back.
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const buf = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, buf);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
}

test('the data folder on a full disk: the daemon stays up, answers 507 and leaves nothing half-made, then recovers without losing a line', async (t) => {
  // The data folder is a small tmpfs of its own (the tests run as root on CI).
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-h-')));
  const data = path.join(home, 'data');
  mkdirSync(data, { mode: 0o700 });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=56m,mode=0700', 'tmpfs', data]);
  let stopDaemon: () => Promise<unknown> = async () => {};
  t.after(async () => {
    await stopDaemon();
    execFileSync('umount', ['-l', data]);
    rmSync(home, { recursive: true, force: true });
  });
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { fixture: { command: [AGENT, '{prompt}'] } } }));
  // The store whose pages run out is PGlite's, in the data folder: on PGlite under test:postgres too
  // (a PostgreSQL keeps its pages on its own disk).
  const d = await startDaemon(t, { home, env: { GROVE_DATABASE_URL: undefined } });
  stopDaemon = () => d.stop();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const project = await addProject(d, repo);
  const first = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'before' } })).json;
  // A session that prints, waits while the disk is full, and prints again once there is room.
  const g = gate(t);
  const s = await d.socket('POST', `/api/tasks/${first.id}/sessions`, { body: { args: ['print:300', `wait:${g.path}`, 'print:2000'] } });
  assert.equal(s.status, 201, s.text);
  await d.waitForLog((l) => l.msg === 'session running' && l.session === s.json.id);
  // Its first lines are stored before the disk fills: their file is on that disk too, and an
  // agent that cannot write its output loses it whatever grove does (a slow machine lost them).
  await readSse(`http://localhost/api/sessions/${s.json.id}/output`, { socketPath: d.socketPath, until: (evs) => evs.filter((e) => e.event === 'line').length >= 300 });

  const filler = path.join(data, 'filler');
  fillDisk(filler);

  // Creations until the store needs a page it cannot get: each answer is 201 or 507, never 500.
  const created: string[] = [];
  let full: any = null;
  for (let i = 0; i < 200 && !full; i++) {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `full ${i}` } });
    assert.ok(r.status === 201 || r.status === 507, `${r.status} ${r.text}`);
    if (r.status === 201) created.push(r.json.id);
    else full = r;
  }
  assert.ok(full, 'the store ran out of room');
  assert.equal(full.headers['content-type'], 'application/problem+json');
  assert.equal(full.json.code, 'INSUFFICIENT_STORAGE');
  assert.match(full.json.detail, /disk of the data folder is full/);
  // The refused creation left no branch, worktree or row behind.
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
  const rows = (await d.socket('GET', '/api/tasks')).json;
  assert.equal(rows.length, created.length + 1);

  // Sessions whose start cannot be recorded leave no row and no process.
  // Random text does not compress: storing its command needs pages the disk does not have.
  const big = Array.from({ length: 10 }, () => randomBytes(45_000).toString('base64'));
  const marker = `echo:never-ran-${first.id}`; // unique: tests run side by side
  const refused = await d.socket('POST', `/api/tasks/${first.id}/sessions`, { body: { args: [marker, ...big] } });
  assert.equal(refused.status, 507, refused.text.slice(0, 300));
  assert.equal(refused.json.code, 'INSUFFICIENT_STORAGE');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${first.id}/sessions`)).json.map((x: any) => x.id), [s.json.id]);
  assert.deepEqual(processesMatching(marker), []);

  // Reads and health keep answering.
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  assert.equal((await d.tcp('GET', '/api/projects')).status, 200);

  // Output that reached its file while the store is full is stored once there is room. The
  // daemon is paused while the agent prints, so the agent gets the freed space, not the store.
  d.proc.kill('SIGSTOP');
  rmSync(filler);
  g.release();
  const exitFile = path.join(data, 'sessions', s.json.id, 'exit');
  for (const deadline = Date.now() + 20_000; !existsSync(exitFile); ) {
    assert.ok(Date.now() < deadline, 'the agent finished printing');
    await new Promise((r) => setTimeout(r, 20));
  }
  fillDisk(filler);
  d.proc.kill('SIGCONT');
  await d.waitForLog((l) => /^storing (the end of )?session output failed; will retry$/.test(l.msg) && l.session === s.json.id);
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}`)).json.status, 'running', 'not ended before its lines are stored');

  rmSync(filler);
  const end = await waitSessionEnd(d, s.json.id);
  assert.equal(end.status, 'exited');
  const lines = await allLines(d, s.json.id);
  assert.equal(lines.length, 2300);
  assert.deepEqual(
    lines.map((l) => l.seq),
    Array.from({ length: 2300 }, (_, i) => i + 1),
  );
  assert.deepEqual(
    lines.map((l) => l.text.trim()),
    [...Array.from({ length: 300 }, (_, i) => `line ${i + 1}`), ...Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`)],
    'every line once, in order',
  );
  const after = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'after' } });
  assert.equal(after.status, 201, after.text);
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
  assert.equal(await d.stop(), 0, 'a clean stop once there is room again');
});
