// Intake on a team (DESIGN §20, §14.2): three daemons on one PostgreSQL, each watching its own
// project of one repository on GitHub (a local server speaking its REST API), take a labelled
// issue once: one claim, one task, one "took" comment on the issue.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGitHub } from '../helpers/github-server.ts';
import { until } from '../helpers/store.ts';
import { query, startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

test('three hosts watching one repository take a labelled issue once', async (t) => {
  const gh = await startGitHub();
  t.after(gh.close);
  gh.addRepo('acme/team');
  gh.setPermission('acme/team', 'wes', 'write');
  const team = await startTeam(t, { hosts: ['alpha', 'beta', 'gamma'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS, github: { api_url: gh.url } }), env: () => ({ GH_TOKEN: 'ghp_test_token' }) });
  for (const h of team.hosts) {
    const r = await h.daemon.socket('POST', `/api/projects/${h.project.id}/intake`, { body: { provider: 'github', repository: 'acme/team', label: 'grove', interval_s: 1, land: 'none', session: { prompt: 'echo:working' } } });
    assert.equal(r.status, 200, r.text);
  }
  const n = gh.addIssue('acme/team', { title: 'Take me once' });
  gh.label('acme/team', n, 'grove', 'wes');
  const [item] = await until(async () => {
    const rows = await query(team, `SELECT * FROM intake_items WHERE repository = 'acme/team' AND number = $1 AND outcome = 'taken'`, [n]);
    return rows.length > 0 && rows;
  }, 'the issue taken', 60_000);
  // Every host polls a few times more: none takes it again.
  await until(async () => {
    const polled = await Promise.all(team.hosts.map(async (h) => (await h.daemon.socket('GET', `/api/projects/${h.project.id}/intake`)).json.last_poll?.at));
    return polled.every((at) => at !== undefined && Date.parse(at) > Date.parse(item.created_at) + 2000);
  }, 'every host polled twice since', 60_000);
  const rows = await query(team, `SELECT outcome, task_id, host_id FROM intake_items WHERE repository = 'acme/team' AND number = $1`, [n]);
  assert.equal(rows.length, 1, JSON.stringify(rows));
  const tasks = await query(team, `SELECT id, project_id FROM tasks WHERE issue->>'number' = $1`, [String(n)]);
  assert.deepEqual(tasks.map((x) => x.id), [item.task_id], 'one task');
  // The issue's write-back goes on beside the polls (GitHub paces comments): waited for, then counted.
  const took = await until(() => ((cs) => cs.length > 0 && cs)(gh.issue('acme/team', n).comments.filter((c) => /grove took this issue/.test(c.body))), 'the issue told that work began', 30_000);
  assert.equal(took.length, 1, 'one comment that work began');
  // Every host's intake shows the one item (the store's), taken by the host that claimed it.
  for (const h of team.hosts) {
    const shown = (await h.daemon.socket('GET', `/api/projects/${h.project.id}/intake`)).json;
    assert.equal(shown.state, 'polling');
    assert.deepEqual(shown.items.map((i: any) => i.outcome), h.project.id === tasks[0].project_id ? ['taken'] : []);
  }
});
