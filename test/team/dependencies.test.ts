// Dependencies on a team (DESIGN §14.2, §17): the host that owns the waiting task starts its
// session, woken by a merge on another host through the team's one stream of events.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { git } from '../helpers/git.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';
import { startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

// A task on alpha and, asked of alpha but made by beta (its project's owner), a task whose
// session waits for it; merge() lands alpha's task with a commit of its own.
async function waitingOnBeta(t: test.TestContext, prompt: string) {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];
  const A = (m: string, p: string, body?: unknown) => a.daemon.socket(m, p, body === undefined ? {} : { body });
  const first = await A('POST', '/api/tasks', { project_id: a.project.id, name: 'first' });
  assert.equal(first.status, 201, first.text);
  const waits = await A('POST', '/api/tasks', { project_id: b.project.id, name: 'waits', after: [first.json.id], session: { prompt } });
  assert.equal(waits.status, 201, waits.text);
  const merge = async () => {
    const wt = path.join(a.clone, first.json.worktree_path);
    writeFileSync(path.join(wt, 'a.txt'), 'a\n');
    git(wt, 'add', 'a.txt');
    git(wt, 'commit', '-qm', 'a');
    const merged = await A('POST', `/api/tasks/${first.json.id}/merge`, {});
    assert.equal(merged.status, 200, merged.text);
  };
  return { team, a, b, A, waits: waits.json, session: waits.json.session, merge };
}

test("a task on beta waiting for a task on alpha: alpha's merge wakes beta, which starts the session in its clone", async (t) => {
  const { a, b, A, waits, session: s, merge } = await waitingOnBeta(t, 'write:done.txt=yes');
  assert.equal(s.status, 'queued');
  assert.equal(s.host_id, b.project.host_id);
  await b.daemon.waitForLog((l: any) => l.msg === 'session still waits' && l.session === s.id, 30_000);

  await merge();
  await waitSessionEnd(b.daemon, s.id);
  const ended = (await A('GET', `/api/sessions/${s.id}`)).json;
  assert.equal(ended.status, 'exited', JSON.stringify(await allLines(a.daemon, s.id)));
  assert.equal(git(path.join(b.clone, waits.worktree_path), 'status', '--porcelain'), '?? done.txt', "it ran in beta's worktree");
  assert.ok(!a.daemon.logs.some((l: any) => l.msg === 'session started' && l.session === s.id), 'alpha started nothing');
});

test("merged while the waiting task's host was down: it starts the session when it comes back", async (t) => {
  const { team, b, A, session: s, merge } = await waitingOnBeta(t, 'echo:back');
  await b.daemon.stop();
  await merge();
  assert.equal((await A('GET', `/api/sessions/${s.id}`)).json.status, 'queued', 'alpha does not start what beta owns');

  const back = await team.start('beta');
  await waitSessionEnd(back.daemon, s.id);
  assert.equal((await A('GET', `/api/sessions/${s.id}`)).json.status, 'exited');
});
