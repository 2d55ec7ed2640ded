// A team on one PostgreSQL (DESIGN §14.2) for the team tests: several real daemons, each with its
// own GROVE_HOME, its own clone of one origin and its own host name, all on one fresh database.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addProject, makeHome, sharedForFile, startDaemon, type Cleanup, type StartOptions, type TestDaemon } from './daemon.ts';
import { git, makeRepo } from './git.ts';
import { freshDatabase } from './postgres.ts';
import { AGENT } from './sessions.ts';
import pg from 'pg';

export interface TeamHost {
  name: string;
  daemon: TestDaemon;
  /** this host's clone of the origin */
  clone: string;
  /** the project of `clone` on this host (GET /api/projects/:id's body) */
  project: any;
}

export interface Team {
  /** the database every host stores in */
  url: string;
  /** the bare repository every host cloned */
  origin: string;
  /** the origin as projects carry it (`repository`) */
  repository: string;
  hosts: TeamHost[];
  /** starts (or restarts, with its home and clone) the host called `name` */
  start(name: string, opts?: { config?: object; env?: Record<string, string | undefined> }): Promise<TeamHost>;
}

export interface TeamOptions {
  /** the host names, one daemon each, started in this order */
  hosts: string[];
  /** files of the origin's first commit */
  files?: Record<string, string>;
  /** more of each host's user config (host_name is set) */
  config?: (name: string) => object;
  env?: (name: string) => Record<string, string | undefined>;
  /** each host's clone, relative to the team's folder (default `clone-<name>`): `(n) => \`${n}/app\`` gives every host a clone called `app` */
  clone?: (name: string) => string;
}

// Starts every host of `opts.hosts`, each with its project added (its own clone of the origin).
// Everything stops and goes with `t` (t.after).
export async function startTeam(t: Cleanup, opts: TeamOptions): Promise<Team> {
  const url = await freshDatabase();
  const seed = makeRepo(t, { files: opts.files ?? { 'README.md': '# team\n' } });
  const parent = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-team-')));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const origin = path.join(parent, 'origin.git');
  git(parent, 'clone', '-q', '--bare', seed, origin);
  const homes = new Map<string, string>();
  const clones = new Map<string, string>();
  const hosts: TeamHost[] = [];

  async function start(name: string, more: { config?: object; env?: Record<string, string | undefined> } = {}): Promise<TeamHost> {
    let home = homes.get(name);
    if (!home) homes.set(name, (home = makeHome(t)));
    let clone = clones.get(name);
    const fresh = !clone;
    if (!clone) {
      clones.set(name, (clone = path.join(parent, opts.clone?.(name) ?? `clone-${name}`)));
      git(parent, 'clone', '-q', origin, clone);
    }
    const startOpts: StartOptions = {
      home,
      config: { host_name: name, ...(opts.config?.(name) ?? {}), ...(more.config ?? {}) },
      env: { GROVE_DATABASE_URL: url, ...(opts.env?.(name) ?? {}), ...(more.env ?? {}) },
    };
    const daemon = await startDaemon(t, startOpts);
    const project = fresh ? await addProject(daemon, clone) : (await daemon.socket('GET', '/api/projects')).json.find((p: any) => p.path === clone);
    const host = { name, daemon, clone, project };
    const i = hosts.findIndex((h) => h.name === name);
    if (i >= 0) hosts[i] = host;
    else hosts.push(host);
    return host;
  }

  for (const name of opts.hosts) await start(name);
  const repository = hosts[0]?.project.repository ?? origin;
  return { url, origin, repository, hosts, start };
}

// The fixture agent with a pinned session id, so that a follow-up resumes it.
const RESUMABLE = [AGENT, 'echo:{session}', '{prompt}'];
export const TEAM_AGENTS = { fixture: { command: RESUMABLE, resume: RESUMABLE } };
export const TEAM_FILES = { 'README.md': '# team\n', '.grove.json': JSON.stringify({ agent: 'fixture' }) };

// Rows of the team's database, read as the test's own client.
export async function query(team: Team, sql: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: team.url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

// One team for the tests of a file: started by the first test that asks, stopped after the
// file's last test (call it at the top level, as sharedDaemon). `opts` may be a function of the
// file's cleanup, for folders the team's config names.
export function sharedTeam(opts: TeamOptions | ((c: Cleanup) => TeamOptions)): () => Promise<Team> {
  return sharedForFile((c) => startTeam(c, typeof opts === 'function' ? opts(c) : opts));
}
