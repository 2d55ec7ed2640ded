import type { AgentDefinition, Format } from '../../schemas/config.ts';
import type { AgentResult, Denial, SessionReading } from '../../schemas/session.ts';
import { str } from '../runtime/str.ts';

// What a session's output has said so far (DESIGN §8). The pump stores it with the lines it came
// from, so a restart reads on with it and nothing is read twice or missed.
export type Reading = SessionReading;

// One structured line (of stdout, or of a transcript), parsed, and when it was written.
export type Line = { json: Record<string, unknown>; at: string };
// A dialect's reading of one line: the fields it changes.
export type Rule = (r: Reading, line: Line) => Partial<Reading>;

export const EMPTY_RESULT: AgentResult = { text: null, is_error: null, cost_usd: null, input_tokens: null, output_tokens: null, denials: [] };

// An agent's session id goes into a command line: only a plain token, never one that reads as an option.
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
export const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
export const add = (a: number | null, b: number | null): number | null => (b === null ? a : (a ?? 0) + b);
export const result = (r: Reading, patch: Partial<AgentResult>): Partial<Reading> => ({ result: { ...(r.result ?? EMPTY_RESULT), ...patch } });

// An epoch in seconds (or milliseconds, when it is that large) as a timestamp.
function epoch(v: number): string {
  return new Date(v > 1e12 ? v : v * 1000).toISOString();
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

// "try again at 9:37 PM": the next time the daemon's clock shows it (the CLI runs on this machine,
// in its time zone), after `at`. A reset on another day comes with its date, as Codex words it:
// "try again at Nov 28th, 2026 12:04 AM": that day and time here.
export function nextClockTime(text: string, at: string): string | null {
  const m = /try again at (?:([A-Za-z]{3})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?(\d{1,2}):(\d{2})\s*([AP]M)?/i.exec(text);
  if (!m) return null;
  let h = Number(m[4]);
  const min = Number(m[5]);
  const half = m[6]?.toUpperCase();
  if (half === 'PM' && h < 12) h += 12;
  if (half === 'AM' && h === 12) h = 0;
  if (h > 23 || min > 59) return null;
  if (m[1] !== undefined) {
    const month = MONTHS.indexOf(m[1].toLowerCase());
    if (month < 0) return null;
    const t = new Date(Number(m[3]), month, Number(m[2]), h, min, 0, 0);
    return Number.isNaN(t.getTime()) ? null : t.toISOString();
  }
  const from = new Date(at);
  const t = new Date(from);
  t.setHours(h, min, 0, 0);
  if (t <= from) t.setDate(t.getDate() + 1);
  return t.toISOString();
}

// Claude Code's `permission_denials` ([{tool_name, tool_use_id, tool_input}]): the calls it refused
// by itself, which its result still calls a success (DESIGN §15).
function claudeDenials(v: unknown): Denial[] {
  if (!Array.isArray(v)) return [];
  return v.map(obj).flatMap((d) => {
    const tool = str(d.tool_name);
    return tool === null ? [] : [{ tool, input: obj(d.tool_input) }];
  });
}

// Claude Code's older usage limit message, `…usage limit reached|<epoch>`, in a result's text
// (or, in its transcript, an API error's): when the limit resets.
export function claudeLimit(text: string | null): Partial<Reading> {
  const limit = text && /usage limit reached\|(\d{9,13})/.exec(text);
  return limit ? { limit_resets_at: epoch(Number(limit[1])) } : {};
}

// Claude Code's stream-json (also Amp's and Cursor's): `session_id` on the first line, a final
// `result` (with the calls it denied), and a usage limit as a rejected `rate_limit_event` or
// `…usage limit reached|<epoch>`.
const claude: Rule = (r, { json }) => {
  if (json.type === 'rate_limit_event') {
    const info = obj(json.rate_limit_info);
    const resets = num(info.resetsAt);
    return info.status === 'rejected' && resets !== null ? { limit_resets_at: epoch(resets) } : {};
  }
  if (json.type !== 'result') return {};
  const usage = obj(json.usage);
  const text = str(json.result);
  return {
    ...result(r, {
      text,
      is_error: typeof json.is_error === 'boolean' ? json.is_error : null,
      cost_usd: num(json.total_cost_usd),
      input_tokens: int(usage.input_tokens),
      output_tokens: int(usage.output_tokens),
      denials: claudeDenials(json.permission_denials),
    }),
    ...claudeLimit(text),
  };
};

// `codex app-server`'s notifications, as grove's codex bridge prints them (`{method, params}`):
// the last agent message is the text, the tokens of each model request of the turn (`last`)
// summed, the turn's status and error at its end; a usage limit is `usageLimitExceeded` with a
// clock time.
const codexApp: Rule = (r, { json, at }) => {
  const params = obj(json.params);
  const item = obj(params.item);
  if (json.method === 'item/completed' && item.type === 'agentMessage' && str(item.text)) return result(r, { text: str(item.text) });
  // A resumed thread first replays its last usage, before this session's turn starts: the turn's
  // start opens the result, and only usage after it counts.
  if (json.method === 'turn/started') return r.result === null ? result(r, {}) : {};
  if (json.method === 'thread/tokenUsage/updated') {
    if (r.result === null) return {};
    const last = obj(obj(params.tokenUsage).last);
    return result(r, { input_tokens: add(r.result?.input_tokens ?? null, int(last.inputTokens)), output_tokens: add(r.result?.output_tokens ?? null, int(last.outputTokens)) });
  }
  const error = json.method === 'error' ? obj(params.error) : json.method === 'turn/completed' ? obj(obj(params.turn).error) : null;
  if (error === null) return {};
  const message = str(error.message);
  const resets = message !== null && error.codexErrorInfo === 'usageLimitExceeded' ? nextClockTime(message, at) : null;
  const limit = resets ? { limit_resets_at: resets } : {};
  if (json.method === 'error') return limit;
  const failed = obj(params.turn).status !== 'completed';
  return { ...result(r, { is_error: failed, ...(failed && message !== null ? { text: message } : {}) }), ...limit };
};

// Codex `exec --json`: the last agent message is the text, tokens from `turn.completed`, a failed
// turn is an error; its usage limit (in an error or a failed turn) names a clock time only. The
// lines of its app-server (through grove's bridge, in read and edit) have a `method` instead.
const codex: Rule = (r, line) => {
  if (typeof line.json.method === 'string') return codexApp(r, line);
  const { json, at } = line;
  const item = obj(json.item);
  if (json.type === 'item.completed' && item.type === 'agent_message' && str(item.text)) return result(r, { text: str(item.text), is_error: false });
  if (json.type === 'turn.completed') {
    const usage = obj(json.usage);
    return result(r, { input_tokens: add(r.result?.input_tokens ?? null, int(usage.input_tokens)), output_tokens: add(r.result?.output_tokens ?? null, int(usage.output_tokens)) });
  }
  // An `error` line may be passing ("Reconnecting... 2/5"): only a failed turn is the result.
  const failed = json.type === 'turn.failed' ? str(obj(json.error).message) : null;
  const message = failed ?? (json.type === 'error' ? str(json.message) : null);
  if (message === null) return {};
  const resets = nextClockTime(message, at);
  return { ...(failed !== null ? result(r, { text: failed, is_error: true }) : {}), ...(resets ? { limit_resets_at: resets } : {}) };
};

// Gemini CLI's stream-json: the assistant's message after its last tool call is the text, the
// final `result` has the tokens and, on a quota error, "retry after <n>s".
const gemini: Rule = (r, { json, at }) => {
  if (json.type === 'tool_use') return r.result?.text ? result(r, { text: null }) : {};
  if (json.type === 'message' && json.role === 'assistant' && typeof json.content === 'string') {
    return result(r, { text: (json.delta === true ? (r.result?.text ?? '') : '') + json.content });
  }
  if (json.type !== 'result') return {};
  const stats = obj(json.stats);
  const failed = json.status === 'error';
  const message = str(obj(json.error).message);
  const retry = message && /retry after (\d+(?:\.\d+)?)\s*s/i.exec(message);
  return {
    ...result(r, {
      is_error: failed,
      ...(failed && message ? { text: message } : {}),
      input_tokens: int(stats.input_tokens),
      output_tokens: int(stats.output_tokens),
    }),
    ...(retry ? { limit_resets_at: new Date(Date.parse(at) + Number(retry[1]) * 1000).toISOString() } : {}),
  };
};

// OpenCode `run --format json`: the last text part, and tokens and cost summed over its steps.
const opencode: Rule = (r, { json }) => {
  const part = obj(json.part);
  if (json.type === 'text' && str(part.text)) return result(r, { text: str(part.text), is_error: r.result?.is_error ?? false });
  if (json.type === 'step_finish') {
    const tokens = obj(part.tokens);
    const prev = r.result ?? EMPTY_RESULT;
    return result(r, { cost_usd: add(prev.cost_usd, num(part.cost)), input_tokens: add(prev.input_tokens, int(tokens.input)), output_tokens: add(prev.output_tokens, int(tokens.output)) });
  }
  if (json.type === 'error') {
    const error = obj(json.error);
    return result(r, { text: str(obj(error.data).message) ?? str(error.name), is_error: true });
  }
  return {};
};

// Copilot CLI `--output-format json`: `type`d events with their fields under `data`. The text is
// the last assistant message (one that only asks for tools clears it), `session.error` is an error,
// and the final `result` line carries `sessionId` and `exitCode` but no tokens or cost; tokens come
// only from `assistant.usage` events, and a reset time only with a rate limit's `retryAfterSeconds`.
const copilot: Rule = (r, { json, at }) => {
  const data = obj(json.data);
  const prev = r.result ?? EMPTY_RESULT;
  if (json.type === 'assistant.message') {
    const text = str(data.content);
    if (text !== null) return result(r, { text, is_error: prev.is_error ?? false });
    return Array.isArray(data.toolRequests) && data.toolRequests.length > 0 && prev.text !== null ? result(r, { text: null }) : {};
  }
  if (json.type === 'assistant.usage') {
    return result(r, { input_tokens: add(prev.input_tokens, int(data.inputTokens)), output_tokens: add(prev.output_tokens, int(data.outputTokens)) });
  }
  if (json.type === 'session.error') return result(r, { text: str(data.message), is_error: true });
  if (json.type === 'auto_mode_switch.requested') {
    const seconds = num(data.retryAfterSeconds);
    return seconds !== null ? { limit_resets_at: new Date(Date.parse(at) + seconds * 1000).toISOString() } : {};
  }
  if (json.type === 'result' && typeof json.exitCode === 'number') return result(r, { is_error: json.exitCode !== 0 || prev.is_error === true });
  return {};
};

// Qwen Code's stream-json is Claude Code's, except that a failed model call ends in a `success`
// result whose text is "[API Error: …]" (or its quota message), and a failed start has `error` only.
const qwen: Rule = (r, line) => {
  const patch = claude(r, line);
  if (line.json.type !== 'result' || !patch.result) return patch;
  const text = patch.result.text ?? str(obj(line.json.error).message);
  const failed = text !== null && /^(\[API Error: |Qwen OAuth quota exceeded:)/.test(text);
  return { ...patch, result: { ...patch.result, text, ...(failed ? { is_error: true } : {}) } };
};

// What `grove acp-bridge` prints (daemon/bridges/acp.ts): the agent's `session/update`
// notifications as they came (a loaded session's history marked `replay`, and not read), then a
// `result` line with the turn's stopReason, usage and cost, or the error that ended it. The text is
// the agent's message after its last tool call (and after the `prompt` line: what it said while its
// session was set up is not the answer); anything but `end_turn` is an error.
const acpDialect: Rule = (r, { json, at }) => {
  // A permission request is a tool call too: Gemini CLI asks before it announces the call.
  if (json.type === 'prompt' || json.method === 'session/request_permission') return r.result?.text ? result(r, { text: null }) : {};
  if (json.method === 'session/update' && json.replay !== true) {
    const update = obj(obj(json.params).update);
    if (update.sessionUpdate === 'tool_call') return r.result?.text ? result(r, { text: null }) : {};
    const content = obj(update.content);
    if (update.sessionUpdate !== 'agent_message_chunk' || content.type !== 'text' || typeof content.text !== 'string') return {};
    return result(r, { text: (r.result?.text ?? '') + content.text, is_error: r.result?.is_error ?? false });
  }
  if (json.type !== 'result') return {};
  const usage = obj(json.usage);
  const cost = obj(json.cost);
  const error = str(json.error);
  const retry = error && /retry after (\d+(?:\.\d+)?)\s*s/i.exec(error);
  return {
    ...result(r, {
      is_error: json.stopReason !== 'end_turn',
      ...(error !== null ? { text: error } : {}),
      input_tokens: int(usage.inputTokens),
      output_tokens: int(usage.outputTokens),
      cost_usd: cost.currency === 'USD' ? num(cost.amount) : null,
    }),
    ...(retry ? { limit_resets_at: new Date(Date.parse(at) + Number(retry[1]) * 1000).toISOString() } : {}),
  };
};

const RULES: Record<Format, Rule> = { claude, codex, gemini, opencode, cursor: claude, copilot, qwen, acp: acpDialect };

// Where each dialect prints the agent's own session id: the first line that carries it.
const ID_FIELD: Record<Format, (json: Record<string, unknown>) => unknown> = {
  claude: (j) => j.session_id,
  cursor: (j) => j.session_id,
  // `exec --json`'s first line, or app-server's answer to thread/start or thread/resume (a
  // resumed thread has no thread/started notification).
  codex: (j) => (j.type === 'thread.started' ? j.thread_id : obj(obj(j.result).thread).id),
  gemini: (j) => (j.type === 'init' ? j.session_id : undefined),
  opencode: (j) => j.sessionID,
  copilot: (j) => (j.type === 'result' ? j.sessionId : undefined),
  qwen: (j) => j.session_id,
  acp: (j) => (j.type === 'session' ? j.sessionId : undefined),
};

// Folds JSON lines into a reading by `rule` (none: the session id only), the session id from the
// first line whose `idOf` is one. Each line is read as written at `at`, or at its own time when
// `when` finds one in it (a transcript's lines carry theirs). The reading after these lines is
// the same object when none of them changed it.
export function foldLines(rule: Rule | null, idOf: (json: Record<string, unknown>) => unknown, when?: (json: Record<string, unknown>) => string | null) {
  return function read(reading: Reading, texts: string[], at: string): Reading {
    let r = reading;
    for (const text of texts) {
      if (!text.startsWith('{')) continue;
      let json: Record<string, unknown>;
      try {
        json = obj(JSON.parse(text));
      } catch {
        continue;
      }
      const patch: Partial<Reading> = rule ? rule(r, { json, at: when?.(json) ?? at }) : {};
      const id = r.agent_session_id === null ? str(idOf(json)) : null;
      if (id !== null && ID_PATTERN.test(id)) patch.agent_session_id = id;
      if (Object.keys(patch).length > 0) r = { ...r, ...patch };
    }
    return r;
  };
}

// A reader of an agent's output, per its `format` and `session_id_field`; null when the agent
// declares neither, so its lines are not parsed at all.
export function outputReader(def: Pick<AgentDefinition, 'format' | 'session_id_field' | 'protocol'>) {
  const { session_id_field: field } = def;
  // An ACP agent's output is the bridge's, whatever `format` says.
  const format = def.protocol === 'acp' ? 'acp' : def.format;
  if (format === undefined && field === undefined) return null;
  const rule = format ? RULES[format] : null;
  const idOf = field !== undefined ? (j: Record<string, unknown>) => j[field] : ID_FIELD[format!];
  return foldLines(rule, idOf);
}

export type OutputReader = NonNullable<ReturnType<typeof outputReader>>;
