// `npm start` / `grove daemon`: runs the supervisor in the foreground until SIGTERM or SIGINT.
import { agentsOf, type Agents } from './agents/agents.ts';
import type { Daemon } from './daemon.ts';
import { gitProblem } from './git/version.ts';
import { acquireDataLock, LockHeldError } from './runtime/lock.ts';
import { createLogger, earlyLevel, endLog, type Logger } from './runtime/log.ts';
import { loadSettings, SettingsError, type Settings } from './runtime/settings.ts';
import { SocketInUseError } from './http/unix-socket.ts';
import { openStore } from './store/db.ts';
import { StoreUnreachableError } from './store/store.ts';

// Exit statuses a service manager can tell apart (sysexits.h). 78: restarting won't help. 75
// (EX_TEMPFAIL): a later start may succeed, once the other daemon has stopped or the store named
// by database_url answers; the systemd unit tries again every 10 s.
export const EXIT_CONFIG = 78;
export const EXIT_ALREADY_RUNNING = 75;
export const EXIT_UNAVAILABLE = 69;
export const EXIT_STORE_UNREACHABLE = 75;

// How long an exit waits on a log reader that lags before it goes anyway (pino's exit hook then
// writes what it can, as before this wait).
const LOG_DRAIN_MS = 5000;

// Exits with `code` once the log is written (endLog says why process.exit() must wait).
function exitAfterLog(log: Logger, code: number): Promise<never> {
  return new Promise(() => {
    const exit = () => process.exit(code);
    setTimeout(exit, LOG_DRAIN_MS);
    void endLog(log).then(exit);
  });
}

// Prints `message` where a person or the service manager sees it, then exits with `code`.
function exitWith(log: Logger, code: number, message: string, fields: Record<string, unknown> = {}): Promise<never> {
  log.error(fields, message);
  process.stderr.write(`grove: ${message}\n`);
  return exitAfterLog(log, code);
}

// The lock, then the store, then the rest (daemon.ts): the store opens in its own thread
// (PGlite's WebAssembly) or on its server while this thread loads the modules of the other
// parts, which nothing before needs; the one dynamic import of the start, for that overlap.
async function start(settings: Settings, agents: Agents, log: Logger): Promise<Daemon> {
  const lock = acquireDataLock(settings.dataDir);
  const store = openStore({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl, log: log.child({ module: 'store' }) });
  store.catch(() => {}); // awaited in startDaemon, where its failure fails the start
  let startDaemon;
  try {
    ({ startDaemon } = await import('./daemon.ts'));
  } catch (err) {
    await store.then((s) => s.close(), () => {});
    await lock.close();
    throw err;
  }
  return startDaemon(settings, agents, log, { lock, store });
}

export async function runDaemon(): Promise<void> {
  const log = createLogger(earlyLevel(process.env.GROVE_LOG_LEVEL));
  let settings, agents;
  try {
    settings = loadSettings();
    agents = agentsOf(settings);
  } catch (err) {
    if (err instanceof SettingsError) return exitWith(log, EXIT_CONFIG, err.message);
    throw err;
  }
  log.level = settings.logLevel;
  const git = gitProblem();
  if (git !== null) return exitWith(log, EXIT_UNAVAILABLE, git);

  let daemon;
  try {
    daemon = await start(settings, agents, log);
  } catch (err) {
    if (err instanceof LockHeldError) return exitWith(log, EXIT_ALREADY_RUNNING, err.message, { holder_pid: err.pid });
    if (err instanceof SocketInUseError) return exitWith(log, EXIT_ALREADY_RUNNING, err.message);
    if (err instanceof StoreUnreachableError) return exitWith(log, EXIT_STORE_UNREACHABLE, err.message);
    log.fatal({ err }, 'daemon failed to start');
    return exitWith(log, 1, `failed to start: ${(err as Error).message}`);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    daemon.close().then(
      () => {
        log.info('stopped');
        void exitAfterLog(log, 0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        void exitAfterLog(log, 1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
