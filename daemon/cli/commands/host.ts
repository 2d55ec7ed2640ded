// `grove host ls|add|rm` (the machines of DESIGN §14.1 and the store's hosts of §14.2). Adding and
// removing touch hosts.json only: no daemon needed.
import type { SshHost, TeamHost } from '../../../schemas/host.ts';
import { addHost, hostsFilePath, HostsError, removeHost } from '../../client/hosts-file.ts';
import { resolvePaths } from '../../runtime/paths.ts';
import type { Command } from '../ctx.ts';
import { arg, print } from '../ctx.ts';
import { CliError, EXIT } from '../errors.ts';
import { table } from '../format.ts';
import { HOST_COLS, hostRow, SSH_HOST_COLS } from '../render.ts';
import { usage } from '../usage.ts';

const paths = () => resolvePaths(process.env, process.getuid?.() ?? 0);

// A name or URL that is not one is a usage error (exit 2); the rest of what hosts.json refuses
// (a name saved already, an unknown one, a broken file) is a refusal (exit 1) with its code.
async function hostsFile<T>(run: (file: string) => Promise<T>): Promise<T> {
  try {
    return await run(hostsFilePath(paths()));
  } catch (err) {
    if (!(err instanceof HostsError)) throw err;
    if (err.code === 'HOST_NAME_INVALID' || err.code === 'HOST_URL_INVALID') usage(err.message);
    const status = err.code === 'HOST_UNKNOWN' ? 404 : err.code === 'HOST_EXISTS' ? 409 : 500;
    throw new CliError(err.message, EXIT.API, { code: err.code, detail: err.message, status });
  }
}

export const commands: Record<string, Command> = {
  // The store's hosts as before; the saved SSH hosts, where the daemon lists them, in a table of
  // their own (their columns are not a team host's).
  async 'host ls'(c) {
    const list = await c.api.hosts();
    const team = list.filter((h): h is TeamHost => h.kind !== 'ssh');
    const ssh = list.filter((h): h is SshHost => h.kind === 'ssh');
    print(c, list, () => [...(team.length > 0 || ssh.length === 0 ? [table(team.map((h) => hostRow(h)), HOST_COLS)] : []), ...(ssh.length > 0 ? [table(ssh.map((h) => hostRow(h)), SSH_HOST_COLS)] : [])].join('\n\n'));
  },
  async 'host add'(c) {
    const [name, url] = [arg(c, 0, 'name'), arg(c, 1, 'ssh://[user@]box[:port][?socket=PATH]')];
    const saved = await hostsFile((file) => addHost(file, { name, url }));
    print(c, saved, () => `saved host ${saved.name} (${saved.url})`);
  },
  async 'host rm'(c) {
    const name = arg(c, 0, 'name');
    const removed = await hostsFile((file) => removeHost(file, name));
    print(c, removed, () => `removed host ${removed.name}`);
  },
};
