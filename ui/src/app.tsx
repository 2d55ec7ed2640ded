// The dashboard's frame: the projects on the left, the page of the address's hash on the right.
import { useEffect, useState } from 'preact/hooks';
import type { CreateProject, Project } from '../../schemas/project.ts';
import type { Mode } from '../../schemas/config.ts';
import type { CreatedTask, CreateTask, Task, TaskStatus } from '../../schemas/task.ts';
import { AGENT_CODES, AgentChoice, useAgents } from './agents.tsx';
import { api, HOST } from './api.ts';
import { badgesOf } from './attention.ts';
import { AutomationsPanel } from './automations.tsx';
import { taskWait, WaitLine, type Wait } from './deps.tsx';
import { Field, FormError, fieldError, inputProps, useSubmit } from './form.tsx';
import { useAction, useLive, useRoute } from './hooks.ts';
import { HostSwitcher } from './hosts.tsx';
import { IntakePanel } from './intake.tsx';
import { hostOf, type Live } from './live.ts';
import { QueueBoard } from './queue.tsx';
import { TaskPage } from './task.tsx';

export function App({ live }: { live: Live }) {
  useLive(live);
  const route = useRoute();
  const { state } = live;
  const projects = [...state.projects.values()].sort((a, b) => a.name.localeCompare(b.name));
  const projectId = route[0] === 'projects' ? route[1] : undefined;
  let page;
  if (!state.loaded) page = <p class="muted">Loading…</p>;
  else if (route[0] === 'tasks' && route[1]) page = <TaskPage live={live} taskId={route[1]} />;
  else if (route[0] === 'new-project') page = <NewProject />;
  else if (route[0] === 'projects' && route[1] && route[2] === 'new-task') page = <NewTask live={live} projectId={route[1]} />;
  else if (route[0] === 'new-task') page = <NewTask live={live} projectId={undefined} />;
  else page = <Board live={live} projectId={projectId} repository={route[0] === 'repositories' ? route[1] : undefined} />;
  // A new page takes the focus to its first field, or to its start, as a page load would: the
  // next Tab goes into the page, not back through the sidebar.
  const where = `${route.join('/')}|${state.loaded}`;
  useEffect(() => {
    (document.querySelector<HTMLElement>('main [autofocus]') ?? document.querySelector<HTMLElement>('main'))?.focus();
  }, [where]);
  return (
    <div class="layout">
      <nav class="sidebar" aria-label="Projects">
        <a class="brand" href="#/">
          grove
        </a>
        <span class={state.connected ? 'dot on' : 'dot'} title={state.connected ? 'live' : 'not connected'} />
        <HostSwitcher />
        <ul>
          <li>
            <a href="#/" aria-current={route.length === 0 ? 'page' : undefined}>
              All projects
            </a>
          </li>
          {groupsOf(projects).map((g) =>
            g.projects.length === 1 ? (
              <li key={g.projects[0]!.id}>
                <ProjectLink live={live} project={g.projects[0]!} current={projectId} />
              </li>
            ) : (
              <li key={g.repository} class="repo" data-repository={g.repository}>
                <a class="repo-name" href={`#/repositories/${encodeURIComponent(g.repository)}`} aria-current={route[0] === 'repositories' && route[1] === g.repository ? 'page' : undefined} title={g.repository}>
                  {repoLabel(g.repository)}
                </a>
                <ul>
                  {g.projects.map((p) => (
                    <li key={p.id}>
                      <ProjectLink live={live} project={p} current={projectId} />
                    </li>
                  ))}
                </ul>
              </li>
            ),
          )}
        </ul>
        <a class="button" href="#/new-project">
          Add project
        </a>
      </nav>
      <main tabIndex={-1}>
        {state.error !== null ? (
          <p class="notice" role="status">
            {`Reconnecting to ${HOST ?? 'the daemon'}… ${state.error}`}
          </p>
        ) : null}
        {page}
      </main>
    </div>
  );
}

