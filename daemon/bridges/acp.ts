// `grove acp-bridge --session ID [--resume AGENT_SESSION] [--acp-mode MODE] [--prompt=P] -- agent …`:
// an ACP client (DESIGN §15, docs/agents.md "ACP") over the stdio of an agent that speaks the Agent
// Client Protocol. It is the grove session's process: it runs the agent as its child (same process
// group, so a kill or timeout_s ends both), opens or continues the agent's session in its working
// folder, runs one prompt turn, asks the person through grove for each `session/request_permission`
// and elicitation, and prints what the agent says as JSON lines for the `acp` dialect.
// node:child_process, not execa: the agent's stdin and stdout are the JSON-RPC streams the ACP
// SDK reads and writes as Node streams, for the agent's whole life.
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';
import type { ApprovalVerdict } from '../../schemas/approval.ts';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { decide, type Ask } from './ask.ts';
import { str } from '../runtime/str.ts';

export interface BridgeOptions {
  api: Client;
  session: string; // grove's session id, whose approvals these are
  resume: string | null; // the agent's session id to continue
  mode: string | null; // the ACP session mode to set (session/set_mode)
  prompt: string | null;
  command: string[]; // the agent and its arguments
  cwd: string;
  out: (line: Record<string, unknown>) => void;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

// An ACP tool call as grove's approval: kinds named as Claude Code names its tools, so the
// Claude Code rules of `allow` and `remember` (DESIGN §15) apply, with the fields they read
// (`command`, `file_path`, `url`); everything the request carried goes along.
export function askOf(params: acp.RequestPermissionRequest): Ask {
  const call = params.toolCall;
  const raw = obj(call.rawInput);
  const diff = (call.content ?? []).find((c) => c.type === 'diff') as (acp.Diff & { type: 'diff' }) | undefined;
  const file = diff?.path ?? call.locations?.[0]?.path ?? str(raw.file_path) ?? str(raw.path);
  const input: Record<string, unknown> = {
    title: call.title ?? null,
    kind: call.kind ?? null,
    ...(call.name ? { name: call.name } : {}),
    raw_input: call.rawInput ?? null,
    content: call.content ?? [],
    locations: call.locations ?? [],
    options: params.options,
  };
  let tool: string;
  if (call.kind === 'execute') {
    tool = 'Bash';
    input.command = str(raw.command) ?? (Array.isArray(raw.command) ? raw.command.join(' ') : null) ?? call.title ?? '';
  } else if (call.kind === 'edit') {
    tool = 'Edit';
    if (file !== null) input.file_path = file;
    if (diff) Object.assign(input, { old_string: diff.oldText ?? null, new_string: diff.newText });
  } else if (call.kind === 'read' || call.kind === 'search') {
    tool = 'Read';
    if (file !== null) input.file_path = file;
  } else if (call.kind === 'fetch' && str(raw.url) !== null) {
    tool = 'WebFetch';
    input.url = raw.url;
  } else {
    tool = call.title ?? call.name ?? call.kind ?? 'tool';
  }
  return { key: `${params.sessionId}:${call.toolCallId}`, kind: 'tool', tool, input };
}

// The option a verdict picks: allow once for allow; reject once for deny and expiry ("always" only
// when the agent offers no "once": a remembered rule is grove's, kept by grove). None: cancelled.
export function outcomeOf(options: acp.PermissionOption[], verdict: ApprovalVerdict): acp.RequestPermissionResponse {
  const order: acp.PermissionOptionKind[] = verdict.behavior === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const kind of order) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: 'selected', optionId: option.optionId }, ...(verdict.behavior !== 'allow' ? { _meta: { grove: { message: verdict.message } } } : {}) };
  }
  return { outcome: { outcome: 'cancelled' } };
}

