// Automations on a team (DESIGN §19, §14.2): an automation of a repository is run by whichever host
// with a project of it claims each scheduled time: three daemons on one PostgreSQL run each time
// exactly once, every host's runs visible on every host.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTeam, TEAM_AGENTS, TEAM_FILES, query } from '../helpers/team.ts';
import { until } from '../helpers/store.ts';

test('three hosts, one repository automation on a seconds cron: each time runs once, on one host', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta', 'gamma'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b, c] = team.hosts;
  const made = await a!.daemon.socket('POST', '/api/automations', {
    body: { repository: team.repository, name: 'every second', schedule: { cron: '* * * * * *', timezone: 'UTC' }, session: { prompt: 'echo:ran' }, overlap: 'queue' },
  });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual([made.json.project_id, made.json.repository], [null, team.repository]);
  // Six scheduled times and more: then it is paused, and what was claimed runs out.
  await until(async () => (await query(team, `SELECT count(*)::int AS n FROM automation_runs WHERE automation_id = $1`, [made.json.id]))[0].n >= 6, 'six claimed times', 60_000);
  const paused = await c!.daemon.socket('PATCH', `/api/automations/${made.json.id}`, { body: { enabled: false } });
  assert.equal(paused.status, 200, paused.text);
  const runs = await until(async () => {
    const list = (await b!.daemon.socket('GET', `/api/automations/${made.json.id}/runs`)).json as any[];
    return list.every((r) => r.ended_at !== null) && list;
  }, 'every run ended', 120_000);
  const scheduled = runs.filter((r) => r.trigger === 'schedule');
  const times = scheduled.map((r) => r.scheduled_for);
  assert.equal(new Set(times).size, times.length, `each time once: ${times.join(' ')}`);
  for (let i = 1; i < times.length; i++) assert.ok(Date.parse(times[i - 1]) > Date.parse(times[i]), 'newest first, one a second');
  const ran = scheduled.filter((r) => r.status !== 'skipped');
  assert.ok(ran.every((r) => r.status === 'succeeded'), JSON.stringify(ran.map((r) => [r.status, r.error])));
  // Each run in the project of the host that claimed it: one task and one session per run.
  const projects = new Set(team.hosts.map((h) => h.project.id));
  assert.ok(scheduled.every((r) => projects.has(r.project_id)));
  for (const r of ran) {
    const tasks = await query(team, 'SELECT project_id FROM tasks WHERE id = $1', [r.task_id]);
    assert.equal(tasks[0].project_id, r.project_id, 'the task is in the project the run names');
  }
  const sessions = await query(team, `SELECT count(*)::int AS n FROM sessions s JOIN automation_runs r ON r.session_id = s.id WHERE r.automation_id = $1`, [made.json.id]);
  assert.equal(sessions[0].n, ran.length, 'one session per run');
  const hostsThatRan = new Set(ran.map((r) => r.project_id));
  t.diagnostic(`runs by project: ${[...hostsThatRan].length} of 3 hosts ran ${ran.length} runs`);
});