// The projects of one repository on several hosts (DESIGN §14.2) under one heading, the others
// alone, in the order of their (first) names.
function groupsOf(projects: Project[]): Array<{ repository: string; projects: Project[] }> {
  const groups = new Map<string, Project[]>();
  for (const p of projects) {
    const key = p.repository ?? `project:${p.id}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups].map(([repository, list]) => ({ repository, projects: list }));
}

// A repository as its last two parts (`github.com/a/b` → `a/b`); the whole in the title.
const repoLabel = (repository: string) => repository.split('/').filter(Boolean).slice(-2).join('/');

function ProjectLink({ live, project, current }: { live: Live; project: Project; current: string | undefined }) {
  const host = hostOf(live.state, project.host_id);
  return (
    <a href={`#/projects/${project.id}`} aria-current={current === project.id ? 'page' : undefined} title={project.path}>
      {project.name}
      {host ? <span class={host.online ? 'muted small host' : 'muted small host offline'}> on {host.name}</span> : null}
    </a>
  );
}

const COLUMNS: Array<{ status: TaskStatus; title: string }> = [
  { status: 'setting_up', title: 'Setting up' },
  { status: 'ready', title: 'Ready' },
  { status: 'setup_failed', title: 'Setup failed' },
  { status: 'archived', title: 'Archived' },
];

// The tasks of one project (or all) by status, with what needs attention on each card.
// With `repository`: the tasks of that repository's projects on every host (DESIGN §14.2).
function Board({ live, projectId, repository }: { live: Live; projectId: string | undefined; repository?: string | undefined }) {
  const { state } = live;
  const project = projectId ? state.projects.get(projectId) : undefined;
  const projectHost = project ? hostOf(state, project.host_id) : null;
  const shown = (t: Task) => (projectId ? t.project_id === projectId : repository ? state.projects.get(t.project_id)?.repository === repository : true);
  const tasks = [...state.tasks.values()].filter(shown).sort((a, b) => b.created_at.localeCompare(a.created_at));
  const sessionsOf = (t: Task) => [...state.sessions.values()].filter((s) => s.task_id === t.id);
  const pending = [...state.approvals.values()];
  if (state.projects.size === 0) {
    return (
      <section class="empty">
        <h1>No projects yet</h1>
        <p>A project is a git repository on {HOST ?? 'this machine'}. Each task gets its own branch and worktree in it.</p>
        <a class="button primary" href="#/new-project">
          Add a project
        </a>
      </section>
    );
  }
  return (
    <section>
      <header class="page-head">
        <h1>{project ? project.name : repository ? repoLabel(repository) : 'All projects'}</h1>
        {repository && !project ? <span class="muted mono">{repository}</span> : null}
        {project ? (
          <>
            <span class="muted mono">{project.path}</span>
            {projectHost ? <span class="muted small host">on {projectHost.name}</span> : null}
            <a class="button primary" href={`#/projects/${project.id}/new-task`}>
              New task
            </a>
            <RemoveProject project={project} hasTasks={tasks.length > 0} />
          </>
        ) : (
          <a class="button primary" href="#/new-task">
            New task
          </a>
        )}
      </header>
      {project ? <QueueBoard live={live} projectId={project.id} /> : null}
      {project ? <AutomationsPanel live={live} projectId={project.id} /> : null}
      {project ? <IntakePanel live={live} projectId={project.id} /> : null}
      <div class="board">
        {COLUMNS.map((col) => {
          const here = tasks.filter((t) => t.status === col.status);
          return (
            <section class="column" key={col.status} aria-label={col.title}>
              <h2>
                {col.title} <span class="count">{here.length}</span>
              </h2>
              {here.map((t) => (
                <TaskCard key={t.id} task={t} project={state.projects.get(t.project_id)} host={hostOf(live.state, t.host_id)} badges={badgesOf(t, sessionsOf(t), pending)} wait={taskWait(state, sessionsOf(t))} showProject={!projectId} />
              ))}
            </section>
          );
        })}
      </div>
    </section>
  );
}

