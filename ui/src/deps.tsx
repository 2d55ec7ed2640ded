// Dependencies on the dashboard (DESIGN §17): a first session queued until the tasks of its
// `after` have merged, why it did not start when one was archived unmerged, and the last restack
// of a task stacked on another's branch. All of it read from the live state the events keep.
import { Fragment } from 'preact';
import type { EventPage } from '../../schemas/event.ts';
import type { Restack } from '../../schemas/restack.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { api } from './api.ts';
import { useLoad } from './hooks.ts';
import type { Live, LiveState, SeenRestack } from './live.ts';

type Named = { id: string; name: string };

// What a session waits for: the tasks of its `after` not merged yet while it is queued, or the
// one archived unmerged that ended it before it started (the daemon's reason, found as it finds it).
export type Wait = { waits: Named[] } | { lost: Named };

export function waitOf(state: LiveState, s: Session): Wait | null {
  if (!s.after?.length) return null;
  const named = (id: string): Named => ({ id, name: state.tasks.get(id)?.name ?? id.slice(0, 8) });
  if (s.status === 'queued') {
    const waits = s.after.filter((id) => !state.tasks.get(id)?.merged_at).map(named);
    return waits.length > 0 ? { waits } : null;
  }
  if (s.status !== 'failed' || s.pid !== null) return null;
  const lost = s.after.find((id) => {
    const t = state.tasks.get(id);
    return t === undefined || (t.status === 'archived' && t.merged_at === null);
  });
  return lost === undefined ? null : { lost: named(lost) };
}

// A task's wait for its card: a session still waiting, or its newest one that never started.
export function taskWait(state: LiveState, sessions: Session[]): Wait | null {
  const agents = sessions.filter((s) => s.kind === 'agent').sort((a, b) => a.created_at.localeCompare(b.created_at));
  for (const s of agents) {
    const w = waitOf(state, s);
    if (w && 'waits' in w) return w;
  }
  const last = agents.at(-1);
  return last ? waitOf(state, last) : null;
}

// "waits for A, B to merge" or "did not start: A was archived without being merged"; each task a
// link to its page, but on a board's card, which is a link itself.
export function WaitLine({ wait, links }: { wait: Wait; links: boolean }) {
  const name = (t: Named) => (links ? <a href={`#/tasks/${t.id}`}>{t.name}</a> : t.name);
  if ('lost' in wait) return <span class="waits failed small">did not start: {name(wait.lost)} was archived without being merged</span>;
  return (
    <span class="waits small">
      waits for{' '}
      {wait.waits.map((t, i) => (
        <Fragment key={t.id}>
          {i > 0 ? ', ' : ''}
          {name(t)}
        </Fragment>
      ))}{' '}
      to merge
    </span>
  );
}

// The task's last restack in the event log, for a page opened after it: read once from the
// oldest of the task's events (its own and its sessions', never output lines), page by page.
async function lastRestack(taskId: string): Promise<SeenRestack | null> {
  let last: SeenRestack | null = null;
  for (let after = 0; ; ) {
    const page = await api<EventPage>('GET', `/api/events?task_id=${taskId}&after=${after}`);
    if (page.events.length === 0) return last;
    for (const e of page.events) {
      const r = (e.data as { restack?: Restack } | null)?.restack;
      if (e.type === 'task.status' && r) last = { ...r, seq: e.seq, at: e.at };
    }
    after = page.next;
  }
}

// The task's last restack, from the log or, newer, the stream: onto what after which task merged,
// or why it failed, the files in conflict and how to finish it by hand. The Rebase action cannot:
// it rebases onto the task's base, which is still the merged task's branch.
export function RestackNote({ live, task }: { live: Live; task: Task }) {
  const { value: logged } = useLoad(() => lastRestack(task.id), [task.id]);
  const seen = live.state.restacks.get(task.id);
  const r = logged && (!seen || logged.seq > seen.seq) ? logged : seen;
  if (!r) return null;
  const after = <a href={`#/tasks/${r.task_id}`}>{live.state.tasks.get(r.task_id)?.name ?? r.task_id.slice(0, 8)}</a>;
  if (r.status === 'restacked') {
    return (
      <p class="restack ok" role="status" title={r.at}>
        Restacked onto {r.onto} after {after} merged: {task.branch} is now at {r.head.slice(0, 12)}.
      </p>
    );
  }
  const conflict = r.code === 'CONFLICT';
  return (
    <div class="restack failed" role="status" title={r.at}>
      <p class="bad">
        Restack onto {r.onto} after {after} merged failed: {conflict ? `its commits conflict with ${r.onto}` : r.message}
      </p>
      {r.files.length > 0 ? <p class="small files">Conflicts in: {r.files.join(', ')}</p> : null}
      <p class="small hint">
        {task.branch} is as it was, still on {r.branch}. {conflict ? `Rebase it by hand in its worktree: git rebase --onto ${r.onto} ${r.branch}, resolve the files, then git rebase --continue. ` : ''}
        grove tries again when the task's next agent session ends or the daemon restarts.
      </p>
    </div>
  );
}
