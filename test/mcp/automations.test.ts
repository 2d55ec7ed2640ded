// The automation tools of `grove mcp` (DESIGN §13, §19) through the MCP SDK's client and a real
// daemon: made, listed, run now and waited for; the daemon's refusals come back with their codes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { call, mcp } from '../helpers/mcp.ts';
import { fixtureProject, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const daemon = sharedAgentDaemon();

test('grove mcp: create_automation, list_automations, run_automation and its session waited for; SCHEDULE_INVALID with its detail', async (t) => {
  const d = await daemon();
  const project = await fixtureProject(t, d, 'mcpauto');
  const client = await mcp(t, d.home);

  const { tools } = await client.listTools();
  const create = tools.find((x) => x.name === 'create_automation')!.inputSchema as any;
  assert.deepEqual(create.required.sort(), ['name', 'project_id', 'schedule', 'session'], "the API's own schema");
  assert.deepEqual(create.properties.schedule.anyOf.map((s: any) => Object.keys(s.properties).sort()), [['cron', 'timezone'], ['at']]);

  const a = await call(client, 'create_automation', { project_id: project.id, name: 'agent-made', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, session: { prompt: 'write:mcp.txt={run_id}' }, precheck: 'true' });
  assert.deepEqual([a.project_id, a.name, a.schedule, a.precheck, a.enabled], [project.id, 'agent-made', { cron: '0 9 * * *', timezone: 'UTC' }, 'true', true]);
  assert.match(a.next_run_at, /T09:00:00(\.000)?Z$/);
  const bad = await call(client, 'create_automation', { project_id: project.id, name: 'bad', schedule: { cron: '0 25 * * *' }, session: { prompt: 'x' } });
  assert.equal(bad.error.code, 'SCHEDULE_INVALID');
  assert.match(bad.error.detail, /^schedule\.cron /);
  const both = await call(client, 'create_automation', { project_id: project.id, name: 'bad', schedule: { cron: '0 9 * * *', at: '2099-01-01T00:00:00Z' }, session: { prompt: 'x' } });
  assert.equal(both.error.code, 'VALIDATION_FAILED', 'checked against the schema before the daemon is asked');
  assert.equal((await call(client, 'create_automation', { project_id: project.id, name: 'agent-made', schedule: { cron: '0 9 * * *' }, session: { prompt: 'x' } })).error.code, 'AUTOMATION_EXISTS');

  assert.deepEqual((await call(client, 'list_automations', { project_id: project.id })).map((x: any) => x.id), [a.id], 'the refused ones were not stored');
  assert.ok((await call(client, 'list_automations')).some((x: any) => x.id === a.id), "every project's");

  const run = await call(client, 'run_automation', { automation_id: a.id });
  assert.deepEqual([run.automation_id, run.trigger, run.status], [a.id, 'manual', 'pending']);
  const going = await until(async () => (await call(client, 'list_automations', { project_id: project.id }))[0].last_run?.session_id, 'the run to start its session', 30_000);
  const waited = await call(client, 'wait_for_session', { session_id: going, timeout_s: 60 });
  assert.deepEqual([waited.ended, waited.exit_code], [true, 0]);
  const last = await until(async () => ((x) => x.ended_at !== null && x)((await call(client, 'list_automations', { project_id: project.id }))[0].last_run), 'the run to end', 30_000);
  assert.deepEqual([last.id, last.status, last.changes.files], [run.id, 'succeeded', 1]);
  const task = (await d.socket('GET', `/api/tasks/${last.task_id}`)).json;
  assert.equal(readFileSync(path.join(project.path, task.worktree_path, 'mcp.txt'), 'utf8'), `${run.id}\n`);
  assert.equal((await call(client, 'run_automation', { automation_id: crypto.randomUUID() })).error.code, 'NOT_FOUND');
});

test('grove mcp --read-only: list_automations, and neither create_automation nor run_automation', async (t) => {
  const d = await daemon();
  const names = (await (await mcp(t, d.home, ['--read-only'])).listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('list_automations'));
  assert.ok(!names.includes('create_automation') && !names.includes('run_automation'));
});
