// `grove host ls|add|rm` (the machines of DESIGN §14.1 and the store's hosts of §14.2). Adding and
// removing touch hosts.json only, and listing lists its hosts without a daemon: no daemon needed.
import type { Host, SavedHost, SshHost, TeamHost } from '../../../schemas/host.ts';
import { withCalls } from '../../client/calls.ts';
import { createTransport, DaemonUnreachable } from '../../client/transport.ts';
import { resolvePaths } from '../../runtime/paths.ts';
import type { Command } from '../ctx.ts';
import { arg, err, print } from '../ctx.ts';
import { CliError, EXIT } from '../errors.ts';
import { table } from '../format.ts';
import { HOST_COLS, hostRow, SSH_HOST_COLS } from '../render.ts';
import { usage } from '../usage.ts';

const paths = () => resolvePaths(process.env, process.getuid?.() ?? 0);
// hosts.json's module (its validator: Ajv and TypeBox) loads where the file is read: `host ls`
// through a daemon needs none of it.
const hostsFileModule = () => import('../../client/hosts-file.ts');

// A name or URL that is not one is a usage error (exit 2); the rest of what hosts.json refuses
// (a name saved already, an unknown one, a broken file) is a refusal (exit 1) with its code.
async function hostsFile<T>(run: (file: string, hosts: Awaited<ReturnType<typeof hostsFileModule>>) => Promise<T>): Promise<T> {
  const hosts = await hostsFileModule();
  try {
    return await run(hosts.hostsFilePath(paths()), hosts);
  } catch (err) {
    if (!(err instanceof hosts.HostsError)) throw err;
    if (err.code === 'HOST_NAME_INVALID' || err.code === 'HOST_URL_INVALID') usage(err.message);
    const status = err.code === 'HOST_UNKNOWN' ? 404 : err.code === 'HOST_EXISTS' ? 409 : 422;
    throw new CliError(err.message, EXIT.API, { code: err.code, detail: err.message, status });
  }
}

// The saved SSH hosts as GET /api/hosts shows them, probed from this process: for `host ls` when
// this machine's daemon is not running (each opens its forward as `--host` would, and is asked
// /api/health over it). Why one is not reachable goes to stderr, where the daemon would log it.
async function probeSaved(saved: SavedHost[]): Promise<SshHost[]> {
  const [{ parseSshUrl }, { openForward, sshDir }, { probeHost, PROBE_MS }] = await Promise.all([hostsFileModule(), import('../../client/ssh.ts'), import('../../client/probe.ts')]);
  // Each ssh call bounded as the probe is: the command ends soon after it has printed.
  const ssh = { runtimeDir: sshDir(process.env, process.getuid?.() ?? 0), env: process.env, timeoutMs: PROBE_MS };
  return Promise.all(
    saved.map((h) =>
      probeHost(h, {
        socketOf: async (url) => (await openForward(parseSshUrl(url), ssh)).socketPath,
        async health(socket, signal) {
          const api = withCalls(createTransport(socket));
          const stop = () => void api.close();
          signal.addEventListener('abort', stop, { once: true });
          try {
            return await api.health();
          } finally {
            signal.removeEventListener('abort', stop);
            await api.close();
          }
        },
        failed: (host, reason) => err(`grove: ${host.name} is not reachable: ${reason}`),
      }),
    ),
  );
}

const sshTable = (ssh: SshHost[]) => table(ssh.map((h) => hostRow(h)), SSH_HOST_COLS);

export const commands: Record<string, Command> = {
  // The store's hosts as before; the saved SSH hosts, where the daemon lists them, in a table of
  // their own (their columns are not a team host's). Without this machine's daemon, the saved
  // SSH hosts alone: the team's hosts are known to a daemon only.
  async 'host ls'(c) {
    let list: Host[];
    try {
      list = await c.api.hosts();
    } catch (e) {
      if (!(e instanceof DaemonUnreachable) || c.endpoint.host !== null) throw e;
      const saved = await hostsFile((file, hosts) => hosts.readHosts(file));
      err(`grove: no daemon runs here (no answer on ${e.socketPath}): the saved SSH hosts of hosts.json only; a team's hosts show when it runs`);
      const ssh = await probeSaved(saved);
      return print(c, ssh, () => sshTable(ssh));
    }
    const team = list.filter((h): h is TeamHost => h.kind !== 'ssh');
    const ssh = list.filter((h): h is SshHost => h.kind === 'ssh');
    print(c, list, () => [...(team.length > 0 || ssh.length === 0 ? [table(team.map((h) => hostRow(h)), HOST_COLS)] : []), ...(ssh.length > 0 ? [sshTable(ssh)] : [])].join('\n\n'));
  },
  async 'host add'(c) {
    const [name, url] = [arg(c, 0, 'name'), arg(c, 1, 'ssh://[user@]box[:port][?socket=PATH]')];
    const saved = await hostsFile((file, hosts) => hosts.addHost(file, { name, url }));
    print(c, saved, () => `saved host ${saved.name} (${saved.url})`);
  },
  async 'host rm'(c) {
    const name = arg(c, 0, 'name');
    const removed = await hostsFile((file, hosts) => hosts.removeHost(file, name));
    print(c, removed, () => `removed host ${removed.name}`);
  },
};
