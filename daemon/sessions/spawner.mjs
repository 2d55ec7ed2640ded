// The session spawner: a small helper process, forked by the daemon before PGlite is loaded,
// that starts session processes on request. Every spawn copies the page tables of the process
// that makes it; the daemon, holding PGlite's ~150 MB of WebAssembly memory, took 8 ms per
// spawn() where this process takes ~1.5 ms. Plain JavaScript with nothing but node: built-ins,
// so that it stays small (its private memory is ~7 MB; the rest is the node binary, shared
// with the daemon).
//
// Messages in (over the IPC channel, JSON):
//   { op: 'spawn', id, file, args, cwd, env, stdout, stderr }
//                                                   start `file args…` in a new session (setsid),
//                                                   stdin a pipe, stdout/stderr appended to files
//   { op: 'go', pid }                              write a line to its stdin and close it
//   { op: 'run', id, file, args, env }             run a short command (git for the worker
//                                                   pool) and collect its output
// Messages out:
//   { type: 'spawned', id, pid }                   the process exists
//   { type: 'failed', id, stage, code, message }   it could not be started: stage 'files' (its
//                                                   output files) or 'spawn' (cwd gone, ENOENT…)
//   { type: 'exit', pid, code, signal }            a process it started has exited
//   { type: 'running', id, pid }                   a `run` command started (its pid lets the
//                                                   daemon wait for it should this process die)
//   { type: 'ran', id, code, signal, stdout, stderr, error }
//                                                   it ended (error: it could not be started)
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

// Ctrl-C in a terminal reaches the daemon's whole process group: the daemon stops on it, and
// this process goes when the daemon's channel closes, not before. (A child starts with default
// signal dispositions again.)
process.on('SIGINT', () => {});
process.on('disconnect', () => process.exit(0));

// Write ends of the stdin pipes of processes not yet told to go, by pid.
const held = new Map();

// Output beyond this is cut short, and the command killed: git's answers here are a few lines.
const RUN_MAX_BYTES = 16 * 1024 * 1024;

function run(m) {
  let child;
  try {
    child = spawn(m.file, m.args, { env: m.env, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return reply({ type: 'ran', id: m.id, code: null, signal: null, stdout: '', stderr: '', error: String(e?.message ?? e) });
  }
  const out = { stdout: [], stderr: [] };
  let bytes = 0;
  for (const name of ['stdout', 'stderr']) {
    child[name].on('data', (chunk) => {
      bytes += chunk.length;
      if (bytes > RUN_MAX_BYTES) return void child.kill('SIGKILL');
      out[name].push(chunk);
    });
  }
  let error = null;
  child.once('error', (e) => (error = String(e?.message ?? e)));
  if (child.pid !== undefined) reply({ type: 'running', id: m.id, pid: child.pid });
  child.once('close', (code, signal) => {
    const text = (name) => Buffer.concat(out[name]).toString('utf8');
    reply({ type: 'ran', id: m.id, code, signal, stdout: text('stdout'), stderr: text('stderr'), error });
  });
}

process.on('message', (m) => {
  if (m.op === 'run') return run(m);
  if (m.op === 'go') {
    held.get(m.pid)?.end('go\n');
    held.delete(m.pid);
    return;
  }
  let out = null;
  let err = null;
  try {
    out = openSync(m.stdout, 'a', 0o600);
    err = openSync(m.stderr, 'a', 0o600);
  } catch (e) {
    for (const fd of [out, err]) if (fd !== null) closeSync(fd);
    return reply({ type: 'failed', id: m.id, stage: 'files', code: e?.code ?? null, message: String(e?.message ?? e) });
  }
  try {
    const child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ['pipe', out, err] });
    if (child.pid === undefined) {
      child.once('error', (e) => reply({ type: 'failed', id: m.id, stage: 'spawn', code: e.code ?? null, message: e.message }));
      return;
    }
    child.once('error', () => {}); // reported through exit
    child.stdin.on('error', () => {}); // a process killed while held
    held.set(child.pid, child.stdin);
    child.once('exit', (code, signal) => {
      held.delete(child.pid);
      reply({ type: 'exit', pid: child.pid, code, signal });
    });
    reply({ type: 'spawned', id: m.id, pid: child.pid });
  } catch (e) {
    reply({ type: 'failed', id: m.id, stage: 'spawn', code: e?.code ?? null, message: String(e?.message ?? e) });
  } finally {
    closeSync(out);
    closeSync(err);
  }
});

function reply(msg) {
  if (process.connected) process.send(msg);
}
