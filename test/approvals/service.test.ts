// The approval service on a real store, without a daemon: a waiter woken by the decision, a
// session's end and a deadline expiring what waits, and a new service (a restart) finding what
// the last one left: deadlines armed again, approvals of sessions that ended meanwhile expired.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { pino } from 'pino';
import type { Approval } from '../../schemas/approval.ts';
import { noDecisionWithin } from '../../daemon/approvals/service.ts';
import { ERRORS, GroveError } from '../../daemon/errors.ts';
import { createProjectConfigs } from '../../daemon/projects/config.ts';
import { liveSession as liveSessionOf } from '../helpers/approvals.ts';
import { approvalService, openTestStore, type TestStore } from '../helpers/store.ts';

const s: TestStore = await openTestStore(after);
const log = pino({ level: 'silent' });
const configs = createProjectConfigs({ log });
after(() => configs.close());

const service = (t: test.TestContext, hostId?: string) => approvalService(t, s, configs, hostId);
const liveSession = (t: test.TestContext, opts: Parameters<typeof liveSessionOf>[2] = {}) => liveSessionOf(t, s, opts);

const bash = (command: string) => ({ key: randomUUID(), tool: 'Bash', input: { command } });

test('a waiter is woken by the decision; asking again finds the same; a user rule allows at once; close answers a waiter now', async (t) => {
  const svc = service(t);
  const session = await liveSession(t);
  const { approval: a, created } = await svc.ask(session.id, bash('make'));
  assert.equal(created, true);
  const waiting = svc.get(a.id, 30);
  await svc.decide(a.id, { nonce: a.nonce, decision: 'deny', message: 'no' });
  assert.deepEqual((await waiting).verdict, { behavior: 'deny', message: 'no' });
  assert.equal((await svc.ask(session.id, { ...bash('make'), key: a.key })).created, false);
  assert.equal((await svc.ask(session.id, bash('ls'))).approval.status, 'allowed');

  const { approval: b } = await svc.ask(session.id, bash('make again'));
  const held = svc.get(b.id, 60);
  await svc.close();
  assert.equal((await held).status, 'pending', 'answered as it is when the service closes');
});

test("a session's end expires what it waits for; approval_timeout_s of the session, else of .grove.json", async (t) => {
  const svc = service(t);
  const ending = await liveSession(t);
  const { approval: a } = await svc.ask(ending.id, bash('make'));
  const waiting = svc.get(a.id, 30);
  assert.equal(await s.sessions.end(ending.id, 'killed', null), true);
  const w = await waiting;
  assert.equal(w.status, 'expired');
  assert.match(w.verdict!.behavior === 'expired' ? w.verdict!.message : '', /session ended \(killed\)/);

  const own = await liveSession(t, { approvalTimeoutS: 0.5, grove: { approval_timeout_s: 100 } });
  const { approval: timed } = await svc.ask(own.id, bash('slow'));
  assert.deepEqual((await svc.get(timed.id, 30)).verdict, { behavior: 'expired', message: noDecisionWithin(0.5) }, "the session's own wins");
  const fromProject = await liveSession(t, { grove: { approval_timeout_s: 0.5 } });
  const { approval: p } = await svc.ask(fromProject.id, bash('slow'));
  assert.deepEqual((await svc.get(p.id, 30)).verdict, { behavior: 'expired', message: noDecisionWithin(0.5) });
});

test('a new service (a restart) arms the deadlines it finds and expires approvals of sessions that ended meanwhile', async (t) => {
  const first = service(t);
  const timedSession = await liveSession(t, { approvalTimeoutS: 1 });
  const endedSession = await liveSession(t);
  const { approval: timed } = await first.ask(timedSession.id, bash('timed'));
  const { approval: orphan } = await first.ask(endedSession.id, bash('orphan'));
  await first.close();
  // Ended while no service followed it: nothing expired it then.
  await s.sessions.end(endedSession.id, 'lost', null);
  assert.equal((await first.get(orphan.id)).status, 'pending');

  const second = service(t);
  await second.recover();
  assert.deepEqual((await second.get(timed.id, 30)).verdict, { behavior: 'expired', message: noDecisionWithin(1) });
  assert.equal((await second.get(orphan.id, 30)).status, 'expired');
});

test("another host's service (a shared store) leaves a session's approvals to its owner: neither its end nor a restart expires them there", async (t) => {
  const owner = service(t);
  const session = await liveSession(t);
  const { approval: a } = await owner.ask(session.id, bash('make'));
  await owner.close();
  const elsewhere = service(t, randomUUID());
  // The end is recorded (by its owner) and passes this service's bus; any expiry it started
  // would be queued before the read that follows.
  assert.equal(await s.sessions.end(session.id, 'killed', null), true);
  assert.equal((await elsewhere.get(a.id)).status, 'pending');
  await elsewhere.recover();
  assert.equal((await elsewhere.get(a.id)).status, 'pending');
  // Its owner, back, expires them.
  const back = service(t);
  await back.recover();
  assert.equal((await back.get(a.id, 30)).status, 'expired');
});

