// The one place the CLI gets its client: the local daemon's socket, or with `--host NAME|URL` /
// GROVE_HOST (DESIGN §14.1) a local socket forwarded over ssh to that host's daemon. The same
// transport either way: what a command prints cannot depend on where the daemon runs.
import { withCalls, type Client } from '../client/calls.ts';
import { createTransport, DaemonUnreachable } from '../client/transport.ts';
import { resolvePaths } from '../runtime/paths.ts';
import { CliError, EXIT } from './errors.ts';
import { usage } from './usage.ts';

export interface Endpoint {
  socketPath: string;
  /** the host as given (a saved name or an ssh:// URL), null for this machine's daemon */
  host: string | null;
  /** the remote daemon's socket the forward reaches */
  remoteSocket?: string;
}

const uid = () => process.getuid?.() ?? 0;

// Opens (or finds open) the forward of `host`'s daemon socket. An unknown name or a bad URL is a
// usage error (2); ssh's failure exits 3 with ssh's own words, as a local daemon that is not there.
export async function endpoint(env: NodeJS.ProcessEnv, host: string | null): Promise<Endpoint> {
  const paths = resolvePaths(env, uid());
  if (host === null) return { socketPath: paths.socketPath, host: null };
  // hosts.json's validator and ssh are loaded by the commands that go to a host only.
  const [{ hostsFilePath, HostsError, resolveHost }, { openForward, sshDir, SshError }] = await Promise.all([import('../client/hosts-file.ts'), import('../client/ssh.ts')]);
  let target;
  try {
    ({ target } = await resolveHost(hostsFilePath(paths), host));
  } catch (err) {
    if (!(err instanceof HostsError)) throw err;
    if (err.code === 'HOSTS_FILE_INVALID') throw new CliError(err.message, EXIT.API, { code: err.code, detail: err.message, status: 422 });
    usage(`--host: ${err.message}`);
  }
  try {
    const forward = await openForward(target, { runtimeDir: sshDir(env, uid()), env });
    return { socketPath: forward.socketPath, host, remoteSocket: forward.remoteSocket };
  } catch (err) {
    if (err instanceof SshError) throw new CliError(`cannot reach ${host} over ssh: ${err.message}`, EXIT.NO_DAEMON);
    throw err;
  }
}

export function connect(e: Endpoint): Client {
  return withCalls(createTransport(e.socketPath));
}

// A remote daemon that does not answer behind a working forward: said of that host and its
// socket there, not of the local end of the forward (the same exit 3 as a local one).
export function remoteUnreachable(err: unknown, e: Endpoint): unknown {
  if (!(err instanceof DaemonUnreachable) || e.host === null) return err;
  return new CliError(`grove daemon on ${e.host} is not running (no answer on ${e.remoteSocket} there); start it on that machine with \`grove daemon\` or \`grove install\``, EXIT.NO_DAEMON);
}
