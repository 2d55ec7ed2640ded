import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import type { AgentDefinition, Mode } from '../../schemas/config.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { createAgents } from '../../daemon/agents/agents.ts';
import { createProjectConfigs, type ProjectConfigs } from '../../daemon/projects/config.ts';
import { createEventBus, type EventBus } from '../../daemon/events/bus.ts';
import { eventsTable, type EventsTable } from '../../daemon/store/events.ts';
import { createSessionService, type SessionService } from '../../daemon/sessions/service.ts';
import { createSpawner } from '../../daemon/sessions/spawner.ts';
import { createConfine, type Confine } from '../../daemon/sessions/confine.ts';
import { git } from '../../daemon/git/run.ts';
import { createSessionSockets, type SessionSockets } from '../../daemon/http/session-socket.ts';
import { createApprovalService, type ApprovalService } from '../../daemon/approvals/service.ts';
import { approvalRoutes } from '../../daemon/routes/approvals.ts';
import { approvalsTable } from '../../daemon/store/approvals.ts';
import { openStore, type Store } from '../../daemon/store/db.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { sessionsTable, type SessionsTable } from '../../daemon/store/sessions.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { createTaskGate, type TaskGate } from '../../daemon/tasks/gate.ts';
import { createTaskReader, withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from './git.ts';
import { storeUrlFor } from './postgres.ts';
import { seedStore } from './template.ts';
import { checkPty } from '../../daemon/terminal/check.ts';
import { once } from '../../daemon/runtime/once.ts';

// A logger that keeps its records, so a test can look for a message.
export function memoryLog(): { log: Logger; records: any[] } {
  const records: any[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line)) });
  return { log, records };
}

// The host the projects of a test store are on (no daemon runs there to register one).
export const TEST_HOST_ID = '00000000-0000-4000-8000-000000000001';

export interface TestStore {
  dataDir: string;
  store: Store;
  bus: EventBus;
  events: EventsTable;
  sessions: SessionsTable;
  getProject: (id: string) => Promise<Project>;
  getTask: (id: string) => Promise<Task>;
}

// A real store (PGlite in its thread, or PostgreSQL, as the daemon opens it), in a folder of its own; `cleanup`
// registers what closes and removes it (t.after, or after() for a store shared by a file's tests).
export async function openTestStore(cleanup: (fn: () => unknown) => void, log: Logger = pino({ level: 'silent' })): Promise<TestStore> {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-store-')));
  let opened: Store | undefined;
  cleanup(async () => {
    await opened?.close();
    rmSync(home, { recursive: true, force: true });
  });
  const dataDir = path.join(home, 'data');
  // On PostgreSQL (npm run test:postgres) a database of its own, else PGlite in the folder.
  const databaseUrl = await storeUrlFor(home);
  if (databaseUrl === null) await seedStore(dataDir);
  const store = (opened = await openStore({ dataDir, log, databaseUrl }));
  const bus = createEventBus();
  const events = eventsTable(store.db, bus.publish, { hostId: TEST_HOST_ID, shared: store.shared });
  bus.begin(await events.lastSeq());
  const projects = projectsTable(store.db, events);
  const getProject = async (id: string) => (await projects.get(id)) ?? assert.fail(`no project ${id}`);
  const read = createTaskReader({ tasks: tasksTable(store.db, events, withPresence), getProject, hostId: TEST_HOST_ID });
  return { dataDir, store, bus, events, sessions: sessionsTable(store.db, events), getProject, getTask: read.get };
}

// A project (a plain folder) with one task in `status` whose worktree folder exists: sessions
// need no git, only a folder to run in.
export async function addTask(t: TestContext, s: TestStore, status: Task['status'] = 'ready'): Promise<Task> {
  const dir = makeTempDir(t);
  const project = await projectsTable(s.store.db, s.events).insert({ id: randomUUID(), name: path.basename(dir), path: dir, host_id: TEST_HOST_ID, repository: null });
  const id = randomUUID();
  const worktree = '.grove/worktrees/job/';
  mkdirSync(path.join(project.path, worktree), { recursive: true });
  await s.store.db.query(
    `INSERT INTO tasks (id, project_id, name, branch, worktree_path, base, base_commit, status, host_id) VALUES ($1, $2, 'job', 'grove/job', $3, 'main', 'HEAD', $4, $5)`,
    [id, project.id, worktree, status, project.host_id],
  );
  return s.getTask(id);
}

