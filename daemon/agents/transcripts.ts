import { open, readdir, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentDefinition } from '../../schemas/config.ts';
import type { AgentResult } from '../../schemas/session.ts';
import { str } from '../runtime/str.ts';
import { add, claudeLimit, EMPTY_RESULT, foldLines, int, nextClockTime, num, obj, result, type Reading, type Rule } from './dialects.ts';

// The transcript an agent writes of its sessions (DESIGN §21), read where its output is a screen
// (a terminal session) rather than JSON lines: Claude Code's session JSONL, Codex's rollout file
// (docs/decisions/terminal.md, "Transcripts", says where each is and what is read from it).
export type TranscriptKind = 'claude' | 'codex';

// The transcript an agent writes, by the program its commands run: Claude Code's `claude`,
// Codex's `codex` (a user's agent that runs them too); none for any other.
export function transcriptKind(def: Pick<AgentDefinition, 'command' | 'interactive'>): TranscriptKind | null {
  const program = path.basename((def.interactive ?? def.command)[0] ?? '');
  return program === 'claude' || program === 'codex' ? program : null;
}

// Where a session runs: its working directory, the agent's environment (HOME, CLAUDE_CONFIG_DIR,
// CODEX_HOME), its own session id when known (pinned, or read), and when it started.
export interface TranscriptPlace {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  agentSessionId: string | null;
  startedAt: string;
}

const homeOf = (env: TranscriptPlace['env']) => str(env.HOME) ?? os.homedir();

async function real(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return p;
  }
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

// Claude Code's folder of a project's sessions, as it names it: every character of the working
// directory (its real path) but ASCII letters and digits turned into `-`; a name over 200
// characters cut there, with `-` and the path's Java-style string hash in base 36.
const CLAUDE_NAME_MAX = 200;
export function claudeProjectName(cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= CLAUDE_NAME_MAX) return name;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = ((hash << 5) - hash + cwd.charCodeAt(i)) | 0;
  return `${name.slice(0, CLAUDE_NAME_MAX)}-${Math.abs(hash).toString(36)}`;
}

// Claude Code's transcript of session `id`: `<config>/projects/<project>/<id>.jsonl`, the config
// folder being $CLAUDE_CONFIG_DIR or ~/.claude. It appears with the session's first message; a
// long project name's folder is looked for by its cut name too (another hash made it).
async function claudeTranscript(place: TranscriptPlace, id: string): Promise<string> {
  const projects = path.join((str(place.env.CLAUDE_CONFIG_DIR) ?? path.join(homeOf(place.env), '.claude')).normalize('NFC'), 'projects');
  const name = claudeProjectName(await real(place.cwd));
  const file = path.join(projects, name, `${id}.jsonl`);
  if (name.length <= CLAUDE_NAME_MAX || (await firstLine(file)) !== null) return file;
  const cut = `${name.slice(0, CLAUDE_NAME_MAX)}-`;
  for (const dir of await list(projects)) {
    const other = path.join(projects, dir, `${id}.jsonl`);
    if (dir.startsWith(cut) && (await firstLine(other)) !== null) return other;
  }
  return file;
}

// A file's first line (at most 1 MiB of it), or null when it has none yet or cannot be read.
async function firstLine(file: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return null;
  }
  try {
    const chunks: Buffer[] = [];
    for (let pos = 0; pos < 1024 * 1024; ) {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, pos);
      if (bytesRead === 0) return null;
      const nl = buffer.subarray(0, bytesRead).indexOf(0x0a);
      chunks.push(buffer.subarray(0, nl === -1 ? bytesRead : nl));
      if (nl !== -1) return Buffer.concat(chunks).toString('utf8');
      pos += bytesRead;
    }
    return null;
  } finally {
    await handle.close();
  }
}

