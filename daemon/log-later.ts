import type { LineLogger, Logger } from './log.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export interface LaterLogger extends LineLogger {
  child(bindings: Record<string, unknown>): LaterLogger;
}

// Stands in for pino while it loads (~25 ms of every start): the lock, the spawner and the
// store's thread start before it. Lines logged meanwhile wait, in order, and are written
// through the real logger once `bind` gives it; after that every line goes straight through.
export function laterLogger(): { log: LaterLogger; bind(real: Logger): void } {
  let real: Logger | null = null;
  const waiting: ((real: Logger) => void)[] = [];
  const make = (resolve: (real: Logger) => Logger): LaterLogger => {
    let target: Logger | null = null;
    const out: Record<string, unknown> = {
      child: (bindings: Record<string, unknown>) => make((r) => resolve(r).child(bindings)),
    };
    for (const level of LEVELS) {
      out[level] = (...args: unknown[]) => {
        const write = (r: Logger) => {
          target ??= resolve(r);
          (target[level] as (...a: unknown[]) => void)(...args);
        };
        if (real) write(real);
        else waiting.push(write);
      };
    }
    return out as unknown as LaterLogger;
  };
  return {
    log: make((r) => r),
    bind(logger: Logger) {
      real = logger;
      for (const write of waiting.splice(0)) write(logger);
    },
  };
}
