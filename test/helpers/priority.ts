import { existsSync, readFileSync } from 'node:fs';

// The nice of a process's autogroup, where the kernel has them (Linux); null elsewhere.
export const autogroupNice = (pid: number | 'self'): number | null => {
  if (!existsSync(`/proc/${pid}/autogroup`)) return null;
  return Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))![1]);
};
