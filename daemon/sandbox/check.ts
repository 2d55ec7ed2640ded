import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
// execa, not node:child_process: this is a child whose end and output are collected as a whole
// (docs/decisions/build-and-runtime.md), bounded by execa's timeout.
import { execa } from 'execa';
import { NAMESPACE_ARGS } from './bwrap.ts';

export type SandboxCheck =
  | { ok: true; bwrap: string; socat: string }
  | { ok: false; missing: 'bubblewrap' | 'socat' | 'namespaces'; detail: string };

// How long creating the namespaces may take before the machine is said not to confine.
const CHECK_TIMEOUT_MS = 10_000;

// The first executable `bwrap` on `searchPath` (a PATH value), or null.
export function findBwrap(searchPath: string): string | null {
  return findProgram('bwrap', searchPath);
}

// The first executable `name` on `searchPath`, or null (socat, for the network: net.ts).
export function findProgram(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable: the next folder
    }
  }
  return null;
}

// Whether this machine can confine a session, checked for real: bwrap and socat are found on
// `searchPath` and bwrap creates the namespaces a confined session gets (its network's included) (DESIGN §18: grove doctor says what to install).
// Never throws.
export async function checkSandbox(opts: { path: string; timeoutMs?: number }): Promise<SandboxCheck> {
  const bwrap = findBwrap(opts.path);
  if (bwrap === null) {
    return { ok: false, missing: 'bubblewrap', detail: 'bwrap was not found on PATH: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)' };
  }
  // socat carries the network across the session's namespace (net.ts).
  const socat = findProgram('socat', opts.path);
  if (socat === null) {
    return { ok: false, missing: 'socat', detail: 'socat was not found on PATH: install socat (Debian/Ubuntu: apt-get install socat; Fedora: dnf install socat)' };
  }
  const r = await execa(bwrap, [...NAMESPACE_ARGS, '--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], {
    reject: false,
    stdin: 'ignore',
    timeout: opts.timeoutMs ?? CHECK_TIMEOUT_MS,
    env: { PATH: opts.path },
    extendEnv: false,
  });
  if (r.exitCode === 0) return { ok: true, bwrap, socat };
  const why = r.timedOut ? 'it did not finish in time' : (String(r.stderr).trim() || r.shortMessage);
  return {
    ok: false,
    missing: 'namespaces',
    detail: `${bwrap} could not create the sandbox's namespaces (${why}): unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later, an AppArmor profile for bwrap or kernel.apparmor_restrict_unprivileged_userns=0)`,
  };
}
