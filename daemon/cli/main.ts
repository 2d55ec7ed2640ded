// `grove <command>`: the daemon's API from a terminal or a script, over the unix socket.
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EVENT_PAGE_MAX, type EventPage, type GroveEvent } from '../../schemas/event.ts';
import type { Approval, ApprovalDecision } from '../../schemas/approval.ts';
import type { Health } from '../../schemas/health.ts';
import type { Host, TeamHost } from '../../schemas/host.ts';
import type { OutputLine } from '../../schemas/output.ts';
import type { ProjectPool } from '../../schemas/pool.ts';
import type { Project } from '../../schemas/project.ts';
import type { Changes, CommitResult, ConflictList, MergeBody, MergeResult, PushResult } from '../../schemas/review.ts';
import { isLive, OUTPUT_PAGE_MAX, type AgentList, type KillResult, type OutputPage, type Service, type Session } from '../../schemas/session.ts';
import type { CreateTask, Task, TaskSetup } from '../../schemas/task.ts';
import { deniedCount, denialSummary, describeDenial } from '../../schemas/denials.ts';
import { resolvePaths } from '../runtime/paths.ts';
import { CliError, createClient, EXIT, sse, type Client } from './client.ts';
import { duration, shortId, table } from './format.ts';
import { runTakeover } from './takeover.ts';

const USAGE = `usage: grove <command> [options]

  daemon                                   run the daemon in the foreground
  status                                   daemon pid, version, uptime, socket, counts
  project add <path> [--name N]            add a git repository
  project ls                               list projects
  project rm <id|name>                     remove a project (its repository is untouched)
  task new <project> <name> [--base R] [--branch B] [--no-wait] [--progress]
                                           (setup progress is shown on a terminal, or with --progress)
  task new --repository URL <name> [--host H] [--base R] [--branch B] [--no-wait]
                                           on a team: on the online host with that repository and
                                           the fewest running sessions, or on host H
  task ls [<project>]                      list tasks
  task show <id>                           a task and its setup log
  task rm <id> [--force]                   archive a task (worktree removed, branch kept)
  session start <task> [--agent A] [--mode read|edit|full] [--prompt P] [--timeout S] [-- args…]
  session ls <task> [--conversation C]     a task's sessions: conversation, mode, status, result
  session show <id>                        one session: its status, result and the calls its agent denied
  service ls <task>                        the services of its .grove.json and their sessions
  service start|stop <task> <name>         start a service (a session of kind service), or stop it
  say <session> <prompt>|--prompt=P [--mode M] [--timeout S] [-- args…]
                                           continue a session's conversation (followed on a terminal, or with -f)
  session kill <id>                        kill a session's process group
  takeover <session> [-- args…]            resume its conversation in this terminal, interactively (grove say continues after it)
  logs <session> [-f]                      a session's output; -f follows it to its end, with the approvals it waits for
  approvals [--task T] [--all]             what agents ask the person (pending ones; --all: every one)
  approve <id> [--remember session|project] [--answer TEXT]
                                           allow it (a question: answered with --answer)
  deny <id> [-m why]                       deny it, telling the agent why
  changes <task>                           what the task changed: committed, uncommitted, untracked
  diff <task> [path]                       its diff against the merge-base (paged and coloured on a terminal)
  commit <task> -m <message>               commit everything uncommitted in its worktree
  rebase <task>                            its branch onto its base's tip
  merge <task> [--squash|--ff] [-m <msg>]  its branch into its base branch
  push <task> [--remote R]                 its branch, with upstream set
  conflicts <project>                      which live tasks would conflict, with each other or their base
  pool <project>                           its warm pool: the tasks prepared ahead (.grove.json pool)
  events [--project P] [--task T]          every change as it happens (the last 10, then live)
  watch                                    a live table of tasks and sessions; Ctrl-C leaves
  open                                     the dashboard in the default browser ($BROWSER if set)
  mcp [--read-only]                        an MCP server on stdio for agents (claude mcp add grove -- grove mcp)
  approval-mcp --session ID                Claude Code's permission prompt tool for a session (grove passes it)
  acp-bridge --session ID [--resume A] [--acp-mode M] [--prompt=P] -- agent…
                                           run an ACP agent's turn, asking through grove (grove runs it)
  codex-bridge --session ID --mode M --prompt=TEXT [--resume THREAD] -- codex app-server …
                                           one turn of Codex that asks through grove (grove runs it)
  agents                                   agents and whether they are installed
  host ls                                  the hosts of the store: online, version, running sessions, last seen
  install [--dry-run]                      install the user service (systemd --user / launchd)
  uninstall [--dry-run]                    remove it

  --json   machine-readable output        ids may be given by a unique prefix
  A project is named by id, name, or NAME@HOST on a team: a bare NAME is this host's project of
  that name, or the only one of that name on the team. Lists on a team have a HOST column.
exit: 0 ok, 1 API error, 2 usage error, 3 daemon not running`;

function usage(msg: string): never {
  throw new CliError(`${msg}\n\n${USAGE}`, EXIT.USAGE);
}

interface Ctx {
  api: Client;
  /** the store's hosts as this daemon sees them, asked once per command */
  team: () => Promise<TeamView>;
  json: boolean;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  rest: string[];
  out: (s: string) => void;
}

// One entity out of a list by unique id prefix (or exact name, where names exist).
function pick<T extends { id: string; name?: string }>(list: T[], key: string, what: string): T {
  const exact = list.filter((x) => x.id === key || (x.name !== undefined && x.name === key));
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) throw new CliError(`${what} ${JSON.stringify(key)} is ambiguous: ${exact.map((x) => shortId(x.id)).join(', ')}; give an id`, EXIT.USAGE);
  const byPrefix = list.filter((x) => x.id.startsWith(key.toLowerCase()));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw new CliError(`${what} ${JSON.stringify(key)} is ambiguous: ${byPrefix.map((x) => shortId(x.id)).join(', ')}`, EXIT.USAGE);
  throw new CliError(`no ${what} matches ${JSON.stringify(key)}`, EXIT.API, { code: 'NOT_FOUND', detail: `no ${what} ${key}`, status: 404 });
}

