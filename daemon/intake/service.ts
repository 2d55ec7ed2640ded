// Work that arrives (DESIGN §20): each project's watch of its repository's labelled issues (made
// through the API or its .grove.json `intake`), polled every `interval_s` by this host; an issue
// taken becomes a task with its first session, followed by intake's work (work.ts); and a task
// made by hand from an issue's URL.
import { createHash, randomUUID } from 'node:crypto';
import type { Project } from '../../schemas/project.ts';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { CreateSession } from '../../schemas/session.ts';
import type { CreatedTask, CreateTaskInput } from '../../schemas/task.ts';
import type { CreateIntake, DeclaredIntake, Intake, IntakeSession, IssueRef, PollOutcome } from '../../schemas/intake.ts';
import { GroveError } from '../errors.ts';
import { git } from '../git/run.ts';
import { GitHubError, type GitHub } from '../github/client.ts';
import { isGroves } from '../github/issues.ts';
import { isRepository, parseIssueUrl, repositoryOf } from '../github/repo.ts';
import { onProjectConfig } from '../projects/on-config.ts';
import type { TokenSource } from '../github/token.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import { publicItem, type IntakeItemsTable, type NewItem } from '../store/intake-items.ts';
import type { IntakesTable, StoredIntake } from '../store/intakes.ts';
import { slugify } from '../tasks/slug.ts';
import { ownerRepo, pollOnce, type GhIssue } from './poll.ts';
import { DEFAULT_INSTRUCTIONS, issuePrompt, taskName, type IssueText } from './prompt.ts';
import { createIntakeWork, type WorkDeps } from './work.ts';

const DEFAULT_INTERVAL_S = 60;

export interface IntakeDeps extends Omit<WorkDeps, 'items' | 'intakes' | 'writer'> {
  intakes: IntakesTable;
  items: IntakeItemsTable;
  /** GitHub's API as configured, with its token */
  github: GitHub;
  token: TokenSource;
  writer: WorkDeps['writer'];
  getProject: (id: string) => Promise<Project>;
  localProjects: () => Promise<Project[]>;
  configs: { load: (projectPath: string) => ProjectConfig; changes: Listen<string> };
  /** checks a session as a task's first would be (agent, mode) */
  checkSession: (projectPath: string, session: CreateSession) => void;
  /** makes the task with its first session (POST /api/tasks with `session`) */
  create: (input: CreateTaskInput) => Promise<{ task: CreatedTask }>;
}

type State = Intake['state'];
interface Watch {
  intake: StoredIntake;
  timer: NodeJS.Timeout | null;
  state: State;
  last: Intake['last_poll'];
  next: Date | null;
  /** issues dealt with, by number, and their updated_at then */
  seen: Map<number, string>;
  /** the fingerprint of a token GitHub refused ('' for none): no poll until it changes */
  refused: string | null;
}

const fingerprint = (token: string) => createHash('sha256').update(token).digest('hex');

