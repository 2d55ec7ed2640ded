// A task's page: its state and actions, setup and teardown logs, services, conversations with
// live output and a follow-up box, and its changes with a diff.
import { useEffect, useState } from 'preact/hooks';
import { deniedCount, describeDenial } from '../../schemas/denials.ts';
import { MODES } from '../../schemas/modes.ts';
import type { ServiceList, Session } from '../../schemas/session.ts';
import { isBusy, isLive } from '../../schemas/session-status.ts';
import type { CommitResult, MergeResult, PushResult } from '../../schemas/review.ts';
import type { Task, TaskSetup } from '../../schemas/task.ts';
import { api, ApiError, HOST, messageOf } from './api.ts';
import { AGENT_CODES, AgentChoice, noAgent, useAgents } from './agents.tsx';
import { Approvals } from './approval.tsx';
import { markSeen } from './attention.ts';
import { RestackNote, WaitLine, waitOf } from './deps.tsx';
import { ActionError, Field, FormError, fieldError, inputProps, useSubmit } from './form.tsx';
import { useAction, useLive, useLoad } from './hooks.ts';
import { hostOf, type Live } from './live.ts';
import { OutputView } from './output.tsx';
import { PullFact } from './pull.tsx';
import { QueueAction } from './queue.tsx';
import { Review } from './review.tsx';
import { isShell, isTerminal, sessionName, SessionTerminal, SessionTranscript } from './terminal.tsx';


export function TaskPage({ live, taskId }: { live: Live; taskId: string }) {
  useLive(live);
  const task = live.state.tasks.get(taskId);
  const sessions = [...live.state.sessions.values()].filter((s) => s.task_id === taskId).sort((a, b) => a.created_at.localeCompare(b.created_at));
  const ended = sessions.filter((s) => s.ended_at !== null).length;
  // From the confirmed archive on, the worktree is going: nothing reads it any more.
  const [archiving, setArchiving] = useState(false);
  // The shell the Terminal button opened last: focused, to be typed into.
  const [opened, setOpened] = useState<string | null>(null);
  // What ended while the page is open is seen.
  useEffect(() => markSeen(taskId), [taskId, ended]);
  if (!task) {
    return (
      <section>
        <h1>No such task</h1>
        <p>
          <a href="#/">Back to the board</a>
        </p>
      </section>
    );
  }
  const project = live.state.projects.get(task.project_id);
  const host = hostOf(live.state, task.host_id);
  // What only the task's host can read is not asked of it while it is offline (503 HOST_OFFLINE).
  const away = host !== null && !host.online;
  // A conversation's turns: the agent's, and those taken over in a terminal (grove takeover). The
  // task's shells are not conversations: they have a panel of their own.
  const agents = sessions.filter((s) => s.kind !== 'service' && !isShell(s));
  const shells = sessions.filter(isShell);
  return (
    <article class="task">
      <header class="page-head">
        <h1>{task.name}</h1>
        <span class={`status ${task.status}`}>{task.status.replace('_', ' ')}</span>
        {task.merged_at ? <span class="badge merged">merged</span> : null}
      </header>
      <Approvals approvals={[...live.state.approvals.values()].filter((a) => a.task_id === taskId)} sessions={sessions} />
      <dl class="facts">
        <dt>Project</dt>
        <dd>
          <a href={`#/projects/${task.project_id}`}>{project?.name ?? task.project_id}</a>
        </dd>
        {/* The issue it was made from (DESIGN §20), and its pull request next to it. */}
        {task.issue ? (
          <>
            <dt>Issue</dt>
            <dd class="issue">
              <a href={task.issue.url} target="_blank" rel="noreferrer">
                #{task.issue.number} {task.issue.title}
              </a>{' '}
              <span class="muted mono small">{task.issue.repository}</span>
            </dd>
          </>
        ) : null}
        {/* Read on the task's host: not asked while it is offline. */}
        {away ? null : <PullFact live={live} task={task} sessions={sessions} />}
        {host ? (
          <>
            <dt>Host</dt>
            <dd>
              {host.name}
              {host.online ? '' : ' (offline)'}
            </dd>
          </>
        ) : null}
        <dt>Branch</dt>
        <dd class="mono">{task.branch}</dd>
        <dt>Base</dt>
        <dd class="mono">{task.base}</dd>
        <dt>Worktree</dt>
        <dd class="mono">{project ? `${project.path}/${task.worktree_path}` : task.worktree_path}</dd>
        {Object.keys(task.ports).length > 0 ? (
          <>
            <dt>Ports</dt>
            <dd>
              {Object.entries(task.ports).map(([i, port]) => (
                <PortLink key={i} port={port} text={`http://127.0.0.1:${port}`} />
              ))}
            </dd>
          </>
        ) : null}
      </dl>
      <RestackNote live={live} task={task} />
      <Actions live={live} task={task} onArchiving={setArchiving} onShell={setOpened} />
      {task.status === 'archived' ? null : <QueueAction live={live} task={task} disabled={archiving || task.status !== 'ready'} />}
      <Log title="Setup" path={`/api/tasks/${task.id}/setup`} open={task.status !== 'ready'} refresh={task.status} />
      {away ? (
        <p class="panel muted" data-away>
          host {host.name} is offline: the task's services, changes and turns are read on it, and show when it is back
        </p>
      ) : task.status === 'ready' ? (
        <Services live={live} task={task} sessions={sessions} />
      ) : null}
      {shells.length > 0 ? <Shells shells={shells} opened={opened} /> : null}
      <section class="panel">
        <h2>Conversations</h2>
        {task.status === 'ready' ? <NewSession live={live} task={task} /> : null}
        {conversations(agents).map((turns) => (
          <Conversation key={turns[0]!.conversation_id} live={live} turns={turns} />
        ))}
      </section>
      {task.status !== 'archived' ? !archiving && !away && <Review task={task} sessions={sessions} /> : <Log title="Teardown" path={`/api/tasks/${task.id}/teardown`} open refresh={task.status} />}
    </article>
  );
}

