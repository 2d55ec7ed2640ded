import { constants } from 'node:os';

// How a child ended, as a shell says it: its code, or 128 + the number of the signal that ended it.
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal !== null ? (constants.signals[signal] ?? 0) : 0);
}
