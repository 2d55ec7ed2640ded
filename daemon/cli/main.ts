// `grove <command>`: the daemon's API from a terminal or a script, over the unix socket. This file
// parses argv and dispatches; each family of commands is in commands/.
import { parseArgs } from 'node:util';
import { ApiProblem } from '../client/problem.ts';
import { DaemonUnreachable } from '../client/transport.ts';
import { PLUMBING } from './commands/plumbing.ts';
import { COMMANDS, loadCommand } from './command-table.ts';
import { connect, endpoint, remoteUnreachable } from './connect.ts';
import type { TeamView } from './ctx.ts';
import { CliError, EXIT } from './errors.ts';
import { teamView } from './lookup.ts';
import { usage, USAGE } from './usage.ts';

const OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  base: { type: 'string' },
  branch: { type: 'string' },
  'no-wait': { type: 'boolean' },
  force: { type: 'boolean' },
  agent: { type: 'string' },
  prompt: { type: 'string' },
  mode: { type: 'string' },
  timeout: { type: 'string' },
  conversation: { type: 'string' },
  message: { type: 'string', short: 'm' },
  squash: { type: 'boolean' },
  ff: { type: 'boolean' },
  remote: { type: 'string' },
  project: { type: 'string' },
  task: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  help: { type: 'boolean', short: 'h' },
  'dry-run': { type: 'boolean' },
  progress: { type: 'boolean' },
  platform: { type: 'string' },
  'read-only': { type: 'boolean' },
  remember: { type: 'string' },
  answer: { type: 'string' },
  all: { type: 'boolean' },
  session: { type: 'string' },
  resume: { type: 'string' },
  'acp-mode': { type: 'string' },
  repository: { type: 'string' },
  host: { type: 'string' },
  after: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  strategy: { type: 'string' },
  fix: { type: 'boolean' },
  sandbox: { type: 'string' },
  terminal: { type: 'boolean' },
  dir: { type: 'string' },
  record: { type: 'string' },
  allow: { type: 'string', multiple: true },
  refuse: { type: 'string', multiple: true },
  ask: { type: 'boolean' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  at: { type: 'string' },
  'task-name': { type: 'string' },
  precheck: { type: 'string' },
  land: { type: 'string' },
  overlap: { type: 'string' },
  missed: { type: 'string' },
  grace: { type: 'string' },
  paused: { type: 'boolean' },
  label: { type: 'string' },
  repo: { type: 'string' },
  every: { type: 'string' },
  issue: { type: 'string' },
  title: { type: 'string' },
  'fix-tries': { type: 'string' },
  socket: { type: 'string' },
  output: { type: 'string' },
  cols: { type: 'string' },
  rows: { type: 'string' },
} as const;

// Commands of this machine alone: the daemon and its service, hosts.json, and the bridges grove
// runs for its own sessions (they reach the daemon that ran them, whatever GROVE_HOST that daemon
// inherited). GROVE_HOST is not theirs, and `--host` before them is a usage error.
const LOCAL = new Set(['daemon', 'install', 'uninstall', 'doctor', 'host add', 'host rm', 'approval-mcp', 'acp-bridge', 'codex-bridge', 'sandbox-net', 'pty-hold']);
// Commands that would act on this machine for another's daemon: refused under --host or GROVE_HOST.
const HERE_ONLY: Record<string, string> = {
  takeover: "runs the agent in this terminal, but the session's worktree is on that machine: run it there (ssh -t <box> grove takeover <session>)",
  open: "opens the dashboard at the daemon's TCP address, which is that machine's loopback: run `grove open` there, or use this machine's dashboard",
};

