// The network of a confined session (DESIGN §18): bwrap unshares it, and inside the new namespace
// socat listens on loopback and pipes each connection to a unix socket of the session's proxy,
// which runs outside the sandbox in the session's process group (`grove sandbox-net`), so that
// the rules outlive a daemon restart as the agent does.
// node:child_process, not execa: the command inherits the session's stdio and signals and runs
// as long as the session.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { exitCodeOf } from '../proc/exit.ts';
import { formatEntry, type NetEntry } from './allow.ts';
import { createNetProxy, netSockets, type LoopbackForward, type NetRecord, type NetTarget } from './proxy.ts';

// The in-namespace port of the proxy when no loopback entry takes it (squid's, known to clients).
const PROXY_PORT = 3128;

// The fds the launcher inside is given: 3, socat's log (its "listening on" lines tell the
// runner outside each listener is up); 4, the runner's "go" once they all are.
const LOG_FD = 3;
const GO_FD = 4;

export interface NetPlan {
  dir: string;
  /** the proxy's port on 127.0.0.1 inside the namespace */
  proxyPort: number;
  proxySocket: string;
  forwards: LoopbackForward[];
}

// Where everything listens, inside and out, for a session whose proxy sockets are in `dir`.
export function netPlan(dir: string, allow: readonly NetEntry[]): NetPlan {
  const s = netSockets(dir, allow);
  let proxyPort = PROXY_PORT;
  while (s.forwards.some((f) => f.bind === '127.0.0.1' && f.port === proxyPort)) proxyPort++;
  return { dir, proxyPort, proxySocket: s.proxy, forwards: s.forwards };
}

// Loopback, as the clients that read NO_PROXY spell it (curl, Node's fetch, git, Python, Go).
const LOOPBACK = 'localhost,127.0.0.1,::1,[::1],127.0.0.0/8';

// The variables a confined agent gets: every proxy variable names the in-namespace proxy, Node's
// fetch reads them (NODE_USE_ENV_PROXY), and NO_PROXY is loopback (the agent's own, replacing any
// it had): a server the agent starts inside listens on the namespace's loopback, where the proxy
// outside cannot reach it, and an allowed loopback entry listens there on its own number.
export function netEnv(plan: NetPlan): Record<string, string> {
  const url = `http://127.0.0.1:${plan.proxyPort}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, ALL_PROXY: url, http_proxy: url, https_proxy: url, all_proxy: url, NO_PROXY: LOOPBACK, no_proxy: LOOPBACK, NODE_USE_ENV_PROXY: '1' };
}

// bwrap's options for the network: a namespace of its own (bwrap brings up `lo`) and the variables.
export function netBwrapArgs(plan: NetPlan): string[] {
  return [
    '--unshare-net',
    ...Object.entries(netEnv(plan)).flatMap(([k, v]) => ['--setenv', k, v]),
  ];
}

// socat's buffer per direction: its default (8 KiB) halves the rate of a download through the
// sandbox; this size reads what a loopback socket holds in one call.
const SOCAT_BUFFER = 256 * 1024;

// Characters socat reads as its own syntax inside an address, or a shell word would split on.
const UNSAFE_PATH = /[\s,:!"'\\(){}[\]$`]/;

function sq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

// The command run inside the sandbox: a shell that starts one socat per listener (the proxy's
// port, each loopback entry on its own number), waits for the runner's "go" (given once every
// listener logged that it listens: an event, not a poll), runs `command` in the foreground (its
// signals as they would be), then ends the socats and exits with its status. The shell stays:
// bwrap's init waits for every process of the namespace, so listeners left behind would keep
// the sandbox, and the runner with it, alive after the agent.
export function netLauncher(plan: NetPlan, socat: string, command: string[]): string[] {
  const listeners = [{ bind: '127.0.0.1', port: plan.proxyPort, socket: plan.proxySocket }, ...plan.forwards];
  const lines = listeners.map((l) => {
    if (UNSAFE_PATH.test(l.socket)) throw new Error(`the sandbox's socket path has a character socat or sh would misread: ${l.socket}`);
    const listen = l.bind.includes(':') ? `TCP6-LISTEN:${l.port},bind=[${l.bind}]` : `TCP4-LISTEN:${l.port},bind=${l.bind}`;
    return `${sq(socat)} -d -d -b ${SOCAT_BUFFER} ${listen},fork,reuseaddr UNIX-CONNECT:${l.socket} </dev/null >/dev/null 2>&${LOG_FD} ${GO_FD}<&- & socats="$socats $!"`;
  });
  const script = [
    'socats=',
    ...lines,
    `exec ${LOG_FD}>&-`,
    `IFS= read -r go <&${GO_FD} && [ "$go" = go ] || { kill $socats; echo "grove: the sandbox's network did not start" >&2; exit 126; }`,
    `exec ${GO_FD}<&-`,
    '"$@"',
    'status=$?',
    'kill $socats',
    'exit $status',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'grove-net', ...command];
}

