import { pino, type Logger } from 'pino';
export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// A level name as given (GROVE_LOG_LEVEL), or null when it names none.
export function asLogLevel(raw: string | undefined): LogLevel | null {
  return (LOG_LEVELS as readonly (string | undefined)[]).includes(raw) ? (raw as LogLevel) : null;
}

// JSON lines for journald/launchd; pretty only when a person is watching the terminal.
export function createLogger(level: LogLevel, opts: { pretty?: boolean } = {}): Logger {
  const pretty = opts.pretty ?? process.stdout.isTTY === true;
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' } } } : {}),
  });
}

// The level before the settings are checked: GROVE_LOG_LEVEL when it is one, else info (an
// invalid value is reported, exit 78, once the settings are read).
export function earlyLevel(raw: string | undefined): LogLevel {
  return asLogLevel(raw) ?? 'info';
}

// Resolves once every line logged so far is written and the log's stream is closed: the last
// thing before process.exit(). pino writes asynchronously; behind a reader that lags, a part waits
// to be written again, and an exit then writes the lines after it and drops it. pino's flush()
// does not wait for that part; the stream's end does.
export function endLog(log: Logger): Promise<void> {
  const stream = (log as unknown as Record<symbol, NodeJS.WritableStream>)[pino.symbols.streamSym]!;
  return new Promise((resolve) => {
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
    try {
      stream.end();
    } catch {
      resolve(); // already closed
    }
  });
}
