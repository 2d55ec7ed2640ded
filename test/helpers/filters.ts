import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, makeTempDir } from './git.ts';

// A filter program (smudge or clean) for the repository's `filter=slow` files that sleeps (its
// marker `m` in the process table) while the switch is on, and passes the content through
// otherwise; `once` makes it hang a single time (it turns the switch off as it starts).
export function slowFilter(t: { after(fn: () => unknown): void }, repo: string, kind: 'smudge' | 'clean', m: string, opts: { once?: boolean } = {}) {
  const dir = makeTempDir(t);
  const hang = path.join(dir, 'hang');
  const script = path.join(dir, kind);
  writeFileSync(script, `#!/bin/sh\nif [ -e '${hang}' ]; then ${opts.once ? `rm -f '${hang}'; ` : ''}sleep ${m}; fi\nexec cat\n`);
  chmodSync(script, 0o755);
  git(repo, 'config', `filter.slow.${kind}`, script);
  return { on: () => writeFileSync(hang, ''), off: () => rmSync(hang, { force: true }) };
}