// Codex's rollout files: `<home>/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`,
// $CODEX_HOME or ~/.codex, the day folders newest first.
async function rollouts(place: TranscriptPlace, days?: Set<string>): Promise<string[]> {
  const sessions = path.join(str(place.env.CODEX_HOME) ?? path.join(homeOf(place.env), '.codex'), 'sessions');
  const out: string[] = [];
  const desc = async (dir: string) => (await list(dir)).sort().reverse();
  for (const y of await desc(sessions)) {
    for (const m of await desc(path.join(sessions, y))) {
      for (const d of await desc(path.join(sessions, y, m))) {
        if (days && !days.has(`${y}/${m}/${d}`)) continue;
        const dir = path.join(sessions, y, m, d);
        for (const f of await list(dir)) if (f.startsWith('rollout-') && f.endsWith('.jsonl')) out.push(path.join(dir, f));
      }
    }
  }
  return out;
}

// Codex's rollout of a session: that of its thread, when known (a resumed thread's file is where
// it began, on an earlier day), else the first one created since the session started whose
// `session_meta` names the session's working directory. Its day folder is in the agent's local
// time: the days around the start, in any time zone, up to tomorrow, are looked in.
async function codexTranscript(place: TranscriptPlace): Promise<string | null> {
  const id = place.agentSessionId;
  if (id !== null) return (await rollouts(place)).find((f) => f.endsWith(`-${id}.jsonl`)) ?? null;
  const day = 24 * 3600 * 1000;
  const from = Date.parse(place.startedAt);
  const days = new Set<string>();
  for (let t = from - day; t <= Math.max(from, Date.now()) + day; t += day / 2) days.add(new Date(t).toISOString().slice(0, 10).replaceAll('-', '/'));
  const cwd = await real(place.cwd);
  let best: { file: string; at: number } | null = null;
  for (const file of await rollouts(place, days)) {
    let meta: Record<string, unknown>;
    try {
      const json = obj(JSON.parse((await firstLine(file)) ?? ''));
      if (json.type !== 'session_meta') continue;
      meta = obj(json.payload);
    } catch {
      continue;
    }
    const at = Date.parse(str(meta.timestamp) ?? '');
    const where = str(meta.cwd);
    if (!(at >= from) || where === null || (best && at >= best.at)) continue;
    if (where === place.cwd || (await real(where)) === cwd) best = { file, at };
  }
  return best?.file ?? null;
}

// Where agent `def` writes its transcript of a session (DESIGN §21): for Claude Code, the file of
// its session id (pinned at start; it may not exist yet); for Codex, the rollout of its thread, or
// the first created since `startedAt` in `cwd`. Null when the agent writes none grove reads, or it
// is not there (yet).
export async function transcriptPath(def: Pick<AgentDefinition, 'command' | 'interactive'>, place: TranscriptPlace): Promise<string | null> {
  const kind = transcriptKind(def);
  if (kind === 'claude') return place.agentSessionId !== null ? claudeTranscript(place, place.agentSessionId) : null;
  if (kind === 'codex') return codexTranscript(place);
  return null;
}

// The whole lines written to `file` from byte `offset` on (about `max` bytes of them, more when
// one line is longer), and the offset after the last of them: a line still being written (no
// newline yet) is left for the next read, as is what is past `max`. A file no longer than the
// offset (not grown, or replaced) gives nothing.
export async function readTranscript(file: string, offset: number, max = 8 * 1024 * 1024): Promise<{ lines: string[]; offset: number }> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const chunks: Buffer[] = [];
    let pos = offset;
    let end = -1;
    while (end === -1 && pos < size) {
      const want = Math.min(max, size - pos);
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(want), 0, want, pos);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      chunks.push(chunk);
      pos += bytesRead;
      const nl = chunk.lastIndexOf(0x0a);
      if (nl !== -1) end = pos - bytesRead + nl - offset;
    }
    if (end === -1) return { lines: [], offset };
    const lines = Buffer.concat(chunks)
      .subarray(0, end)
      .toString('utf8')
      .split('\n')
      .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    return { lines, offset: offset + end + 1 };
  } finally {
    await handle.close();
  }
}

// The text blocks of a message's content, as one text; null when it has none.
function textOf(content: unknown, type: string): string | null {
  if (typeof content === 'string') return str(content);
  if (!Array.isArray(content)) return null;
  const texts = content.map(obj).flatMap((b) => (b.type === type && typeof b.text === 'string' ? [b.text] : []));
  return texts.length > 0 ? str(texts.join('')) : null;
}