// `--host NAME|URL` before the command (as docker's -H) is the CLI's own: taken out of argv here.
// After the command it is a command's option (`task new --host`, `mcp --host`).
function globalHost(args: string[]): { host: string | null; args: string[] } {
  let tokens;
  try {
    tokens = parseArgs({ args, allowPositionals: true, options: OPTIONS, tokens: true }).tokens;
  } catch (err) {
    usage((err as Error).message);
  }
  const first = tokens.find((t) => t.kind === 'positional')?.index ?? args.length;
  const hosts = tokens.filter((t) => t.kind === 'option' && t.name === 'host' && t.index < first);
  if (hosts.length === 0) return { host: null, args };
  if (hosts.length > 1) usage('--host is given twice');
  const h = hosts[0]! as { index: number; value?: string; inlineValue?: boolean };
  if (!h.value) usage('--host needs a saved host name or an ssh:// URL');
  return { host: h.value, args: args.filter((_, i) => i !== h.index && (h.inlineValue || i !== h.index + 1)) };
}

// The host a command runs against: `--host` before it, else its own --host (mcp), else GROVE_HOST.
function hostOf(name: string, flag: string | null, values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): string | null {
  const after = typeof values.host === 'string' ? values.host : null;
  if (after !== null && name !== 'task new' && name !== 'mcp') usage(`--host goes before the command: grove --host ${after} ${name} …`);
  if (LOCAL.has(name)) {
    if (flag !== null) usage(`grove ${name} runs on this machine only: --host does not apply to it`);
    return null;
  }
  // What ssh asks a remote for (daemon/client/ssh.ts): its own socket, whatever GROVE_HOST says there.
  if (name === 'socket') return flag;
  const host = flag ?? (name === 'mcp' ? after : null) ?? (env.GROVE_HOST || null);
  if (host !== null && HERE_ONLY[name]) usage(`grove ${name} with a host (${host}) ${HERE_ONLY[name]}`);
  return host;
}

async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const rest = dash === -1 ? [] : argv.slice(dash + 1);
  const global = globalHost(dash === -1 ? argv : argv.slice(0, dash));
  let parsed;
  try {
    parsed = parseArgs({ args: global.args, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    usage((err as Error).message);
  }
  const words = parsed.positionals;
  if (parsed.values.help || words.length === 0) {
    process.stdout.write(USAGE + '\n');
    return words.length === 0 && !parsed.values.help ? EXIT.USAGE : EXIT.OK;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const plumbing = PLUMBING[words[0]!];
  const two = `${words[0]} ${words[1] ?? ''}`.trim();
  const name = plumbing ? words[0]! : COMMANDS.has(two) ? two : COMMANDS.has(words[0]!) ? words[0]! : null;
  if (!name) usage(`unknown command: ${words.join(' ')}`);
  const at = await endpoint(process.env, hostOf(name, global.host, values, process.env));
  const reconnect = () => connect(at);
  if (plumbing) return plumbing({ values, rest, connect: reconnect }, name);

  const command = await loadCommand(name);
  const api = reconnect();
  try {
    let team: Promise<TeamView> | undefined;
    await command({
      api,
      connect: reconnect,
      endpoint: at,
      team: () => (team ??= teamView(api)),
      json: parsed.values.json === true,
      positionals: words.slice(name.split(' ').length),
      values,
      rest,
      out: (s) => process.stdout.write(s + '\n'),
    });
    return Number(process.exitCode ?? EXIT.OK);
  } catch (err) {
    throw remoteUnreachable(err, at);
  } finally {
    await api.close();
  }
}

// A failure as the CLI reports it: the API's refusals exit 1 (with the problem on stdout under
// --json), a daemon that does not answer exits 3, usage errors 2.
function report(err: unknown): number {
  const json = process.argv.includes('--json');
  if (err instanceof ApiProblem) {
    if (json && err.json) process.stdout.write(JSON.stringify(err.json) + '\n');
    process.stderr.write(`grove: ${err.message}\n`);
    return EXIT.API;
  }
  if (err instanceof DaemonUnreachable) {
    process.stderr.write(`grove: ${err.message}\n`);
    return EXIT.NO_DAEMON;
  }
  if (err instanceof CliError) {
    if (json && err.problem) process.stdout.write(JSON.stringify(err.problem) + '\n');
    process.stderr.write(`grove: ${err.message}\n`);
    return err.exitCode;
  }
  process.stderr.write(`grove: ${(err as Error).stack ?? err}\n`);
  return EXIT.API;
}

// A reader that stops early (`grove … | head`) closes the pipe: that ends the command quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.OK);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = report(err);
  },
);
