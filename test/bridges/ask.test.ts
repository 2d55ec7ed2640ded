// The bridges' ask (daemon/bridges/ask.ts) against a real HTTP server on a unix socket standing in
// for the daemon: what a bridge does while the daemon is away or asks to be asked later.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { decide } from '../../daemon/bridges/ask.ts';
import { withCalls } from '../../daemon/client/calls.ts';
import { ApiProblem } from '../../daemon/client/problem.ts';
import { createTransport } from '../../daemon/client/transport.ts';

const ASK = { key: 'toolu_1', kind: 'tool' as const, tool: 'Bash', input: { command: 'ls' } };

// A server on a unix socket that answers each request with the next of `answers` (status,
// headers, body), recording when each came; closed after the test.
async function daemonLike(t: TestContext, answers: Array<[number, Record<string, string>, object]>) {
  const dir = await mkdtemp(path.join(tmpdir(), 'grove-ask-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const socketPath = path.join(dir, 'api.sock');
  const seen: Array<{ method: string; url: string; at: number }> = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, at: Date.now() });
    req.resume();
    const [status, headers, body] = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const api = withCalls(createTransport(socketPath));
  t.after(api.close);
  return { api, seen };
}

const approval = (verdict: object | null) => ({ id: 'a1', verdict });
const unavailable: [number, Record<string, string>, object] = [503, { 'retry-after': '1' }, { code: 'STORE_UNAVAILABLE', detail: 'the team store cannot be reached', status: 503 }];

test('a team store out of reach (503 STORE_UNAVAILABLE): the ask is made again after the Retry-After it names, and its verdict comes back', async (t) => {
  const { api, seen } = await daemonLike(t, [unavailable, [201, {}, approval({ behavior: 'allow' })]]);
  const verdict = await decide(api, 's1', ASK, AbortSignal.timeout(20_000));
  assert.deepEqual(verdict, { behavior: 'allow' });
  assert.deepEqual(seen.map((r) => `${r.method} ${r.url}`), ['POST /api/sessions/s1/approvals', 'POST /api/sessions/s1/approvals']);
  const waited = seen[1]!.at - seen[0]!.at;
  assert.ok(waited >= 950, `asked again after ${waited} ms, not the 1 s asked for`);
});

test('any other refusal of the ask goes to the agent at once, asked once', async (t) => {
  const { api, seen } = await daemonLike(t, [[409, { 'retry-after': '1' }, { code: 'SESSION_ENDED', detail: 'the session has ended', status: 409 }]]);
  await assert.rejects(decide(api, 's1', ASK, AbortSignal.timeout(20_000)), (err) => err instanceof ApiProblem && err.code === 'SESSION_ENDED');
  assert.equal(seen.length, 1);
});