// Claude Code's session JSONL: its messages as the API gave them, each content block on a line
// of its own, every line of a message with the message's whole usage (counted once, on its first
// line: the reader keeps which message it counted last). The text is that of the last message
// that did not end in a tool call (the answer of the turn); an API error (`isApiErrorMessage`,
// a usage limit among them) is an error with its text. A subagent's lines (`isSidechain`) are its
// own. No cost (unless an older version's `costUSD`), no denials.
function claudeRule(): Rule {
  let counted: string | null = null;
  return (r, { json }) => {
    if (json.type !== 'assistant' || json.isSidechain === true) return {};
    const message = obj(json.message);
    const id = str(message.id);
    const prev = r.result ?? EMPTY_RESULT;
    const patch: Partial<AgentResult> = {};
    if (id === null || id !== counted) {
      counted = id;
      const usage = obj(message.usage);
      Object.assign(patch, { input_tokens: add(prev.input_tokens, int(usage.input_tokens)), output_tokens: add(prev.output_tokens, int(usage.output_tokens)), cost_usd: add(prev.cost_usd, num(json.costUSD)) });
    }
    const text = textOf(message.content, 'text');
    if (json.isApiErrorMessage === true) return { ...result(r, { ...patch, text, is_error: true }), ...claudeLimit(text) };
    if (text !== null && message.stop_reason !== 'tool_use') Object.assign(patch, { text, is_error: false });
    return result(r, patch);
  };
}

// Codex's rollout: the tokens of each model response (`token_usage_record`), the assistant's
// messages as they come, and the turn's end (`task_complete`: its last agent message, or its
// error, a usage limit naming a clock time); an interrupted turn (`turn_aborted`) is an error.
const codexRule: Rule = (r, { json, at }) => {
  const payload = obj(json.payload);
  const prev = r.result ?? EMPTY_RESULT;
  if (json.type === 'token_usage_record') {
    const usage = obj(payload.usage);
    return result(r, { input_tokens: add(prev.input_tokens, int(usage.input_tokens)), output_tokens: add(prev.output_tokens, int(usage.output_tokens)) });
  }
  if (json.type === 'response_item') {
    const text = payload.type === 'message' && payload.role === 'assistant' ? textOf(payload.content, 'output_text') : null;
    return text !== null ? result(r, { text, is_error: false }) : {};
  }
  if (json.type !== 'event_msg') return {};
  if (payload.type === 'turn_aborted') return result(r, { is_error: true });
  if (payload.type !== 'task_complete') return {};
  const error = obj(payload.error);
  const message = str(error.message);
  const text = message ?? str(payload.last_agent_message);
  const resets = message !== null && error.codex_error_info === 'usage_limit_exceeded' ? nextClockTime(message, at) : null;
  return { ...result(r, { is_error: message !== null, ...(text !== null ? { text } : {}) }), ...(resets ? { limit_resets_at: resets } : {}) };
};

// Folds new transcript lines into the session's reading: the same shape the dialects read from
// stdout (agent_session_id, result, limit_resets_at), so a terminal session stores what a
// headless one does. Fold a session's lines from where its transcript stood when it started (a
// follow-up appends to the conversation's file), in order, through one reader: a reader made
// again (after a restart) counts once more the usage of a Claude Code message whose lines it
// reads the rest of.
export type TranscriptReader = (prev: Reading, lines: string[]) => Reading;

export function transcriptReader(def: Pick<AgentDefinition, 'command' | 'interactive'>): TranscriptReader | null {
  const kind = transcriptKind(def);
  if (kind === null) return null;
  const when = (json: Record<string, unknown>) => str(json.timestamp);
  const read =
    kind === 'claude'
      ? foldLines(claudeRule(), (json) => json.sessionId, when)
      : foldLines(codexRule, (json) => (json.type === 'session_meta' ? obj(json.payload).id : obj(json.payload).thread_id), when);
  return (prev, lines) => read(prev, lines, new Date().toISOString());
}
