// Opening a task's pull request (DESIGN §20): what is uncommitted committed, the branch pushed to
// `origin`, the pull request opened against the task's base, then recorded (and followed). All
// that can be refused is asked first (the repository, GitHub's answer for it, the changes), so a
// refusal leaves nothing half-made.
import type { Changes } from '../../schemas/review.ts';
import type { Project } from '../../schemas/project.ts';
import type { OpenPull } from '../../schemas/pull.ts';
import { isBusy, type Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { GitHubError, type GitHub } from '../github/client.ts';
import { repositoryOf } from '../github/repo.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import type { PullRequestsTable, StoredPull } from '../store/pull-requests.ts';

export const DEFAULT_FIX_TRIES = 3;
// How many changed files the body lists, and how much of the agent's last words it quotes.
const LISTED_FILES = 50;
const SAID_MAX = 4000;

export interface OpenDeps {
  pulls: Pick<PullRequestsTable, 'get' | 'open'>;
  github: Pick<GitHub, 'get' | 'list' | 'send' | 'apiUrl'>;
  tasks: { get: (id: string) => Promise<Task> };
  getProject: (id: string) => Promise<Project>;
  review: {
    changes: (taskId: string) => Promise<Changes>;
    commit: (taskId: string, message: string) => Promise<unknown>;
    push: (taskId: string, remote?: string) => Promise<unknown>;
  };
  sessions: { list: (taskId: string) => Promise<Session[]> };
  hostId: string;
  log: Logger;
}

interface GhPull {
  number: number;
  html_url: string;
  head: { ref: string };
  base: { ref: string };
}

const split = (repository: string) => {
  const [owner, repo] = repository.split('/') as [string, string];
  return { owner, repo };
};

// A GitHub failure as the API answers it: refused (422) or unavailable (503, with Retry-After
// when the rate limit says until when).
export function fromGitHub(err: unknown, doing: string): never {
  if (!(err instanceof GitHubError)) throw err;
  if (err.kind === 'rate_limited' || err.kind === 'unavailable') {
    const headers = err.until ? { 'retry-after': String(Math.max(1, Math.ceil((err.until.getTime() - Date.now()) / 1000))) } : undefined;
    throw new GroveError('GITHUB_UNAVAILABLE', `${doing}: ${err.message}`, headers ? { headers } : {});
  }
  throw new GroveError('GITHUB_REFUSED', `${doing}: ${err.message}`);
}

const shortBase = (base: string) => base.replace(/^refs\/heads\//, '');

// What the pull request's body says: the agent's last words, the files changed, and the issue it fixes.
export function pullBody(task: Task, said: string | null, changes: Changes, repository: string): string {
  const lines: string[] = [];
  lines.push(said?.trim() ? said.trim().slice(0, SAID_MAX) : `The work of grove task **${task.name}**.`, '');
  if (changes.files.length > 0) {
    lines.push('Files changed:', '');
    for (const f of changes.files.slice(0, LISTED_FILES)) lines.push(`- \`${f.path}\`${f.binary ? ' (binary)' : ` (+${f.additions} −${f.deletions})`}`);
    if (changes.files.length > LISTED_FILES) lines.push(`- and ${changes.files.length - LISTED_FILES} more`);
    lines.push('');
  }
  // GitHub closes the issue on merge only from a pull request of the same repository.
  if (task.issue) lines.push(task.issue.repository === repository ? `Fixes #${task.issue.number}` : `Fixes ${task.issue.repository}#${task.issue.number}`, '');
  lines.push(`Opened by grove from task \`${task.id}\` (branch \`${task.branch}\`).`);
  return lines.join('\n');
}

export function createOpener(deps: OpenDeps) {
  const { pulls, github, log } = deps;
  // One opening per task at a time: a second waits, then finds the first's pull request.
  const perTask = createKeyedMutex();

  async function repositoryFor(task: Task): Promise<string> {
    if (task.issue) return task.issue.repository;
    const project = await deps.getProject(task.project_id);
    const repository = repositoryOf(project.repository, github.apiUrl);
    if (repository === null) {
      throw new GroveError('PR_NO_REPOSITORY', `task ${task.name} was not made from an issue, and project ${project.name}'s origin (${project.repository ?? 'none'}) is not a repository on the GitHub at ${github.apiUrl}`);
    }
    return repository;
  }

  // A pull request already open for the branch (a stop between GitHub's answer and the store's
  // record), so that it is recorded rather than refused.
  async function existing(repository: string, branch: string): Promise<GhPull | null> {
    const { owner, repo } = split(repository);
    const { data } = await github.list<GhPull>('/repos/{owner}/{repo}/pulls', { owner, repo, state: 'open', head: `${owner}:${branch}` });
    return data.find((p) => p.head.ref === branch) ?? null;
  }

  async function open(taskId: string, body: OpenPull = {}): Promise<StoredPull> {
    const task = await deps.tasks.get(taskId);
    const before = await pulls.get(task.id);
    if (before?.state === 'open') throw new GroveError('PR_EXISTS', `task ${task.name} has pull request #${before.number} open: ${before.url}`);
    const repository = await repositoryFor(task);
    const { owner, repo } = split(repository);
    // The token and the repository, asked before anything is committed or pushed.
    await github.get('/repos/{owner}/{repo}', { owner, repo }).catch((err: unknown) => fromGitHub(err, `${repository} cannot be read`));
    const changes = await deps.review.changes(task.id);
    if (changes.files.length === 0 && changes.ahead === 0) throw new GroveError('PR_NO_CHANGES', `task ${task.name}'s branch has nothing that ${task.base} lacks`);
    const agentSessions = (await deps.sessions.list(task.id)).filter((s) => s.kind === 'agent');
    // Its work is not done while an agent works on it: nothing is committed under it.
    const working = agentSessions.find((s) => isBusy(s.status));
    if (working) throw new GroveError('SESSION_RUNNING', `session ${working.id} of task ${task.name} has not ended; open the pull request once it has`);
    const said = agentSessions.findLast((s) => s.result !== null)?.result?.text ?? null;
    const title = body.title ?? task.issue?.title ?? task.name;
    if (changes.uncommitted > 0) await deps.review.commit(task.id, said?.trim() ? `${title}\n\n${said.trim().slice(0, SAID_MAX)}` : title);
    await deps.review.push(task.id, 'origin');
    const base = shortBase(task.base);
    let pr: GhPull;
    try {
      pr = await github.send<GhPull>('POST', '/repos/{owner}/{repo}/pulls', { owner, repo, title, head: task.branch, base, body: pullBody(task, said, changes, repository) });
    } catch (err) {
      const found = err instanceof GitHubError && err.kind === 'invalid' ? await existing(repository, task.branch).catch(() => null) : null;
      if (found === null) fromGitHub(err, `GitHub did not open the pull request of ${task.branch} into ${base}`);
      pr = found;
    }
    const stored = await pulls.open({
      task_id: task.id,
      project_id: task.project_id,
      host_id: deps.hostId,
      repository,
      number: pr.number,
      url: pr.html_url,
      head: task.branch,
      base,
      issue_number: task.issue && task.issue.repository === repository ? task.issue.number : null,
      fix_tries: body.fix_tries ?? DEFAULT_FIX_TRIES,
    });
    if (stored === null) throw new GroveError('PR_EXISTS', `task ${task.name} has a pull request open`);
    log.info({ task: task.id, repository, number: pr.number }, 'pull request opened');
    return stored;
  }

  return {
    open: (taskId: string, body: OpenPull = {}) => perTask.run(taskId, () => open(taskId, body)),
  };
}

export type Opener = ReturnType<typeof createOpener>;