const connect = (host: string, port: number) => ({ key: randomUUID(), kind: 'network' as const, tool: 'Network', input: { host, port } });

test('a network approval (DESIGN §18): allowed once, it is asked again; remembered for the session it answers that session only; for the project, its other sessions; a deny remembers nothing', async (t) => {
  const svc = service(t);
  const session = await liveSession(t);
  const allow = async (a: Approval, remember?: 'session' | 'project') => svc.decide(a.id, { nonce: a.nonce, decision: 'allow', ...(remember ? { remember } : {}) });

  const { approval: once } = await svc.ask(session.id, connect('registry.npmjs.org', 443));
  assert.equal(once.kind, 'network');
  assert.equal(once.status, 'pending');
  assert.deepEqual((await allow(once)).verdict, { behavior: 'allow', answer: null });
  assert.equal((await svc.ask(session.id, connect('registry.npmjs.org', 443))).approval.status, 'pending', 'allowed once is not remembered');

  const { approval: denied } = await svc.ask(session.id, connect('evil.example', 443));
  await svc.decide(denied.id, { nonce: denied.nonce, decision: 'deny' });
  assert.equal((await svc.ask(session.id, connect('evil.example', 443))).approval.status, 'pending', 'a deny is asked again');

  const { approval: forSession } = await svc.ask(session.id, connect('Docs.RS', 443));
  assert.equal((await allow(forSession, 'session')).remember, 'session');
  const again = (await svc.ask(session.id, connect('docs.rs', 443))).approval;
  assert.deepEqual([again.status, again.reason], ['allowed', 'allowed by the rule Network(docs.rs:443)']);
  assert.equal((await svc.ask(session.id, connect('docs.rs', 80))).approval.status, 'pending', 'another port is another target');
  const sibling = await liveSession(t, { task: await s.getTask(session.task_id) });
  assert.equal((await svc.ask(sibling.id, connect('docs.rs', 443))).approval.status, 'pending', "another session's rule does not answer it");

  const { approval: forProject } = await svc.ask(session.id, connect('127.0.0.1', 5432));
  await allow(forProject, 'project');
  assert.equal((await svc.ask(sibling.id, connect('127.0.0.1', 5432))).approval.status, 'allowed', "the project's rule answers its other sessions");
  const elsewhere = await liveSession(t);
  assert.equal((await svc.ask(elsewhere.id, connect('127.0.0.1', 5432))).approval.status, 'pending', 'not those of another project');

  const { approval: v6 } = await svc.ask(session.id, connect('::1', 8080));
  await allow(v6, 'session');
  assert.equal((await svc.ask(session.id, connect('::1', 8080))).approval.reason, 'allowed by the rule Network([::1]:8080)');
});

test('a network approval is asked with a host and a port: anything else is 400 VALIDATION_FAILED, and nothing is recorded', async (t) => {
  const svc = service(t);
  const session = await liveSession(t);
  const bad = async (body: object, path: string) => {
    await assert.rejects(svc.ask(session.id, { key: randomUUID(), kind: 'network', tool: 'Network', ...body } as never), (err: unknown) => {
      assert.ok(err instanceof GroveError, String(err));
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.equal(ERRORS[err.code].status, 400);
      assert.ok(err.errors?.some((e) => e.path === path), JSON.stringify(err.errors));
      return true;
    });
  };
  await bad({ input: { host: '', port: 443 } }, '/input/host');
  await bad({ input: { host: 'example.com', port: 0 } }, '/input/port');
  await bad({ input: { host: 'example.com', port: 70000 } }, '/input/port');
  await bad({ input: { host: 'example.com', port: 4.5 } }, '/input/port');
  await bad({ input: { host: 'exa mple.com', port: 443 } }, '/input/host');
  await bad({ input: { host: 'http://example.com', port: 443 } }, '/input/host');
  await bad({ input: { host: 'example.com' } }, '/input/port');
  await bad({ input: { host: 'example.com', port: 443, path: '/' } }, '/input/path');
  await bad({ input: 'example.com:443' }, '/input');
  await bad({ tool: 'Bash', input: { host: 'example.com', port: 443 } }, '/tool');
  await assert.rejects(svc.ask(session.id, { key: randomUUID(), tool: 'Network', input: { host: 'example.com', port: 443 } }), { code: 'VALIDATION_FAILED' }, 'Network is asked as a network approval only');
  assert.deepEqual(await svc.list({ session_id: session.id }), []);
});
