// The session spawner's process (spawner.ts): it forks each session's wrapper and holds it until
// the daemon's `go`, telling the daemon when each exits. It leaves with the daemon: a wrapper
// still held then reads the end of its pipe and runs nothing (wrapper.ts).
import { spawnWrapped } from './spawn.ts';
import type { SpawnerReply, SpawnerRequest } from './spawner.ts';

const held = new Map<number, ReturnType<typeof spawnWrapped>>();
// A reply to a daemon already gone is dropped (this process is about to end).
const send = (m: SpawnerReply) => process.connected && process.send!(m, undefined, undefined, () => {});

process.on('message', (m: SpawnerRequest) => {
  if (m.op === 'go') {
    held.get(m.id)?.go();
    return;
  }
  let child: ReturnType<typeof spawnWrapped>;
  try {
    child = spawnWrapped(m.wrap);
  } catch (err) {
    send({ op: 'spawned', id: m.id, ok: false, thrown: true, message: err instanceof Error ? err.message : String(err) });
    return;
  }
  if (child.pid === undefined) {
    // It did not start (its folder gone, no sh): execa, not rejecting, says why in its result.
    void child.then((r) => send({ op: 'spawned', id: m.id, ok: false, thrown: false, message: r.message ?? 'the wrapper did not start' }));
    return;
  }
  held.set(m.id, child);
  send({ op: 'spawned', id: m.id, ok: true, pid: child.pid });
  child.nodeChildProcess.once('exit', () => {
    held.delete(m.id);
    send({ op: 'exited', id: m.id });
  });
});
// The daemon's terminal Ctrl-C is the daemon's to handle; this process ends when it disconnects,
// once the messages before (a last `go`) are handled and written: a wrapper still held reads the
// end of its pipe, and none is waited for.
process.on('SIGINT', () => {});
process.on('disconnect', () => {
  for (const child of held.values()) {
    child.stdin?.end();
    child.nodeChildProcess.unref();
  }
});
