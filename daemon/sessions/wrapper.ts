import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionStatus } from '../../schemas/session.ts';

// The wrapper leads the session's process group: it runs the agent as its child, waits for it,
// and writes the exit status to `exit` (atomically) before it exits itself, so the status
// survives a daemon that is down at that moment. A TERM sent to the group is caught by the
// wrapper (a caught signal is reset to default in the agent, an ignored one would be
// inherited) and the wait resumes until the agent is really gone. POSIX sh starts an
// asynchronous command with SIGINT and SIGQUIT ignored; grove stops agents with TERM and KILL.
// The wrapper holds until a line comes on its stdin, a pipe: the daemon sends it once the
// session's row (with this pid) is stored, so no agent runs that the store does not know. If
// the pipe closes first (the daemon died), the wrapper exits 125 and nothing has run.
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
}

// Where a session's output and exit status live, under the data folder.
export function sessionFiles(dataDir: string, sessionId: string): SessionFiles {
  const dir = path.join(dataDir, 'sessions', sessionId);
  return { dir, stdout: path.join(dir, 'stdout'), stderr: path.join(dir, 'stderr'), exit: path.join(dir, 'exit') };
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
