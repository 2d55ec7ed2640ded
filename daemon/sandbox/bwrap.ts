import path from 'node:path';
import { netBwrapArgs, netLauncher, type NetPlan } from './net.ts';
import type { SandboxPolicy } from './policy.ts';

// The namespaces every confined command gets; check.ts creates the same ones to answer whether
// this machine can confine.
// - no capabilities: run by root, bwrap leaves the agent every capability, and it could remount
//   `/` writable or unmount a hidden folder. (As any other user bwrap makes a user namespace
//   itself and the agent has none; --unshare-user would only ask setuid installs for one too.)
// - a pid namespace: the agent sees and signals its own processes only, and when grove KILLs the
//   session's process group the namespace's init dies with it, taking every process inside, those
//   that left the group (setsid) included. Its processes keep grove's process group as seen from
//   outside, so a TERM to the group still reaches the agent itself.
// - an IPC namespace: no System V shared memory or semaphores of other processes (POSIX shared
//   memory is /dev/shm, fresh in bwrap's /dev).
// - the network is unshared when bwrapArgv is given a `net` plan (net.ts); check.ts does not: a
//   network namespace needs nothing more than the others.
export const NAMESPACE_ARGS = ['--unshare-pid', '--unshare-ipc', '--cap-drop', 'ALL'] as const;

type Mount = { path: string; args: string[]; rank: number };

function depth(p: string): number {
  return p.split(path.sep).filter(Boolean).length;
}

// The argv that runs `command` confined by `policy` (bwrap's path first).
// Mounts apply in order and a later one wins, so they go from the shallowest path to the
// deepest: the most specific rule wins (a read-only config inside writable git data, a denied
// file inside the worktree, a TMPDIR inside a hidden folder). On one path, hidden beats
// read-only beats writable.
// No --die-with-parent: a session outlives a daemon restart (DESIGN §5). No --new-session: the
// agent stays in the session's process group that grove signals; the session has no controlling
// terminal to inject input into (it is started in a session of its own, stdin closed).
// With `net`, the network is the session's own (net.ts): its proxy's sockets bound read-only,
// and `command` started by the launcher once the listeners inside are up.
export function bwrapArgv(bwrap: string, policy: SandboxPolicy, command: string[], net?: { plan: NetPlan; socat: string }): string[] {
  const mounts: Mount[] = [
    ...policy.scratch.map((s) => ({ path: s.path, args: ['--bind', s.source, s.path], rank: -1 })),
    ...policy.writable.map((p) => ({ path: p, args: ['--bind', p, p], rank: 0 })),
    ...policy.readOnly.map((p) => ({ path: p, args: ['--ro-bind', p, p], rank: 1 })),
    ...policy.hidden.map((h) => ({
      path: h.path,
      args: h.kind === 'dir' ? ['--tmpfs', h.path] : ['--ro-bind', '/dev/null', h.path],
      rank: 2,
    })),
    ...(net ? [{ path: net.plan.dir, args: ['--ro-bind', net.plan.dir, net.plan.dir], rank: 1 }] : []),
  ];
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  return [
    bwrap,
    ...NAMESPACE_ARGS,
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    ...mounts.flatMap((m) => m.args),
    ...(net ? netBwrapArgs(net.plan) : []),
    '--setenv', 'TMPDIR', policy.tmpdir,
    '--chdir', policy.worktree,
    '--',
    ...(net ? netLauncher(net.plan, net.socat, command) : command),
  ];
}
