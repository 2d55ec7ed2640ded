// A task's review on its page: its turns (DESIGN §17) with Restore, and what changed between two
// ends (the merge-base, a turn, the work) as a file list and the diff.
import { useState } from 'preact/hooks';
import type { Changes, ChangesQuery, RestoreResult, TurnList } from '../../schemas/review.ts';
import type { Session } from '../../schemas/session.ts';
import { isBusy } from '../../schemas/session-status.ts';
import type { Task } from '../../schemas/task.ts';
import { api, apiText, messageOf } from './api.ts';
import { DiffView } from './diff.tsx';
import { FormError } from './form.tsx';
import { useAction, useLoad } from './hooks.ts';

// The two ends compared, as the API takes them (base, work or turn:N), both always named here.
type Range = Required<ChangesQuery>;
const WHOLE: Range = { from: 'base', to: 'work' };
const sideName = (s: string) => (s === 'base' ? 'the base' : s === 'work' ? 'the work' : `turn ${s.slice(5)}`);

export function Review({ task, sessions }: { task: Task; sessions: Session[] }) {
  const [range, setRange] = useState<Range>(WHOLE);
  // Bumped by a restore: the worktree moved without a session ending.
  const [restores, setRestores] = useState(0);
  // Again after each session ends (a new turn: session.status carries it), a merge or a restore:
  // that is when the worktree moves.
  const key = `${task.merged_at}|${sessions.filter((s) => s.ended_at).length}|${restores}`;
  const turns = useLoad(() => api<TurnList>('GET', `/api/tasks/${task.id}/turns`), [task.id, key]);
  if (task.status !== 'ready') return null;
  return (
    <>
      <TurnsPanel task={task} sessions={sessions} turns={turns} onRange={setRange} onRestored={() => setRestores((n) => n + 1)} />
      <ChangesPanel task={task} turns={turns.value ?? []} refresh={key} range={range} onRange={setRange} />
    </>
  );
}

// The task's turns, oldest first: each with what recorded it, its files and when; comparing one
// with the one before or with the work; and Restore, confirmed first, refused while an agent runs.
type Loaded<T> = ReturnType<typeof useLoad<T>>;