// A task's port: a link on this machine. A saved host's ports are on that host's loopback, which
// this browser does not reach: named, with how to reach one, but not linked.
function PortLink({ port, text }: { port: number; text: string }) {
  if (HOST !== null) {
    return (
      <span class="port mono" title={`on ${HOST}'s loopback: ssh -L ${port}:127.0.0.1:${port} reaches it from here`}>
        {text} on {HOST}
      </span>
    );
  }
  return (
    <a class="port" href={`http://127.0.0.1:${port}`} target="_blank" rel="noreferrer">
      {text}
    </a>
  );
}

// Sessions by conversation, newest conversation first, each in order.
function conversations(sessions: Session[]): Session[][] {
  const by = new Map<string, Session[]>();
  for (const s of sessions) by.set(s.conversation_id, [...(by.get(s.conversation_id) ?? []), s]);
  return [...by.values()].sort((a, b) => b[0]!.created_at.localeCompare(a[0]!.created_at));
}

// Commit, rebase, merge, push and archive, each confirmed first.
function Actions({ live, task, onArchiving, onShell }: { live: Live; task: Task; onArchiving: (on: boolean) => void; onShell: (id: string) => void }) {
  const [note, setNote] = useState('');
  const action = useAction();
  const { busy, error } = action;
  // Each action's note says what it did; a failure is its error instead.
  const run = async (fn: () => Promise<string>) => {
    setNote('');
    setNote((await action.run(fn)) ?? '');
  };
  const commit = () => {
    const message = prompt('Commit message for everything the task changed:');
    if (message) void run(async () => `Committed ${(await api<CommitResult>('POST', `/api/tasks/${task.id}/commit`, { message })).commit.slice(0, 12)}`);
  };
  const rebase = () => {
    if (confirm(`Rebase ${task.branch} onto ${task.base}?`)) void run(async () => (await api('POST', `/api/tasks/${task.id}/rebase`), `Rebased onto ${task.base}`));
  };
  const merge = () => {
    const strategy = (document.getElementById('merge-strategy') as HTMLSelectElement | null)?.value ?? 'merge';
    if (confirm(`Merge ${task.branch} into ${task.base} (${strategy})?`)) {
      void run(async () => {
        const r = await api<MergeResult>('POST', `/api/tasks/${task.id}/merge`, { strategy });
        return `Merged into ${r.base} at ${r.commit.slice(0, 12)}`;
      });
    }
  };
  // A shell in the worktree (DESIGN §21), shown in the Terminals panel and focused there.
  const shell = () =>
    void run(async () => {
      const s = await api<Session>('POST', `/api/tasks/${task.id}/terminals`);
      onShell(s.id);
      live.put('session', s);
      return '';
    });
  const push = () => {
    if (confirm(`Push ${task.branch} to origin?`)) void run(async () => `Pushed to ${(await api<PushResult>('POST', `/api/tasks/${task.id}/push`, {})).remote}`);
  };
  const archive = () => {
    if (!confirm(`Archive task ${task.name}? Its sessions and services stop and its worktree is removed; the branch stays.`)) return;
    void run(async () => {
      onArchiving(true);
      let archived = false;
      try {
        try {
          live.put('task', await api<Task>('DELETE', `/api/tasks/${task.id}`));
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 'WORKTREE_DIRTY')) throw err;
          if (!confirm(`${err.problem.detail}\n\nArchive anyway and lose the uncommitted work?`)) return 'Not archived';
          live.put('task', await api<Task>('DELETE', `/api/tasks/${task.id}?force=true`));
        }
        archived = true;
        return 'Archived';
      } finally {
        if (!archived) onArchiving(false);
      }
    });
  };
  if (task.status === 'archived') return null;
  const ready = task.status === 'ready';
  const button = (label: string, onClick: () => void) => (
    <button type="button" onClick={onClick} disabled={busy || !ready}>
      {label}
    </button>
  );
  return (
    <div class="actions" role="toolbar" aria-label="Task actions">
      {button('Commit', commit)}
      {button('Rebase', rebase)}
      <select id="merge-strategy" aria-label="Merge strategy" disabled={busy || !ready}>
        <option value="merge">merge</option>
        <option value="squash">squash</option>
        <option value="ff">fast-forward</option>
      </select>
      {button('Merge', merge)}
      {button('Push', push)}
      <button type="button" onClick={shell} disabled={busy || !ready || HOST !== null} title={HOST === null ? "A shell in the task's worktree, with its environment" : `${HOST}'s terminals are not shown here; in a terminal: grove --host ${HOST} shell ${task.id.slice(0, 8)}`}>
        Terminal
      </button>
      <button type="button" class="danger" onClick={archive} disabled={busy}>
        Archive
      </button>
      {note ? (
        <span class="note" role="status">
          {note}
        </span>
      ) : null}
      <ActionError error={error} />
    </div>
  );
}

