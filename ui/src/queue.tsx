// The merge queue on the dashboard (DESIGN §17): a task queued from its page, and the queue of a
// project on its board, in order, with why a landing failed.
import { useState } from 'preact/hooks';
import { useAction } from './hooks.ts';
import type { QueueEntry } from '../../schemas/queue.ts';
import type { Task } from '../../schemas/task.ts';
import { api } from './api.ts';
import { ActionError } from './form.tsx';
import type { Live } from './live.ts';
import type { QueueFailure } from './queue-live.ts';

const STATES: Record<string, string> = { waiting: 'waiting', landing: 'landing now', fixing: 'being fixed', out: 'failed' };

// The task's entry in its project's queue, if it is queued.
function queuedOf(live: Live, task: Task): QueueEntry | undefined {
  return live.state.queues.get(task.project_id)?.find((e) => e.task_id === task.id);
}

// "Queue" on a task's page: the strategy and whether a failure is sent to its conversation to fix,
// confirmed as the other landing actions are; answers the place, or the API's refusal.
export function QueueAction({ live, task, disabled }: { live: Live; task: Task; disabled: boolean }) {
  const { busy, error, run } = useAction();
  const [strategy, setStrategy] = useState('merge');
  const [fix, setFix] = useState(false);
  const entry = queuedOf(live, task);
  const failure = live.state.queueFailures.get(task.id);
  const queue = async () => {
    if (!confirm(`Queue ${task.branch} to land on ${task.base} (${strategy}${fix ? ', its conversation fixes a failure' : ''})? It is rebased, checked and merged in its turn.`)) return;
    // Its place is shown from the queue.added event, as every page sees it.
    await run(() => api<QueueEntry>('POST', `/api/projects/${task.project_id}/queue`, { task_id: task.id, strategy, fix }));
  };
  const leave = async () => {
    if (!confirm(`Take ${task.name} out of the merge queue?`)) return;
    await run(() => api('DELETE', `/api/projects/${task.project_id}/queue/${task.id}`)); // its queue.removed event redraws
  };
  return (
    <div class="queue-action" role="group" aria-label="Merge queue">
      <select aria-label="Queue strategy" value={strategy} onChange={(e) => setStrategy(e.currentTarget.value)} disabled={busy || disabled}>
        <option value="merge">merge</option>
        <option value="squash">squash</option>
        <option value="ff">fast-forward</option>
      </select>
      <label class="small">
        <input type="checkbox" checked={fix} onChange={(e) => setFix(e.currentTarget.checked)} disabled={busy || disabled} /> fix on failure
      </label>
      <button type="button" onClick={queue} disabled={busy || disabled || entry !== undefined}>
        Queue
      </button>
      {entry ? (
        <span class="note" role="status">
          {`Queued: position ${entry.position} on ${entry.base}, ${STATES[entry.state]}`}{' '}
          {entry.state === 'landing' ? null : (
            <button type="button" class="small" onClick={leave}>
              Leave the queue
            </button>
          )}
        </span>
      ) : null}
      {failure && !entry ? <Failure failure={failure} /> : null}
      <ActionError error={error} />
    </div>
  );
}

// Why a landing failed: the reason, the files in conflict, the check's last lines.
function Failure({ failure }: { failure: QueueFailure | QueueEntry }) {
  return (
    <div class="queue-failure">
      <p class="bad">
        {failure.state === 'out' ? 'Failed to land: ' : 'Last landing failed: '}
        {failure.reason}
        {'note' in failure && failure.note ? ` (${failure.note})` : ''}
      </p>
      {failure.files?.length ? <p class="small">Conflicts in: {failure.files.join(', ')}</p> : null}
      {failure.output?.length ? <pre class="log">{failure.output.join('\n')}</pre> : null}
    </div>
  );
}

// A project's merge queue on its board: the entries in order per base branch with their state,
// then the tasks it took out, with why. Nothing when the queue is empty and nothing failed.
export function QueueBoard({ live, projectId }: { live: Live; projectId: string }) {
  const { state } = live;
  const entries = state.queues.get(projectId) ?? [];
  const failed = [...state.queueFailures.values()].filter((f) => f.project_id === projectId && f.state === 'out' && !entries.some((e) => e.task_id === f.task_id));
  if (entries.length === 0 && failed.length === 0) return null;
  const name = (id: string) => state.tasks.get(id)?.name ?? id.slice(0, 8);
  const bases = [...new Set(entries.map((e) => e.base))];
  return (
    <section class="panel queue" aria-label="Merge queue">
      <h2>Merge queue</h2>
      {bases.map((base) => (
        <ol key={base} aria-label={`onto ${base}`}>
          {entries
            .filter((e) => e.base === base)
            .map((e) => (
              <li key={e.task_id} data-task={name(e.task_id)} data-state={e.state}>
                <a href={`#/tasks/${e.task_id}`}>{name(e.task_id)}</a> <span class="muted small">onto {e.base}</span> <span class={`status queue-${e.state}`}>{STATES[e.state]}</span>{' '}
                <span class="muted small">
                  {e.strategy}
                  {e.fix ? ', fix' : ''}
                  {e.tries > 0 ? `, try ${e.tries}` : ''}
                </span>
                {e.reason !== null ? <Failure failure={e} /> : null}
              </li>
            ))}
        </ol>
      ))}
      {failed.length > 0 ? (
        <ul class="failed" aria-label="Taken out of the queue">
          {failed.map((f) => (
            <li key={f.task_id} data-task={name(f.task_id)} data-state="out">
              <a href={`#/tasks/${f.task_id}`}>{name(f.task_id)}</a> <span class="status queue-out">failed</span>
              <Failure failure={f} />
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
