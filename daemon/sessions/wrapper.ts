import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionStatus } from '../../schemas/session.ts';
import { ptyPidFile } from '../terminal/command.ts';

// The wrapper leads the session's group and writes the agent's exit status atomically to `exit`,
// so it survives a daemon that is down then. It holds until the daemon's `go` (see start.ts): a
// pipe closed first (the daemon died) exits 125 with nothing run.
// TERM is caught, passed on and waited out (an ignored signal would be inherited by the agent);
// sh starts the agent with INT and QUIT ignored, which grove never sends.
const WRAPPER = `st=$1; shift
IFS= read -r go || exit 125
"$@" </dev/null &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
trap 'kill -HUP "$pid" 2>/dev/null' HUP
while :; do
  wait "$pid"; rc=$?
  kill -0 "$pid" 2>/dev/null || break
done
printf '%s\\n' "$rc" > "$st.tmp" && mv -f "$st.tmp" "$st"
exit "$rc"`;

export interface SessionFiles {
  dir: string;
  stdout: string;
  stderr: string;
  exit: string;
  /** what the sandbox refused a confined session, a JSON line each (blocked.ts) */
  blocked: string;
  /** a terminal session's holder listens here (DESIGN §21) */
  pty: string;
  /** and writes its program's pid here: the program leads a process group of its own */
  ptyPid: string;
  /** where a terminal session's agent writes its transcript (sessions/transcript.ts) */
  transcript: string;
}

// Where a session's output and exit status live, under the data folder.
export function sessionFiles(dataDir: string, sessionId: string): SessionFiles {
  const dir = path.join(dataDir, 'sessions', sessionId);
  return { dir, stdout: path.join(dir, 'stdout'), stderr: path.join(dir, 'stderr'), exit: path.join(dir, 'exit'), blocked: path.join(dir, 'blocked'), pty: path.join(dir, 'pty.sock'), ptyPid: ptyPidFile(path.join(dir, 'pty.sock')), transcript: path.join(dir, 'transcript.json') };
}

// Where a session's own socket is (DESIGN §18): the bridges reach the daemon there, for that
// session's approvals only. A folder of its own, so that the sandbox can bind it: the daemon makes
// the socket again after a restart. Beside `sessions/`, not in the session's folder, to keep the
// path short (a socket path holds 107 bytes).
export function sessionSocket(dataDir: string, sessionId: string): { dir: string; path: string } {
  const dir = path.join(dataDir, 'run', sessionId);
  return { dir, path: path.join(dir, 'grove.sock') };
}

// The wrapper's command line (after `sh`) for `command`.
export function wrapperArgv(files: SessionFiles, command: string[]): string[] {
  return ['-c', WRAPPER, 'grove-session', files.exit, ...command];
}

// The end the wrapper recorded, read after the fact: nothing recorded (it was killed) is `lost`.
export function recordedEnd(files: SessionFiles): { status: SessionStatus; exitCode: number | null } {
  let code: number;
  try {
    code = Number(readFileSync(files.exit, 'utf8').trim());
  } catch {
    return { status: 'lost', exitCode: null };
  }
  if (!Number.isInteger(code)) return { status: 'lost', exitCode: null };
  return { status: code === 0 ? 'exited' : 'failed', exitCode: code };
}