// A setup or teardown log: its commands and their output.
function Log({ title, path, open, refresh }: { title: string; path: string; open: boolean; refresh: string }) {
  const { value, error } = useLoad(() => api<TaskSetup>('GET', path), [path, refresh]);
  return (
    <details class="panel" open={open}>
      <summary>
        <h2>{title}</h2>
        {value ? <span class="muted small">{value.commands.length} commands</span> : null}
      </summary>
      {error ? <p class="form-error">{messageOf(error)}</p> : null}
      {value?.commands.map((c, i) => (
        <p key={i} class="mono small">
          $ {c.command} <span class={c.exit_code === 0 ? 'ok' : 'bad'}>{c.ended_at === null ? 'running' : c.interrupted ? 'interrupted' : c.timed_out ? 'timed out' : c.signal ? c.signal : `exit ${c.exit_code}`}</span>
        </p>
      ))}
      {value && value.lines.length > 0 ? <pre class="log">{value.lines.map((l) => l.text).join('\n')}</pre> : null}
    </details>
  );
}

function Services({ live, task, sessions }: { live: Live; task: Task; sessions: Session[] }) {
  const version = sessions.filter((s) => s.kind === 'service').map((s) => s.status).join();
  const { value, error, reload } = useLoad(() => api<ServiceList>('GET', `/api/tasks/${task.id}/services`), [task.id, version]);
  const { error: actionError, run } = useAction();
  if (error) return <p class="form-error">{messageOf(error)}</p>;
  if (!value || value.length === 0) return null;
  const act = (fn: () => Promise<unknown>) =>
    run(async () => {
      const s = await fn();
      if (s && typeof s === 'object' && 'kind' in s) live.put('session', s as Session);
      reload();
    });
  return (
    <section class="panel">
      <h2>Services</h2>
      <ul class="services">
        {value.map((svc) => {
          const running = svc.session !== null && isBusy(svc.session.status);
          return (
            <li key={svc.name}>
              <strong>{svc.name}</strong> <span class="mono small muted">{svc.command}</span>{' '}
              <span class={`status ${svc.session?.status ?? 'none'}`}>{svc.session?.status ?? 'not started'}</span>
              {Object.values(task.ports).map((p) => (
                <PortLink key={p} port={p} text={`:${p}`} />
              ))}
              {running ? (
                <button type="button" onClick={() => act(() => api('DELETE', `/api/sessions/${svc.session!.id}`))}>
                  Stop
                </button>
              ) : (
                <button type="button" onClick={() => act(() => api('POST', `/api/tasks/${task.id}/services/${encodeURIComponent(svc.name)}`))}>
                  Start
                </button>
              )}
            </li>
          );
        })}
      </ul>
      <FormError error={actionError} fields={[]} />
    </section>
  );
}