// A form elicitation's content from the person's one text answer: a single field takes it (as a
// number or boolean where the schema says so); several fields take a JSON object if the answer is
// one, else each text field the answer.
export function contentOf(schema: Record<string, unknown>, answer: string): Record<string, string | number | boolean | string[]> {
  const props = Object.entries(obj(schema.properties)).map(([name, p]) => [name, obj(p)] as const);
  if (props.length > 1) {
    try {
      const parsed = obj(JSON.parse(answer));
      if (Object.keys(parsed).length > 0) return parsed as Record<string, string | number | boolean>;
    } catch {
      // not JSON: the text goes to every text field
    }
  }
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [name, p] of props) {
    if (p.type === 'number' || p.type === 'integer') {
      if (Number.isFinite(Number(answer)) && answer.trim() !== '') out[name] = Number(answer);
    } else if (p.type === 'boolean') out[name] = /^(y|yes|true|1|ok)$/i.test(answer.trim());
    else if (p.type === 'array') out[name] = answer.split(',').map((s) => s.trim()).filter(Boolean);
    else if (props.length === 1 || p.type === 'string') out[name] = answer;
  }
  return out;
}

// The values a select config option offers, its groups flattened.
function selectValues(option: acp.SessionConfigOption): string[] {
  if (option.type !== 'select') return [];
  return (option.options as Array<{ value?: string; options?: Array<{ value: string }> }>).flatMap((o) => (o.options ? o.options.map((x) => x.value) : o.value !== undefined ? [o.value] : []));
}

// The reason a refusal of grove's API becomes the agent's answer: the call is refused, saying why.
function refusal(err: unknown): string {
  return err instanceof ApiProblem ? `grove could not ask about this call: ${err.code}: ${err.detail}` : `grove could not ask about this call: ${(err as Error).message}`;
}

// The agent's end: its exit code and signal once it has exited.
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

// JSON-RPC's "Method not found".
const METHOD_NOT_FOUND = -32601;

// How long an agent may take to leave once its turn is over, before TERM, then before KILL.
const GRACE_MS = 5000;

// Whether `p` settles within `ms`.
async function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

// Runs one turn; the exit status: 0 when the turn ended `end_turn`, 1 otherwise.
type Tokens = { inputTokens: number | null; outputTokens: number | null };
const tokens = (v: unknown) => (typeof v === 'number' ? v : null);
const sum = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);

// Adds the model call's tokens an update carries, as Qwen Code sends them (an
// `agent_message_chunk` with `_meta.usage`, once per call), to those of the turn so far.
export function addStreamedUsage(sofar: Tokens | null, update: Record<string, unknown>): Tokens | null {
  if (update.sessionUpdate !== 'agent_message_chunk') return sofar;
  const usage = obj(obj(update._meta).usage);
  if (tokens(usage.inputTokens) === null && tokens(usage.outputTokens) === null) return sofar;
  return { inputTokens: sum(sofar?.inputTokens ?? null, tokens(usage.inputTokens)), outputTokens: sum(sofar?.outputTokens ?? null, tokens(usage.outputTokens)) };
}

// The turn's tokens as ACP's PromptResponse `usage` names them; where an agent sends none, as
// Gemini CLI reports them (`_meta.quota.token_count`), else as streamed with its updates
// (addStreamedUsage); null when none is there.
export function usageOf(done: { usage?: unknown; _meta?: unknown }, streamed: Tokens | null = null): unknown {
  if (done.usage !== undefined && done.usage !== null) return done.usage;
  const count = obj(obj(obj(done._meta).quota).token_count);
  if (tokens(count.input_tokens) === null && tokens(count.output_tokens) === null) return streamed;
  return { inputTokens: tokens(count.input_tokens), outputTokens: tokens(count.output_tokens) };
}

