// `grove codex-bridge`: the built-in codex in `read` and `edit` (DESIGN §15, docs/agents.md
// "Approvals"). `codex exec` never asks, so the bridge drives `codex app-server` (JSON-RPC over
// stdio) instead: one turn of a thread (a new one, or the thread of a follow-up), with the
// mode's sandbox and the approval policy `on-request`; each approval the server requests is
// asked through the daemon (keyed by the call's own id) and answered with its verdict. Every
// line the server prints goes to stdout as is (the codex dialect reads them); the bridge exits
// when the turn ends: 0 when it completed, 1 otherwise. Codex's questions to the person
// (`item/tool/requestUserInput`) are asked as grove questions and answered with their text.
// node:child_process, not execa: `codex app-server`'s stdin and stdout are a JSON-RPC stream
// for the turn's whole life.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ApprovalVerdict } from '../../schemas/approval.ts';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { decide, type Ask } from './ask.ts';
import { str } from '../runtime/str.ts';

export type BridgeMode = 'read' | 'edit';

// The sandbox of each mode; within it commands run without asking, and the model asks (an
// escalation) for anything beyond it, which Codex turns into an approval request.
export const POLICY: Readonly<Record<BridgeMode, { sandbox: 'read-only' | 'workspace-write'; approvalPolicy: 'on-request' }>> = {
  read: { sandbox: 'read-only', approvalPolicy: 'on-request' },
  edit: { sandbox: 'workspace-write', approvalPolicy: 'on-request' },
};

// Codex runs each command as `/bin/bash -lc '<command>'`: the command the model asked for is the
// one quoted inside (what a person reads, and what `Bash(...)` rules match).
export function innerCommand(command: string): string {
  const m = /^(?:\S*\/)?(?:ba|z)?sh -l?c '((?:[^']|'\\'')*)'$/s.exec(command);
  return m ? m[1]!.replaceAll(`'\\''`, `'`) : command;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

// What grove asks about one request of the server, or null for a request it does not ask about.
// A command is Claude Code's `Bash` (so rules read alike), a file change `Edit` with the changes
// its item announced; the key is the call's own id within its turn.
export function askOf(method: string, params: Json, items: ReadonlyMap<string, Json>): Ask | null {
  const itemId = str(params.itemId);
  if (itemId === null) return null;
  const key = ['codex', str(params.turnId) ?? '', itemId, ...(str(params.approvalId) ? [params.approvalId as string] : [])].join(':');
  const reason = str(params.reason);
  if (method === 'item/commandExecution/requestApproval') {
    const command = str(params.command) ?? str(obj(items.get(itemId)).command) ?? '';
    const cwd = str(params.cwd);
    return { key, kind: 'tool', tool: 'Bash', input: { command: innerCommand(command), ...(cwd ? { cwd } : {}), ...(reason ? { reason } : {}) } };
  }
  if (method === 'item/fileChange/requestApproval') {
    const changes = Array.isArray(items.get(itemId)?.changes) ? (items.get(itemId)!.changes as Json[]) : [];
    const paths = changes.map((c) => str(c.path)).filter((p): p is string => p !== null);
    const grantRoot = str(params.grantRoot);
    return { key, kind: 'tool', tool: 'Edit', input: { ...(paths.length === 1 ? { file_path: paths[0] } : {}), changes, ...(reason ? { reason } : {}), ...(grantRoot ? { grant_root: grantRoot } : {}) } };
  }
  return null;
}

// Codex's answer to a verdict, and what grove tells the model besides: the protocol's `decline`
// carries no message (Codex tells the model "rejected by user"), so grove's own words (a deny's
// message, "no decision within N s") go to the model as input steered into the running turn.
export function answerOf(ask: Ask, verdict: ApprovalVerdict): { decision: 'accept' | 'decline'; say: string | null } {
  if (verdict.behavior === 'allow') return { decision: 'accept', say: null };
  const what = typeof ask.input.command === 'string' ? `the command \`${ask.input.command}\` was not run` : 'the file change was not made';
  return { decision: 'decline', say: `grove: ${what}: ${verdict.message}` };
}