// What the CLI knows of the store's hosts (DESIGN §14.2): whether it is shared (lists then carry
// every host's rows, shown with a HOST column), which host this daemon is, and each host's name.
interface TeamView {
  shared: boolean;
  me: string;
  hosts: Host[];
  nameOf: (hostId: string) => string;
}

async function teamView(api: Client): Promise<TeamView> {
  const [health, hosts] = await Promise.all([api.call<Health>('GET', '/api/health'), api.call<Host[]>('GET', '/api/hosts')]);
  const names = new Map(hosts.filter((h) => h.kind === 'team').map((h) => [h.id, h.name]));
  return { shared: health.shared, me: health.host_id, hosts, nameOf: (id) => names.get(id) ?? shortId(id) };
}

// On a shared store, rows with the name of their host and a last column HOST (last: the columns
// of one host keep their places); as they are on a store of one host.
async function withHost<T extends { host_id: string }>(c: Ctx, rows: T[], columns: string[]): Promise<[Array<T & { host?: string }>, string[]]> {
  const team = await c.team();
  if (!team.shared) return [rows, columns];
  return [rows.map((r) => ({ ...r, host: team.nameOf(r.host_id) })), [...columns, 'host']];
}

function hostNamed(team: TeamView, name: string): string {
  const h = team.hosts.find((x): x is TeamHost => x.kind === 'team' && x.name === name);
  if (!h) throw new CliError(`no host named ${JSON.stringify(name)}`, EXIT.API, { code: 'NOT_FOUND', detail: `no host ${name}`, status: 404 });
  return h.id;
}

// A project named on the command line: an id (or a unique prefix of one), a name, or NAME@HOST
// (or `onHost`, from --host). A name that projects of several hosts carry is this host's project
// (the folder here, as before teams), else it must be given with its host.
async function project(c: Ctx, key: string, onHost?: string): Promise<Project> {
  const list = await c.api.call<Project[]>('GET', '/api/projects');
  let name = key;
  let hostName = onHost;
  const at = key.lastIndexOf('@');
  // A name with an @ of its own stays a name.
  if (hostName === undefined && at > 0 && !list.some((p) => p.name === key)) [name, hostName] = [key.slice(0, at), key.slice(at + 1)];
  if (hostName !== undefined) {
    const hostId = hostNamed(await c.team(), hostName);
    return pick(list.filter((p) => p.host_id === hostId), name, `project on host ${hostName}`);
  }
  return (await thisHosts(c, list, key, 'project')) ?? pick(list, key, 'project');
}

// Of the rows named `key` on several hosts, the one on this daemon's host; else null (pick then
// says the name is ambiguous) or, where no row of that name is here, which host each is on.
async function thisHosts<T extends { id: string; name: string; host_id: string }>(c: Ctx, list: T[], key: string, what: 'project' | 'task'): Promise<T | null> {
  const named = list.filter((x) => x.name === key);
  if (named.length < 2 || named.every((x) => x.host_id === named[0]!.host_id)) return null;
  const team = await c.team();
  const mine = named.filter((x) => x.host_id === team.me);
  if (mine.length === 1) return mine[0]!;
  if (mine.length > 1) return null;
  // A project can be named NAME@HOST; a task by its id.
  const choices = named.map((x) => (what === 'project' ? `${x.name}@${team.nameOf(x.host_id)}` : `${shortId(x.id)} (on ${team.nameOf(x.host_id)})`)).join(', ');
  throw new CliError(`${what} ${JSON.stringify(key)} is on several hosts and not on this one: give one of ${choices}`, EXIT.USAGE);
}
async function task(c: Ctx, key: string): Promise<Task> {
  const list = await c.api.call<Task[]>('GET', '/api/tasks');
  return (await thisHosts(c, list, key, 'task')) ?? pick(list, key, 'task');
}
async function session(c: Ctx, key: string) {
  const tasks = await c.api.call<Task[]>('GET', '/api/tasks');
  const all = (await Promise.all(tasks.map((t) => c.api.call<Session[]>('GET', `/api/tasks/${t.id}/sessions`)))).flat();
  return pick(all, key, 'session');
}

function arg(c: Ctx, i: number, name: string): string {
  const v = c.positionals[i];
  if (v === undefined) usage(`missing <${name}>`);
  return v;
}

function print(c: Ctx, data: unknown, human: () => string): void {
  c.out(c.json ? JSON.stringify(data, null, 2) : human());
}

// POST /api/tasks: in a named project, or placed by repository on a team (DESIGN §14.2).
type NewTask = CreateTask | (Omit<CreateTask, 'project_id'> & { repository: string; host?: string });

const TASK_COLS = ['id', 'name', 'status', 'branch', 'ports'];
const HOST_COLS = ['name', 'online', 'version', 'running', 'seen'];
const SESSION_COLS = ['id', 'conversation', 'agent', 'mode', 'status', 'exit_code', 'result', 'created_at'];
const SERVICE_COLS = ['name', 'status', 'pid', 'session', 'autostart', 'command'];

// A service as a table row: its latest session's status, or `stopped`.
function serviceRow(s: Service): Record<string, unknown> {
  const live = s.session !== null && isLive(s.session.status) ? s.session : null;
  return { ...s, status: s.session ? s.session.status : 'never started', pid: live ? live.pid : null, session: s.session ? shortId(s.session.id) : null };
}

