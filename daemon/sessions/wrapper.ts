import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';

// The wrapper leads the session's process group: it runs the agent as its child, waits for it,
// and writes the exit status to `exit` (atomically) before it exits itself, so the status
// survives a daemon that is down at that moment. A TERM sent to the group is caught by the
// wrapper (a caught signal is reset to default in the agent, an ignored one would be
// inherited) and the wait resumes until the agent is really gone. POSIX sh starts an
// asynchronous command with SIGINT and SIGQUIT ignored; grove stops agents with TERM and KILL.
const WRAPPER = `st=$1; shift
"$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
trap 'kill -HUP "$pid" 2>/dev/null' HUP
while :; do
  wait "$pid"; rc=$?
  kill -0 "$pid" 2>/dev/null || break
done
printf '%s\\n' "$rc" > "$st.tmp" && mv -f "$st.tmp" "$st"
exit "$rc"`;

type FdOption = 3;

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

// Starts `command` under the wrapper in its own process group (a new session, in fact), with
// stdin closed and stdout/stderr going straight to files: the daemon is not in the data path.
export function spawnWrapped(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }) {
  mkdirSync(opts.files.dir, { recursive: true, mode: 0o700 });
  // File descriptors, not streams: the child writes to the files itself, so its output does
  // not pass through (or die with) the daemon.
  const out = openSync(opts.files.stdout, 'a', 0o600);
  const err = openSync(opts.files.stderr, 'a', 0o600);
  try {
    return execa('sh', ['-c', WRAPPER, 'grove-session', opts.files.exit, ...opts.command], {
      cwd: opts.cwd,
      env: opts.env,
      extendEnv: false,
      detached: true,
      cleanup: false,
      stdin: 'ignore',
      // execa runs any fd as given; its types only list 3–9 for a single number.
      stdout: out as FdOption,
      stderr: err as FdOption,
      reject: false,
      buffer: false,
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
}
