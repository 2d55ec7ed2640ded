import path from 'node:path';
import { git } from './run.ts';

// Decision: a repository is named `host/path` (`github.com/a/b`): no scheme, user, password or
// port, the host in lower case, no trailing `/` or `.git`; its path keeps its case (only some
// servers ignore it). So `git@github.com:a/b.git`, `https://github.com/a/b` and
// `ssh://git@github.com:22/a/b.git` are one repository, and a token in an https URL is never
// stored. A local origin (a path or file:// URL) is its absolute path, resolved against the
// repository, without `.git`: clones of one folder on one machine group together.
export function normaliseOrigin(url: string, repoDir: string): string | null {
  const raw = url.trim();
  if (raw === '') return null;
  let host: string;
  let rest: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(raw);
  if (scheme) {
    const [, proto = '', after = ''] = scheme;
    if (proto.toLowerCase() === 'file') return local(decodeURIComponent(after.replace(/^[^/]*/, '')), repoDir);
    const slash = after.indexOf('/');
    const authority = slash < 0 ? after : after.slice(0, slash);
    rest = slash < 0 ? '' : after.slice(slash);
    host = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
    if (host.startsWith('[')) host = host.replace(/^\[(.*)\](?::\d*)?$/, '$1');
  } else {
    // git's scp-like form, `[user@]host:path`: a colon before any slash.
    const scp = /^(?:[^@/]*@)?([^:/]+):(.*)$/.exec(raw);
    if (!scp) return local(raw, repoDir);
    [, host = '', rest = ''] = scp;
  }
  const repoPath = rest.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  if (host === '') return null;
  return repoPath === '' ? host.toLowerCase() : `${host.toLowerCase()}/${repoPath}`;
}

function local(p: string, repoDir: string): string {
  const abs = path.resolve(repoDir, p).replace(/\/+$/, '');
  return abs.replace(/\/\.git$/, '').replace(/\.git$/, '') || '/';
}

// The repository's normalised `origin` (its URL as git reads it, `insteadOf` applied), null when
// it has none, undefined when git could not say (the folder gone).
export async function readOrigin(repoDir: string): Promise<string | null | undefined> {
  const res = await git(repoDir, ['remote', 'get-url', 'origin']);
  if (res.exitCode === 2) return null; // git's "No such remote"
  if (res.exitCode !== 0) return undefined;
  return normaliseOrigin(res.stdout.split('\n')[0] ?? '', repoDir);
}
