// `npm start` / `grove daemon`: runs the supervisor in the foreground until SIGTERM or SIGINT.
import { createLogger } from './log.ts';
import { acquireDataLock, LockHeldError } from './lock.ts';
import { loadSettings, SettingsError } from './settings.ts';
import { SocketInUseError } from './http/unix-socket.ts';
import { openStore } from './store/db.ts';

// Exit statuses a service manager can tell apart (sysexits.h); both mean "restarting won't help".
export const EXIT_CONFIG = 78;
export const EXIT_ALREADY_RUNNING = 75;

let settings;
try {
  settings = loadSettings();
} catch (err) {
  if (err instanceof SettingsError) {
    process.stderr.write(`grove: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  throw err;
}

const log = createLogger(settings.logLevel);

try {
  // The store opens in its own thread while this one loads the rest of the daemon: start-up
  // takes the longer of the two, not their sum. The lock comes first: one PGlite per folder.
  const lock = acquireDataLock(settings.dataDir);
  const store = openStore({ dataDir: settings.dataDir, log: log.child({ module: 'store' }) });
  store.catch(() => {}); // awaited (and reported) by startDaemon
  const { startDaemon } = await import('./daemon.ts');
  const daemon = await startDaemon(settings, log, { lock, store });
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
  if (err instanceof LockHeldError || err instanceof SocketInUseError) {
    log.error({ holder_pid: err instanceof LockHeldError ? err.pid : undefined }, err.message);
    process.stderr.write(`grove: ${err.message}\n`);
    log.flush();
    process.exit(EXIT_ALREADY_RUNNING);
  }
  log.fatal({ err }, 'daemon failed to start');
  process.stderr.write(`grove: failed to start: ${(err as Error).message}\n`);
  log.flush();
  process.exit(1);
}
