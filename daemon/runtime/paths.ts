import { homedir } from 'node:os';
import path from 'node:path';

// Where the daemon's files are, from the environment alone: cheap to load, so the daemon can
// take its lock and start opening the store before the rest of its modules are loaded.
export interface Paths {
  configFile: string;
  dataDir: string;
  socketPath: string;
}

// DESIGN §2: specific variables beat GROVE_HOME, which beats the XDG defaults.
export function resolvePaths(env: NodeJS.ProcessEnv, uid: number): Paths {
  const home = nonEmpty(env.GROVE_HOME);
  const userHome = nonEmpty(env.HOME) ?? homedir();
  const xdgConfig = absoluteOr(env.XDG_CONFIG_HOME, path.join(userHome, '.config'));
  const xdgState = absoluteOr(env.XDG_STATE_HOME, path.join(userHome, '.local', 'state'));
  const runtime = absoluteOr(env.XDG_RUNTIME_DIR, null);

  const configFile =
    nonEmpty(env.GROVE_CONFIG) ?? (home ? path.join(home, 'config.json') : path.join(xdgConfig, 'grove', 'config.json'));
  const dataDir = nonEmpty(env.GROVE_DATA_DIR) ?? (home ? path.join(home, 'data') : path.join(xdgState, 'grove'));
  const socketPath =
    nonEmpty(env.GROVE_SOCKET) ??
    (home
      ? path.join(home, 'grove.sock')
      : runtime
        ? path.join(runtime, 'grove', 'grove.sock')
        : path.join('/tmp', `grove-${uid}`, 'grove.sock'));
  return {
    configFile: path.resolve(configFile),
    dataDir: path.resolve(dataDir),
    socketPath: path.resolve(socketPath),
  };
}

export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

function absoluteOr<T extends string | null>(v: string | undefined, fallback: T): string | T {
  // The XDG spec says relative values are invalid and must be ignored.
  return v && path.isAbsolute(v) ? v : fallback;
}