function TurnsPanel({ task, sessions, turns, onRange, onRestored }: { task: Task; sessions: Session[]; turns: Loaded<TurnList>; onRange: (r: Range) => void; onRestored: () => void }) {
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction();
  const agentRunning = sessions.some((s) => s.kind !== 'service' && isBusy(s.status));
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const restore = async (n: number) => {
    if (!confirm(`Restore turn ${n}? The worktree's files become those of turn ${n}; what is there now is saved as a new turn first, so this can be undone.`)) return;
    setNote('');
    await run(async () => {
      const r = await api<RestoreResult>('POST', `/api/tasks/${task.id}/restore`, { turn: n });
      setNote(`Restored turn ${r.restored.n}; the state before is saved as turn ${r.saved.n} — restore it to undo.`);
      onRestored();
    });
  };
  const list = turns.value ?? [];
  return (
    <section class="panel turns" aria-label="Turns" aria-busy={turns.loading}>
      <h2>Turns</h2>
      <p class="muted small">The worktree as each agent session left it. Restore brings one back; the branch never moves.</p>
      {agentRunning ? (
        <p class="muted small" id="restore-why">
          Restore waits: an agent of this task is running.
        </p>
      ) : null}
      {turns.error ? <p class="form-error">{messageOf(turns.error)}</p> : null}
      {list.length === 0 && turns.value ? <p class="muted">No turns yet: one is recorded when an agent session ends.</p> : null}
      {list.length > 0 ? (
        <table class="turn-list">
          <thead>
            <tr>
              <th>Turn</th>
              <th>Session</th>
              <th>Files</th>
              <th>When</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((x) => {
              const s = x.session_id ? byId.get(x.session_id) : undefined;
              return (
                <tr key={x.n} data-turn={x.n}>
                  <td class="mono">{x.n}</td>
                  <td>{x.session_id ? `${s?.agent ?? 'session'} ${x.session_id.slice(0, 8)}` : x.restored ? `saved before restoring turn ${x.restored}` : 'saved'}</td>
                  <td class="mono">{x.files}</td>
                  <td class="small">
                    <time dateTime={x.at}>{new Date(x.at).toLocaleString()}</time>
                  </td>
                  <td class="actions">
                    {x.n > 1 ? (
                      <button type="button" class="small" onClick={() => onRange({ from: `turn:${x.n - 1}`, to: `turn:${x.n}` })} aria-label={`Changes of turn ${x.n}`}>
                        Changes
                      </button>
                    ) : null}
                    <button type="button" class="small" onClick={() => onRange({ from: `turn:${x.n}`, to: 'work' })} aria-label={`Turn ${x.n} vs the work`}>
                      vs work
                    </button>
                    <button
                      type="button"
                      class="small"
                      onClick={() => restore(x.n)}
                      disabled={busy || agentRunning}
                      title={agentRunning ? 'an agent of this task is running' : undefined}
                      aria-describedby={agentRunning ? 'restore-why' : undefined}
                      aria-label={`Restore turn ${x.n}`}
                    >
                      Restore
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {note ? (
        <p class="note" role="status">
          {note}
        </p>
      ) : null}
      <FormError error={error} fields={[]} />
    </section>
  );
}

// What changed between the two ends, file by file, with the diff; the ends are chosen here or
// from the turns above.
function ChangesPanel({ task, turns, refresh, range, onRange }: { task: Task; turns: TurnList; refresh: string; range: Range; onRange: (r: Range) => void }) {
  const whole = range.from === WHOLE.from && range.to === WHOLE.to;
  const q = whole ? '' : `?from=${range.from}&to=${range.to}`;
  const changes = useLoad(() => api<Changes>('GET', `/api/tasks/${task.id}/changes${q}`), [task.id, refresh, q]);
  const diff = useLoad(() => apiText('GET', `/api/tasks/${task.id}/diff${q}`), [task.id, refresh, q]);
  const [split, setSplit] = useState(false);
  const c = changes.value;
  const end = (which: keyof Range, label: string) => (
    <label>
      {label}{' '}
      <select aria-label={label} value={range[which]} onChange={(e) => onRange({ ...range, [which]: (e.currentTarget as HTMLSelectElement).value })}>
        {[WHOLE[which], ...turns.map((x) => `turn:${x.n}`)].map((o) => (
          <option key={o} value={o}>
            {sideName(o)}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section class="panel changes" aria-busy={changes.loading || diff.loading}>
      <h2>Changes</h2>
      <div class="toolbar">
        {end('from', 'From')}
        {end('to', 'To')}
        <button type="button" onClick={() => (changes.reload(), diff.reload())}>
          Refresh
        </button>
        <label>
          <input type="checkbox" checked={split} onChange={(e) => setSplit((e.currentTarget as HTMLInputElement).checked)} /> side by side
        </label>
      </div>
      {changes.error ? <p class="form-error">{messageOf(changes.error)}</p> : null}
      {c ? (
        <>
          <p class="muted small" role="status">
            {whole
              ? `${c.ahead} commits ahead of ${c.base}, ${c.behind} behind; ${c.uncommitted} uncommitted files`
              : `${c.files.length} files changed from ${sideName(range.from)} to ${sideName(range.to)}`}
          </p>
          <table class="files">
            <tbody>
              {c.files.map((f) => (
                <tr key={f.path}>
                  <td class={`fstatus ${f.status}`}>{f.status}</td>
                  <td class="mono">{f.old_path ? `${f.old_path} → ${f.path}` : f.path}</td>
                  <td class="ok mono">+{f.additions}</td>
                  <td class="bad mono">−{f.deletions}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {c.files.length === 0 ? <p class="muted">{!whole ? 'No differences.' : task.merged_at ? 'Merged: nothing left to land.' : 'No changes yet.'}</p> : null}
        </>
      ) : null}
      {diff.value !== undefined && !diff.error ? <DiffView text={diff.value} split={split} /> : null}
    </section>
  );
}
