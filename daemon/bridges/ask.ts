// What every approval bridge (DESIGN §15) shares: one call of an agent asked through the daemon's
// ask API, keyed so that asking again after a lost answer (a daemon restart) finds the same
// approval, and its verdict waited for by long polls.
import type { Approval, ApprovalAsk, ApprovalKind, ApprovalVerdict } from '../../schemas/approval.ts';
import { MAX_WAIT_S } from '../../schemas/approval.ts';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { DaemonUnreachable } from '../client/transport.ts';
import { retrying as retry, type RetryPolicy } from '../runtime/retry.ts';

// Between two tries while the daemon does not answer (it restarts): the question stays asked.
const RETRY: RetryPolicy = { delayMs: 500 };

// Whether `err` says the daemon went away (not running, or its socket closed under a request:
// EPIPE on a kept-alive connection as it stops) rather than refused.
export function gone(err: unknown): boolean {
  if (err instanceof DaemonUnreachable) return true;
  if (err instanceof ApiProblem) return false; // its `code` is the API's, not a system error's
  return typeof (err as NodeJS.ErrnoException).code === 'string';
}

// A refusal that says to ask again later: a team's store out of reach (503 STORE_UNAVAILABLE,
// with the wait in its Retry-After).
function later(err: unknown): boolean {
  return err instanceof ApiProblem && err.status === 503 && err.code === 'STORE_UNAVAILABLE';
}

// `fn` tried again while the daemon is not there or asks to be asked later (after the wait it
// names); any other API refusal goes through.
export function retrying<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
  return retry(fn, { policy: RETRY, retryable: (err) => gone(err) || later(err), asked: (err) => (err instanceof ApiProblem ? err.retryAfterMs : undefined), signal });
}

// The ask's body (schemas/approval.ts), with the kind always given and the input a bridge builds.
// `key` is the agent's own id of the call (a tool-use id, a JSON-RPC request id with its session's).
export type Ask = Omit<ApprovalAsk, 'kind' | 'input'> & { kind: ApprovalKind; input: Record<string, unknown> };

// Asks the daemon about one call and waits for its verdict, across daemon restarts.

export async function decide(api: Client, session: string, ask: Ask, signal: AbortSignal): Promise<ApprovalVerdict> {
  let approval = await retrying(() => api.call<Approval>('POST', `/api/sessions/${encodeURIComponent(session)}/approvals`, ask), signal);
  while (approval.verdict === null) {
    const id = approval.id;
    approval = await retrying(() => api.call<Approval>('GET', `/api/approvals/${encodeURIComponent(id)}?wait=${MAX_WAIT_S}`), signal);
  }
  return approval.verdict;
}