export function createIntake(deps: IntakeDeps) {
  const { intakes, items, github, log } = deps;
  const work = createIntakeWork({ ...deps, items, intakes });
  const watches = new Map<string, Watch>();
  let closed = false;

  const polls = createCoalescer<string>(async (projectId) => {
    const w = watches.get(projectId);
    if (!w || closed) return;
    const began = Date.now();
    try {
      await poll(w);
    } catch (err) {
      log.error({ err, project: projectId }, 'an intake poll failed');
    }
    // Every interval_s from the start of the last poll: the time taking an issue took is not added.
    if (watches.get(projectId) === w) schedule(w, Math.max(0, began + w.intake.interval_s * 1000 - Date.now()));
  });

  function schedule(w: Watch, ms: number): void {
    if (closed) return;
    if (w.timer) clearTimeout(w.timer);
    w.next = new Date(Date.now() + ms);
    w.timer = setTimeout(() => void polls.run(w.intake.project_id), ms);
  }

  const record = (w: Watch, outcome: PollOutcome, state: State, error: string | null = null, until: Date | null = null) => {
    w.state = state;
    w.last = { at: new Date().toISOString(), outcome, error, until: until?.toISOString() ?? null };
  };

  async function poll(w: Watch): Promise<void> {
    if (w.refused !== null) {
      // Refused before: no request until the token is another.
      deps.token.forget();
      const read = await deps.token.read();
      if ((read.token === null ? '' : fingerprint(read.token)) === w.refused) return;
      w.refused = null;
    }
    try {
      const { changed } = await pollOnce({ github, items, take, newItemId: randomUUID, hostId: deps.hostId, log }, w.intake, w.seen);
      record(w, changed ? 'changed' : 'not_modified', 'polling');
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      if (err.kind === 'unauthorized' || err.kind === 'no_token') {
        const read = await deps.token.read();
        w.refused = read.token === null ? '' : fingerprint(read.token);
        record(w, err.kind, 'unauthorized', err.message);
        log.warn({ project: w.intake.project_id, err: err.message }, 'intake: GitHub refused the token; no poll until it changes');
      } else if (err.kind === 'rate_limited') {
        record(w, 'rate_limited', 'rate_limited', err.message, err.until);
      } else {
        record(w, err.kind === 'not_found' ? 'not_found' : 'failed', 'failing', err.message);
        log.warn({ project: w.intake.project_id, kind: err.kind, err: err.message }, 'intake: a poll of GitHub failed');
      }
    }
    // The issues' write-back goes on beside the polls: GitHub spaces comments seconds apart.
    void work.sweep(w.intake.project_id).catch((err: unknown) => log.error({ err, project: w.intake.project_id }, "intake: following the issues' work failed"));
  }

  // A trusted label event: claimed (once, across restarts and a team), then its task is made.
  async function take(watch: StoredIntake, item: Omit<NewItem, 'id' | 'host_id'>, issue: GhIssue): Promise<void> {
    const claimed = await items.claim({ ...item, id: randomUUID(), host_id: deps.hostId });
    if (claimed === null) return;
    try {
      const project = await deps.getProject(watch.project_id);
      const text = await issueText(watch.repository, issue);
      const { task } = await deps.create({
        project_id: project.id,
        name: taskName(issue.number, issue.title),
        branch: await freeBranch(project, issue.number, issue.title),
        wait: false,
        session: { ...sessionOf(watch.session), prompt: issuePrompt(text, watch.session.prompt) },
        issue: { provider: 'github', repository: watch.repository, number: issue.number, url: issue.html_url, title: issue.title },
      });
      const taken = await items.taken(claimed.id, task.id, task.session?.id ?? null);
      log.info({ project: project.id, repository: watch.repository, issue: issue.number, task: task.id, actor: item.actor }, 'intake took an issue');
      if (taken) void work.wake(taken.id);
    } catch (err) {
      const reason = err instanceof GroveError ? err.detail : err instanceof GitHubError ? err.message : null;
      if (reason === null) throw err;
      await items.fail(claimed.id, `its task could not be made: ${reason}`);
      log.warn({ project: watch.project_id, issue: issue.number, err: reason }, "intake could not make an issue's task");
    }
  }

  const sessionOf = (s: IntakeSession) => ({
    ...(s.agent !== undefined ? { agent: s.agent } : {}),
    mode: s.mode ?? ('edit' as const),
    ...(s.timeout_s !== undefined ? { timeout_s: s.timeout_s } : {}),
  });

  // The issue's title, body and comments (not grove's own).
  async function issueText(repository: string, issue: GhIssue): Promise<IssueText> {
    const { data: comments } = await github.list<{ body?: string | null; user?: { login: string } | null; created_at: string }>('/repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...ownerRepo(repository),
      issue_number: issue.number,
    });
    return {
      repository,
      number: issue.number,
      url: issue.html_url,
      title: issue.title,
      body: issue.body ?? null,
      author: issue.user?.login ?? null,
      comments: comments.filter((c) => !isGroves(c.body)).map((c) => ({ author: c.user?.login ?? null, body: c.body ?? '', at: c.created_at })),
    };
  }

  // `grove/<number>-<slug>`, or with -2, -3… when a task of an earlier label event kept that one.
  async function freeBranch(project: Project, number: number, title: string): Promise<string> {
    const base = `grove/${number}-${slugify(title, 40)}`;
    for (let n = 1; ; n++) {
      const branch = n === 1 ? base : `${base}-${n}`;
      const res = await git(project.path, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
      if (res.exitCode !== 0) return branch;
    }
  }

  // A definition checked and filled in: refused with INTAKE_INVALID (or the session's own codes)
  // before anything is stored.
  function specOf(project: Project, def: DeclaredIntake): Omit<StoredIntake, 'project_id' | 'source' | 'declared' | 'created_at'> {
    const invalid = (path: string, message: string) => new GroveError('INTAKE_INVALID', `${path.slice(1)} ${message}`, { errors: [{ path, message }] });
    if (def.provider !== 'github') throw invalid('/provider', `must be "github", not ${JSON.stringify(def.provider)}`);
    if (def.label.trim() === '') throw invalid('/label', 'must not be empty');
    if (def.interval_s !== undefined && !(def.interval_s >= 1)) throw invalid('/interval_s', 'must be at least 1 (seconds)');
    let repository = def.repository?.trim();
    if (repository !== undefined && !isRepository(repository)) throw invalid('/repository', 'must be owner/name');
    repository ??= repositoryOf(project.repository, github.apiUrl) ?? undefined;
    if (repository === undefined) throw invalid('/repository', `is needed: the project's origin is not on ${github.apiUrl}'s GitHub`);
    const session = def.session ?? {};
    deps.checkSession(project.path, { prompt: session.prompt ?? DEFAULT_INSTRUCTIONS, ...sessionOf(session) });
    return { provider: 'github', repository, label: def.label.trim(), session, land: def.land ?? 'pr', interval_s: def.interval_s ?? DEFAULT_INTERVAL_S };
  }

  async function put(project: Project, def: DeclaredIntake, source: 'api' | 'file'): Promise<StoredIntake> {
    const spec = specOf(project, def);
    const stored = await intakes.put({ project_id: project.id, ...spec, source, declared: source === 'file' ? def : null });
    watch(stored);
    log.info({ project: project.id, repository: stored.repository, label: stored.label, source }, 'intake set');
    return stored;
  }

  // Starts (or restarts, with what changed) the watch of a stored intake: its first poll now.
  function watch(intake: StoredIntake): void {
    const before = watches.get(intake.project_id);
    if (before?.timer) clearTimeout(before.timer);
    const same = before && before.intake.repository === intake.repository && before.intake.label === intake.label;
    const w: Watch = { intake, timer: null, state: 'polling', last: same ? before.last : null, next: null, seen: same ? before.seen : new Map(), refused: null };
    watches.set(intake.project_id, w);
    schedule(w, 0);
  }

  function unwatch(projectId: string): void {
    const w = watches.get(projectId);
    if (w?.timer) clearTimeout(w.timer);
    watches.delete(projectId);
  }

  async function show(intake: StoredIntake): Promise<Intake> {
    const w = watches.get(intake.project_id);
    return {
      project_id: intake.project_id,
      provider: intake.provider,
      repository: intake.repository,
      label: intake.label,
      session: intake.session,
      land: intake.land,
      interval_s: intake.interval_s,
      source: intake.source,
      created_at: intake.created_at,
      state: w?.state ?? 'polling',
      last_poll: w?.last ?? null,
      next_poll_at: w?.next?.toISOString() ?? null,
      items: (await items.list(intake.project_id)).map(publicItem),
    };
  }

  // A project's .grove.json `intake` applied: made or changed as the file says, removed when the
  // file drops it (only one the file made). An invalid file or entry changes nothing.
  async function applyFile(projectId: string): Promise<void> {
    const project = await deps.getProject(projectId).catch(() => null);
    if (project === null || project.host_id !== deps.hostId) return;
    let config: ProjectConfig;
    try {
      config = deps.configs.load(project.path);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      return;
    }
    const existing = await intakes.get(project.id);
    const declared = config.intake;
    if (declared === undefined) {
      if (existing?.source === 'file') {
        await intakes.remove(project.id);
        unwatch(project.id);
        log.info({ project: project.id }, 'intake removed from .grove.json');
      }
      return;
    }
    if (existing?.source === 'file' && JSON.stringify(existing.declared) === JSON.stringify(declared)) return;
    try {
      await put(project, declared, 'file');
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      log.warn({ project: project.id, code: err.code, err: err.detail }, 'the intake in .grove.json cannot be applied: left as it was');
    }
  }
  const fileSync = createCoalescer<string>(async (projectId) => {
    try {
      await applyFile(projectId);
    } catch (err) {
      log.error({ err, project: projectId }, "applying a project's .grove.json intake failed");
    }
  });
  let stopWatching: () => void = () => {};

  return {
    async put(projectId: string, body: CreateIntake): Promise<Intake> {
      return show(await put(await deps.getProject(projectId), body, 'api'));
    },
    async get(projectId: string): Promise<Intake> {
      const project = await deps.getProject(projectId);
      const intake = await intakes.get(project.id);
      if (!intake) throw new GroveError('NOT_FOUND', `project ${project.name} has no intake`);
      return show(intake);
    },
    async remove(projectId: string): Promise<void> {
      const project = await deps.getProject(projectId);
      if (!(await intakes.remove(project.id))) throw new GroveError('NOT_FOUND', `project ${project.name} has no intake`);
      unwatch(project.id);
    },
    applyFile: (projectId: string) => fileSync.run(projectId),
    // POST /api/tasks with issue_url: the issue read, for the task's name, its `issue` and the
    // first session's prompt (its text quoted as data, `instructions` around it).
    async fromUrl(url: string, instructions: string | undefined): Promise<{ name: string; issue: IssueRef; prompt: string }> {
      const where = parseIssueUrl(url, github.apiUrl);
      if (where === null) throw new GroveError('ISSUE_NOT_FOUND', `${url} is not the URL of an issue on the GitHub at ${github.apiUrl}`);
      let issue: GhIssue;
      try {
        issue = (await github.get<GhIssue>('/repos/{owner}/{repo}/issues/{issue_number}', { ...ownerRepo(where.repository), issue_number: where.number })).data;
      } catch (err) {
        if (!(err instanceof GitHubError)) throw err;
        throw new GroveError('ISSUE_NOT_FOUND', `${url} cannot be read: ${err.message}`);
      }
      const text = await issueText(where.repository, issue).catch((err: unknown) => {
        if (!(err instanceof GitHubError)) throw err;
        throw new GroveError('ISSUE_NOT_FOUND', `the comments of ${url} cannot be read: ${err.message}`);
      });
      return {
        name: taskName(issue.number, issue.title),
        issue: { provider: 'github', repository: where.repository, number: issue.number, url: issue.html_url, title: issue.title },
        prompt: issuePrompt(text, instructions),
      };
    },
    // At start: the watches of this host's projects, items a stop left go on, the files applied.
    async start(): Promise<void> {
      for (const i of await intakes.ofHost(deps.hostId)) watch(i);
      await work.sweep();
      stopWatching = onProjectConfig(deps.configs.changes, deps.localProjects, (id) => void fileSync.run(id));
      for (const p of await deps.localProjects()) await fileSync.run(p.id);
    },
    close: once(async () => {
      closed = true;
      stopWatching();
      for (const id of [...watches.keys()]) unwatch(id);
      await fileSync.close();
      await polls.close();
      await work.close();
    }),
  };
}

export type IntakeService = ReturnType<typeof createIntake>;