// One of the questions of a `item/tool/requestUserInput` (1 to 3), and how grove asks it: a
// question approval of its own (so each is answered on its own card, its options as buttons),
// named `AskUserQuestion` as Claude Code names its questions, keyed by the call and the
// question's id.
export interface CodexQuestion {
  id: string;
  labels: string[];
  ask: Ask;
}

export function questionsOf(params: Json): CodexQuestion[] {
  const itemId = str(params.itemId);
  if (itemId === null || !Array.isArray(params.questions)) return [];
  return params.questions.map(obj).map((q, i) => {
    const id = str(q.id) ?? String(i);
    const options = (Array.isArray(q.options) ? q.options.map(obj) : [])
      .filter((o) => str(o.label) !== null)
      .map((o) => ({ label: o.label as string, ...(str(o.description) ? { description: o.description as string } : {}) }));
    const input = {
      question: str(q.question) ?? '',
      ...(str(q.header) ? { header: q.header as string } : {}),
      ...(options.length > 0 ? { options } : {}),
      // Codex would mask the typed answer; grove keeps it like any answer, so the person is told.
      ...(q.isSecret === true ? { secret: true } : {}),
    };
    return { id, labels: options.map((o) => o.label), ask: { key: ['codex', str(params.turnId) ?? '', itemId, id].join(':'), kind: 'question', tool: 'AskUserQuestion', input } };
  });
}

// Codex's response to its questions, worded as its own client words them: an option's label as
// is, other text as `user_note: <text>`, no answer as `[]`. The protocol has no refusal (an
// error is taken as no answers at all), so grove's words about a question left unanswered (a
// deny's message, "no decision within N s") go to the model as input steered into the turn.
export function answersOf(questions: readonly CodexQuestion[], verdicts: readonly ApprovalVerdict[]): { answers: Record<string, { answers: string[] }>; say: string | null } {
  const answers: Record<string, { answers: string[] }> = {};
  const said: string[] = [];
  questions.forEach((q, i) => {
    const verdict = verdicts[i]!;
    if (verdict.behavior !== 'allow') {
      answers[q.id] = { answers: [] };
      said.push(`grove: no answer to "${q.ask.input.question as string}": ${verdict.message}`);
      return;
    }
    const text = verdict.answer?.trim() ?? '';
    answers[q.id] = { answers: text === '' ? [] : q.labels.includes(text) ? [text] : [`user_note: ${text}`] };
  });
  return { answers, say: said.length > 0 ? said.join('\n') : null };
}

export interface BridgeOptions {
  api: Client;
  session: string;
  mode: BridgeMode;
  /** the thread to continue (a follow-up), or null for a new one */
  resume: string | null;
  prompt: string;
  /** `codex app-server` and its own arguments */
  command: string[];
  version: string;
}