// A session as a table row: short ids, and its result (or why it waits) in a few words; calls its
// agent denied come first, so such a turn never reads as a plain success (DESIGN §15).
function sessionRow(s: Session): Record<string, unknown> {
  const r = s.result;
  const words = r ? [denialSummary(r.denials, 40) ?? '', r.is_error ? 'error:' : '', (r.text ?? '').replace(/\s+/g, ' ').slice(0, 40), r.cost_usd !== null ? `$${r.cost_usd.toFixed(4)}` : ''] : [];
  if (s.limit_resets_at) words.push(`limit until ${s.limit_resets_at}`);
  if (s.status === 'queued' && s.not_before) words.push(`not before ${s.not_before}`);
  if (s.timed_out) words.push('timed out');
  if (s.kind === 'interactive') words.push('taken over in a terminal (no output captured)');
  return { ...s, id: shortId(s.id), agent: who(s), conversation: shortId(s.conversation_id), result: words.filter(Boolean).join(' ') || null };
}
// Who a session is: the agent's name, after its kind where it is not a plain agent turn
// ("service web", "interactive claude").
const who = (s: Pick<Session, 'kind' | 'agent'>) => (s.kind === 'agent' ? s.agent : `${s.kind} ${s.agent}`);
const short = <T extends { id: string }>(rows: T[]) => rows.map((r) => ({ ...r, id: shortId(r.id) }));

// A host as a row of `grove host ls`, by its kind: the team's daemons on the store (DESIGN §14.2);
// SSH hosts (§14.1) get their own case. A kind this CLI does not know shows its name only.
function hostRow(h: Host, now = Date.now()): Record<string, unknown> {
  switch (h.kind) {
    case 'team':
      return { name: h.name, online: h.online ? 'yes' : 'no', version: h.version, running: h.running, seen: `${duration(h.seen_at, now)} ago` };
    default:
      return { name: (h as { name?: string }).name };
  }
}

const APPROVAL_COLS = ['id', 'session', 'status', 'tool', 'asks', 'created_at'];
// What an approval asks, in one line: the command, the file, the URL, the question (the whole
// input is in --json and on the dashboard).
function approvalRow(a: Approval): Record<string, unknown> {
  const input = (a.input ?? {}) as Record<string, unknown>;
  const first = ['command', 'file_path', 'notebook_path', 'url', 'question', 'path', 'pattern'].map((k) => input[k]).find((v) => typeof v === 'string') as string | undefined;
  const asks = (first ?? JSON.stringify(a.input)).replace(/\s+/g, ' ');
  return { ...a, id: shortId(a.id), session: shortId(a.session_id), asks: asks.length > 60 ? `${asks.slice(0, 59)}…` : asks };
}

// `approve` and `deny`: the approval by id prefix, decided with the nonce it has now.
async function decideApproval(c: Ctx, body: Omit<ApprovalDecision, 'nonce'>): Promise<void> {
  const a = pick(await c.api.call<Approval[]>('GET', '/api/approvals'), arg(c, 0, 'id'), 'approval');
  const decided = await c.api.call<Approval>('POST', `/api/approvals/${a.id}`, { ...body, nonce: a.nonce });
  print(c, decided, () => `approval ${shortId(decided.id)} (${decided.tool}) ${decided.status}${decided.remember ? `; remembered for the ${decided.remember}` : ''}`);
}

// What `session start` and `say` take besides the prompt: mode, time limit, the agent's own args.
function sessionOptions(c: Ctx): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (typeof c.values.mode === 'string') body.mode = c.values.mode;
  if (typeof c.values.timeout === 'string') {
    const n = Number(c.values.timeout);
    if (!(n > 0)) usage(`--timeout must be a number of seconds, got ${JSON.stringify(c.values.timeout)}`);
    body.timeout_s = n;
  }
  if (c.rest.length > 0) body.args = c.rest;
  return body;
}

// How a session ended, in one line: "exited (exit 0) · 1 call denied: Bash tee ran.txt".
function endLine(s: Session): string {
  const denied = denialSummary(s.result?.denials, 200);
  return `session ${s.status}${s.exit_code === null ? '' : ` (exit ${s.exit_code})`}${s.timed_out ? ' (timed out)' : ''}${denied ? ` · ${denied}` : ''}`;
}

// A pending approval as the line a follower prints: what the agent waits for, and the command
// that answers it (DESIGN §15: the person sees it where they already look).
function approvalLine(a: Approval): string {
  const input = a.input !== null && typeof a.input === 'object' && !Array.isArray(a.input) ? (a.input as Record<string, unknown>) : { input: a.input };
  return `waiting for approval ${shortId(a.id)}: ${describeDenial({ tool: a.tool, input }, 200)} — grove approve ${shortId(a.id)}`;
}

// A session's output through SSE until it ends (a queued one once it ran), with each approval it
// waits for on stderr as it is asked (or already pending); Ctrl-C ends this process, not the session.
async function followOutput(c: Ctx, s: Session): Promise<void> {
  // Pending ones at the start, then the task's approval events after the seq noted first: one
  // asked in between is in both, and printed once.
  const from = (await c.api.call<Health>('GET', '/api/health')).last_event_seq;
  const shown = new Set<string>();
  const show = (a: Approval) => {
    if (a.session_id !== s.id || a.status !== 'pending' || shown.has(a.id)) return;
    shown.add(a.id);
    process.stderr.write(`${approvalLine(a)}\n`);
  };
  for (const a of await c.api.call<Approval[]>('GET', `/api/approvals?status=pending&session_id=${s.id}`)) show(a);
  const events = (await c.api.stream(`/api/events?after=${from}&task_id=${s.task_id}`, { accept: 'text/event-stream' })) as AsyncIterable<Buffer> & { destroy(): void };
  const watching = (async () => {
    for await (const { event, data } of sse(events)) if (event === 'approval.requested') show(data.data as Approval);
  })().catch(() => {
    // The stream closed under it: the output ended, or the daemon stopped (the output says so).
  });
  try {
    const body = await c.api.stream(`/api/sessions/${s.id}/output`, { accept: 'text/event-stream' });
    for await (const { event, data } of sse(body)) {
      if (event === 'line') c.out(c.json ? JSON.stringify(data) : data.text);
      if (event === 'end') {
        if (!c.json) process.stderr.write(`${endLine(data)}\n`);
        return;
      }
    }
  } finally {
    events.destroy();
    await watching;
  }
}

