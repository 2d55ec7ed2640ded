// `npm start` / `grove daemon`: runs the supervisor in the foreground until SIGTERM or SIGINT.
import { laterLogger } from './log-later.ts';
import type { Logger } from './log.ts';
import { acquireDataLock, LockHeldError, type DataLock } from './lock.ts';
import { resolvePaths } from './paths.ts';
import { SocketInUseError } from './http/unix-socket.ts';
import { openStore } from './store/db.ts';
import { createSpawner } from './sessions/spawner.ts';

// Exit statuses a service manager can tell apart (sysexits.h); both mean "restarting won't help".
export const EXIT_CONFIG = 78;
export const EXIT_ALREADY_RUNNING = 75;

// The store opens in its own thread while this one loads and checks everything else: start-up
// takes the longer of the two, not their sum. So the lock (one PGlite per data folder) and the
// store come first, from the environment alone, even before pino is loaded (their lines wait
// for it in `later`); the config is read and validated meanwhile.
const paths = resolvePaths(process.env, process.getuid?.() ?? 0);
const later = laterLogger();

async function createLog(): Promise<Logger> {
  const { createLogger, earlyLevel } = await import('./log.ts');
  return createLogger(earlyLevel(process.env.GROVE_LOG_LEVEL));
}

function alreadyRunning(log: Logger, err: LockHeldError | SocketInUseError): never {
  log.error({ holder_pid: err instanceof LockHeldError ? err.pid : undefined }, err.message);
  process.stderr.write(`grove: ${err.message}\n`);
  log.flush();
  process.exit(EXIT_ALREADY_RUNNING);
}

let lock: DataLock;
try {
  lock = acquireDataLock(paths.dataDir);
} catch (err) {
  if (err instanceof LockHeldError) alreadyRunning(await createLog(), err);
  throw err;
}
// Forked before PGlite fills this process: a fork copies the page tables of its parent (~4 ms
// now, ~25 ms once PGlite is open).
const spawner = createSpawner({ log: later.log.child({ module: 'spawner' }) });
spawner.launch();
const store = openStore({ dataDir: paths.dataDir, log: later.log.child({ module: 'store' }) });
store.catch(() => {}); // awaited (and reported) by startDaemon
const log = await createLog();
later.bind(log);

const { loadSettings, SettingsError } = await import('./settings.ts');
let settings;
try {
  settings = loadSettings();
} catch (err) {
  if (err instanceof SettingsError) {
    process.stderr.write(`grove: ${err.message}\n`);
    await spawner.close();
    await lock.close();
    process.exit(EXIT_CONFIG);
  }
  throw err;
}
log.level = settings.logLevel;

try {
  const { startDaemon } = await import('./daemon.ts');
  const daemon = await startDaemon(settings, log, { lock, spawner, store });
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
        log.flush();
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} catch (err) {
  if (err instanceof LockHeldError || err instanceof SocketInUseError) alreadyRunning(log, err);
  log.fatal({ err }, 'daemon failed to start');
  process.stderr.write(`grove: failed to start: ${(err as Error).message}\n`);
  log.flush();
  process.exit(1);
}
