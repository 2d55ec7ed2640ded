import type { MessagePort } from 'node:worker_threads';
import { execa } from 'execa';
import { LineSplitter } from '../daemon/runtime/lines.ts';
import { LOW_PRIORITY, lowerPriority } from '../daemon/proc/priority.ts';
import { processStartTime } from '../daemon/proc/stat.ts';
import { signalGroup } from '../daemon/proc/group.ts';
import { GRACE_MS, terminate } from '../daemon/proc/terminate.ts';
import type { OutputLine } from '../schemas/output.ts';
import type { SetupCommand } from '../schemas/task.ts';
import type { Result } from './result.ts';

export interface RunSetupInput {
  cwd: string;
  commands: string[];
  env: Record<string, string>;
  timeoutMs: number;
  /** run every command even after one fails (teardown: clean up as much as can be) */
  keepGoing?: boolean;
  /** at low priority (`nice`): a warm pool's slot, prepared ahead, yields to everything else */
  nice?: boolean;
  /** progress goes to the main thread through this port, as it happens */
  port: MessagePort;
}

// How a setup run ended: `failed` when a command failed, timed out or the run was cancelled.
export type SetupOutcome = { failed: boolean; cancelled: boolean };

export type SetupMessage =
  | { type: 'start'; idx: number; command: string; at: string }
  | { type: 'spawned'; idx: number; pid: number; pid_start: string | null }
  | { type: 'lines'; idx: number; lines: Array<Omit<OutputLine, 'seq'>> }
  | ({ type: 'end'; idx: number; at: string } & Pick<SetupCommand, 'exit_code' | 'signal' | 'timed_out'>)
  | { type: 'done' };

// After the shell exits, how long background children may keep its pipes open.
const DRAIN_MS = 300;
// Lines cross to the main thread in batches, not one message each: a chatty command would
// otherwise cost a message and a store write per line.
const BATCH_MS = 25;
const BATCH_LINES = 500;

// Runs the setup (or teardown) commands in order with `sh -c`, each in its own process group,
// streaming their lines; the first failure stops a setup, a cancel message any run.
export async function runSetup(input: RunSetupInput): Promise<Result<SetupOutcome>> {
  const { port } = input;
  let cancelled = false;
  let current: number | null = null;
  port.on('message', (m: { type: string }) => {
    if (m.type !== 'cancel') return;
    cancelled = true;
    if (current !== null) void terminate(current, { graceMs: GRACE_MS.setup });
  });

  // The command whose lines are batched: a batch is flushed before the next command starts.
  let currentIdx = 0;
  let batch: Array<Omit<OutputLine, 'seq'>> = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (batch.length === 0) return;
    port.postMessage({ type: 'lines', idx: currentIdx, lines: batch } satisfies SetupMessage);
    batch = [];
  };
  const emit = (stream: OutputLine['stream'], texts: string[]) => {
    if (texts.length === 0) return;
    const at = new Date().toISOString();
    for (const text of texts) batch.push({ stream, text, at });
    if (batch.length >= BATCH_LINES) flush();
    else timer ??= setTimeout(flush, BATCH_MS);
  };

  let failed = false;
  try {
    for (let idx = 0; idx < input.commands.length && !cancelled; idx++) {
      const command = input.commands[idx]!;
      currentIdx = idx;
      port.postMessage({ type: 'start', idx, command, at: new Date().toISOString() } satisfies SetupMessage);
      // `nice` execs the shell: the recorded pid is the shell's, as without it.
      const child = execa(input.nice ? 'nice' : 'sh', input.nice ? ['-n', String(LOW_PRIORITY), 'sh', '-c', command] : ['-c', command], {
        cwd: input.cwd,
        env: input.env,
        extendEnv: false,
        detached: true,
        stdin: 'ignore',
        buffer: false,
        reject: false,
        cleanup: false,
      });
      const pid = child.pid;
      current = pid ?? null;
      // Its session's autogroup too (nice alone does not reach across sessions on Linux).
      if (pid && input.nice) lowerPriority(pid);
      // Recorded so a daemon killed during setup can stop this group on its next start.
      if (pid) port.postMessage({ type: 'spawned', idx, pid, pid_start: processStartTime(pid) } satisfies SetupMessage);
      const splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
      child.stdout!.on('data', (c: Buffer) => emit('stdout', splitters.stdout.push(c)));
      child.stderr!.on('data', (c: Buffer) => emit('stderr', splitters.stderr.push(c)));

      let timedOut = false;
      const timeout = setTimeout(() => {
        timedOut = true;
        if (pid) void terminate(pid, { graceMs: GRACE_MS.setup });
      }, input.timeoutMs);

      const drained = Promise.all([onceClosed(child.stdout!), onceClosed(child.stderr!)]);
      // The shell's own exit, not the end of its pipes: a background child may hold those open.
      const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
        child.nodeChildProcess.once('exit', (code, signal) => resolve({ code, signal }));
        child.nodeChildProcess.once('error', () => resolve({ code: 127, signal: null }));
      });
      clearTimeout(timeout);
      await Promise.race([drained, new Promise((r) => setTimeout(r, DRAIN_MS))]);
      // Nothing a setup command started may outlive it.
      if (pid) signalGroup(pid, 'SIGKILL');
      child.stdout!.destroy();
      child.stderr!.destroy();
      current = null;
      emit('stdout', splitters.stdout.end());
      emit('stderr', splitters.stderr.end());
      flush();

      const exitCode = exit.code;
      port.postMessage({
        type: 'end',
        idx,
        exit_code: exitCode,
        signal: exit.signal,
        timed_out: timedOut,
        at: new Date().toISOString(),
      } satisfies SetupMessage);
      if (exitCode !== 0 || timedOut) {
        failed = true;
        if (!input.keepGoing) break;
      }
    }
  } finally {
    flush();
    port.postMessage({ type: 'done' } satisfies SetupMessage);
    port.close();
  }
  return { ok: true, failed: failed || cancelled, cancelled };
}

function onceClosed(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('close', () => resolve());
    stream.once('end', () => resolve());
  });
}
