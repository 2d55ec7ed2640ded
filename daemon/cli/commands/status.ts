// `grove status`, `open`, `agents` and `socket`: the daemon itself.
// node:child_process, not execa: `grove open` starts the browser detached and forgets it, and
// `grove status` loads no more than it needs.
import { spawn } from 'node:child_process';
import { isLive } from '../../../schemas/session-status.ts';
import type { Command } from '../ctx.ts';
import { print } from '../ctx.ts';
import { CliError, EXIT } from '../errors.ts';
import { duration, table } from '../format.ts';

export const commands: Record<string, Command> = {
  async status(c) {
    const h = await c.api.health();
    const [projects, tasks] = await Promise.all([c.api.projects(), c.api.tasks()]);
    const live = tasks.filter((t) => t.status !== 'archived');
    const sessions = (await Promise.all(live.map((t) => c.api.sessions(t.id)))).flat();
    const running = sessions.filter((s) => isLive(s.status)).length;
    const data = { ...h, uptime_s: Math.floor((Date.now() - Date.parse(h.started_at)) / 1000), projects: projects.length, tasks: live.length, running_sessions: running };
    // On a team the counts are the whole team's: say so, and which host this is.
    const team = h.shared ? await c.team() : null;
    const hosts = team?.hosts.filter((x) => x.kind === 'team') ?? [];
    print(c, data, () =>
      [
        `grove ${h.version} running, pid ${h.pid}, up ${duration(h.started_at)}`,
        `socket ${h.socket}`,
        `tcp    ${h.port === null ? 'off' : `http://127.0.0.1:${h.port}`}`,
        ...(team ? [`host   ${team.nameOf(h.host_id)}, one of ${hosts.length} host(s) on a shared store, ${hosts.filter((x) => x.online).length} online`] : []),
        `${projects.length} project(s), ${live.length} task(s), ${running} running session(s)${team ? ' on all hosts' : ''}`,
      ].join('\n'),
    );
  },
  // The dashboard (DESIGN §12) at the TCP front's address, in $BROWSER if set, else the desktop's
  // opener; the address is printed either way, for a machine without one.
  async open(c) {
    const health = await c.api.health();
    if (health.port === null) {
      throw new CliError('the daemon runs without its TCP front (port "off"), so the dashboard has no address; set "port" in the user config', EXIT.API);
    }
    const url = `http://127.0.0.1:${health.port}/`;
    c.out(url);
    const opener = process.env.BROWSER || (process.platform === 'darwin' ? 'open' : 'xdg-open');
    await new Promise<void>((resolve) => {
      const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
      child.once('spawn', () => (child.unref(), resolve()));
      child.once('error', () => {
        process.stderr.write(`grove: cannot run ${opener}; open ${url} in your browser\n`);
        resolve();
      });
    });
  },
  async agents(c) {
    const list = await c.api.agents();
    print(c, list, () => table(list.map((a) => ({ ...a, command: a.command.join(' ') })), ['name', 'available', 'command']));
  },
  // What a remote is asked over SSH when its URL does not name its socket: the path alone. With
  // --host, the local socket forwarded to that host's daemon (for curl --unix-socket, GROVE_SOCKET).
  async socket(c) {
    const socket = c.endpoint.socketPath;
    c.out(c.json ? JSON.stringify({ socket }) : socket);
  },
};
