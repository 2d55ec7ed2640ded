import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon, type Reply, type TestDaemon } from '../helpers/daemon.ts';
import { branches, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { agentHome, waitSessionEnd } from '../helpers/sessions.ts';

// Hostile bodies, ids and query strings on every endpoint that takes them. One daemon, one
// project, one ready task and one finished session serve every case; each case is judged on
// its answer, and at the end the whole state is compared with what it was before.

const JSON_CT = { 'content-type': 'application/json' };

function assertProblem(r: Reply, status: number, code: string, what: string) {
  assert.equal(r.status, status, `${what}: ${r.text.slice(0, 500)}`);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/, what);
  assert.equal(r.json.code, code, what);
  assert.equal(r.json.status, status, what);
  for (const k of ['type', 'title', 'detail']) assert.equal(typeof r.json[k], 'string', `${what}: ${k}`);
  assert.ok(!/\bat .+:\d+:\d+/.test(r.text), `${what}: no stack trace`);
  assert.deepEqual(Object.keys(r.json).filter((k) => !['type', 'title', 'status', 'detail', 'code', 'errors'].includes(k)), [], `${what}: no other field`);
}

interface Case {
  what: string;
  method: string;
  url: string;
  /** an object is sent as JSON; a string as is, with Content-Type application/json */
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  code: string;
  /** a JSON pointer the problem's `errors` must name */
  pointer?: string;
  /** also sent through the TCP front */
  tcp?: boolean;
}

async function run(d: TestDaemon, c: Case): Promise<void> {
  const headers = { ...(typeof c.body === 'string' ? JSON_CT : {}), ...(c.headers ?? {}) };
  const fronts: Array<[string, TestDaemon['socket']]> = [['socket', d.socket]];
  if (c.tcp) fronts.push(['tcp', d.tcp]);
  for (const [name, via] of fronts) {
    const what = `${name} ${c.method} ${c.url.slice(0, 120)}: ${c.what}`;
    const r = await via(c.method, c.url, { body: c.body, headers });
    assertProblem(r, c.status, c.code, what);
    if (c.pointer !== undefined) {
      assert.ok(
        (r.json.errors ?? []).some((e: any) => e.path === c.pointer || e.path.startsWith(`${c.pointer}/`)),
        `${what}: errors should name ${c.pointer}: ${JSON.stringify(r.json.errors)}`,
      );
    }
  }
}

// Percent-encodes every character, or only the first: the same letters, another spelling.
const pctAll = (s: string) => [...s].map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
const pctFirst = (s: string) => '%' + s.charCodeAt(0).toString(16) + s.slice(1);