// On a team's store a card names its task's host, and is greyed while that host is offline: its
// sessions keep their last status there, and nothing on it can act until it is back.
function TaskCard(props: { task: Task; project: Project | undefined; host: { name: string; online: boolean } | null; badges: ReturnType<typeof badgesOf>; wait: Wait | null; showProject: boolean }) {
  const { task, badges, host, wait } = props;
  const offline = host !== null && !host.online;
  return (
    <a class={offline ? 'card offline' : 'card'} href={`#/tasks/${task.id}`} data-task={task.name} title={offline ? `host ${host.name} is offline` : undefined}>
      <strong>{task.name}</strong>
      <span class="muted mono small">{task.branch}</span>
      {props.showProject && props.project ? <span class="muted small">{props.project.name}</span> : null}
      {host ? (
        <span class="muted small host" data-host={host.name}>
          on {host.name}
          {offline ? ' (offline)' : ''}
        </span>
      ) : null}
      {task.merged_at ? <span class="badge merged">merged</span> : null}
      {task.issue ? (
        <span class="badge issue" title={`from issue #${task.issue.number} of ${task.issue.repository}: ${task.issue.title}`}>
          issue #{task.issue.number}
        </span>
      ) : null}
      {wait ? <WaitLine wait={wait} links={false} /> : null}
      {badges.map((b) => (
        <span class={`badge ${b.kind}`} key={b.kind}>
          {b.text}
        </span>
      ))}
    </a>
  );
}

function RemoveProject({ project, hasTasks }: { project: Project; hasTasks: boolean }) {
  const { busy, error, run } = useAction();
  const remove = async () => {
    if (!confirm(`Remove project ${project.name} from grove? The repository itself stays.`)) return;
    await run(async () => {
      await api('DELETE', `/api/projects/${project.id}`);
      location.hash = '#/';
    });
  };
  return (
    <>
      <button type="button" onClick={remove} disabled={hasTasks || busy} title={hasTasks ? 'archive or delete its tasks first' : undefined}>
        Remove project
      </button>
      <FormError error={error} fields={[]} />
    </>
  );
}

function NewProject() {
  const { error, busy, onSubmit: submit } = useSubmit(async (f) => {
    const body: CreateProject = { path: String(f.get('path') ?? '') };
    const name = String(f.get('name') ?? '');
    if (name) body.name = name;
    const p = await api<Project>('POST', '/api/projects', body);
    location.hash = `#/projects/${p.id}`;
  });
  const pathError = fieldError(error, 'path', ['NOT_A_GIT_REPO', 'PROJECT_EXISTS', 'CONFIG_INVALID']);
  const nameError = fieldError(error, 'name');
  return (
    <form class="form" onSubmit={submit} aria-label="Add project">
      <h1>Add a project</h1>
      <Field label="Repository folder" name="path" error={pathError} hint={`The absolute path of a git repository on ${HOST ?? 'this machine'}.`}>
        <input {...inputProps('path', pathError)} required autoFocus placeholder="/path/to/repository" />
      </Field>
      <Field label="Name" name="name" error={nameError} hint="Optional; the folder's name by default.">
        <input {...inputProps('name', nameError)} />
      </Field>
      <FormError error={error} fields={['path', 'name']} codes={['NOT_A_GIT_REPO', 'PROJECT_EXISTS', 'CONFIG_INVALID']} />
      <button class="primary" type="submit" disabled={busy}>
        Add project
      </button>
    </form>
  );
}

