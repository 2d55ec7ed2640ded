import { constants } from 'node:os';

// How a child ended, as a shell says it: its code, or 128 + the number of the signal that ended it
// (by name, as child_process gives it, or by number, as node-pty does).
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | number | null): number {
  if (code !== null) return code;
  if (typeof signal === 'number') return 128 + signal;
  return 128 + (signal !== null ? (constants.signals[signal] ?? 0) : 0);
}