// The newest `n` events (of a filter `q`) and the newest seq, read page by page.
async function lastEvents(c: Ctx, q: string, n: number): Promise<{ recent: GroveEvent[]; last: number }> {
  const recent: GroveEvent[] = [];
  let last = 0;
  for (let after = 0; ; ) {
    const page = await c.api.call<EventPage>('GET', `/api/events?after=${after}&limit=${EVENT_PAGE_MAX}${q}`);
    recent.push(...page.events);
    recent.splice(0, Math.max(0, recent.length - n));
    last = page.next;
    if (page.events.length < EVENT_PAGE_MAX) return { recent, last };
    after = page.next;
  }
}

// One event as a line: when, its seq and type, and what it is about.
function describeEvent(e: GroveEvent): string {
  // `data` is the project, task, session or approval the event is about (the schema leaves it open).
  const d: any = e.data ?? {};
  if (e.type.startsWith('host.')) return `${e.at} ${e.seq} ${e.type} host ${d.name} ${d.online ? 'online' : 'offline'}`;
  const what = e.type.startsWith('project.')
    ? `project ${d.name}`
    : e.type.startsWith('approval.')
      ? `approval ${shortId(d.id ?? '')} ${d.tool} ${d.status} (session ${shortId(d.session_id ?? '')})`
      : e.type.startsWith('task.')
        ? `task ${d.name} ${d.status}${e.type === 'task.merged' ? ` (merged as ${String(d.merged_commit).slice(0, 12)})` : ''}`
        : `session ${shortId(d.id ?? '')} ${who(d)} ${d.status}${e.type === 'session.result' ? `: ${sessionRow(d).result}` : ''}${e.type === 'session.limit' ? ` until ${d.limit_resets_at}` : ''}${e.type === 'session.waiting' ? ` waiting: ${d.waiting ?? 'no'}` : ''}`;
  return `${e.at} ${e.seq} ${e.type} ${what}`;
}

// A diff coloured as git colours it: headers bold, hunks cyan, removals red, additions green.
function colourDiff(text: string): string {
  const paint = (code: string, line: string) => `\x1b[${code}m${line}\x1b[0m`;
  return text
    .split('\n')
    .map((l) =>
      /^(diff --git|index |--- |\+\+\+ |rename |similarity |new file|deleted file)/.test(l)
        ? paint('1', l)
        : l.startsWith('@@')
          ? paint('36', l)
          : l.startsWith('+')
            ? paint('32', l)
            : l.startsWith('-')
              ? paint('31', l)
              : l,
    )
    .join('\n');
}

// Shows text through the user's pager (PAGER, else less), which quits at once when it fits.
async function page(text: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  const pager = spawn('sh', ['-c', process.env.PAGER || 'less'], { stdio: ['pipe', 'inherit', 'inherit'], env: { LESS: 'FRX', ...process.env } });
  pager.stdin.on('error', () => {}); // the pager was quit before it read everything
  pager.stdin.end(text);
  await new Promise((r) => pager.once('close', r));
}

// Shows a task's setup as it runs; resolves with the task once setup is over.
async function followSetup(c: Ctx, id: string, err: (s: string) => void): Promise<Task> {
  const body = await c.api.stream(`/api/tasks/${id}/setup`, { accept: 'text/event-stream' });
  for await (const { event, data } of sse(body)) {
    if (event === 'command') {
      if (data.ended_at === null) err(`$ ${data.command}`);
      else err(`  → ${data.timed_out ? 'timed out' : data.exit_code === null ? data.signal : `exit ${data.exit_code}`}`);
    } else if (event === 'line') err(`  ${data.text}`);
    else if (event === 'end') return data;
  }
  return c.api.call<Task>('GET', `/api/tasks/${id}`);
}