// A task in the project of the page, or (from All projects) in the project chosen here; with a
// first prompt, its first session too (DESIGN §17), which may wait for other tasks to merge.
function NewTask({ live, projectId }: { live: Live; projectId: string | undefined }) {
  const project = projectId ? live.state.projects.get(projectId) : undefined;
  const projects = [...live.state.projects.values()].sort((a, b) => a.name.localeCompare(b.name));
  const agents = useAgents();
  // With one project there is nothing to choose; with more, no guess.
  const [chosen, setChosen] = useState<string>(projects.length === 1 ? projects[0]!.id : '');
  const [prompt, setPrompt] = useState('');
  const [after, setAfter] = useState<string[]>([]);
  const inProject = projectId ?? chosen;
  const { error, busy, onSubmit: submit } = useSubmit(async (f) => {
    const body: CreateTask = { project_id: projectId ?? String(f.get('project_id') ?? ''), name: String(f.get('name') ?? '') };
    for (const k of ['base', 'branch'] as const) {
      const v = String(f.get(k) ?? '');
      if (v) body[k] = v;
    }
    if (prompt) {
      body.session = { prompt, mode: String(f.get('mode')) as Mode };
      // No agent to choose (none installed): the project's default, or the API's reason at the field.
      const agent = f.get('agent');
      if (typeof agent === 'string' && agent) body.session.agent = agent;
      const waits = f.getAll('after').map(String);
      if (waits.length > 0) body.after = waits;
    }
    const t = await api<CreatedTask>('POST', '/api/tasks', body);
    const { session, ...task } = t;
    live.put('task', task);
    if (session) live.put('session', session);
    location.hash = `#/tasks/${t.id}`;
  });
  if (!projectId && projects.length === 0) {
    return (
      <section class="empty">
        <h1>New task</h1>
        <p>A task lives in a project, and there is none yet: add a git repository first.</p>
        <a class="button primary" href="#/new-project" autoFocus>
          Add a project
        </a>
      </section>
    );
  }
  // The tasks that can still merge, and any chosen one archived or merged since: kept, so that a
  // choice never vanishes unseen (the API then says why it cannot be waited for).
  const open = [...live.state.tasks.values()]
    .filter((t) => t.project_id === inProject && ((t.status !== 'archived' && t.merged_at === null) || after.includes(t.id)))
    .sort((a, b) => a.name.localeCompare(b.name));
  const projectError = fieldError(error, 'project_id');
  const nameError = fieldError(error, 'name', ['BRANCH_EXISTS']);
  const baseError = fieldError(error, 'base', ['BASE_NOT_FOUND']);
  const branchError = fieldError(error, 'branch');
  const promptError = fieldError(error, 'session/prompt');
  const afterError = fieldError(error, 'after', ['AFTER_INVALID']);
  return (
    <form class="form" onSubmit={submit} aria-label="New task">
      <h1>New task{project ? ` in ${project.name}` : ''}</h1>
      {projectId ? null : (
        <Field label="Project" name="project_id" error={projectError} hint="The repository the task's branch and worktree are made in.">
          <select {...inputProps('project_id', projectError)} required autoFocus value={chosen} onChange={(e) => (setChosen(e.currentTarget.value), setAfter([]))}>
            {projects.length > 1 ? <option value="">Choose a project…</option> : null}
            {projects.map((p) => {
              const host = hostOf(live.state, p.host_id);
              return (
                <option key={p.id} value={p.id}>
                  {host ? `${p.name} on ${host.name}` : p.name}
                </option>
              );
            })}
          </select>
        </Field>
      )}
      <Field label="Name" name="name" error={nameError} hint="Its branch is made from it unless you name one.">
        <input {...inputProps('name', nameError)} required autoFocus={!!projectId} />
      </Field>
      <Field label="Base" name="base" error={baseError} hint="The branch or commit to start from; the current branch by default.">
        <input {...inputProps('base', baseError)} />
      </Field>
      <Field label="Branch" name="branch" error={branchError}>
        <input {...inputProps('branch', branchError)} />
      </Field>
      <Field label="First prompt" name="prompt" error={promptError} hint="Optional: an agent session started as soon as the task is ready.">
        <textarea {...inputProps('prompt', promptError)} rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
      </Field>
      {/* The session's choices only with a prompt: without one there is no session to make. */}
      {prompt ? (
        <>
          <AgentChoice agents={agents} error={error} at="session/" />
          <fieldset class={afterError ? 'field invalid' : 'field'} aria-describedby={afterError ? 'f-after-error' : undefined}>
            <legend>Waits for</legend>
            {open.length === 0 ? <p class="hint">{inProject ? 'No open task in this project to wait for.' : 'Choose a project to pick tasks from it.'}</p> : null}
            {open.map((t) => (
              <label key={t.id} class="choice">
                <input
                  type="checkbox"
                  name="after"
                  value={t.id}
                  checked={after.includes(t.id)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    setAfter((was) => (on ? [...was, t.id] : was.filter((id) => id !== t.id)));
                  }}
                />
                {t.name}
                {t.status === 'archived' ? ' (archived)' : t.merged_at ? ' (merged)' : ''}
              </label>
            ))}
            {afterError ? (
              <p class="field-error" id="f-after-error" role="alert">
                {afterError}
              </p>
            ) : open.length > 0 ? (
              <p class="hint">The session starts once each task chosen has merged.</p>
            ) : null}
          </fieldset>
        </>
      ) : null}
      <FormError error={error} fields={['project_id', 'name', 'base', 'branch', 'session/prompt', 'session/agent', 'session/mode', 'after']} codes={['BRANCH_EXISTS', 'BASE_NOT_FOUND', 'AFTER_INVALID', ...AGENT_CODES]} />
      <button class="primary" type="submit" disabled={busy}>
        Create task
      </button>
    </form>
  );
}
