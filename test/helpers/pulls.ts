// Pull requests in tests (DESIGN §20): a daemon whose agent answers feedback (test/fixtures/
// pr-agent.mjs), the GitHub stand-in as its GitHub, and projects whose origin is a repository of it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { addProject, ROOT, sharedForFile, startDaemon, type Cleanup, type TestDaemon } from './daemon.ts';
import { git, makeRepo, makeTempDir } from './git.ts';
import { startGitHub, type GitHubServer } from './github-server.ts';
import { agentHome } from './sessions.ts';
import { until } from './store.ts';

const TOKEN = 'ghp_test_token';
const AGENT = path.join(ROOT, 'test', 'fixtures', 'pr-agent.mjs');
const AGENTS = { pr: { command: [AGENT, '--session-id', '{session}', '--', '{prompt}'], resume: [AGENT, '--resume', '{session}', '--', '{prompt}'], format: 'claude' } };

// A daemon whose GitHub is the stand-in, reading pull requests every second (in `home`, to restart one).
export function pullsDaemon(c: Cleanup, gh: GitHubServer, home?: string): Promise<TestDaemon> {
  return startDaemon(c, { home: home ?? agentHome(c, { agents: AGENTS, default_agent: 'pr', github: { api_url: gh.url, pr_poll_s: 1 } }), env: { GH_TOKEN: TOKEN } });
}

// One daemon and one stand-in for a file's tests.
export const pullsWorld = () =>
  sharedForFile(async (c) => {
    const gh = await startGitHub();
    c.after(() => gh.close());
    return { gh, d: await pullsDaemon(c, gh) };
  });

let repos = 0;
// A project whose origin is the stand-in's repository acme/widgetsN: git reads its URL there (so
// grove names the repository from it) and pushes to a local bare repository (pushInsteadOf), which
// the stand-in reads its branches from.
export async function project(t: Cleanup, gh: GitHubServer, d: TestDaemon) {
  const full = `acme/widgets${++repos}`;
  const repo = makeRepo(t, { files: { 'README.md': '# widgets\n' } });
  const bare = path.join(makeTempDir(t), 'origin.git');
  git(repo, 'clone', '-q', '--bare', repo, bare);
  const url = `${gh.url}/${full}.git`;
  git(repo, 'remote', 'add', 'origin', url);
  git(repo, 'config', `url.${bare}.pushInsteadOf`, url);
  gh.addRepo(full, { bare });
  gh.setPermission(full, 'bob', 'write');
  const p = await addProject(d, repo);
  return { full, repo, bare, p };
}

// A task made from an issue of the repository, its first session ended (the agent left work.txt).
export async function issueTask(d: TestDaemon, gh: GitHubServer, full: string, projectId: string) {
  const number = gh.addIssue(full, { title: 'Widgets break on Tuesdays', body: 'They do.', user: 'alice' });
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, issue_url: `${gh.url}/${full}/issues/${number}`, session: {} } });
  assert.equal(r.status, 201, r.text);
  const task = r.json;
  await until(async () => (await d.socket('GET', `/api/sessions/${task.session.id}`)).json.status === 'exited', 'the first session ends', 60_000);
  return { task, issue: number };
}