// Runs the turn; resolves with the bridge's exit code.
export async function runCodexBridge(opts: BridgeOptions): Promise<number> {
  const [file, ...args] = opts.command;
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  // `close`, not `exit`: every line it printed has been read (and passed on) by then. The server
  // gone before its turn ended is a failure: its own code, else 1 (a signal, or it never started).
  const exited = new Promise<number>((resolve) => child.once('close', (code) => resolve(code !== null && code > 0 ? code : 1)));
  child.once('error', (err) => process.stderr.write(`grove codex-bridge: ${err.message}\n`));
  child.stdin.on('error', () => {}); // the server gone while grove still answers
  const send = (message: Json) => child.stdin.writable && child.stdin.write(`${JSON.stringify(message)}\n`);
  const abort = new AbortController();

  let ids = 0;
  const replies = new Map<number, { resolve: (v: Json) => void; reject: (e: Error) => void }>();
  const request = (method: string, params: Json) =>
    new Promise<Json>((resolve, reject) => {
      const id = ++ids;
      replies.set(id, { resolve, reject });
      send({ method, id, params });
    });

  // The items the server announced, for the request that follows about them.
  const items = new Map<string, Json>();
  let threadId: string | null = null;
  let turnId: string | null = null;
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => (done = resolve));

  // The verdict on one ask; null once the bridge is ending (nothing is answered then).
  const verdictOf = async (ask: Ask): Promise<ApprovalVerdict | null> => {
    try {
      return await decide(opts.api, opts.session, ask, abort.signal);
    } catch (err) {
      if (abort.signal.aborted) return null;
      const why = err instanceof ApiProblem ? `${err.code}: ${err.detail}` : (err as Error).message;
      return { behavior: 'deny', message: `grove could not ask about this call: ${why}` };
    }
  };
  // grove's words into the running turn, before the answer they explain. Best effort: a turn
  // that cannot be steered still gets its answer.
  const steer = async (say: string | null, params: Json) => {
    const turn = str(params.turnId) ?? turnId;
    if (say === null || threadId === null || turn === null) return;
    await request('turn/steer', { threadId, expectedTurnId: turn, input: [{ type: 'text', text: say, text_elements: [] }] }).catch(() => {});
  };

  const answer = async (id: unknown, method: string, params: Json) => {
    if (method === 'item/tool/requestUserInput') {
      // All the call's questions are asked at once: the person sees them together.
      const questions = questionsOf(params);
      const verdicts = await Promise.all(questions.map((q) => verdictOf(q.ask)));
      if (verdicts.some((v) => v === null)) return;
      const { answers, say } = answersOf(questions, verdicts as ApprovalVerdict[]);
      await steer(say, params);
      return send({ id, result: { answers } });
    }
    const ask = askOf(method, params, items);
    if (ask === null) return send({ id, error: { code: -32601, message: `grove does not answer ${method}` } });
    const verdict = await verdictOf(ask);
    if (verdict === null) return;
    const { decision, say } = answerOf(ask, verdict);
    await steer(say, params);
    send({ id, result: { decision } });
  };

  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stdout.write(`${line}\n`);
    let msg: Json;
    try {
      msg = obj(JSON.parse(line));
    } catch {
      return;
    }
    const params = obj(msg.params);
    if (msg.method === undefined && typeof msg.id === 'number') {
      const reply = replies.get(msg.id);
      replies.delete(msg.id);
      if (msg.error !== undefined) reply?.reject(new Error(str(obj(msg.error).message) ?? JSON.stringify(msg.error)));
      else reply?.resolve(obj(msg.result));
      return;
    }
    if (typeof msg.method !== 'string') return;
    if (msg.id !== undefined) return void answer(msg.id, msg.method, params);
    if (msg.method === 'item/started') {
      const item = obj(params.item);
      if (str(item.id)) items.set(item.id as string, item);
    }
    if (msg.method === 'turn/completed' && str(params.threadId) === threadId) {
      const turn = obj(params.turn);
      if (turnId === null || turn.id === turnId) done(turn.status === 'completed' ? 0 : 1);
    }
  });

  const run = async (): Promise<number> => {
    await request('initialize', { clientInfo: { name: 'grove', title: 'grove', version: opts.version }, capabilities: { experimentalApi: false, requestAttestation: false } });
    send({ method: 'initialized' });
    const policy = POLICY[opts.mode];
    const started = opts.resume !== null ? await request('thread/resume', { threadId: opts.resume, ...policy }) : await request('thread/start', policy);
    threadId = str(obj(started.thread).id);
    if (threadId === null) throw new Error('codex app-server answered without a thread id');
    const turn = await request('turn/start', { threadId, input: [{ type: 'text', text: opts.prompt, text_elements: [] }] });
    turnId = str(obj(turn.turn).id);
    return finished;
  };

  let code: number;
  try {
    code = await Promise.race([run(), exited]);
  } catch (err) {
    process.stderr.write(`grove codex-bridge: ${(err as Error).message}\n`);
    code = 1;
  }
  abort.abort();
  child.stdin.end();
  // The turn is over: the server has nothing left to do, and must not outlive the bridge.
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
  return code;
}
