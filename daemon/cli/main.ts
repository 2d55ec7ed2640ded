// `grove <command>`: the daemon's API from a terminal or a script, over the unix socket. This file
// parses argv and dispatches; each family of commands is in commands/.
import { parseArgs } from 'node:util';
import { ApiProblem } from '../client/problem.ts';
import { DaemonUnreachable } from '../client/transport.ts';
import { commands as approvals } from './commands/approvals.ts';
import { commands as events } from './commands/events.ts';
import { commands as host } from './commands/host.ts';
import { PLUMBING } from './commands/plumbing.ts';
import { commands as project } from './commands/project.ts';
import { commands as review } from './commands/review.ts';
import { commands as service } from './commands/service.ts';
import { commands as session } from './commands/session.ts';
import { commands as status } from './commands/status.ts';
import { commands as task } from './commands/task.ts';
import { connect } from './connect.ts';
import type { Command, TeamView } from './ctx.ts';
import { CliError, EXIT } from './errors.ts';
import { teamView } from './lookup.ts';
import { usage, USAGE } from './usage.ts';

// The command table: words → handler.
const COMMANDS: Record<string, Command> = { ...status, ...project, ...task, ...session, ...service, ...approvals, ...review, ...events, ...host };

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
} as const;

async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const rest = dash === -1 ? [] : argv.slice(dash + 1);
  const own = dash === -1 ? argv : argv.slice(0, dash);
  let parsed;
  try {
    parsed = parseArgs({ args: own, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    usage((err as Error).message);
  }
  const words = parsed.positionals;
  if (parsed.values.help || words.length === 0) {
    process.stdout.write(USAGE + '\n');
    return words.length === 0 && !parsed.values.help ? EXIT.USAGE : EXIT.OK;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const reconnect = () => connect(process.env);
  const plumbing = PLUMBING[words[0]!];
  if (plumbing) return plumbing({ values, rest, connect: reconnect }, words[0]!);

  const two = `${words[0]} ${words[1] ?? ''}`.trim();
  const name = COMMANDS[two] ? two : COMMANDS[words[0]!] ? words[0]! : null;
  if (!name) usage(`unknown command: ${words.join(' ')}`);
  const api = reconnect();
  try {
    let team: Promise<TeamView> | undefined;
    await COMMANDS[name]!({
      api,
      connect: reconnect,
      team: () => (team ??= teamView(api)),
      json: parsed.values.json === true,
      positionals: words.slice(name.split(' ').length),
      values,
      rest,
      out: (s) => process.stdout.write(s + '\n'),
    });
    return Number(process.exitCode ?? EXIT.OK);
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
