// `grove session start|ls|show|kill`, `say`, `logs` and `takeover`: an agent's turns.
import { writeSync } from 'node:fs';
import { deniedCount, describeDenial } from '../../../schemas/denials.ts';
import type { OutputLine } from '../../../schemas/output.ts';
import type { CreateSession } from '../../../schemas/session.ts';
import type { Command, Ctx } from '../ctx.ts';
import { arg, print, seconds, str } from '../ctx.ts';
import { shortId, table } from '../format.ts';
import { followOutput } from '../follow.ts';
import { session, task, withHost } from '../lookup.ts';
import { endLine, SESSION_COLS, sessionRow, who } from '../render.ts';
import { runTakeover } from '../takeover.ts';
import { usage } from '../usage.ts';

// What `session start` and `say` take besides the prompt: mode, time limit, the agent's own args.
function sessionOptions(c: Ctx): Omit<CreateSession, 'agent' | 'prompt'> {
  const body: Omit<CreateSession, 'agent' | 'prompt'> = {};
  if (typeof c.values.mode === 'string') body.mode = c.values.mode as CreateSession['mode'];
  const timeout = seconds(c, 'timeout');
  if (timeout !== undefined) body.timeout_s = timeout;
  if (c.rest.length > 0) body.args = c.rest;
  return body;
}

// `--sandbox auto|true|false` of `session start` (DESIGN §18).
function sandboxOption(c: Ctx): Pick<CreateSession, 'sandbox'> {
  const v = c.values.sandbox;
  if (v === undefined) return {};
  if (v === 'auto') return { sandbox: 'auto' };
  if (v === 'true' || v === 'false') return { sandbox: v === 'true' };
  return usage(`--sandbox must be auto, true or false, got ${JSON.stringify(v)}`);
}

export const commands: Record<string, Command> = {
  async 'session start'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const body: CreateSession = {};
    if (typeof c.values.agent === 'string') body.agent = c.values.agent;
    if (typeof c.values.prompt === 'string') body.prompt = c.values.prompt;
    // The agent's own interface under a pseudo-terminal (DESIGN §21), attached with grove attach.
    if (c.values.terminal === true) body.interface = 'terminal';
    const s = await c.api.startSession(t.id, { ...body, ...sessionOptions(c), ...sandboxOption(c) });
    const attach = s.interface === 'terminal' ? `\ngrove attach ${shortId(s.id)} shows its terminal` : '';
    print(c, s, () => `session ${s.id} (${s.agent}, ${s.mode}) ${s.status}, pid ${s.pid}${s.sandbox.confined ? '' : `\nUNCONFINED: ${s.sandbox.reason ?? 'not confined'}`}${attach}`);
  },
  async 'session ls'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const conv = str(c.values.conversation);
    const list = await c.api.sessions(t.id, conv === undefined ? {} : { conversation_id: (await session(c, conv)).conversation_id });
    const [rows, columns] = await withHost(c, list.map((s) => ({ ...sessionRow(s), host_id: s.host_id })), SESSION_COLS);
    print(c, list, () => table(rows, columns));
  },
  async 'session show'(c) {
    const s = await c.api.session((await session(c, arg(c, 0, 'id'))).id);
    const r = s.result;
    print(c, s, () =>
      [
        `session ${s.id} (${who(s)}, ${s.mode}) ${s.status}${s.exit_code === null ? '' : `, exit ${s.exit_code}`}${s.timed_out ? ', timed out' : ''}`,
        `sandbox: ${s.sandbox.confined ? 'confined' : `UNCONFINED (${s.sandbox.reason ?? 'not confined'})`}`,
        ...(s.prompt ? [`prompt: ${s.prompt}`] : []),
        ...(r ? [`result: ${r.is_error ? 'error: ' : ''}${r.text ?? '-'}${r.cost_usd !== null ? ` ($${r.cost_usd.toFixed(4)})` : ''}`] : []),
        ...(r && r.denials.length > 0 ? [`${deniedCount(r.denials.length)}:`, ...r.denials.map((d) => `  ${describeDenial(d)}`)] : []),
        ...(s.limit_resets_at ? [`usage limit until ${s.limit_resets_at}`] : []),
      ].join('\n'),
    );
  },
  async 'session kill'(c) {
    const s = await session(c, arg(c, 0, 'id'));
    const r = await c.api.kill(s.id);
    print(c, { id: s.id, ...r }, () => `session ${shortId(s.id)} killed`);
  },
  async say(c) {
    const s = await session(c, arg(c, 0, 'session'));
    // A prompt that starts with `-` goes as --prompt=<text>, or it would read as an option here.
    const prompt = str(c.values.prompt) ?? arg(c, 1, 'prompt');
    const next = await c.api.say(s.id, { prompt, ...sessionOptions(c) });
    if (c.json || !(c.values.follow || process.stdout.isTTY)) return print(c, next, () => `session ${next.id} ${next.status}`);
    process.stderr.write(`session ${shortId(next.id)} ${next.status}${next.status === 'queued' ? ' (waits for the conversation)' : ''}\n`);
    await followOutput(c, next);
  },
  async logs(c) {
    const s = await session(c, arg(c, 0, 'session'));
    if (c.values.follow) return followOutput(c, s);
    await c.api.output(s.id, 0, (l: OutputLine) => c.out(c.json ? JSON.stringify(l) : l.text));
    // An ended session says how it ended, as -f does: denied calls are not left unseen.
    if (s.ended_at !== null && !c.json) process.stderr.write(`${endLine(s)}\n`);
  },
  // Exits with the agent's exit code.
  async takeover(c) {
    const s = await session(c, arg(c, 0, 'session'));
    // Written straight to fd 2, never through a TTY stream: once the terminal hangs up, node's own
    // TTY handle can abort the process before it reports the agent's end.
    const err = (line: string) => {
      try {
        writeSync(2, `${line}\n`);
      } catch {
        // the terminal is gone: the end is still reported
      }
    };
    process.exitCode = await runTakeover({ api: c.api, connect: c.connect, session: s, args: c.rest, err });
  },
};
