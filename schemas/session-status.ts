// A session's statuses and their groups (DESIGN §3, §8), without TypeBox: the dashboard imports
// these, and a schema module would bring the whole of TypeBox into its bundle.
export const SESSION_STATUSES = ['queued', 'starting', 'running', 'exited', 'failed', 'killed', 'lost'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

// A session with a process, or about to have one.
export const LIVE_STATUSES = ['starting', 'running'] as const satisfies readonly SessionStatus[];
// A session its conversation waits on: a follow-up queues behind it (DESIGN §8).
export const BUSY_STATUSES = ['queued', ...LIVE_STATUSES] as const satisfies readonly SessionStatus[];
export type LiveStatus = (typeof LIVE_STATUSES)[number];
export type BusyStatus = (typeof BUSY_STATUSES)[number];

export function isLive(status: SessionStatus): status is LiveStatus {
  return (LIVE_STATUSES as readonly SessionStatus[]).includes(status);
}

export function isBusy(status: SessionStatus): status is BusyStatus {
  return (BUSY_STATUSES as readonly SessionStatus[]).includes(status);
}