// A new conversation: the agent, the mode and the prompt.
function NewSession({ live, task }: { live: Live; task: Task }) {
  const agents = useAgents();
  const { error, busy, onSubmit: submit } = useSubmit(async (f) => {
    const body: Record<string, unknown> = { agent: String(f.get('agent')), mode: String(f.get('mode')) };
    const text = String(f.get('prompt') ?? '');
    if (text) body.prompt = text;
    // The agent's own terminal interface (DESIGN §21); headless, the API's default, is not said.
    if (f.get('interface') === 'terminal') body.interface = 'terminal';
    live.put('session', await api<Session>('POST', `/api/tasks/${task.id}/sessions`, body));
  });
  const promptError = fieldError(error, 'prompt');
  const interfaceError = fieldError(error, 'interface', ['INTERFACE_UNSUPPORTED']);
  const none = noAgent(agents);
  return (
    <form class="form inline" onSubmit={submit} aria-label="New session">
      <AgentChoice agents={agents} error={error} />
      <Field label="Interface" name="interface" error={interfaceError}>
        <select {...inputProps('interface', interfaceError)}>
          <option value="headless">headless</option>
          <option value="terminal">terminal</option>
        </select>
      </Field>
      <Field label="Prompt" name="prompt" error={promptError}>
        <textarea {...inputProps('prompt', promptError)} rows={3} />
      </Field>
      <FormError error={error} fields={['agent', 'mode', 'interface', 'prompt']} codes={[...AGENT_CODES, 'INTERFACE_UNSUPPORTED']} />
      <button class="primary" type="submit" disabled={busy || none} aria-describedby={none ? 'no-agents' : undefined} title={none ? 'no agent is installed' : undefined}>
        Start session
      </button>
    </form>
  );
}

