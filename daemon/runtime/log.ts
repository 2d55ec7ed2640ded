import { pino, type Logger } from 'pino';
import type { LogLevel } from './settings.ts';

export type { Logger };

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
  const levels: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  return raw !== undefined && levels.includes(raw) ? (raw as LogLevel) : 'info';
}
