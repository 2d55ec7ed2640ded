import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon } from '../helpers/daemon.ts';
import { allLines, gate, liveGroupMembers, readSse, readyTask, waitSessionEnd } from '../helpers/sessions.ts';

test('the daemon killed with SIGKILL while three sessions print: after a restart all finish, every line once, in order', async (t) => {
  const { d, task } = await readyTask(t);
  const gates = [gate(t), gate(t), gate(t)];
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    // 20,000 lines, a pause at the gate, 20,000 more, then exit code i.
    const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `exit:${i}`, args: ['print:20000', `wait:${gates[i]!.path}`, 'print:20000'] } });
    assert.equal(r.status, 201);
    ids.push(r.json.id);
  }
  const pids = await Promise.all(ids.map(async (id) => (await d.socket('GET', `/api/sessions/${id}`)).json.pid));
  // Wait until some of each session's output is stored, then kill the daemon mid-flight.
  for (const id of ids) await readSse(`http://localhost/api/sessions/${id}/output`, { socketPath: d.socketPath, until: (evs) => evs.length >= 100 });
  // One session finishes while the daemon is down; its exit status must come from the wrapper's file.
  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  for (const pid of pids) assert.ok(liveGroupMembers(pid).length > 0, 'agents outlive the daemon');
  gates[0]!.release();
  const { waitGone } = await import('../../daemon/proc/group.ts');
  assert.ok(await waitGone(pids[0], 20_000), 'the first agent ran to its end while no daemon watched');

  const d2 = await startDaemon(t, { home: d.home });
  await waitSessionEnd(d2, ids[0]!);
  assert.ok(d2.logs.some((l) => l.msg === 're-attached to running session' && l.session === ids[1]));
  const ends = [waitSessionEnd(d2, ids[1]!), waitSessionEnd(d2, ids[2]!)];
  gates[1]!.release();
  gates[2]!.release();
  await Promise.all(ends);

  for (let i = 0; i < 3; i++) {
    const s = (await d2.socket('GET', `/api/sessions/${ids[i]}`)).json;
    assert.equal(s.status, i === 0 ? 'exited' : 'failed', `session ${i}`);
    assert.equal(s.exit_code, i);
    const lines = await allLines(d2, ids[i]!);
    assert.equal(lines.length, 40_000, `session ${i}: every line`);
    for (let n = 0; n < 40_000; n++) {
      if (lines[n].seq !== n + 1 || lines[n].text.trimEnd() !== `line ${(n % 20_000) + 1}`) {
        assert.fail(`session ${i}: line ${n + 1} is ${JSON.stringify(lines[n])}`);
      }
    }
  }
});

test('a session whose process vanished without an exit status while the daemon was down is lost', async (t) => {
  const { d, task } = await readyTask(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300', args: ['echo:before'] } });
  // Its first line stored: the agent runs (a confined one starts after its sandbox is made).
  await readSse(`http://localhost/api/sessions/${r.json.id}/output`, { socketPath: d.socketPath, until: (evs) => evs.some((e) => e.event === 'line') });
  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  // The wrapper is killed too: nothing records an exit status.
  process.kill(-r.json.pid, 'SIGKILL');
  const { waitGone } = await import('../../daemon/proc/group.ts');
  await waitGone(r.json.pid, 5000);
  const d2 = await startDaemon(t, { home: d.home });
  const s = (await d2.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'lost');
  assert.equal(s.exit_code, null);
  assert.deepEqual((await allLines(d2, r.json.id)).map((l) => l.text), ['before']);
});

test('a clean daemon stop leaves agents running; the next daemon follows them', async (t) => {
  const { d, task } = await readyTask(t);
  const g = gate(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:two', args: ['echo:one', `wait:${g.path}`] } });
  await d.waitForLog((l) => l.msg === 'session running' && l.session === r.json.id);
  assert.equal(await d.stop(), 0);
  assert.ok(liveGroupMembers(r.json.pid).length > 0);
  const d2 = await startDaemon(t, { home: d.home });
  assert.equal((await d2.socket('GET', `/api/sessions/${r.json.id}`)).json.status, 'running');
  const ended = waitSessionEnd(d2, r.json.id);
  g.release();
  await ended;
  assert.equal((await d2.socket('GET', `/api/sessions/${r.json.id}`)).json.status, 'exited');
  assert.deepEqual((await allLines(d2, r.json.id)).map((l) => l.text), ['one', 'two']);
});