// Makes every insert into `table` fail, as a full disk would, until the returned function is
// called (at the latest when the test ends).
export async function failInserts(t: TestContext, store: Store, table: 'sessions' | 'session_lines'): Promise<() => Promise<void>> {
  await store.db.query(`CREATE FUNCTION test_no_room() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no room (test)'; END $$`);
  await store.db.query(`CREATE TRIGGER test_no_room BEFORE INSERT ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION test_no_room()`);
  const giveRoom = async () => {
    await store.db.query(`DROP TRIGGER IF EXISTS test_no_room ON ${table}`);
    await store.db.query('DROP FUNCTION IF EXISTS test_no_room()');
  };
  t.after(giveRoom);
  return giveRoom;
}

// Waits until `check` returns a truthy value, and returns it.
export async function until<T>(check: () => T | Promise<T>, what: string, ms = 10_000): Promise<Exclude<T, null | undefined | false | 0 | ''>> {
  for (const deadline = Date.now() + ms; ; ) {
    const v = await check();
    if (v) return v as Exclude<T, null | undefined | false | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

// The approval service as the daemon wires it, on a test store, with `Bash(ls)` as the user's
// rule; closed when the test ends.
export function approvalService(t: { after(fn: () => unknown): void }, s: TestStore, configs: ProjectConfigs, hostId = TEST_HOST_ID): ApprovalService {
  const svc = createApprovalService({
    approvals: approvalsTable(s.store.db, s.events),
    getSession: (id) => s.sessions.get(id),
    getTask: s.getTask,
    getProject: s.getProject,
    configs,
    userAllow: ['Bash(ls)'],
    userTimeoutS: undefined,
    committed: s.bus.committed,
    hostId,
    log: pino({ level: 'silent' }),
  });
  t.after(() => svc.close());
  return svc;
}

// Sessions' own sockets as the daemon serves them, over an approval service of the test store;
// closed when the test ends.
function ownSockets(t: { after(fn: () => unknown): void }, s: TestStore, configs: ProjectConfigs, log: Logger): SessionSockets {
  const approvals = approvalService(t, s, configs);
  const sockets = createSessionSockets({ routes: approvalRoutes({ approvals }), approvals, log });
  t.after(() => sockets.closeAll());
  return sockets;
}

// The session service as the daemon wires it, on a test store; closed when the test ends.
export function sessionService(
  t: { after(fn: () => unknown): void },
  s: TestStore,
  opts: { agents?: Record<string, AgentDefinition>; defaultAgent?: string; defaultMode?: Mode; log?: Logger; gate?: TaskGate; confine?: Confine; sockets?: SessionSockets } = {},
): SessionService {
  const log = opts.log ?? pino({ level: 'silent' });
  const configs = createProjectConfigs({ log });
  const sockets = opts.sockets ?? ownSockets(t, s, configs, log);
  const spawner = createSpawner({ log });
  const service = createSessionService({
    spawner,
    sessions: s.sessions,
    getTask: s.getTask,
    getProject: s.getProject,
    configs,
    agents: createAgents({ agents: opts.agents ?? {} }),
    defaultAgent: opts.defaultAgent,
    defaultMode: opts.defaultMode,
    defaultTimeoutS: undefined,
    autoResume: { enabled: true, prompt: 'continue' },
    pty: once(checkPty),
    // No task service here: sessions end without a turn (test/api/turns.test.ts has them).
    checkpoint: async () => null,
    dataDir: s.dataDir,
    // Unconfined unless the test gives its own (test/sessions/confine.test.ts): as a user config
    // with "sandbox": false would.
    confine: opts.confine ?? createConfine({ check: { ok: false, missing: 'bubblewrap', detail: 'not checked by this test service' }, home: s.dataDir, grove: { dataDir: s.dataDir, configFile: path.join(s.dataDir, 'config.json'), socketPath: path.join(s.dataDir, 'grove.sock') }, userSetting: false, projectPaths: async () => [] }),
    sockets,
    gate: opts.gate ?? createTaskGate(),
    log,
  });
  t.after(async () => {
    await service.close();
    await spawner.close();
    await configs.close();
  });
  // Its spawner and its own sockets stop with it, as the daemon's at its stop: a second service
  // on the same store (a restart) opens them again.
  const close = service.close;
  return Object.assign(service, { close: async () => (await close(), await spawner.close(), opts.sockets === undefined && (await sockets.closeAll())) });
}
