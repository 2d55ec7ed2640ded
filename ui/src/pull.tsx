// A task's pull request on its page (DESIGN §20), next to its issue: its number linked, how it
// stands, its fix tries and its feedback rounds, each with its follow-up and the commit it pushed.
// Read again at each pr.* event of the task. A task without one gets a button to open it.
import type { PullRequest } from '../../schemas/pull.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { api, ApiError, messageOf } from './api.ts';
import { ActionError } from './form.tsx';
import { useAction, useLoad } from './hooks.ts';
import type { Live } from './live.ts';
import { outcomeWords, pullMark, roundWords, triesWords } from './pull-words.ts';

const when = (iso: string) => new Date(iso).toLocaleString();

// The task's pull request; null where it has none (the API's 404).
async function readPull(taskId: string): Promise<PullRequest | null> {
  try {
    return await api<PullRequest>('GET', `/api/tasks/${taskId}/pr`);
  } catch (err) {
    if (err instanceof ApiError && err.problem.status === 404) return null;
    throw err;
  }
}

// The `Pull request` fact of the task page's list: a <dt> and its <dd>.
export function PullFact({ live, task, sessions }: { live: Live; task: Task; sessions: Session[] }) {
  const seq = live.state.pullSeq.get(task.id) ?? 0;
  const { value: p, error, reload } = useLoad(() => readPull(task.id), [task.id, seq]);
  const open = useAction();
  // Nothing to say of an archived task that never had one.
  if (p === null && task.status === 'archived') return null;
  const openIt = () => open.run(async () => (await api<PullRequest>('POST', `/api/tasks/${task.id}/pr`, {}), reload()));
  return (
    <>
      <dt>Pull request</dt>
      <dd class="pull" data-state={p?.state}>
        {error !== undefined ? <p class="form-error">{messageOf(error)}</p> : null}
        {p === null ? (
          <>
            <button type="button" class="small" onClick={openIt} disabled={open.busy || task.status !== 'ready'} title="commit what is uncommitted, push the branch and open a pull request against its base">
              Open pull request
            </button>
            <ActionError error={open.error} />
          </>
        ) : p ? (
          <Pull pull={p} sessions={sessions} />
        ) : null}
      </dd>
    </>
  );
}

function Pull({ pull: p, sessions }: { pull: PullRequest; sessions: Session[] }) {
  const mark = pullMark(p);
  return (
    <>
      <a href={p.url} target="_blank" rel="noreferrer">
        #{p.number}
      </a>{' '}
      <span class={`badge pull-${mark.tone}`} role={mark.tone === 'warn' ? 'status' : undefined}>
        {mark.text}
      </span>{' '}
      <span class="muted small tries">{triesWords(p)}</span> <span class="muted mono small">{`${p.repository} ${p.head} → ${p.base}`}</span>
      {p.stopped_reason !== null && p.state === 'open' ? <p class="small stopped">grove stopped following it: {p.stopped_reason}</p> : null}
      {p.rounds.length > 0 ? (
        <ol class="runs pull-rounds" aria-label="Feedback rounds">
          {p.rounds.map((r) => (
            <li key={r.session_id} data-kind={r.kind} data-outcome={r.outcome}>
              <span class="round-ask">{roundWords(r)}</span>{' '}
              <time class="muted small" dateTime={r.at}>
                {when(r.at)}
              </time>{' '}
              <SessionLink id={r.session_id} sessions={sessions} /> <span class={`status round-${r.outcome} round-end`}>{outcomeWords(r)}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </>
  );
}

// A round's follow-up: a link to its turn further down the page, when the page shows it (the
// address's hash is the page's route, so the link scrolls rather than goes).
function SessionLink({ id, sessions }: { id: string; sessions: Session[] }) {
  const s = sessions.find((x) => x.id === id);
  if (!s) return <span class="muted small mono">{id.slice(0, 8)}</span>;
  const go = (e: MouseEvent) => {
    e.preventDefault();
    const turn = document.querySelector<HTMLElement>(`.turn[data-session="${id}"]`);
    turn?.scrollIntoView({ block: 'start' });
    turn?.focus();
  };
  return (
    <a class="small session-link" href={`#/tasks/${s.task_id}`} onClick={go} title={`${s.agent}'s follow-up, ${s.status}`}>
      its follow-up
    </a>
  );
}
