import { renameSync, writeFileSync } from 'node:fs';
import { exitCodeOf } from '../proc/exit.ts';
import { ptyPidFile } from './command.ts';
import { listenHolder } from './listen.ts';
import { OutputFile } from './output.ts';
import { EXIT_CANNOT_RUN, loadPty, resolveProgram, spawnPty } from './program.ts';
import { Relay } from './relay.ts';

export interface HolderOptions {
  socket: string;
  /** the output file (the session's stdout): appended to, and read back for clients behind */
  output: string;
  cols: number;
  rows: number;
  command: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

// What stops the program: passed on to its process group, then the holder waits for its end.
const STOPPING = ['SIGTERM', 'SIGHUP'] as const;
// sh starts a session's command with INT and QUIT ignored (`&`), and grove never sends them; Node
// sets them back to their default at start, so the holder ignores them again itself.
const IGNORED = ['SIGINT', 'SIGQUIT'] as const;

// `grove pty-hold` (DESIGN §21): runs `command` under a pseudo-terminal and holds it, so that it
// outlives the daemon. Its output goes to `output` (the session's output file) as it comes; clients
// of `socket` get the screen, the output and the exit. Answers the status to exit with: the
// program's, or 126/127 when it could not run.
export async function runHolder(opts: HolderOptions): Promise<number> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const say = (message: string) => void process.stderr.write(`grove pty-hold: ${message}\n`);
  const program = resolveProgram(opts.command[0] ?? '', env, cwd);
  if (!program.ok) {
    say(program.message);
    return program.status;
  }

  let pid: number | null = null;
  let pending: NodeJS.Signals | null = null;
  // TERM is followed by a hangup, as when a terminal window closes: an interactive shell ignores
  // TERM but ends on HUP.
  const stop = (signal: NodeJS.Signals) => {
    if (pid === null) pending = signal;
    else for (const s of signal === 'SIGTERM' ? (['SIGTERM', 'SIGHUP'] as const) : [signal]) signalGroup(pid, s);
  };
  const ignore = () => {};
  for (const s of STOPPING) process.on(s, stop);
  for (const s of IGNORED) process.on(s, ignore);
  let file: OutputFile;
  try {
    file = new OutputFile(opts.output, say);
  } catch (err) {
    say((err as Error).message);
    return EXIT_CANNOT_RUN;
  }
  const relay = new Relay(opts.cols, opts.rows, file);
  let socket;
  try {
    const pty = await loadPty();
    socket = await listenHolder(opts.socket, (s) => relay.connect(s));
    const code = await new Promise<number>((resolve, reject) => {
      let term;
      try {
        term = spawnPty(pty, program.file, opts.command.slice(1), { cols: opts.cols, rows: opts.rows, cwd, env });
      } catch (err) {
        return reject(err as Error);
      }
      pid = term.pid;
      relay.run(term);
      term.onData((data) => relay.output(data));
      term.onExit(({ exitCode, signal }) => resolve(exitCodeOf(signal ? null : exitCode, signal || null)));
      writePid(ptyPidFile(opts.socket), pid, say);
      if (pending !== null) stop(pending);
    });
    socket.close();
    await relay.exit(code);
    return code;
  } catch (err) {
    say((err as Error).message);
    socket?.close();
    await relay.exit(null);
    return EXIT_CANNOT_RUN;
  } finally {
    file.close();
    for (const s of STOPPING) process.off(s, stop);
    for (const s of IGNORED) process.off(s, ignore);
  }
}

// The program leads its pty's session: its group is its pid.
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

// The daemon kills the program's group by this file too: a program that ignores the hangup of its
// terminal outlives the holder otherwise. Written whole (a rename), kept after the end for that.
function writePid(file: string, pid: number, say: (m: string) => void): void {
  try {
    writeFileSync(`${file}.tmp`, `${pid}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch (err) {
    say(`cannot write ${file}: ${(err as Error).message}`);
  }
}