export async function runAcpBridge(opts: BridgeOptions): Promise<number> {
  const { api, out } = opts;
  const child = spawn(opts.command[0]!, opts.command.slice(1), { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const exited = exitOf(child);
  let agentSession: string | null = null;
  // Usage from `usage_update` notifications (cost) and the prompt's response or this turn's
  // updates (tokens: usageOf).
  let cost: unknown = null;
  let streamed: Tokens | null = null;
  // While a session is loaded, its history comes as updates: printed, marked so it is not read as this turn's.
  let replaying = false;

  const app = acp
    .client({ name: 'grove' })
    // Raw handlers: what the agent sent is printed and asked about whole, unknown fields included.
    .onNotification('*', ({ method, params }) => {
      if (method !== acp.methods.client.session.update) return;
      const update = obj(obj(params).update);
      if (update.sessionUpdate === 'usage_update' && update.cost !== undefined) cost = update.cost;
      if (!replaying) streamed = addStreamedUsage(streamed, update);
      out({ method, params, ...(replaying ? { replay: true } : {}) });
    })
    .onRequest('*', async ({ method, params, signal, requestId }) => {
      if (method === acp.methods.client.session.requestPermission) {
        const req = params as acp.RequestPermissionRequest;
        out({ method, params });
        let response: acp.RequestPermissionResponse;
        try {
          response = outcomeOf(req.options, await decide(api, opts.session, askOf(req), signal));
        } catch (err) {
          if (signal.aborted) return { outcome: { outcome: 'cancelled' } };
          response = outcomeOf(req.options, { behavior: 'deny', message: refusal(err) });
        }
        out({ type: 'permission', toolCallId: req.toolCall.toolCallId, response });
        return response;
      }
      if (method === acp.methods.client.elicitation.create) {
        const req = obj(params);
        out({ method, params });
        let response: acp.CreateElicitationResponse;
        if (req.mode !== 'form') {
          response = { action: 'decline' };
        } else {
          const scope = str(req.sessionId) ?? 'request';
          const key = `${scope}:elicitation:${str(req.toolCallId) ?? String(requestId)}`;
          try {
            const verdict = await decide(api, opts.session, { key, kind: 'question', tool: 'elicitation', input: { question: req.message, requestedSchema: req.requestedSchema } }, signal);
            response =
              verdict.behavior === 'allow' ? { action: 'accept', content: contentOf(obj(req.requestedSchema), verdict.answer ?? '') } : { action: verdict.behavior === 'deny' ? 'decline' : 'cancel' };
          } catch (err) {
            if (signal.aborted) return { action: 'cancel' };
            process.stderr.write(`grove acp-bridge: ${refusal(err)}\n`);
            response = { action: 'cancel' };
          }
        }
        out({ type: 'elicitation', response });
        return response;
      }
      // File system and terminal are not offered (initialize says so): an agent that asks anyway is told.
      throw acp.RequestError.methodNotFound(method);
    });

  const fail = (message: string): number => {
    out({ type: 'result', sessionId: agentSession, stopReason: null, error: message });
    return 1;
  };

  try {
    await spawned;
  } catch (err) {
    return fail(`could not start ${opts.command[0]}: ${(err as Error).message}`);
  }
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
  // The agent ending before its turn did rejects what waits on it.
  const gone = exited.then(({ code, signal }) => {
    throw new Error(`the agent exited (${signal ?? `status ${code}`}) before its turn ended`);
  });
  gone.catch(() => undefined);
  try {
    return await app.connectWith(stream, async (ctx) => {
      const call = <T>(p: Promise<T>): Promise<T> => Promise.race([p, gone]);
      const init = await call(
        ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
          clientInfo: { name: 'grove', version: '1' },
        }),
      );
      out({ type: 'initialize', response: init });
      const caps = init.agentCapabilities ?? {};
      // The session's modes, and its config options (OpenCode offers its agents as a `mode` option).
      let modes: acp.SessionModeState | null | undefined;
      let config: acp.SessionConfigOption[] | null | undefined;
      if (opts.resume === null) {
        const created = await call(ctx.request(acp.methods.agent.session.new, { cwd: opts.cwd, mcpServers: [] }));
        agentSession = created.sessionId;
        ({ modes, configOptions: config } = created);
        out({ type: 'session', how: 'new', sessionId: agentSession, response: created });
      } else {
        // Resume continues without replaying the history; load replays it as updates first. An
        // agent that offers resume but does not answer it (Qwen Code 0.15.10) is loaded.
        const resumed = caps.sessionCapabilities?.resume
          ? await call(ctx.request(acp.methods.agent.session.resume, { sessionId: opts.resume, cwd: opts.cwd, mcpServers: [] })).catch((err: { code?: number }) => {
              if (err?.code === METHOD_NOT_FOUND && caps.loadSession) return null;
              throw err;
            })
          : null;
        agentSession = opts.resume;
        if (resumed !== null) {
          ({ modes, configOptions: config } = resumed);
          out({ type: 'session', how: 'resume', sessionId: agentSession, response: resumed });
        } else if (caps.loadSession) {
          replaying = true;
          const loaded = await call(ctx.request(acp.methods.agent.session.load, { sessionId: opts.resume, cwd: opts.cwd, mcpServers: [] })).finally(() => (replaying = false));
          ({ modes, configOptions: config } = loaded);
          out({ type: 'session', how: 'load', sessionId: agentSession, response: loaded });
        } else {
          return fail('the agent can neither resume nor load a session (its initialize offers neither sessionCapabilities.resume nor loadSession)');
        }
      }
      if (opts.mode !== null) {
        const mode = opts.mode;
        const option = config?.find((o) => o.category === 'mode' && o.type === 'select' && selectValues(o).includes(mode));
        if (modes?.availableModes.some((m) => m.id === mode)) {
          if (modes.currentModeId !== mode) {
            await call(ctx.request(acp.methods.agent.session.setMode, { sessionId: agentSession, modeId: mode }));
            out({ type: 'mode', sessionId: agentSession, modeId: mode });
          }
        } else if (option) {
          if (option.currentValue !== mode) {
            await call(ctx.request(acp.methods.agent.session.setConfigOption, { sessionId: agentSession, configId: option.id, value: mode }));
            out({ type: 'mode', sessionId: agentSession, configId: option.id, modeId: mode });
          }
        } else {
          const offered = [...(modes?.availableModes.map((m) => m.id) ?? []), ...(config ?? []).filter((o) => o.category === 'mode').flatMap(selectValues)];
          return fail(`the agent offers no session mode ${mode} (it offers: ${offered.join(', ') || 'none'})`);
        }
      }
      if (opts.prompt === null) {
        out({ type: 'result', sessionId: agentSession, stopReason: null, usage: null, cost });
        return 0;
      }
      // What the agent says from here on is this turn's (Gemini CLI says "[MODE_UPDATE] …" before).
      out({ type: 'prompt', sessionId: agentSession });
      const done = await call(ctx.request(acp.methods.agent.session.prompt, { sessionId: agentSession, prompt: [{ type: 'text', text: opts.prompt }] }));
      out({ type: 'result', sessionId: agentSession, stopReason: done.stopReason, usage: usageOf(done, streamed), cost });
      return done.stopReason === 'end_turn' ? 0 : 1;
    });
  } catch (err) {
    // A JSON-RPC error: its message, with its details (Qwen Code's `{details}`) or its data.
    const e = err as { message?: string; data?: unknown };
    const details = str(obj(e.data).details);
    const data = details ?? (e.data !== undefined ? JSON.stringify(e.data) : null);
    return fail(`${e.message ?? String(err)}${data !== null ? `: ${data}` : ''}`);
  } finally {
    // The turn is over: the agent goes, its stdin closed first so that it can save its session;
    // TERM for one that stays, KILL for one that ignores it.
    child.stdin?.end();
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (await settles(exited, GRACE_MS)) break;
      child.kill(signal);
    }
    await exited;
  }
}
