// What on a task needs the user: an approval an agent waits for (DESIGN §15); a session that ended, failed, hit its usage limit or had calls
// denied by its agent (never shown as a plain end: DESIGN §15) since they
// last opened the task, or a failed setup. "Last opened" is kept in this browser only.
import type { Approval } from '../../schemas/approval.ts';
import { isLive } from '../../schemas/session-status.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';

const KEY = 'grove.seen';

function seenMap(): Record<string, string> {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

// The user opened the task: what ended until now is seen.
export function markSeen(taskId: string): void {
  const m = seenMap();
  m[taskId] = new Date().toISOString();
  localStorage.setItem(KEY, JSON.stringify(m));
}

export type Badge = { kind: 'approval' | 'failed' | 'limit' | 'denied' | 'ended' | 'setup' | 'running' | 'queued'; text: string };

// The task's badges, most urgent first.
export function badgesOf(task: Task, sessions: Session[], pending: Approval[]): Badge[] {
  const seen = seenMap()[task.id] ?? '';
  const out: Badge[] = [];
  const asking = pending.filter((a) => a.task_id === task.id).length;
  if (asking > 0) out.push({ kind: 'approval', text: asking > 1 ? `${asking} need you` : 'needs you' });
  if (task.status === 'setup_failed') out.push({ kind: 'setup', text: 'setup failed' });
  const agents = sessions.filter((s) => s.kind === 'agent');
  const fresh = agents.filter((s) => s.ended_at !== null && s.ended_at > seen);
  const limited = fresh.filter((s) => s.limit_resets_at !== null).length;
  const failed = fresh.filter((s) => s.limit_resets_at === null && (s.status === 'failed' || s.status === 'lost')).length;
  const denied = fresh.filter((s) => s.limit_resets_at === null && s.status !== 'failed' && s.status !== 'lost' && (s.result?.denials ?? []).length > 0).length;
  const ended = fresh.length - limited - failed - denied;
  if (limited > 0) out.push({ kind: 'limit', text: limited > 1 ? `${limited} hit a limit` : 'hit a limit' });
  if (failed > 0) out.push({ kind: 'failed', text: failed > 1 ? `${failed} failed` : 'failed' });
  if (denied > 0) out.push({ kind: 'denied', text: denied > 1 ? `${denied} had calls denied` : 'calls denied' });
  if (ended > 0) out.push({ kind: 'ended', text: ended > 1 ? `${ended} ended` : 'ended' });
  const running = agents.filter((s) => isLive(s.status)).length;
  if (running > 0) out.push({ kind: 'running', text: `${running} running` });
  // Waiting for a turn or for a usage limit to reset: not running yet.
  const queued = agents.filter((s) => s.status === 'queued').length;
  if (queued > 0) out.push({ kind: 'queued', text: `${queued} queued` });
  return out;
}