// The calls the agent refused by itself (DESIGN §15): each with what it would have done; the
// whole input on hover.
function Denials({ agent, denials }: { agent: string; denials: NonNullable<Session['result']>['denials'] }) {
  return (
    <section class="denials" aria-label="Denied calls">
      <p>
        {deniedCount(denials.length)} by {agent} itself: what {denials.length === 1 ? 'it was' : 'they were'} for was not done.
      </p>
      <ul>
        {denials.map((d, i) => (
          <li key={i}>
            <code title={JSON.stringify(d.input, null, 2)}>{describeDenial(d)}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}

// A session's card head: who, how it stands, and Stop while it runs.
function SessionHead({ s, onStop }: { s: Session; onStop: (s: Session) => void }) {
  return (
    <header>
      <strong>{sessionName(s)}</strong> {s.kind === 'interactive' ? <span class="badge interactive">interactive</span> : null}
      {isTerminal(s) && !isShell(s) ? <span class="badge interactive">terminal</span> : null} {isShell(s) ? null : <span class="muted small">{s.mode}</span>}{' '}
      <span class={`status ${s.status}${s.result?.denials.length ? ' denied' : ''}`}>{s.status}</span>
      {s.exit_code !== null ? <span class="muted small">exit {s.exit_code}</span> : null}
      {s.result?.denials.length ? <span class="badge denied">{deniedCount(s.result.denials.length)}</span> : null}
      {s.limit_resets_at ? <span class="badge limit">limit until {new Date(s.limit_resets_at).toLocaleString()}</span> : null}
      {s.timed_out ? <span class="badge failed">timed out</span> : null}
      {s.kind === 'agent' && !s.sandbox.confined ? (
        <span class="badge unconfined" title={`Not confined: ${s.sandbox.reason ?? ''}. The agent runs with your full rights.`}>
          unconfined
        </span>
      ) : null}
      {isBusy(s.status) ? (
        <button type="button" class="small" onClick={() => onStop(s)}>
          Stop
        </button>
      ) : null}
    </header>
  );
}

// Stop a session, confirmed first; a refusal is the action's error.
function useStop(action: ReturnType<typeof useAction>) {
  return async (s: Session) => {
    if (!confirm(isShell(s) ? 'Stop the shell?' : `Stop the ${sessionName(s)} session?`)) return;
    await action.run(() => api('DELETE', `/api/sessions/${s.id}`));
  };
}

// The task's shells (DESIGN §21), newest first, each on its card with its terminal.
function Shells({ shells, opened }: { shells: Session[]; opened: string | null }) {
  const stopping = useAction();
  const stop = useStop(stopping);
  const newest = shells.at(-1)!;
  return (
    <section class="panel" aria-label="Terminals">
      <h2>Terminals</h2>
      {[...shells].reverse().map((s) => (
        <div class="turn" key={s.id} data-session={s.id} tabIndex={-1}>
          <SessionHead s={s} onStop={stop} />
          <SessionTerminal session={s} open={s === newest} autoFocus={s.id === opened} />
        </div>
      ))}
      <ActionError error={stopping.error} />
    </section>
  );
}

// One conversation: its turns (prompt, then the agent's output), and a box for the next one.
function Conversation({ live, turns }: { live: Live; turns: Session[] }) {
  const last = turns[turns.length - 1]!;
  const killing = useAction();
  const running = isBusy(last.status);
  const { error: sendError, busy, onSubmit: send } = useSubmit(async (f) => {
    live.put('session', await api<Session>('POST', `/api/sessions/${last.id}/messages`, { prompt: String(f.get('prompt') ?? ''), mode: String(f.get('mode')) }));
  });
  const error = sendError ?? killing.error;
  const kill = useStop(killing);
  const promptError = fieldError(error, 'prompt', ['RESUME_UNAVAILABLE', 'RESUME_UNSUPPORTED']);
  return (
    <section class="conversation" aria-label={`Conversation with ${sessionName(turns[0]!)}`}>
      {turns.map((s) => {
        const wait = waitOf(live.state, s);
        return (
          <div class="turn" key={s.id} data-session={s.id} tabIndex={-1}>
            <SessionHead s={s} onStop={kill} />
            {s.prompt ? <p class="prompt">{s.prompt}</p> : null}
            {wait ? <WaitLine wait={wait} links /> : null}
            {s.status === 'queued' ? (
              wait ? null : <p class="muted small">queued{s.not_before ? ` until ${new Date(s.not_before).toLocaleString()}` : ''}</p>
            ) : s.kind === 'interactive' ? (
              <p class="muted small">Taken over in a terminal (grove takeover): what was said there is the agent's own, not captured here.</p>
            ) : isTerminal(s) ? (
              <>
                <SessionTerminal session={s} open={s === last} />
                <SessionTranscript session={s} />
              </>
            ) : (
              <OutputView session={s} />
            )}
            {s.result?.text ? <p class={`result${s.result.denials.length ? ' denied' : ''}`}>{s.result.text}</p> : null}
            {s.result?.denials.length ? <Denials agent={sessionName(s)} denials={s.result.denials} /> : null}
          </div>
        );
      })}
      {isTerminal(last) && isLive(last.status) ? (
        // What the agent is told goes into its terminal: there is no other box for it.
        <p class="hint">{sessionName(last)} runs in its terminal: type to it there. A follow-up can be sent here once it ends.</p>
      ) : (
      <form class="form followup" onSubmit={send} aria-label="Follow-up">
        <Field label={`Follow-up to ${sessionName(last)}`} name="prompt" id={`f-followup-${last.conversation_id}`} error={promptError} hint={running ? 'Queued until the agent finishes its turn.' : 'Continues the conversation where it stopped.'}>
          <textarea {...inputProps('prompt', promptError, `f-followup-${last.conversation_id}`)} rows={2} required />
        </Field>
        <select name="mode" aria-label="Mode">
          {MODES.map((m) => (
            <option key={m} selected={m === last.mode}>
              {m}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy}>
          Send
        </button>
        <FormError error={error} fields={['prompt']} codes={['RESUME_UNAVAILABLE', 'RESUME_UNSUPPORTED']} />
      </form>
      )}
      {isTerminal(last) && isLive(last.status) ? <ActionError error={killing.error} /> : null}
    </section>
  );
}
