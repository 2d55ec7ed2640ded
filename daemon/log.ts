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