test('hostile bodies, ids and query strings get 4xx problems and change nothing', async (t) => {
  const home = agentHome(t);
  const d = await startDaemon(t, { home });
  // Setup commands count their runs in a file outside the repository: a task that got as far
  // as its setup would show up there.
  const marker = path.join(makeTempDir(t), 'setup-runs');
  const repo = makeRepo(t, {
    parent: makeTempDir(t),
    files: { '.grove.json': JSON.stringify({ agent: 'fixture', setup: [`echo run >> '${marker}'`] }), 'README.md': '# r\n' },
  });
  const project = await addProject(d, repo);
  const created = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'base task' } });
  assert.equal(created.status, 201, created.text);
  const task = created.json;
  const started = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:hi' } });
  assert.equal(started.status, 201, started.text);
  const session = started.json;
  await waitSessionEnd(d, session.id);

  const sessionsDir = path.join(home, 'data', 'sessions');
  const snapshot = async () => ({
    projects: (await d.socket('GET', '/api/projects')).json,
    tasks: (await d.socket('GET', '/api/tasks')).json,
    sessions: (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json,
    lines: (await d.socket('GET', `/api/sessions/${session.id}/output`)).json,
    branches: branches(repo),
    worktrees: worktrees(repo),
    setupRuns: readFileSync(marker, 'utf8'),
    sessionDirs: readdirSync(sessionsDir).sort(),
    beside: readdirSync(path.dirname(repo)).sort(),
    inside: readdirSync(repo).sort(),
  });
  const before = await snapshot();
  assert.equal(before.setupRuns, 'run\n');
  assert.deepEqual(before.lines.lines.map((l: any) => l.text), ['hi']);

  const P = '/api/projects';
  const T = '/api/tasks';
  const S = `/api/tasks/${task.id}/sessions`;
  const validTask = { project_id: project.id, name: 'n' };
  const validSession = { agent: 'fixture', prompt: 'echo:x' };
  const cases: Case[] = [];
  // Each group of cases is sent when its subtest ends.
  const flush = async () => {
    for (const c of cases.splice(0)) await run(d, c);
  };
  const bad = (what: string, method: string, url: string, body: unknown, status: number, code: string, pointer?: string, tcp = false) =>
    cases.push({ what, method, url, body, status, code, ...(pointer !== undefined ? { pointer } : {}), tcp });

  await t.test('bodies that are not objects', async () => {
    // JSON texts that parse but are not an object; `1e400` parses to Infinity.
    const texts = ['[]', '[{}]', '42', '-0', '1e400', 'null', '"text"', 'true', '""'];
    for (const text of texts) {
      bad(`JSON ${text}`, 'POST', P, text, 400, 'VALIDATION_FAILED', '/', true);
      bad(`JSON ${text}`, 'POST', T, text, 400, 'VALIDATION_FAILED', '/', true);
      bad(`JSON ${text}`, 'POST', S, text, 400, 'VALIDATION_FAILED', '/', true);
    }
    bad('an array holding a valid task', 'POST', T, JSON.stringify([validTask]), 400, 'VALIDATION_FAILED', '/');
    bad('an array holding a valid session', 'POST', S, JSON.stringify([validSession]), 400, 'VALIDATION_FAILED', '/');
    bad('whitespace only', 'POST', S, ' \n\t ', 400, 'INVALID_JSON');
    // A raw control byte inside a JSON string is not JSON at all.
    bad('raw NUL byte in a string', 'POST', T, `{"project_id":"${project.id}","name":"a\u0000b"}`, 400, 'INVALID_JSON');
    bad('raw newline in a string', 'POST', S, '{"prompt":"a\nb"}', 400, 'INVALID_JSON');
    bad('two JSON values', 'POST', S, '{} {}', 400, 'INVALID_JSON');
    await flush();
  });

  await t.test('fields of the wrong type', async () => {
    const wrong: Array<[string, string, Record<string, unknown>, string, unknown[]]> = [
      [P, 'path', { path: repo }, 'path', [true, null, {}, [], 1.5]],
      [P, 'name', { path: repo, name: 'x' }, 'name', [42, true, null, {}]],
      [T, 'project_id', validTask, 'project_id', [42, true, null, [], {}, [project.id], { id: project.id }]],
      [T, 'name', validTask, 'name', [42, false, null, [], {}, ['n']]],
      [T, 'base', { ...validTask, base: 'main' }, 'base', [1, true, null, [], {}, ['main']]],
      [T, 'branch', { ...validTask, branch: 'b' }, 'branch', [1, true, null, [], {}, ['b']]],
      [T, 'wait', { ...validTask, wait: true }, 'wait', ['false', 'true', 0, 1, null, [], {}]],
      [S, 'agent', validSession, 'agent', [1, true, null, [], {}, ['fixture']]],
      [S, 'prompt', validSession, 'prompt', [1, true, null, ['echo:x'], {}]],
      [S, 'args', { ...validSession, args: ['exit:0'] }, 'args', ['exit:0', 1, true, null, {}, [1], [null], [['x']], [{}], [true]]],
    ];
    for (const [url, field, valid, key, values] of wrong) {
      for (const v of values) bad(`${field} = ${JSON.stringify(v)}`, 'POST', url, { ...valid, [key]: v }, 400, 'VALIDATION_FAILED', `/${key}`);
    }
    // Well-typed but malformed project ids: only the lowercase UUID itself is an id.
    for (const v of [project.id.toUpperCase(), `urn:uuid:${project.id}`, `{${project.id}}`, project.id.replaceAll('-', ''), ` ${project.id}`, "' OR 1=1 --", ''])
      bad(`project_id = ${JSON.stringify(v)}`, 'POST', T, { ...validTask, project_id: v }, 400, 'VALIDATION_FAILED', '/project_id');
    await flush();
  });

  await t.test('missing and extra fields', async () => {
    // project_id or repository is asked for first (placement reads it); then name, which an
    // issue_url makes optional.
    bad('no fields', 'POST', T, {}, 400, 'VALIDATION_FAILED', '/project_id');
    bad('no name', 'POST', T, { project_id: project.id, wait: true }, 400, 'VALIDATION_FAILED', '/name');
    bad('no project_id', 'POST', T, { name: 'n', branch: 'b' }, 400, 'VALIDATION_FAILED', '/project_id');
    bad('only a path-like name', 'POST', P, { name: repo }, 400, 'VALIDATION_FAILED', '/path');
    // Fields of the resources themselves must not be settable on creation.
    const extra: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      [P, { path: repo }, { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }],
      [P, { path: repo }, { created_at: '2000-01-01T00:00:00.000Z' }],
      [P, { path: repo }, { Path: repo }],
      [T, validTask, { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }],
      [T, validTask, { status: 'ready' }],
      [T, validTask, { worktree_path: '/etc/' }],
      [T, validTask, { ports: { 3000: 22 } }],
      [T, validTask, { base_commit: '0'.repeat(40) }],
      [T, validTask, { Name: 'other' }],
      [S, validSession, { command: ['sh', '-c', 'touch pwned'] }],
      [S, validSession, { env: { LD_PRELOAD: '/tmp/x.so' } }],
      [S, validSession, { cwd: '/' }],
      [S, validSession, { pid: 1 }],
      [S, validSession, { task_id: task.id }],
      [S, validSession, { status: 'running' }],
    ];
    for (const [url, valid, more] of extra) {
      const key = Object.keys(more)[0]!;
      bad(`extra field ${key}`, 'POST', url, { ...valid, ...more }, 400, 'VALIDATION_FAILED', `/${key}`);
    }
    await flush();
  });

  await t.test('__proto__, constructor and prototype keys', async () => {
    // Raw text: JSON.stringify of an object literal would drop a `__proto__` key.
    const bodies: Array<[string, string]> = [
      [P, `"path":${JSON.stringify(repo)}`],
      [T, `"project_id":"${project.id}","name":"n"`],
      [S, '"agent":"fixture","prompt":"echo:x"'],
    ];
    const hostile: Array<[string, string, string]> = [
      ['__proto__ object', '"__proto__":{"polluted":1,"wait":false,"agent":"fixture"}', '/__proto__'],
      ['__proto__ null', '"__proto__":null', '/__proto__'],
      ['constructor.prototype', '"constructor":{"prototype":{"polluted":1}}', '/constructor'],
      ['prototype', '"prototype":{"polluted":1}', '/prototype'],
      ['toString', '"toString":"x"', '/toString'],
      ['hasOwnProperty', '"hasOwnProperty":1', '/hasOwnProperty'],
    ];
    for (const [url, valid] of bodies) {
      for (const [what, member, pointer] of hostile) {
        // Before the valid fields and after them: a merge would let either one win.
        // (POST /api/projects with `__proto__` first is already covered by input.test.ts.)
        bad(`${what} last`, 'POST', url, `{${valid},${member}}`, 400, 'VALIDATION_FAILED', pointer, true);
        if (!(url === P && what === '__proto__ object')) bad(`${what} first`, 'POST', url, `{${member},${valid}}`, 400, 'VALIDATION_FAILED', pointer);
      }
    }
    // Nested in a field: the field has the wrong type, whatever the keys in it.
    bad('__proto__ in args', 'POST', S, '{"args":{"__proto__":["x"]}}', 400, 'VALIDATION_FAILED', '/args');
    bad('__proto__ in name', 'POST', T, `{"project_id":"${project.id}","name":{"__proto__":{"polluted":1}}}`, 400, 'VALIDATION_FAILED', '/name');
    // An agent name that is a member of every object, not an agent (was a 500).
    bad('agent "constructor"', 'POST', S, { agent: 'constructor', prompt: 'echo:x' }, 422, 'UNKNOWN_AGENT', undefined, true);
    bad('agent "tostring"', 'POST', S, { agent: 'tostring' }, 422, 'UNKNOWN_AGENT');
    bad('agent "__proto__"', 'POST', S, { agent: '__proto__' }, 400, 'VALIDATION_FAILED', '/agent');
    await flush();
  });

  await t.test('deeply nested JSON', async () => {
    const depth = 100_000;
    const deepArray = '['.repeat(depth) + ']'.repeat(depth);
    const deepObject = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    for (const url of [T, S]) {
      bad('100000 nested arrays', 'POST', url, deepArray, 400, 'VALIDATION_FAILED', '/', true);
      bad('100000 nested objects', 'POST', url, deepObject, 400, 'VALIDATION_FAILED', '/a', true);
    }
    for (const url of [P, T, S]) bad('100000 unclosed arrays', 'POST', url, '['.repeat(depth), 400, 'INVALID_JSON', undefined, true);
    bad('nested arrays as the name', 'POST', T, `{"project_id":"${project.id}","name":${deepArray}}`, 400, 'VALIDATION_FAILED', '/name');
    bad('nested arrays as the branch', 'POST', T, `{"project_id":"${project.id}","name":"n","branch":${deepArray}}`, 400, 'VALIDATION_FAILED', '/branch');
    bad('nested arrays as args', 'POST', S, `{"agent":"fixture","args":${deepArray}}`, 400, 'VALIDATION_FAILED', '/args/0');
    bad('nested objects as the prompt', 'POST', S, `{"agent":"fixture","prompt":${deepObject}}`, 400, 'VALIDATION_FAILED', '/prompt');
    await flush();
  });

  await t.test('NUL and control characters', async () => {
    // Escaped in the JSON text (\u0000), so the JSON is valid and the schema must refuse it.
    const texts: Array<[string, string]> = [
      ['NUL', 'a\u0000b'],
      ['BEL', 'a\u0007b'],
      ['ESC sequence', '\u001b[31mred'],
      ['DEL', 'a\u007fb'],
      ['C1 CSI', 'a\u009b31mb'],
      ['C1 NEL', 'a\u0085b'],
      ['lone high surrogate', 'a\ud800b'],
      ['lone low surrogate', '\udc00'],
    ];
    for (const [what, s] of texts) {
      bad(`task name with ${what}`, 'POST', T, { ...validTask, name: s }, 400, 'VALIDATION_FAILED', '/name');
      bad(`branch with ${what}`, 'POST', T, { ...validTask, branch: `feat${s}` }, 400, 'VALIDATION_FAILED', '/branch');
      bad(`base with ${what}`, 'POST', T, { ...validTask, base: `main${s}` }, 400, 'VALIDATION_FAILED', '/base');
      bad(`agent with ${what}`, 'POST', S, { agent: `fixture${s}` }, 400, 'VALIDATION_FAILED', '/agent');
      // input.test.ts has NUL and a newline in project names.
      if (!['NUL'].includes(what)) bad(`project name with ${what}`, 'POST', P, { path: repo, name: s }, 400, 'VALIDATION_FAILED', '/name');
    }
    bad('project path with ESC', 'POST', P, { path: `${repo}\u001b` }, 400, 'VALIDATION_FAILED', '/path');
    bad('project path with DEL', 'POST', P, { path: `${repo}/\u007f` }, 400, 'VALIDATION_FAILED', '/path');
    // A C1 character can be part of a real file name: not refused by the schema, but no repository.
    bad('project path with C1', 'POST', P, { path: `${repo}/\u0085` }, 422, 'NOT_A_GIT_REPO');
    bad('args with NUL', 'POST', S, { ...validSession, args: ['ok', 'a\u0000'] }, 400, 'VALIDATION_FAILED', '/args/1');
    await flush();
  });

  await t.test('huge strings', async () => {
    const huge = 'x'.repeat(900 * 1024);
    bad('900 KiB project name', 'POST', P, { path: repo, name: huge }, 400, 'VALIDATION_FAILED', '/name');
    bad('900 KiB task name', 'POST', T, { ...validTask, name: huge }, 400, 'VALIDATION_FAILED', '/name', true);
    bad('900 KiB branch', 'POST', T, { ...validTask, branch: huge }, 400, 'VALIDATION_FAILED', '/branch');
    bad('900 KiB base', 'POST', T, { ...validTask, base: huge }, 400, 'VALIDATION_FAILED', '/base');
    bad('900 KiB project_id', 'POST', T, { ...validTask, project_id: huge }, 400, 'VALIDATION_FAILED', '/project_id');
    bad('900 KiB agent', 'POST', S, { agent: huge }, 400, 'VALIDATION_FAILED', '/agent');
    bad('900 KiB prompt', 'POST', S, { ...validSession, prompt: huge }, 400, 'VALIDATION_FAILED', '/prompt', true);
    bad('900 KiB arg', 'POST', S, { ...validSession, args: [huge] }, 400, 'VALIDATION_FAILED', '/args/0');
    bad('300 args', 'POST', S, { ...validSession, args: Array(300).fill('echo:x') }, 400, 'VALIDATION_FAILED', '/args');
    // Linux refuses one argument over 128 KiB (E2BIG): such a prompt could only make a session
    // that fails to start, so it is refused up front, counted in bytes, not characters.
    bad('200 KiB prompt', 'POST', S, { ...validSession, prompt: 'x'.repeat(200 * 1024) }, 400, 'VALIDATION_FAILED', '/prompt');
    bad('160 KB prompt of 40000 emoji', 'POST', S, { ...validSession, prompt: '\u{1F600}'.repeat(40_000) }, 400, 'VALIDATION_FAILED', '/prompt');
    bad('an arg of 65536 two-byte characters', 'POST', S, { ...validSession, args: ['ok', 'é'.repeat(65_536)] }, 400, 'VALIDATION_FAILED', '/args/1');
    await flush();
  });

  await t.test('malformed, foreign and unknown ids in every :id route', async () => {
    const routes: Array<[string, string, string, unknown?]> = [
      ['GET', '/api/projects/:id', project.id],
      ['DELETE', '/api/projects/:id', project.id],
      ['GET', '/api/tasks/:id', task.id],
      ['DELETE', '/api/tasks/:id', task.id],
      ['GET', '/api/tasks/:id/setup', task.id],
      ['GET', '/api/tasks/:id/sessions', task.id],
      ['POST', '/api/tasks/:id/sessions', task.id, validSession],
      ['GET', '/api/sessions/:id', session.id],
      ['DELETE', '/api/sessions/:id', session.id],
      ['GET', '/api/sessions/:id/output', session.id],
    ];
    for (const [method, pattern, id, body] of routes) {
      // Each one spells (or nearly spells) a real id: refused as malformed, never matched.
      const malformed: Array<[string, string]> = [
        ['garbage', 'abc'],
        ['UPPERCASE', id.toUpperCase()],
        ['one uppercase letter', id.replace(/[a-f]/, (c) => c.toUpperCase())],
        ['urn:uuid:', `urn:uuid:${id}`],
        ['percent-encoded', pctAll(id)],
        ['first character percent-encoded', pctFirst(id)],
        ['braces', `%7B${id}%7D`],
        ['no dashes', id.replaceAll('-', '')],
        ['trailing NUL', `${id}%00`],
        ['trailing space', `${id}%20`],
        ['trailing newline', `${id}%0A`],
        ['encoded slash', `${id}%2F..`],
        ['SQL', `${id}'%20OR%20'1'='1`],
        ['one character short', id.slice(0, -1)],
        ['one character long', `${id}0`],
      ];
      for (const [what, bogus] of malformed) {
        const url = pattern.replace(':id', bogus);
        bad(`${what} id`, method, url, body, 400, 'INVALID_ID', undefined, what === 'UPPERCASE' || what === 'percent-encoded');
      }
      // Well-formed ids of nothing, or of a resource of another kind.
      const others = [
        ['nil UUID', '00000000-0000-0000-0000-000000000000'],
        ['unknown UUID', '3f2504e0-4f89-41d3-9a0c-0305e82c3301'],
        ...[project.id, task.id, session.id].filter((x) => x !== id).map((x) => ['id of another kind', x]),
      ];
      for (const [what, other] of others) bad(what!, method, pattern.replace(':id', other!), body, 404, 'NOT_FOUND', undefined, what === 'nil UUID');
    }
    await flush();
  });

  await t.test('SQL-looking and malformed query strings', async () => {
    const O = `/api/sessions/${session.id}/output`;
    const queries: Array<[string, string, string]> = [
      [T, "project_id='%20OR%201=1%20--", '/project_id'],
      [T, `project_id=${project.id}'%20OR%20'1'='1`, '/project_id'],
      [T, `project_id=${project.id};DROP%20TABLE%20tasks`, '/project_id'],
      [T, `project_id=${project.id.toUpperCase()}`, '/project_id'],
      [T, `project_id=urn:uuid:${project.id}`, '/project_id'],
      [T, 'project_id=', '/project_id'],
      [T, `project_id=${project.id}&project_id=${project.id}`, '/project_id'],
      [T, `project_id=${project.id}&project_id='%20OR%201=1`, '/project_id'],
      [T, 'project_id[]=x', '/project_id[]'],
      [T, `project_id=${project.id}&status=ready`, '/status'],
      [O, 'after=1;DROP%20TABLE%20session_lines', '/after'],
      [O, 'after=1%20OR%201=1', '/after'],
      [O, "after=0'%20OR%20'1'='1", '/after'],
      [O, 'limit=1e9', '/limit'],
      [O, 'limit=-1', '/limit'],
      [O, 'limit=0', '/limit'],
      [O, 'limit=5001', '/limit'],
      [O, 'limit=1.5', '/limit'],
      [O, 'limit=', '/limit'],
      [O, 'after=-1', '/after'],
      [O, 'after=1.5', '/after'],
      [O, 'after=NaN', '/after'],
      // Ajv's coercion lets non-finite numbers past minimum/maximum (was a 500).
      [O, 'after=Infinity', '/after'],
      [O, 'after=-Infinity', '/after'],
      [O, 'after=1e400', '/after'],
      [O, 'limit=Infinity', '/limit'],
      [O, 'after=%00', '/after'],
      // Past a 32-bit seq: the store cannot compare with it (was a 500).
      [O, 'after=3000000000', '/after'],
      [O, 'after=99999999999999999999', '/after'],
      [O, 'after=1&after=2', '/after'],
      [O, 'limit=10&limit=10', '/limit'],
      [O, 'after=0&limit=1&offset=0', '/offset'],
    ];
    for (const [url, q, pointer] of queries) bad(`?${q}`, 'GET', `${url}?${q}`, undefined, 400, 'VALIDATION_FAILED', pointer, true);
    // A refused `force` must not archive the task (nor force anything).
    for (const q of ['force=yes', 'force=1', 'force=true%00', "force=true'%20OR%201=1", 'force=true&force=true', 'force[]=true', 'force=Infinity']) {
      bad(`?${q}`, 'DELETE', `/api/tasks/${task.id}?${q}`, undefined, 400, 'VALIDATION_FAILED', q.startsWith('force[]') ? '/force[]' : '/force', q === 'force=yes');
    }
    // Keys that are members of every object are unknown parameters like any other.
    for (const q of ['__proto__=x', 'constructor=x', 'toString=1', '__proto__[polluted]=1']) {
      const pointer = `/${q.split('=')[0]}`;
      bad(`?${q}`, 'GET', `${T}?${q}`, undefined, 400, 'VALIDATION_FAILED', pointer, true);
      bad(`?${q}`, 'GET', `${O}?${q}`, undefined, 400, 'VALIDATION_FAILED', pointer);
      bad(`?${q}`, 'GET', `${P}?${q}`, undefined, 400, 'VALIDATION_FAILED', pointer);
    }
    // The event stream's resume point comes from a header: bounded like `after`.
    for (const id of ['9999999999', '1 OR 1=1', '-1', '1e3']) {
      cases.push({ what: `Last-Event-ID ${id}`, method: 'GET', url: O, headers: { accept: 'text/event-stream', 'last-event-id': id }, status: 400, code: 'VALIDATION_FAILED', pointer: '/headers/last-event-id', tcp: true });
    }
    await flush();
  });

  await t.test('nothing was created, changed or started', async () => {
    assert.deepEqual(await snapshot(), before);
    assert.ok(!existsSync(path.join(repo, 'pwned')) && !existsSync(path.join(repo, '.grove', 'worktrees', 'base-task', 'pwned')));
    // Valid queries still answer as before: the SQL-looking ones were values, never SQL.
    const one = await d.tcp('GET', `/api/tasks?project_id=${project.id}`);
    assert.deepEqual(one.json, before.tasks);
    const page = await d.tcp('GET', `/api/sessions/${session.id}/output?after=0&limit=1`);
    assert.deepEqual(page.json, { lines: before.lines.lines, next: 1 });
    assert.deepEqual((await d.socket('GET', `/api/sessions/${session.id}/output?after=2147483647`)).json, { lines: [], next: 2147483647 });
  });

  await t.test('Object.prototype was not polluted: valid requests still behave normally', async () => {
    // Ajv checks `additionalProperties` with a for-in loop, which would meet an inherited
    // enumerable `polluted` key and refuse every body: a valid create proves there is none.
    const again = await d.socket('POST', T, { body: { project_id: project.id, name: 'after the storm', wait: true } });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.json.status, 'ready');
    assert.equal(again.json.branch, 'grove/after-the-storm');
    assert.ok(!('polluted' in again.json));
    const s = await d.tcp('POST', `/api/tasks/${again.json.id}/sessions`, { body: { prompt: 'echo:still fine' } });
    assert.equal(s.status, 201, s.text);
    assert.equal(s.json.agent, 'fixture', 'the agent still comes from .grove.json');
    await waitSessionEnd(d, s.json.id);
    const lines = (await d.socket('GET', `/api/sessions/${s.json.id}/output`)).json;
    assert.deepEqual(lines.lines.map((l: any) => l.text), ['still fine']);
    for (const list of [(await d.socket('GET', P)).json, (await d.socket('GET', T)).json]) {
      for (const item of list) assert.ok(!('polluted' in item) && !('admin' in item));
    }
    assert.equal(readFileSync(marker, 'utf8'), 'run\nrun\n', 'setup ran for the valid task only');
    assert.equal((await d.socket('GET', '/api/health')).json.status, 'ok');
    assert.ok(!d.logs.some((l) => l?.level >= 50), `no error was logged: ${JSON.stringify(d.logs.filter((l) => l?.level >= 50)).slice(0, 1000)}`);
  });
});
