// How the CLI shows entities to people: table rows and columns, one-line descriptions, the pager.
import type { Approval } from '../../schemas/approval.ts';
import { denialSummary, describeDenial, networkTarget } from '../../schemas/denials.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import type { Host } from '../../schemas/host.ts';
import type { Service, Session } from '../../schemas/session.ts';
import { isLive } from '../../schemas/session-status.ts';
import { duration, shortId } from './format.ts';

export const TASK_COLS = ['id', 'name', 'status', 'branch', 'ports'];
export const HOST_COLS = ['name', 'online', 'version', 'running', 'seen'];
export const SSH_HOST_COLS = ['name', 'url', 'reachable', 'version'];
export const SESSION_COLS = ['id', 'conversation', 'agent', 'mode', 'sandbox', 'status', 'exit_code', 'result', 'created_at'];
export const SERVICE_COLS = ['name', 'status', 'pid', 'session', 'autostart', 'command'];
export const APPROVAL_COLS = ['id', 'session', 'status', 'tool', 'asks', 'created_at'];

// A service as a table row: its latest session's status, or `stopped`.
export function serviceRow(s: Service): Record<string, unknown> {
  const live = s.session !== null && isLive(s.session.status) ? s.session : null;
  return { ...s, status: s.session ? s.session.status : 'never started', pid: live ? live.pid : null, session: s.session ? shortId(s.session.id) : null };
}

// A session as a table row: short ids, and its result (or why it waits) in a few words; calls its
// agent denied come first, so such a turn never reads as a plain success (DESIGN §15).
export function sessionRow(s: Session): Record<string, unknown> {
  const r = s.result;
  const words = r ? [denialSummary(r.denials, 40) ?? '', r.is_error ? 'error:' : '', (r.text ?? '').replace(/\s+/g, ' ').slice(0, 40), r.cost_usd !== null ? `$${r.cost_usd.toFixed(4)}` : ''] : [];
  if (s.limit_resets_at) words.push(`limit until ${s.limit_resets_at}`);
  if (s.status === 'queued' && s.not_before) words.push(`not before ${s.not_before}`);
  if (s.timed_out) words.push('timed out');
  if (s.kind === 'interactive') words.push('taken over in a terminal (no output captured)');
  return { ...s, id: shortId(s.id), agent: who(s), conversation: shortId(s.conversation_id), sandbox: sandboxWord(s), result: words.filter(Boolean).join(' ') || null };
}

// A session's sandbox in a word (DESIGN §18): an agent that runs unconfined says so loudly.
export const sandboxWord = (s: Pick<Session, 'sandbox'>) => (s.sandbox.confined ? 'confined' : 'UNCONFINED');
// Who a session is: the agent's name, after its kind where it is not a plain agent turn
// ("service web", "interactive claude").
export const who = (s: Pick<Session, 'kind' | 'agent'>) => (s.kind === 'agent' ? s.agent! : s.agent === null ? `${s.kind} (shell)` : `${s.kind} ${s.agent}`);
export const short = <T extends { id: string }>(rows: T[]) => rows.map((r) => ({ ...r, id: shortId(r.id) }));

// A host as a row of `grove host ls`, by its kind: the team's daemons on the store (DESIGN §14.2),
// the saved SSH hosts (§14.1). A kind this CLI does not know shows its name only.
export function hostRow(h: Host, now = Date.now()): Record<string, unknown> {
  switch (h.kind) {
    case 'team':
      return { name: h.name, online: h.online ? 'yes' : 'no', version: h.version, running: h.running, seen: `${duration(h.seen_at, now)} ago` };
    case 'ssh':
      return { name: h.name, url: h.url, reachable: h.reachable ? 'yes' : 'no', version: h.version };
    default:
      return { name: (h as { name?: string }).name };
  }
}

// What an approval asks, in one line: the command, the file, the URL, the question, the host and
// port of a connection (the whole input is in --json and on the dashboard).
export function approvalRow(a: Approval): Record<string, unknown> {
  const input = (a.input ?? {}) as Record<string, unknown>;
  const first =
    (a.kind === 'network' ? networkTarget(a.input) : null) ??
    (['command', 'file_path', 'notebook_path', 'url', 'question', 'path', 'pattern'].map((k) => input[k]).find((v) => typeof v === 'string') as string | undefined);
  const asks = (first ?? JSON.stringify(a.input)).replace(/\s+/g, ' ');
  return { ...a, id: shortId(a.id), session: shortId(a.session_id), asks: asks.length > 60 ? `${asks.slice(0, 59)}…` : asks };
}

// How a session ended, in one line: "exited (exit 0) · 1 call denied: Bash tee ran.txt".
export function endLine(s: Session): string {
  const denied = denialSummary(s.result?.denials, 200);
  return `session ${s.status}${s.exit_code === null ? '' : ` (exit ${s.exit_code})`}${s.timed_out ? ' (timed out)' : ''}${denied ? ` · ${denied}` : ''}`;
}