// The command table: words → handler.
const COMMANDS: Record<string, (c: Ctx) => Promise<void>> = {
  async status(c) {
    const h = await c.api.call<Health>('GET', '/api/health');
    const [projects, tasks] = await Promise.all([c.api.call<Project[]>('GET', '/api/projects'), c.api.call<Task[]>('GET', '/api/tasks')]);
    const live = tasks.filter((t) => t.status !== 'archived');
    const sessions = (await Promise.all(live.map((t) => c.api.call<Session[]>('GET', `/api/tasks/${t.id}/sessions`)))).flat();
    const running = sessions.filter((s) => isLive(s.status)).length;
    const data = { ...h, uptime_s: Math.floor((Date.now() - Date.parse(h.started_at)) / 1000), projects: projects.length, tasks: live.length, running_sessions: running };
    // On a team the counts are the whole team's: say so, and which host this is.
    const team = h.shared ? await c.team() : null;
    const hosts = team?.hosts.filter((x) => x.kind === 'team') ?? [];
    print(c, data, () =>
      [
        `grove ${h.version} running, pid ${h.pid}, up ${duration(h.started_at)}`,
        `socket ${h.socket}`,
        `tcp    ${h.port === null ? 'off' : `http://127.0.0.1:${h.port}`}`,
        ...(team ? [`host   ${team.nameOf(h.host_id)}, one of ${hosts.length} host(s) on a shared store, ${hosts.filter((x) => x.online).length} online`] : []),
        `${projects.length} project(s), ${live.length} task(s), ${running} running session(s)${team ? ' on all hosts' : ''}`,
      ].join('\n'),
    );
  },
  async 'project add'(c) {
    const p = await c.api.call<Project>('POST', '/api/projects', {
      path: path.resolve(arg(c, 0, 'path')),
      ...(typeof c.values.name === 'string' ? { name: c.values.name } : {}),
    });
    print(c, p, () => `added project ${p.name} (${p.id}) at ${p.path}`);
  },
  async 'project ls'(c) {
    const list = await c.api.call<Project[]>('GET', '/api/projects');
    const [rows, columns] = await withHost(c, short(list), ['id', 'name', 'path']);
    print(c, list, () => table(rows, columns));
  },
  async 'project rm'(c) {
    const p = await project(c, arg(c, 0, 'id|name'));
    await c.api.call('DELETE', `/api/projects/${p.id}`);
    print(c, { removed: p.id }, () => `removed project ${p.name}`);
  },
  async 'task new'(c) {
    const { repository, host } = c.values;
    if (repository === '') usage('--repository needs the URL of a repository');
    // With --repository the daemon picks the host (DESIGN §14.2 placement); else the project is named.
    const name = arg(c, typeof repository === 'string' ? 0 : 1, 'name'); // usage errors before any request
    const p = typeof repository === 'string' ? null : await project(c, arg(c, 0, 'project'), typeof host === 'string' ? host : undefined);
    const body: NewTask = p ? { project_id: p.id, name } : { repository: repository as string, name, ...(typeof host === 'string' ? { host } : {}) };
    if (typeof c.values.base === 'string') body.base = c.values.base;
    if (typeof c.values.branch === 'string') body.branch = c.values.branch;
    // Progress (the setup's commands and output as they run) on a terminal, or when asked.
    const progress = !c.values['no-wait'] && !c.json && (process.stderr.isTTY || c.values.progress === true);
    if (c.values['no-wait'] || progress) body.wait = false;
    let t = await c.api.call<Task>('POST', '/api/tasks', body);
    // Placed by the daemon: the project is the one on the host it chose.
    const where = p ?? (await c.api.call<Project>('GET', `/api/projects/${t.project_id}`));
    const team = await c.team();
    const on = team.shared ? ` on host ${team.nameOf(t.host_id)}` : '';
    if (progress) {
      const err = (s: string) => process.stderr.write(s + '\n');
      err(`task ${t.name}${on}: branch ${t.branch}, worktree ${path.join(where.path, t.worktree_path)}`);
      t = await followSetup(c, t.id, err);
    }
    print(c, t, () => `task ${t.name} (${t.id}) is ${t.status}${on}: branch ${t.branch}, worktree ${path.join(where.path, t.worktree_path)}`);
    if (t.status === 'setup_failed') process.exitCode = EXIT.API;
  },
  async 'task ls'(c) {
    const key = c.positionals[0];
    const q = key ? `?project_id=${(await project(c, key)).id}` : '';
    const list = await c.api.call<Task[]>('GET', `/api/tasks${q}`);
    const [rows, columns] = await withHost(c, short(list), TASK_COLS);
    print(c, list, () => table(rows, columns));
  },
  async 'task show'(c) {
    const t = await task(c, arg(c, 0, 'id'));
    const setup = await c.api.call<TaskSetup>('GET', `/api/tasks/${t.id}/setup`);
    const services = t.status === 'archived' ? [] : await c.api.call<Service[]>('GET', `/api/tasks/${t.id}/services`);
    const urls = Object.entries(t.ports).map(([declared, port]) => `  ${declared} → http://127.0.0.1:${port}`);
    print(c, { ...t, setup, services }, () =>
      [
        table([{ ...t }], ['id', ...TASK_COLS.slice(1), 'base', 'worktree_path', 'created_at']),
        ...(urls.length > 0 ? ['', 'ports:', ...urls] : []),
        ...(services.length > 0 ? ['', 'services:', ...table(services.map(serviceRow), SERVICE_COLS).split('\n').map((l) => `  ${l}`)] : []),
        '',
        'setup:',
        ...(setup.commands.length === 0 ? ['  (no setup commands)'] : setup.commands.map((x) => `  $ ${x.command}  → exit ${x.exit_code ?? x.signal}${x.timed_out ? ' (timed out)' : ''}${x.interrupted ? ' (interrupted)' : ''}`)),
        ...setup.lines.map((l) => `  ${l.stream === 'stderr' ? '!' : '|'} ${l.text}`),
      ].join('\n'),
    );
  },
  async 'task rm'(c) {
    const t = await task(c, arg(c, 0, 'id'));
    const r = await c.api.call<Task>('DELETE', `/api/tasks/${t.id}${c.values.force ? '?force=true' : ''}`);
    print(c, r, () => `archived task ${r.name}; branch ${r.branch} kept`);
  },
  async 'session start'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const body: Record<string, unknown> = {};
    if (typeof c.values.agent === 'string') body.agent = c.values.agent;
    if (typeof c.values.prompt === 'string') body.prompt = c.values.prompt;
    const s = await c.api.call<Session>('POST', `/api/tasks/${t.id}/sessions`, { ...body, ...sessionOptions(c) });
    print(c, s, () => `session ${s.id} (${s.agent}, ${s.mode}) ${s.status}, pid ${s.pid}`);
  },
  async 'session ls'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const conv = typeof c.values.conversation === 'string' ? (await session(c, c.values.conversation)).conversation_id : null;
    const list = await c.api.call<Session[]>('GET', `/api/tasks/${t.id}/sessions${conv ? `?conversation_id=${conv}` : ''}`);
    const [rows, columns] = await withHost(c, list.map((s) => ({ ...sessionRow(s), host_id: s.host_id })), SESSION_COLS);
    print(c, list, () => table(rows, columns));
  },
  async 'session show'(c) {
    const s = await c.api.call<Session>('GET', `/api/sessions/${(await session(c, arg(c, 0, 'id'))).id}`);
    const r = s.result;
    print(c, s, () =>
      [
        `session ${s.id} (${who(s)}, ${s.mode}) ${s.status}${s.exit_code === null ? '' : `, exit ${s.exit_code}`}${s.timed_out ? ', timed out' : ''}`,
        ...(s.prompt ? [`prompt: ${s.prompt}`] : []),
        ...(r ? [`result: ${r.is_error ? 'error: ' : ''}${r.text ?? '-'}${r.cost_usd !== null ? ` ($${r.cost_usd.toFixed(4)})` : ''}`] : []),
        ...(r && r.denials.length > 0 ? [`${deniedCount(r.denials.length)}:`, ...r.denials.map((d) => `  ${describeDenial(d)}`)] : []),
        ...(s.limit_resets_at ? [`usage limit until ${s.limit_resets_at}`] : []),
      ].join('\n'),
    );
  },
  async say(c) {
    const s = await session(c, arg(c, 0, 'session'));
    // A prompt that starts with `-` goes as --prompt=<text>, or it would read as an option here.
    const prompt = typeof c.values.prompt === 'string' ? c.values.prompt : arg(c, 1, 'prompt');
    const next = await c.api.call<Session>('POST', `/api/sessions/${s.id}/messages`, { prompt, ...sessionOptions(c) });
    if (c.json || !(c.values.follow || process.stdout.isTTY)) return print(c, next, () => `session ${next.id} ${next.status}`);
    process.stderr.write(`session ${shortId(next.id)} ${next.status}${next.status === 'queued' ? ' (waits for the conversation)' : ''}\n`);
    await followOutput(c, next);
  },
  // Exits with the agent's exit code.
  async takeover(c) {
    const s = await session(c, arg(c, 0, 'session'));
    const socketPath = resolvePaths(process.env, process.getuid?.() ?? 0).socketPath;
    // Written straight to fd 2, never through a TTY stream: once the terminal hangs up, node's own
    // TTY handle can abort the process before it reports the agent's end.
    const err = (line: string) => {
      try {
        writeSync(2, `${line}\n`);
      } catch {
        // the terminal is gone: the end is still reported
      }
    };
    process.exitCode = await runTakeover({ api: c.api, socketPath, session: s, args: c.rest, err });
  },
  async pool(c) {
    const p = await project(c, arg(c, 0, 'project'));
    const wp = await c.api.call<ProjectPool>('GET', `/api/projects/${p.id}/pool`);
    const rows = wp.slots.map((x) => ({ id: shortId(x.id), status: x.status, base: x.base, commit: x.base_commit.slice(0, 10), age: duration(x.created_at) }));
    print(c, wp, () =>
      wp.size === 0 && rows.length === 0
        ? `project ${p.name} has no warm pool (.grove.json: "pool": {"size": N})`
        : [`project ${p.name}: pool of ${wp.size}${wp.ttl_s === null ? '' : `, ttl ${wp.ttl_s} s`}`, table(rows, ['id', 'status', 'base', 'commit', 'age'])].join('\n'),
    );
  },
  async 'service ls'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const list = await c.api.call<Service[]>('GET', `/api/tasks/${t.id}/services`);
    print(c, list, () => table(list.map(serviceRow), SERVICE_COLS));
  },
  async 'service start'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const s = await c.api.call<Session>('POST', `/api/tasks/${t.id}/services/${encodeURIComponent(arg(c, 1, 'service'))}`);
    const ports = Object.values(t.ports);
    print(c, s, () => `service ${s.agent} ${s.status}, pid ${s.pid}, session ${shortId(s.id)}${ports.length > 0 ? `; ${ports.map((p) => `http://127.0.0.1:${p}`).join(' ')}` : ''}`);
  },
  async 'service stop'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const name = arg(c, 1, 'service');
    const list = await c.api.call<Service[]>('GET', `/api/tasks/${t.id}/services`);
    const svc = list.find((x) => x.name === name);
    if (!svc) throw new CliError(`task ${t.name} has no service ${JSON.stringify(name)}`, EXIT.API, { code: 'NOT_FOUND', detail: `no service ${name}`, status: 404 });
    if (!svc.session || !isLive(svc.session.status)) {
      throw new CliError(`service ${name} is not running`, EXIT.API, { code: 'SESSION_NOT_RUNNING', detail: `service ${name} is not running`, status: 409 });
    }
    const r = await c.api.call<KillResult>('DELETE', `/api/sessions/${svc.session.id}`);
    print(c, { id: svc.session.id, ...r }, () => `service ${name} stopped`);
  },
  async approvals(c) {
    const q = new URLSearchParams();
    if (c.values.all !== true) q.set('status', 'pending');
    if (typeof c.values.task === 'string') q.set('task_id', (await task(c, c.values.task)).id);
    const list = await c.api.call<Approval[]>('GET', `/api/approvals?${q}`);
    print(c, list, () => table(list.map(approvalRow), APPROVAL_COLS));
  },
  async approve(c) {
    const remember = c.values.remember;
    if (remember !== undefined && remember !== 'session' && remember !== 'project') usage(`--remember is session or project, not ${JSON.stringify(remember)}`);
    await decideApproval(c, {
      decision: 'allow',
      ...(remember !== undefined ? { remember } : {}),
      ...(typeof c.values.answer === 'string' ? { answer: c.values.answer } : {}),
    });
  },
  async deny(c) {
    await decideApproval(c, { decision: 'deny', ...(typeof c.values.message === 'string' ? { message: c.values.message } : {}) });
  },
  async 'session kill'(c) {
    const s = await session(c, arg(c, 0, 'id'));
    const r = await c.api.call<KillResult>('DELETE', `/api/sessions/${s.id}`);
    print(c, { id: s.id, ...r }, () => `session ${shortId(s.id)} killed`);
  },
  async logs(c) {
    const s = await session(c, arg(c, 0, 'session'));
    const emit = (l: OutputLine) => c.out(c.json ? JSON.stringify(l) : l.text);
    if (!c.values.follow) {
      for (let after = 0; ; ) {
        const page = await c.api.call<OutputPage>('GET', `/api/sessions/${s.id}/output?after=${after}&limit=${OUTPUT_PAGE_MAX}`);
        for (const l of page.lines) emit(l);
        // An ended session says how it ended, as -f does: denied calls are not left unseen.
        if (page.lines.length < OUTPUT_PAGE_MAX) return void (s.ended_at !== null && !c.json && process.stderr.write(`${endLine(s)}\n`));
        after = page.next;
      }
    }
    await followOutput(c, s);
  },
  async changes(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const ch = await c.api.call<Changes>('GET', `/api/tasks/${t.id}/changes`);
    print(c, ch, () =>
      [
        `${t.branch}: ${ch.ahead} commit(s) ahead of ${ch.base}, ${ch.behind} behind; ${ch.uncommitted} uncommitted file(s)`,
        table(
          ch.files.map((f) => ({ ...f, path: f.old_path ? `${f.old_path} → ${f.path}` : f.path, lines: f.binary ? 'binary' : `+${f.additions} -${f.deletions}` })),
          ['status', 'lines', 'path'],
        ),
      ].join('\n'),
    );
  },
  async diff(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const file = c.positionals[1];
    const res = await c.api.stream(`/api/tasks/${t.id}/diff${file ? `?path=${encodeURIComponent(file)}` : ''}`, {});
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    const truncated = (res as { headers?: Record<string, unknown> }).headers?.['grove-diff-truncated'] === 'true';
    if (c.json) return c.out(JSON.stringify({ diff: text, truncated }));
    if (truncated) process.stderr.write('grove: the diff is over 10 MiB and was cut\n');
    if (!process.stdout.isTTY) return void process.stdout.write(text);
    await page(colourDiff(text));
  },
  async commit(c) {
    const t = await task(c, arg(c, 0, 'task'));
    if (typeof c.values.message !== 'string') usage('commit needs -m <message>');
    const r = await c.api.call<CommitResult>('POST', `/api/tasks/${t.id}/commit`, { message: c.values.message });
    print(c, r, () => `committed ${r.files.length} file(s) on ${t.branch}: ${r.commit.slice(0, 12)}`);
  },
  async rebase(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const r = await c.api.call<Task>('POST', `/api/tasks/${t.id}/rebase`);
    print(c, r, () => `rebased ${r.branch} onto ${r.base}`);
  },
  async merge(c) {
    const t = await task(c, arg(c, 0, 'task'));
    if (c.values.squash && c.values.ff) usage('merge takes --squash or --ff, not both');
    const body: MergeBody = { strategy: c.values.squash ? 'squash' : c.values.ff ? 'ff' : 'merge' };
    if (typeof c.values.message === 'string') body.message = c.values.message;
    const r = await c.api.call<MergeResult>('POST', `/api/tasks/${t.id}/merge`, body);
    print(c, r, () => `merged ${t.branch} into ${r.base} (${r.strategy}): ${r.base} is at ${r.commit.slice(0, 12)}`);
  },
  async push(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const r = await c.api.call<PushResult>('POST', `/api/tasks/${t.id}/push`, typeof c.values.remote === 'string' ? { remote: c.values.remote } : {});
    print(c, r, () => `pushed ${r.branch} to ${r.remote}`);
  },
  async conflicts(c) {
    const p = await project(c, arg(c, 0, 'project'));
    const [list, tasks] = await Promise.all([c.api.call<ConflictList>('GET', `/api/projects/${p.id}/conflicts`), c.api.call<Task[]>('GET', `/api/tasks?project_id=${p.id}`)]);
    const name = (id: string) => (id === 'base' ? 'its base' : (tasks.find((x) => x.id === id)?.name ?? id));
    print(c, list, () => (list.length === 0 ? 'no conflicts' : table(list.map((x) => ({ task: name(x.task_id), with: name(x.with), files: x.files.join(' ') })), ['task', 'with', 'files'])));
  },
  async events(c) {
    const filter = [
      typeof c.values.project === 'string' ? `project_id=${(await project(c, c.values.project)).id}` : '',
      typeof c.values.task === 'string' ? `task_id=${(await task(c, c.values.task)).id}` : '',
    ].filter(Boolean);
    const q = filter.map((f) => `&${f}`).join('');
    // The last ten, then live.
    const { recent, last } = await lastEvents(c, q, 10);
    const show = (e: GroveEvent) => c.out(c.json ? JSON.stringify(e) : describeEvent(e));
    recent.forEach(show);
    const from = last;
    const body = await c.api.stream(`/api/events?after=${from}${q}`, { accept: 'text/event-stream' });
    for await (const { event, data } of sse(body)) {
      if (event === 'end') throw new CliError(`the daemon dropped this stream: ${data.detail}`, EXIT.API);
      show(data);
    }
  },
  async watch(c) {
    const draw = async () => {
      const tasks = (await c.api.call<Task[]>('GET', '/api/tasks')).filter((x) => x.status !== 'archived');
      const rows: Array<Record<string, unknown>> = [];
      for (const x of tasks) {
        rows.push({ task: x.name, status: x.status, branch: x.branch, session: '', agent: '', state: '', result: '' });
        for (const s of await c.api.call<Session[]>('GET', `/api/tasks/${x.id}/sessions`)) {
          // Sessions that run or wait, and those that ended in the last hour.
          if (s.ended_at && Date.now() - Date.parse(s.ended_at) > 3600_000) continue;
          const r = sessionRow(s);
          rows.push({ task: '', status: '', branch: '', session: r.id, agent: who(s), state: s.status, result: r.result });
        }
      }
      const text = `grove watch — ${new Date().toLocaleTimeString()} — Ctrl-C leaves\n\n${table(rows, ['task', 'status', 'branch', 'session', 'agent', 'state', 'result'])}\n`;
      process.stdout.write(process.stdout.isTTY ? `\x1b[H\x1b[2J${text}` : text);
    };
    await draw();
    // Redrawn when something changes; a burst of events makes one redraw.
    let pending: NodeJS.Timeout | null = null;
    const body = await c.api.stream(`/api/events?after=${(await lastEvents(c, '', 0)).last}`, { accept: 'text/event-stream' });
    for await (const { event } of sse(body)) {
      if (event === 'end') return;
      pending ??= setTimeout(() => {
        pending = null;
        void draw();
      }, 200);
    }
  },
  // The dashboard (DESIGN §12) at the TCP front's address, in $BROWSER if set, else the desktop's
  // opener; the address is printed either way, for a machine without one.
  async open(c) {
    const health = await c.api.call<Health>('GET', '/api/health');
    if (health.port === null) {
      throw new CliError('the daemon runs without its TCP front (port "off"), so the dashboard has no address; set "port" in the user config', EXIT.API);
    }
    const url = `http://127.0.0.1:${health.port}/`;
    c.out(url);
    const opener = process.env.BROWSER || (process.platform === 'darwin' ? 'open' : 'xdg-open');
    await new Promise<void>((resolve) => {
      const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
      child.once('spawn', () => (child.unref(), resolve()));
      child.once('error', () => {
        process.stderr.write(`grove: cannot run ${opener}; open ${url} in your browser\n`);
        resolve();
      });
    });
  },
  async 'host ls'(c) {
    const list = await c.api.call<Host[]>('GET', '/api/hosts');
    print(c, list, () => table(list.map((h) => hostRow(h)), HOST_COLS));
  },
  async agents(c) {
    const list = await c.api.call<AgentList>('GET', '/api/agents');
    print(c, list, () => table(list.map((a) => ({ ...a, command: a.command.join(' ') })), ['name', 'available', 'command']));
  },
};