// How many "listening on" lines the runner waits for before its "go".
export function listenerCount(plan: NetPlan): number {
  return 1 + plan.forwards.length;
}

export interface RunNetOptions {
  dir: string;
  allow: readonly NetEntry[];
  /** refused without asking (an agent's telemetry), recorded as any refusal */
  refuse?: readonly NetEntry[];
  /** the file each refused connection is appended to, a JSON line (netRecordLine) */
  record: string;
  ask?: (t: NetTarget) => Promise<boolean>;
  /** bwrap's argv around netLauncher's command */
  command: string[];
}

// A refused connection as the daemon reads it from the record file: one JSON line.
export function netRecordLine(r: NetRecord, at: Date): string {
  return JSON.stringify({ ...r, at: at.toISOString() }) + '\n';
}

// `grove sandbox-net`: the session's proxy, then `command` (stdio inherited, in this process
// group) once every listener inside is up; TERM, HUP and INT sent to this process alone are
// passed on. Answers the command's exit status (a signal: 128 + its number) once it ended and
// the proxy stopped. Nothing here depends on the daemon: it may restart meanwhile.
export async function runSandboxNet(opts: RunNetOptions): Promise<number> {
  const plan = netPlan(opts.dir, opts.allow);
  // The handlers come first: a signal before the command runs is kept and given to it once it
  // does (the default action would end this process and leave the command behind).
  let child: ChildProcess | null = null;
  const early: NodeJS.Signals[] = [];
  const pass = (signal: NodeJS.Signals) => () => void (child ? child.kill(signal) : early.push(signal));
  const handlers: Array<[NodeJS.Signals, () => void]> = (['SIGTERM', 'SIGHUP', 'SIGINT'] as const).map((s) => [s, pass(s)]);
  for (const [s, h] of handlers) process.on(s, h);
  const proxy = createNetProxy({
    dir: opts.dir,
    allow: opts.allow,
    refuse: opts.refuse,
    ask: opts.ask,
    record: (r) => appendFileSync(opts.record, netRecordLine(r, new Date())),
  });
  try {
    await proxy.ready;
    const started = spawn(opts.command[0]!, opts.command.slice(1), { stdio: ['inherit', 'inherit', 'inherit', 'pipe', 'pipe'] });
    child = started;
    const log = started.stdio[LOG_FD] as NodeJS.ReadableStream;
    const go = started.stdio[GO_FD] as NodeJS.WritableStream & { destroy(): void };
    go.on('error', () => {}); // the command ended before its go
    let waiting = listenerCount(plan);
    let rest = '';
    log.setEncoding('utf8');
    // socat's log is read to its end (a full pipe would stop socat); only the first lines count.
    log.on('data', (chunk: string) => {
      if (waiting <= 0) return;
      rest += chunk;
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (/ E /.test(line)) {
          process.stderr.write(`grove: ${line}\n`);
          waiting = 0;
          go.end();
          return;
        }
        if (line.includes(' listening on ') && --waiting === 0) go.end('go\n');
      }
    });
    log.on('end', () => {
      if (waiting > 0) go.end(); // every socat gone before listening: the launcher refuses to start
    });
    for (const signal of early) started.kill(signal);
    return await new Promise<number>((resolve, reject) => {
      started.once('error', reject);
      started.once('exit', (code, signal) => resolve(exitCodeOf(code, signal)));
    });
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
    await proxy.close();
  }
}

export interface ConfinedNetArgv {
  /** how to run grove's CLI: [node, bin/grove.js] */
  grove: string[];
  dir: string;
  record: string;
  allow: readonly NetEntry[];
  refuse?: readonly NetEntry[];
  /** read/edit: blocked hosts are asked about through this session's approvals */
  askSession?: string;
}

// The runner's part of a confined session's command line: `grove sandbox-net … --`, followed by
// bwrap's argv (bwrapArgv with `net`).
export function sandboxNetArgv(o: ConfinedNetArgv): string[] {
  return [
    ...o.grove,
    'sandbox-net',
    '--dir', o.dir,
    '--record', o.record,
    ...(o.askSession !== undefined ? ['--session', o.askSession, '--ask'] : []),
    ...o.allow.flatMap((e) => ['--allow', formatEntry(e)]),
    ...(o.refuse ?? []).flatMap((e) => ['--refuse', formatEntry(e)]),
    '--',
  ];
}
