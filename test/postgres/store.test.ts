// The two drivers behind one store interface (DESIGN §14.2): the same writes through the same
// table modules give the same rows, values, counts and error codes on PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { openStore, type Store } from '../../daemon/store/db.ts';
import { approvalsTable } from '../../daemon/store/approvals.ts';
import { eventsTable } from '../../daemon/store/events.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { sessionsTable } from '../../daemon/store/sessions.ts';
import { setupLogTable } from '../../daemon/store/setup-log.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { memoryLog, TEST_HOST_ID } from '../helpers/store.ts';
import { seedStore } from '../helpers/template.ts';

const silent = pino({ level: 'silent' });

async function pgliteStore(): Promise<Store> {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-store-')));
  await seedStore(path.join(home, 'data'));
  const store = await openStore({ dataDir: path.join(home, 'data'), log: silent });
  after(async () => {
    await store.close();
    rmSync(home, { recursive: true, force: true });
  });
  return store;
}

async function postgresStore(url?: string, log = silent): Promise<Store> {
  const store = await openStore({ dataDir: tmpdir(), databaseUrl: url ?? (await freshDatabase()), log });
  after(() => store.close());
  return store;
}

const drivers = async () => ({ pglite: await pgliteStore(), postgres: await postgresStore() });

// Ids and times fixed, so that both stores are given exactly the same rows.
const P = '00000000-0000-4000-8000-000000000001';
const T = '00000000-0000-4000-8000-000000000002';
const S = '00000000-0000-4000-8000-000000000003';
const A = '00000000-0000-4000-8000-000000000004';
const AT = '2026-01-02T03:04:05.678Z';

// The same story through every table module.
async function write(store: Store): Promise<unknown> {
  const events = eventsTable(store.db, () => {});
  const projects = projectsTable(store.db, events);
  const tasks = tasksTable(store.db, events, withPresence);
  const sessions = sessionsTable(store.db, events);
  const setup = setupLogTable(store.db);
  const approvals = approvalsTable(store.db, events);
  await projects.insert({ id: P, name: 'p', path: '/nowhere/p', host_id: TEST_HOST_ID, repository: 'example.com/team/p' });
  await tasks.insert({ id: T, project_id: P, name: 'job', branch: 'grove/job', worktree_path: '.grove/worktrees/job/', base: 'main', base_commit: 'abc', status: 'ready' }, { 3000: 20417, 5432: 20418 });
  await setup.commandStarted(T, 0, 'make', AT);
  await setup.appendLines(T, 1, [{ stream: 'stdout', text: 'built', at: AT }, { stream: 'stderr', text: 'warn', at: AT }], 0);
  await setup.commandEnded(T, 0, { exit_code: 0, signal: null, timed_out: false, ended_at: AT });
  await sessions.insert({ id: S, task_id: T, agent: 'claude', command: ['claude', '-p', 'x'], mode: 'edit', prompt: 'x', conversation_id: S, parent_id: null, pid: 42, args: ['--v'], timeout_s: 1.5, deadline: AT });
  await sessions.markRunning(S);
  // Output lines as the daemon stores a read round: one multi-row INSERT, with the file offsets.
  await sessions.appendLines(S, 1, { streams: ['stdout', 'stderr', 'stdout'], texts: ['one', 'two', 'é\u{1F600}'], at: AT }, { stdout: 2 ** 40, stderr: 7 });
  await approvals.ask({ id: A, session_id: S, task_id: T, project_id: P, key: 'k', kind: 'tool', tool: 'Bash', input: { command: 'ls', n: [1, 2] }, nonce: 'n', timeout_s: 60, allowedBy: null });
  await sessions.end(S, 'exited', 0);
  return {
    task: await tasks.get(T),
    session: await sessions.get(S),
    lines: await sessions.lines(S, 0, 10),
    setup: [await setup.commands(T), await setup.lines(T)],
    approval: await approvals.get(A),
    events: (await events.page({}, 0, 100)).map((e) => ({ ...e, at: 'at' })),
  };
}

// A row with the store's own clock readings replaced by their type: only those may differ.
const NOW_COLUMNS = new Set(['created_at', 'ended_at', 'at', 'archived_at', 'decided_at', 'expires_at', 'applied_at']);
function fixTimes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(fixTimes);
  if (v === null || typeof v !== 'object' || v instanceof Date) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, NOW_COLUMNS.has(k) && x !== null ? (x instanceof Date ? 'Date' : typeof x) : fixTimes(x)]));
}