// A pending approval as the line a follower prints: what the agent waits for, and the command
// that answers it (DESIGN §15: the person sees it where they already look).
export function approvalLine(a: Approval): string {
  const input = a.input !== null && typeof a.input === 'object' && !Array.isArray(a.input) ? (a.input as Record<string, unknown>) : { input: a.input };
  return `waiting for approval ${shortId(a.id)}: ${describeDenial({ tool: a.tool, input }, 200)} — grove approve ${shortId(a.id)}`;
}

// One event as a line: when, its seq and type, and what it is about.
export function describeEvent(e: GroveEvent): string {
  // `data` is the project, task, session or approval the event is about (the schema leaves it open).
  const d: any = e.data ?? {};
  if (e.type.startsWith('host.')) return `${e.at} ${e.seq} ${e.type} host ${d.name} ${d.online ? 'online' : 'offline'}`;
  if (e.type.startsWith('queue.')) return `${e.at} ${e.seq} ${e.type} ${describeQueued(e.type, d)}`;
  if (e.type === 'automation.run') {
    const why = d.reason ? ` (${d.reason})` : d.error ? ` (${d.error})` : '';
    return `${e.at} ${e.seq} ${e.type} run ${shortId(d.id ?? '')} of automation ${shortId(d.automation_id ?? '')} ${d.status}${why}`;
  }
  if (e.type.startsWith('automation.')) return `${e.at} ${e.seq} ${e.type} automation ${d.name}`;
  const what = e.type.startsWith('project.')
    ? `project ${d.name}`
    : e.type.startsWith('approval.')
      ? `approval ${shortId(d.id ?? '')} ${d.tool} ${d.status} (session ${shortId(d.session_id ?? '')})`
      : e.type.startsWith('task.')
        ? `task ${d.name} ${d.status}${e.type === 'task.merged' ? ` (merged as ${String(d.merged_commit).slice(0, 12)})` : ''}`
        : `session ${shortId(d.id ?? '')} ${who(d)} ${d.status}${e.type === 'session.result' ? `: ${sessionRow(d).result}` : ''}${e.type === 'session.limit' ? ` until ${d.limit_resets_at}` : ''}${e.type === 'session.waiting' ? ` waiting: ${d.waiting ?? 'no'}` : ''}`;
  return `${e.at} ${e.seq} ${e.type} ${what}`;
}

// A merge queue event's entry (DESIGN §17): where it waits, what it landed as, or why it failed
// (a conflict's reason names its files) and what follows (out of the queue, or a follow-up session to fix it).
function describeQueued(type: string, d: any): string {
  const t = `task ${shortId(d.task_id ?? '')}`;
  if (type === 'queue.added') return `${t} queued on ${d.base} at position ${d.position} (${d.strategy}${d.fix ? ', fix' : ''})`;
  if (type === 'queue.landed') return `${t} landed on ${d.base} as ${String(d.commit).slice(0, 12)} (${d.strategy}, try ${d.tries})`;
  if (type === 'queue.landing') return `${t} landing on ${d.base} (try ${d.tries})`;
  if (type === 'queue.removed') return `${t} taken out of the queue of ${d.base}`;
  if (type !== 'queue.failed') return t;
  const last = d.output?.length ? ` (last line: ${d.output.at(-1)})` : '';
  const then = d.state === 'fixing' ? `fixing in session ${shortId(d.fix_session ?? '')}` : `out of the queue${d.note ? `: ${d.note}` : ''}`;
  return `${t} failed to land on ${d.base}: ${d.reason}${last}; ${then}`;
}

// A diff coloured as git colours it: headers bold, hunks cyan, removals red, additions green.
export function colourDiff(text: string): string {
  const paint = (code: string, line: string) => `\x1b[${code}m${line}\x1b[0m`;
  return text
    .split('\n')
    .map((l) =>
      /^(diff --git|index |--- |\+\+\+ |rename |similarity |new file|deleted file)/.test(l)
        ? paint('1', l)
        : l.startsWith('@@')
          ? paint('36', l)
          : l.startsWith('+')
            ? paint('32', l)
            : l.startsWith('-')
              ? paint('31', l)
              : l,
    )
    .join('\n');
}

// Shows text through the user's pager (PAGER, else less), which quits at once when it fits.
export async function page(text: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  const pager = spawn('sh', ['-c', process.env.PAGER || 'less'], { stdio: ['pipe', 'inherit', 'inherit'], env: { LESS: 'FRX', ...process.env } });
  pager.stdin.on('error', () => {}); // the pager was quit before it read everything
  pager.stdin.end(text);
  await new Promise((r) => pager.once('close', r));
}
