import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

// The scratch folder of the data folder: reads keep their index copies and objects there, and a
// commit its index's backup, each in a private folder removed after. What a killed daemon left
// is removed at the next start (the data lock is held: no other daemon uses it).
export function emptyScratch(dataDir: string): string {
  const dir = path.join(dataDir, 'scratch');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
