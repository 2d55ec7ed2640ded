// `grove attach`: a terminal session (DESIGN §21) in this terminal. A family of its own: the
// WebSocket client (ws) is loaded by it alone.
import type { WriteStream } from 'node:tty';
import { runAttach } from '../attach.ts';
import { arg, err, print, type Command } from '../ctx.ts';
import { shortId } from '../format.ts';
import { session, task } from '../lookup.ts';
import { usage } from '../usage.ts';

// Signals by number, for the exit status 128+n of a CLI told to stop.
const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGTERM: 15 };

export const commands: Record<string, Command> = {
  // A shell in the task's worktree (POST /api/tasks/:id/terminals), attached at once on a
  // terminal; elsewhere (or with --json) the session is printed, for grove attach later.
  async shell(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const s = await c.api.openShell(t.id);
    if (c.json || !process.stdin.isTTY) return print(c, s, () => `session ${s.id} (a shell in task ${t.name}) ${s.status}; grove attach ${shortId(s.id)} shows it`);
    await commands.attach!({ ...c, positionals: [s.id] });
  },
  // Exits 0 when detached or when the program exits (its code is said on stderr: the CLI's own
  // statuses 1-3 mean refusals, usage and an absent daemon, not the program's).
  async attach(c) {
    const key = arg(c, 0, 'session');
    if (!process.stdin.isTTY) usage('grove attach needs a terminal: its stdin is not one (grove logs SESSION reads the output)');
    const s = await session(c, key);
    const id = shortId(s.id);
    // The window's size from stdout, or stderr where stdout is redirected.
    const window = [process.stdout, process.stderr].find((w): w is WriteStream & typeof w => w.isTTY === true) ?? null;
    const end = await runAttach({ socketPath: c.endpoint.socketPath, sessionId: s.id, stdin: process.stdin, stdout: process.stdout, window });
    switch (end.how) {
      case 'detached':
        err(`grove: detached from session ${id}, which runs on; grove attach ${id} comes back`);
        break;
      case 'exited':
        err(`grove: session ${id} exited ${end.code ?? '(exit status unknown)'}`);
        break;
      case 'ended': {
        // A fresh connection: the first one idled for as long as the attach lasted.
        const api = c.connect();
        try {
          const now = await api.session(s.id);
          err(`grove: session ${id} ${now.status}${now.exit_code === null ? '' : ` ${now.exit_code}`}`);
        } finally {
          await api.close();
        }
        break;
      }
      case 'signal':
        process.exitCode = 128 + (SIGNALS[end.signal] ?? 0);
        break;
    }
  },
};