async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const rest = dash === -1 ? [] : argv.slice(dash + 1);
  const own = dash === -1 ? argv : argv.slice(0, dash);
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      options: {
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
      },
    });
  } catch (err) {
    usage((err as Error).message);
  }
  const words = parsed.positionals;
  if (parsed.values.help || words.length === 0) {
    process.stdout.write(USAGE + '\n');
    return words.length === 0 && !parsed.values.help ? EXIT.USAGE : EXIT.OK;
  }
  if (words[0] === 'install' || words[0] === 'uninstall') {
    const platform = (parsed.values.platform ?? process.platform) as string;
    if (platform !== 'linux' && platform !== 'darwin') usage(`grove ${words[0]} supports linux (systemd --user) and darwin (launchd), not ${platform}`);
    const { install, uninstall } = await import('./install.ts');
    const plan = (words[0] === 'install' ? install : uninstall)(platform, parsed.values['dry-run'] === true, (s) =>
      parsed.values.json ? undefined : process.stdout.write(s + '\n'),
    );
    if (parsed.values.json) process.stdout.write(JSON.stringify({ dry_run: parsed.values['dry-run'] === true, ...plan }, null, 2) + '\n');
    return EXIT.OK;
  }
  if (words[0] === 'daemon') {
    const { runDaemon } = await import('../main.ts');
    await runDaemon();
    return -1; // the daemon runs until a signal ends the process
  }
  if (words[0] === 'mcp') {
    const [{ runMcp }, { VERSION }] = await Promise.all([import('../mcp/server.ts'), import('../runtime/root.ts')]);
    const api = createClient(resolvePaths(process.env, process.getuid?.() ?? 0).socketPath);
    try {
      await runMcp({ api, readOnly: parsed.values['read-only'] === true, version: VERSION });
    } finally {
      await api.close();
    }
    return EXIT.OK;
  }
  if (words[0] === 'approval-mcp') {
    const session = parsed.values.session;
    if (typeof session !== 'string' || session === '') usage('grove approval-mcp needs --session <grove session id>');
    const [{ runPermit }, { VERSION }] = await Promise.all([import('../mcp/permit.ts'), import('../runtime/root.ts')]);
    const api = createClient(resolvePaths(process.env, process.getuid?.() ?? 0).socketPath);
    try {
      await runPermit({ api, session, version: VERSION });
    } finally {
      await api.close();
    }
    return EXIT.OK;
  }
  if (words[0] === 'acp-bridge') {
    const session = parsed.values.session;
    if (typeof session !== 'string' || session === '') usage('grove acp-bridge needs --session <grove session id>');
    if (rest.length === 0) usage('grove acp-bridge needs the agent\'s command after --');
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
    const { runAcpBridge } = await import('../bridges/acp.ts');
    const api = createClient(resolvePaths(process.env, process.getuid?.() ?? 0).socketPath);
    try {
      return await runAcpBridge({
        api,
        session,
        resume: str(parsed.values.resume),
        mode: str(parsed.values['acp-mode']),
        prompt: str(parsed.values.prompt),
        command: rest,
        cwd: process.cwd(),
        out: (line) => process.stdout.write(JSON.stringify(line) + '\n'),
      });
    } finally {
      await api.close();
    }
  }
  if (words[0] === 'codex-bridge') {
    const { session, mode, resume, prompt } = parsed.values;
    if (typeof session !== 'string' || session === '') usage('grove codex-bridge needs --session <grove session id>');
    if (mode !== 'read' && mode !== 'edit') usage('grove codex-bridge needs --mode read|edit');
    if (rest.length === 0) usage('grove codex-bridge needs the command of codex app-server after --');
    const [{ runCodexBridge }, { VERSION }] = await Promise.all([import('../bridges/codex.ts'), import('../runtime/root.ts')]);
    const api = createClient(resolvePaths(process.env, process.getuid?.() ?? 0).socketPath);
    try {
      return await runCodexBridge({ api, session, mode, resume: resume ?? null, prompt: prompt ?? '', command: rest, version: VERSION });
    } finally {
      await api.close();
    }
  }
  const two = `${words[0]} ${words[1] ?? ''}`.trim();
  const name = COMMANDS[two] ? two : COMMANDS[words[0]!] ? words[0]! : null;
  if (!name) usage(`unknown command: ${words.join(' ')}`);
  const api = createClient(resolvePaths(process.env, process.getuid?.() ?? 0).socketPath);
  try {
    let team: Promise<TeamView> | undefined;
    await COMMANDS[name]!({
      api,
      team: () => (team ??= teamView(api)),
      json: parsed.values.json === true,
      positionals: words.slice(name.split(' ').length),
      values: parsed.values,
      rest,
      out: (s) => process.stdout.write(s + '\n'),
    });
    return Number(process.exitCode ?? EXIT.OK);
  } finally {
    await api.close();
  }
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
    if (err instanceof CliError) {
      if (process.argv.includes('--json') && err.problem) process.stdout.write(JSON.stringify(err.problem) + '\n');
      process.stderr.write(`grove: ${err.message}\n`);
      process.exitCode = err.exitCode;
    } else {
      process.stderr.write(`grove: ${(err as Error).stack ?? err}\n`);
      process.exitCode = EXIT.API;
    }
  },
);
