// What changed (DESIGN §11), without TypeBox: the dashboard names its SSE listeners by these, and a
// schema module would bring the whole of TypeBox into its bundle.
export const EVENT_TYPES = [
  'project.added',
  'project.removed',
  'task.created',
  'task.status',
  'task.merged',
  'task.archived',
  'session.created',
  'session.status',
  'session.result',
  'session.limit',
  'session.waiting',
  // DESIGN §18: a target the sandbox refused, once per target; the session carries result.blocked.
  'session.blocked',
  'approval.requested',
  'approval.decided',
  'queue.added',
  // Not in DESIGN §17's list: an entry's landing begins (rebase, checks, merge), so boards show it.
  'queue.landing',
  'queue.landed',
  'queue.failed',
  // Not in DESIGN §17's list: a task taken out of the queue (DELETE), so that boards drop it.
  'queue.removed',
  // DESIGN §19: every status change of an automation's run.
  'automation.run',
  // Not in DESIGN §19's list: an automation made, changed or removed, so that boards follow it.
  'automation.created',
  'automation.updated',
  'automation.removed',
  // DESIGN §20: an issue taken (its task and session) or refused (why), once per label event.
  'intake.taken',
  'intake.refused',
  // DESIGN §20: a task's pull request opened, and review or CI feedback sent to its conversation.
  'pr.opened',
  'pr.feedback',
  // Not in DESIGN §20's list: a pull request merged or closed, or no longer followed (its fix tries
  // spent), so that boards follow it.
  'pr.updated',
  'host.online',
  'host.offline',
] as const;
