import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import type { SessionService } from '../../daemon/sessions/service.ts';
import { sessionFiles } from '../../daemon/sessions/wrapper.ts';
import { AGENT, liveGroupMembers } from '../helpers/sessions.ts';
import { processesMatching } from '../helpers/state.ts';
import { addTask, failInserts, memoryLog, openTestStore, sessionService, until } from '../helpers/store.ts';

// One store for the file: each test has tasks of its own.
const s = await openTestStore(after);

const agents = {
  first: { command: [AGENT, 'echo:first', '{prompt}'] },
  second: { command: [AGENT, 'echo:second', '{prompt}'] },
  third: { command: [AGENT, 'echo:third', '{prompt}'] },
  missing: { command: ['grove-test-no-such-command', '{prompt}'] },
};

const sessionDirs = () => (existsSync(path.join(s.dataDir, 'sessions')) ? readdirSync(path.join(s.dataDir, 'sessions')) : []);

// Waits for a session's end (the service's event), then returns its row and stored lines.
async function ended(service: SessionService, id: string) {
  await until(async () => !service.isBusy(await service.get(id)), `session ${id} to end`, 20_000);
  return { session: await service.get(id), lines: (await service.lines(id, 0, 1000)).lines };
}

async function projectPath(taskProjectId: string): Promise<string> {
  return (await s.getProject(taskProjectId)).path;
}

test('the agent is the body’s, else the project’s .grove.json, else the user default', async (t) => {
  const service = sessionService(t, s, { agents, defaultAgent: 'third' });
  const configured = await addTask(t, s);
  writeFileSync(path.join(await projectPath(configured.project_id), '.grove.json'), JSON.stringify({ agent: 'second' }));
  const plain = await addTask(t, s);

  const fromBody = await service.create(configured.id, { agent: 'first', prompt: 'exit:0' });
  const fromProject = await service.create(configured.id, { prompt: 'exit:0' });
  const fromUser = await service.create(plain.id, { prompt: 'exit:0' });
  assert.deepEqual([fromBody.agent, fromProject.agent, fromUser.agent], ['first', 'second', 'third']);
  for (const [id, agent] of [
    [fromBody.id, 'first'],
    [fromProject.id, 'second'],
    [fromUser.id, 'third'],
  ] as const) {
    const { session, lines } = await ended(service, id);
    assert.equal(session.status, 'exited');
    assert.deepEqual(
      lines.map((l) => l.text),
      [agent],
      'the chosen agent is what ran',
    );
  }
});

test('refused starts (AGENT_REQUIRED, UNKNOWN_AGENT, AGENT_NOT_INSTALLED, TASK_NOT_READY) leave no row, no folder and no process', async (t) => {
  const noDefault = sessionService(t, s, { agents });
  const ready = await addTask(t, s);
  const settingUp = await addTask(t, s, 'setting_up');
  const gone = await addTask(t, s);
  rmSync(path.join(await projectPath(gone.project_id), gone.worktree_path), { recursive: true });
  const before = sessionDirs();

  const refused: Array<[string, () => Promise<unknown>]> = [
    ['AGENT_REQUIRED', () => noDefault.create(ready.id, {})],
    ['UNKNOWN_AGENT', () => noDefault.create(ready.id, { agent: 'nobody' })],
    ['AGENT_NOT_INSTALLED', () => noDefault.create(ready.id, { agent: 'missing' })],
    ['TASK_NOT_READY', () => noDefault.create(settingUp.id, { agent: 'first' })],
    ['TASK_NOT_READY', () => noDefault.create(gone.id, { agent: 'first' })],
    ['NOT_FOUND', () => noDefault.create('00000000-0000-4000-8000-000000000000', { agent: 'first' })],
  ];
  for (const [code, attempt] of refused) await assert.rejects(attempt, (err: any) => err.code === code, code);
  for (const task of [ready, settingUp, gone]) assert.deepEqual(await noDefault.list(task.id), []);
  assert.deepEqual(sessionDirs(), before);
});

test('a start writes the row once, with the pid of the held wrapper that leads the group, then the agent runs', async (t) => {
  const { log, records } = memoryLog();
  const service = sessionService(t, s, { agents, log });
  const task = await addTask(t, s);
  const started = await service.create(task.id, { agent: 'first', args: ['env', 'sleep:300'] });
  t.after(() => liveGroupMembers(started.pid!).forEach((pid) => process.kill(pid, 'SIGKILL')));
  assert.equal(started.status, 'starting');
  assert.equal(started.agent, 'first');
  assert.ok(started.pid! > 0);
  assert.ok(liveGroupMembers(started.pid!).includes(started.pid!), 'the wrapper leads its own process group');
  await until(async () => (await service.get(started.id)).status === 'running', 'running');
  assert.ok(records.some((r) => r.msg === 'session running' && r.session === started.id));
  // The agent sees the id the row was written with: it ran after the row was stored.
  const texts = await until(async () => {
    const lines = (await service.lines(started.id, 0, 1000)).lines.map((l) => l.text);
    return lines.includes(`GROVE_SESSION_ID=${started.id}`) ? lines : null;
  }, 'the agent’s environment');
  assert.ok(texts.includes('GROVE_AGENT=first'));
  assert.equal(texts[0], 'first');
  assert.deepEqual(await service.list(task.id), [await service.get(started.id)]);
  assert.equal((await service.kill(started.id)).status, 'killed');
});

test('a start that cannot be recorded (the disk full) leaves no row, no files and no process', async (t: TestContext) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const marker = `never-ran-${task.id}`;
  const before = sessionDirs();
  const giveRoom = await failInserts(t, s.store, 'sessions');
  await assert.rejects(service.create(task.id, { agent: 'first', args: [`echo:${marker}`, 'sleep:300'] }), /no room/);
  await giveRoom();
  assert.deepEqual(await service.list(task.id), []);
  assert.deepEqual(sessionDirs(), before, 'no session folder');
  assert.deepEqual(processesMatching(marker), [], 'no process');
  // With room again, the same start works.
  const ok = await service.create(task.id, { agent: 'first', args: ['exit:0'] });
  assert.equal((await ended(service, ok.id)).session.status, 'exited');
  assert.ok(existsSync(sessionFiles(s.dataDir, ok.id).exit));
});
