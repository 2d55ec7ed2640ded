// Followers: a session's output to its end (with the approvals it waits for), a task's setup.
import type { Approval } from '../../schemas/approval.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import type { Ctx } from './ctx.ts';
import { approvalLine, endLine } from './render.ts';

// A session's output through SSE until it ends (a queued one once it ran), with each approval it
// waits for on stderr as it is asked (or already pending); Ctrl-C ends this process, not the session.
export async function followOutput(c: Ctx, s: Session): Promise<void> {
  // Pending ones at the start, then the task's approval events after the seq noted first: one
  // asked in between is in both, and printed once.
  const from = (await c.api.health()).last_event_seq;
  const shown = new Set<string>();
  const show = (a: Approval) => {
    if (a.session_id !== s.id || a.status !== 'pending' || shown.has(a.id)) return;
    shown.add(a.id);
    process.stderr.write(`${approvalLine(a)}\n`);
  };
  for (const a of await c.api.approvals({ status: 'pending', session_id: s.id })) show(a);
  const events = await c.api.events(from, { task_id: s.task_id });
  const watching = (async () => {
    for await (const { event, data } of events.events) if (event === 'approval.requested') show(data.data as Approval);
  })().catch(() => {
    // The stream closed under it: the output ended, or the daemon stopped (the output says so).
  });
  try {
    for await (const { event, data } of (await c.api.followOutput(s.id)).events) {
      if (event === 'line') c.out(c.json ? JSON.stringify(data) : data.text);
      if (event === 'end') {
        if (!c.json) process.stderr.write(`${endLine(data)}\n`);
        return;
      }
    }
  } finally {
    events.body.destroy();
    await watching;
  }
}

// Shows a task's setup as it runs; resolves with the task once setup is over.
export async function followSetup(c: Ctx, id: string, err: (s: string) => void): Promise<Task> {
  for await (const { event, data } of (await c.api.followSetup(id)).events) {
    if (event === 'command') {
      if (data.ended_at === null) err(`$ ${data.command}`);
      else err(`  → ${data.timed_out ? 'timed out' : data.exit_code === null ? data.signal : `exit ${data.exit_code}`}`);
    } else if (event === 'line') err(`  ${data.text}`);
    else if (event === 'end') return data;
  }
  return c.api.task(id);
}
