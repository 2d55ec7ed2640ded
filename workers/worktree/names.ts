import { git } from '../../daemon/git/run.ts';
import { fail, type Fail } from '../result.ts';

const SLUG_MAX = 48;

// The slug with its collision suffix (-2, -3…), still within SLUG_MAX characters.
export function suffixed(slug: string, n: number): string {
  if (n === 1) return slug;
  const tail = `-${n}`;
  return slug.slice(0, SLUG_MAX - tail.length).replace(/-+$/, '') + tail;
}

// git's own rules for a new branch name, plus the forms git would expand (`@{-1}`) or misread.
export async function checkBranchName(repo: string, b: string, signal?: AbortSignal): Promise<Fail | null> {
  const bad = fail('VALIDATION_FAILED', `${JSON.stringify(b)} is not a valid branch name`, '/branch');
  if (b === 'HEAD' || b.includes('@{') || b.startsWith('-')) return bad;
  const chk = await git(repo, ['check-ref-format', '--branch', b], { signal });
  return chk.exitCode !== 0 || chk.stdout !== b ? bad : null;
}

// Whether `branch` can be created next to the existing refs: no equal name, and no D/F
// conflict (`a/b` beside `a`, or `a` beside `a/b`), which git refuses.
export function branchFree(branch: string, refs: Set<string>): boolean {
  const full = `refs/heads/${branch}`;
  if (refs.has(full)) return false;
  for (const r of refs) if (r.startsWith(full + '/')) return false;
  const parts = branch.split('/');
  for (let i = 1; i < parts.length; i++) if (refs.has(`refs/heads/${parts.slice(0, i).join('/')}`)) return false;
  return true;
}
