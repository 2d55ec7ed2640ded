// `grove takeover SESSION`: the agent's interactive resume in this terminal (DESIGN §15).
// node:child_process, not execa: the agent inherits this terminal (stdio inherit, its signals
// passed on), and the CLI loads no more than the command needs.
import { spawn } from 'node:child_process';
import type { Session, Takeover } from '../../schemas/session.ts';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { exitCodeOf } from '../proc/exit.ts';
import { shortId } from './format.ts';


// The agent in this terminal (stdio inherited, the same process group: the terminal's keys and
// signals reach it as they would reach it run by hand), with the task's variables over this
// process's own. grove records the session while it runs and its end when it exits; this
// process is the session's process, so the daemon ends the session if it dies unreported.
export async function runTakeover(opts: { api: Client; connect: () => Client; session: Session; args: string[]; err: (s: string) => void }): Promise<number> {
  const { session, err } = opts;
  const body = { pid: process.pid, ...(opts.args.length > 0 ? { args: opts.args } : {}) };
  const t = await opts.api.call<Takeover>('POST', `/api/sessions/${session.id}/takeover`, body);
  const id = shortId(t.session.id);
  err(`grove: ${t.session.agent} resumes its conversation here (interactive session ${id}, in ${t.cwd}); when it exits, grove say ${id} continues it`);

  const env: Record<string, string | undefined> = { ...process.env };
  // As for a session: the daemon's or the shell's port is not the task's (tasks/env.ts).
  delete env.PORT;
  delete env.GROVE_PORT;
  Object.assign(env, t.env);
  const child = spawn(t.command[0]!, t.command.slice(1), { cwd: t.cwd, env, stdio: 'inherit' });

  // Ctrl-C and Ctrl-\ are the agent's (the terminal sends them to it too); a TERM or HUP sent
  // to this process alone (grove's kill, a closed terminal) is passed on to it.
  const ignore = () => {};
  const pass = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ['SIGINT', ignore],
    ['SIGQUIT', ignore],
    ['SIGTERM', pass('SIGTERM')],
    ['SIGHUP', pass('SIGHUP')],
  ];
  for (const [signal, fn] of handlers) process.on(signal, fn);

  const exitCode = await new Promise<number>((resolve) => {
    child.once('error', (e: NodeJS.ErrnoException) => {
      err(`grove: cannot run ${t.command[0]}: ${e.code === 'ENOENT' ? 'not found on PATH' : e.message}`);
      resolve(e.code === 'ENOENT' ? 127 : 126);
    });
    child.once('exit', (code, signal) => resolve(exitCodeOf(code, signal)));
  });
  // A fresh connection: the first one idled for as long as the agent ran.
  const api = opts.connect();
  try {
    const ended = await api.call<Session>('POST', `/api/sessions/${t.session.id}/end`, { exit_code: exitCode });
    err(`grove: interactive session ${id} ${ended.status} (exit ${exitCode}); grove say ${id} <prompt> continues the conversation`);
  } catch (e) {
    // Stopped by grove (killed) meanwhile: that end is recorded already.
    if (!(e instanceof ApiProblem && e.code === 'SESSION_NOT_RUNNING')) throw e;
    err(`grove: interactive session ${id} was stopped by grove`);
  } finally {
    await api.close();
    // Only now: a closed terminal's hang-up can come again after the agent's exit, and would
    // end this process before it reported the end.
    for (const [signal, fn] of handlers) process.off(signal, fn);
  }
  return exitCode;
}
