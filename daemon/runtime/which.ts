import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

// Where `command` resolves: an absolute path as is, a bare name through PATH; null when absent.
export function which(command: string, pathEnv = process.env.PATH ?? ''): string | null {
  const candidates = command.includes('/') ? (path.isAbsolute(command) ? [command] : []) : pathEnv.split(':').filter(Boolean).map((d) => path.join(d, command));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here
    }
  }
  return null;
}
