// CI check: the house's rooms are layered (DESIGN §1). ROOMS is the order, written down here and
// nowhere else: a room imports only rooms before it in this list, so every arrow points down and
// no two rooms can import each other. `import type` counts, as in the cycle check.
// Usage: node --import tsx .ci/rooms.ts [root]; exit 1 naming each upward import, else 0.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importGraph } from './cycles.ts';

// Lowest first. A room is a folder (or one file) of daemon/, workers/ or schemas/.
export const ROOMS = [
  'schemas',
  'daemon/errors.ts',
  'daemon/proc',
  'daemon/runtime',
  'daemon/terminal',
  'daemon/store',
  'daemon/git',
  'daemon/github',
  'daemon/sandbox',
  'daemon/journal',
  'workers',
  'daemon/client',
  'daemon/http',
  'daemon/agents',
  'daemon/projects',
  'daemon/events',
  'daemon/approvals',
  'daemon/tasks',
  'daemon/sessions',
  'daemon/landing',
  'daemon/pulls',
  'daemon/automations',
  'daemon/intake',
  'daemon/ssh',
  'daemon/hosts',
  'daemon/mcp',
  'daemon/bridges',
  'daemon/routes',
  'daemon/daemon.ts',
  'daemon/main.ts',
  'daemon/cli',
] as const;

// The room a file (relative, with /) is in: the longest entry that is the file or a folder of it.
export function roomOf(rel: string, rooms: readonly string[] = ROOMS): string | null {
  let best: string | null = null;
  for (const r of rooms) if ((rel === r || rel.startsWith(`${r}/`)) && (best === null || r.length > best.length)) best = r;
  return best;
}

export type Finding = { kind: 'upward'; from: string; to: string; fromRoom: string; toRoom: string } | { kind: 'homeless'; file: string };

// Every import from one room into a room that is not below it, and every file of daemon/,
// workers/ or schemas/ that is in no room. Tests, the bench, the dashboard and bin/ are not rooms.
export function check(root: string, rooms: readonly string[] = ROOMS): { findings: Finding[]; files: number; crossings: number } {
  const graph = importGraph(root);
  const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
  const housed = (r: string) => /^(daemon|workers|schemas)\//.test(r);
  const findings: Finding[] = [];
  let files = 0;
  let crossings = 0;
  for (const [file, targets] of graph) {
    const from = rel(file);
    if (!housed(from)) continue;
    files++;
    const fromRoom = roomOf(from, rooms);
    if (fromRoom === null) {
      findings.push({ kind: 'homeless', file: from });
      continue;
    }
    for (const target of targets) {
      const to = rel(target);
      const toRoom = roomOf(to, rooms);
      if (toRoom === null || toRoom === fromRoom) continue;
      crossings++;
      if (rooms.indexOf(toRoom) > rooms.indexOf(fromRoom)) findings.push({ kind: 'upward', from, to, fromRoom, toRoom });
    }
  }
  return { findings, files, crossings };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const { findings, files, crossings } = check(root);
  for (const f of findings) {
    if (f.kind === 'homeless') console.error(`in no room: ${f.file} (add its folder to ROOMS in .ci/rooms.ts)`);
    else console.error(`upward import: ${f.from} (${f.fromRoom}) imports ${f.to} (${f.toRoom}, above it)`);
  }
  if (findings.length > 0) {
    console.error(`${findings.length} finding(s): a room imports only the rooms below it (.ci/rooms.ts)`);
    process.exit(1);
  }
  console.log(`rooms point down: ${ROOMS.length} rooms, ${files} files, ${crossings} imports between rooms`);
}
