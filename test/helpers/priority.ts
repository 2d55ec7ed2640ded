import { readFileSync } from 'node:fs';

// The nice of a process's autogroup, where the kernel shares the CPU by them; null elsewhere: no
// file (not Linux, or no autogroups), or an empty one (the process sits in a cgroup of its own, as
// in a container, where autogroups do not apply).
export const autogroupNice = (pid: number | 'self'): number | null => {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/autogroup`, 'utf8');
  } catch {
    return null;
  }
  const nice = /nice (-?\d+)/.exec(text);
  return nice ? Number(nice[1]) : null;
};