test('the same writes through the table modules read back the same on PGlite and on PostgreSQL, row for row', async () => {
  const { pglite, postgres } = await drivers();
  const viaTables = [await write(pglite), await write(postgres)];
  assert.deepEqual(fixTimes(viaTables[1]), fixTimes(viaTables[0]));
  for (const table of ['projects', 'tasks', 'port_leases', 'setup_commands', 'setup_lines', 'sessions', 'session_lines', 'events', 'approvals', 'schema_migrations']) {
    const order = table === 'schema_migrations' ? 'version' : '1, 2';
    const [a, b] = await Promise.all([pglite, postgres].map(async (s) => fixTimes((await s.db.query(`SELECT * FROM ${table} ORDER BY ${order}`)).rows)));
    assert.ok((a as unknown[]).length > 0, `${table} has rows`);
    assert.deepEqual(b, a, `the rows of ${table}`);
  }
  // The types that matter, spelled out (a Date, int8 as a number, jsonb parsed).
  const { rows } = await postgres.db.query<Record<string, unknown>>('SELECT created_at, stdout_offset, result, command FROM sessions');
  assert.ok(rows[0]!.created_at instanceof Date);
  assert.equal(rows[0]!.stdout_offset, 2 ** 40);
  assert.deepEqual(rows[0]!.command, ['claude', '-p', 'x']);
});

test('every column type reads as PGlite reads it', async () => {
  const { pglite, postgres } = await drivers();
  const sql = `SELECT 1::int2 AS a, 2::int4 AS b, 3::int8 AS c, 9007199254740993::int8 AS big, 1.5::float4 AS d, 2.25::float8 AS e, 2.5::numeric AS f,
    true AS g, '{"x":1}'::json AS h, '{"y":[1,null]}'::jsonb AS i, '2026-01-02 03:04:05.678+00'::timestamptz AS j, '2026-01-02'::date AS k,
    interval '1 day 2 hours' AS l, ARRAY['a','b'] AS m, ARRAY[1,2] AS n, '6d1b0c47-8c41-4fb7-9d45-4d6b0c3a3f11'::uuid AS o,
    '\\x01ff'::bytea AS p, NULL::text AS q, 'text' AS r, 7::oid AS s`;
  const [a, b] = [(await pglite.db.query(sql)).rows[0], (await postgres.db.query(sql)).rows[0]];
  assert.deepEqual(b, a);
  assert.equal((b as { big: unknown }).big, 9007199254740993n, 'int8 beyond 2^53 is a BigInt on both');
});

test('counts, SQLSTATE codes and transactions behave alike', async () => {
  const { pglite, postgres } = await drivers();
  for (const [name, s] of Object.entries({ pglite, postgres })) {
    await s.db.query(`INSERT INTO projects (id, name, path, host_id) VALUES ($1, 'a', '/a', $2), (gen_random_uuid(), 'b', '/b', $2)`, [P, TEST_HOST_ID]);
    assert.equal((await s.db.query(`UPDATE projects SET name = name || '!'`)).affectedRows, 2, name);
    assert.equal((await s.db.query('SELECT * FROM projects')).affectedRows, 0, name);
    assert.equal((await s.db.query(`DELETE FROM projects WHERE path = '/none'`)).affectedRows, 0, name);
    const code = (p: Promise<unknown>) => p.then(() => assert.fail(`${name}: no error`), (e: { code?: string }) => e.code);
    assert.equal(await code(s.db.query(`INSERT INTO projects (id, name, path, host_id) VALUES (gen_random_uuid(), 'c', '/a', $1)`, [TEST_HOST_ID])), '23505', `${name}: unique violation`);
    assert.equal(await code(s.db.query(`INSERT INTO port_leases (port, task_id, declared) VALUES (0, $1, 1)`, [T])), '23514', `${name}: check violation`);
    assert.equal(await code(s.db.query('SELEC 1')), '42601', `${name}: syntax error`);
    // A transaction that throws leaves nothing; one that returns commits; nesting is refused.
    await assert.rejects(
      s.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO projects (id, name, path) VALUES (gen_random_uuid(), 'gone', '/gone')`);
        throw new Error('no');
      }),
      /no/,
    );
    assert.equal((await s.db.query(`SELECT * FROM projects WHERE name = 'gone'`)).rows.length, 0, `${name}: rolled back`);
    assert.equal(await s.db.transaction(async (tx) => (await tx.query(`UPDATE projects SET name = 'kept' WHERE id = $1`, [P])).affectedRows), 1);
    assert.equal((await s.db.query(`SELECT * FROM projects WHERE name = 'kept'`)).rows.length, 1, `${name}: committed`);
    await assert.rejects(s.db.transaction((tx) => tx.transaction(async () => 1)), /nested transactions are not supported/);
    // A statement error inside a transaction surfaces with its code, and the store goes on.
    assert.equal(await code(s.db.transaction((tx) => tx.query(`INSERT INTO projects (id, name, path) VALUES ($1, 'dup', '/dup')`, [P]))), '23505', name);
    assert.deepEqual((await s.db.query('SELECT count(*)::int AS n FROM projects')).rows, [{ n: 2 }], `${name}: the store goes on`);
  }
});

test('daemons starting on one new database at once migrate it once', async () => {
  const url = await freshDatabase();
  const { log, records } = memoryLog();
  await Promise.all([1, 2, 3].map(() => postgresStore(url, log)));
  const applied = records.filter((r) => r.msg === 'migration applied').map((r) => r.migration);
  const s = await postgresStore(url);
  const { rows } = await s.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
  assert.ok(rows.length >= 13);
  assert.deepEqual(applied, rows.map((r) => r.name), 'each migration applied by one of them, once, in order');
});
