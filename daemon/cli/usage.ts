// What `grove --help` prints, and the usage error that ends with it (exit 2).
import { CliError, EXIT } from './errors.ts';

export const USAGE = `usage: grove [--host NAME|ssh://…] <command> [options]

  daemon                                   run the daemon in the foreground
  status                                   daemon pid, version, uptime, socket, counts
  project add <path> [--name N]            add a git repository
  project ls                               list projects
  project rm <id|name>                     remove a project (its repository is untouched)
  task new <project> <name> [--base R] [--branch B] [--no-wait] [--progress]
                                           (setup progress is shown on a terminal, or with --progress)
  task new <project> <name> --prompt P [--agent A] [--mode M] [--after ID[,ID…]]
                                           with its first session, which waits until every task of
                                           --after has merged
  task new <project> [<name>] --issue URL [--prompt P] [--agent A] [--mode M]
                                           from an issue (DESIGN §20): named #N and its title unless <name>
                                           is given, its first session's prompt the issue quoted as data
                                           (--prompt: the instructions around it)
  task new --repository URL <name> [--host H] [--base R] [--branch B] [--no-wait]
                                           on a team: on the online host with that repository and
                                           the fewest running sessions, or on host H (this --host,
                                           after the command, is the team's placement, not --host below)
  task ls [<project>]                      list tasks
  task show <id>                           a task and its setup log
  task rm <id> [--force]                   archive a task (worktree removed, branch kept)
  session start <task> [--agent A] [--mode read|edit|full] [--prompt P] [--timeout S]
                [--sandbox auto|true|false] [--terminal] [-- args…]
                                           --terminal: the agent's own interface, under a pseudo-terminal (grove attach)
  session ls <task> [--conversation C]     a task's sessions: conversation, mode, sandbox, status, result
  session show <id>                        one session: its status, sandbox, result and the calls its agent denied
  service ls <task>                        the services of its .grove.json and their sessions
  service start|stop <task> <name>         start a service (a session of kind service), or stop it
  say <session> <prompt>|--prompt=P [--mode M] [--timeout S] [-- args…]
                                           continue a session's conversation (followed on a terminal, or with -f)
  session kill <id>                        kill a session's process group
  takeover <session> [-- args…]            resume its conversation in this terminal, interactively (grove say continues after it)
  attach <session>                         a terminal session (DESIGN §21) in this terminal: keys to its program, its
                                           screen here, this window's size its own; Ctrl-\\ detaches (it runs on);
                                           the program's exit is said on stderr (exit 0)
  shell <task>                             a shell in the task's worktree with its environment (a terminal session),
                                           attached here on a terminal; it runs on after a detach
  logs <session> [-f]                      a session's output; -f follows it to its end, with the approvals it waits for
  approvals [--task T] [--all]             what agents ask the person (pending ones; --all: every one)
  approve <id> [--remember session|project] [--answer TEXT]
                                           allow it (a question: answered with --answer)
  deny <id> [-m why]                       deny it, telling the agent why
  changes <task> [--from X] [--to Y]       what the task changed: committed, uncommitted, untracked; with
                                           --from/--to between two ends: base, work, turn:N (or N)
  diff <task> [--from X] [--to Y] [path]   its diff against the merge-base, or between X and Y (paged and
                                           coloured on a terminal)
  turns <task>                             its turns: the worktree's state saved as each agent session ended
  restore <task> <n>                       its files and index as in turn n (the state before is saved as a
                                           turn: restore that to undo); refused while an agent runs
  commit <task> -m <message>               commit everything uncommitted in its worktree
  rebase <task>                            its branch onto its base's tip
  merge <task> [--squash|--ff] [-m <msg>]  its branch into its base branch
  push <task> [--remote R]                 its branch, with upstream set
  queue add <task> [--strategy merge|squash|ff] [--fix]
                                           queue it to land on its base: rebased, checked (.grove.json check),
                                           merged, one at a time; --fix: on a failure its conversation is told
                                           what failed and it is queued again when that turn ends
  queue ls [<project>]                     the merge queue in order (every project's without one)
  queue rm <task>                          take it out of the merge queue (not while it lands)
  pr <task> [--title T] [--fix-tries N]    open its pull request (commit, push to origin, open against its base,
                                           Fixes #N for an issue's task), or show the one it has: its state
                                           and the review and check feedback grove answered
  auto add <project> <name> --cron "MIN HOUR DAY MONTH WEEKDAY" [--timezone Z] | --at ISO-TIME
           --prompt P [--agent A] [--mode M] [--timeout S] [--task-name N] [--base R] [--precheck CMD]
           [--land none|queue|pr] [--overlap skip|queue] [--missed latest|skip] [--grace S] [--paused]
                                           agent work on a schedule, each run a task and its session (a cron
                                           of 6 fields has seconds first; --at needs its offset or Z)
  auto ls [<project>]                      automations: schedule, next run (local time), last run, enabled
  auto show <automation>                   one automation and its last runs
  auto run <automation> [-f]               run it now, paused or not; -f follows it to its end
  auto pause|resume <automation>           stop its schedule, or start it again from now
  auto rm <automation>                     remove it and its runs (their tasks stay)
  auto runs <automation>                   its runs, newest first: status, why, scheduled for, missed, task
  intake add <project> --label L [--repo owner/name] [--agent A] [--mode M] [--prompt P] [--timeout S]
             [--land none|queue|pr] [--every S]
                                           watch its GitHub repository (default its origin): each open issue
                                           labelled L by someone who may write becomes a task, once
  intake ls [<project>]                    its watch (state, last and next poll) and the issues it took or
                                           refused and why; every project's watch without one
  intake rm <project>                      stop watching (its tasks stay)
  conflicts <project>                      which live tasks would conflict, with each other or their base
  pool <project>                           its warm pool: the tasks prepared ahead (.grove.json pool)
  events [--project P] [--task T]          every change as it happens (the last 10, then live)
  watch                                    a live table of tasks and sessions; Ctrl-C leaves
  open                                     the dashboard in the default browser ($BROWSER if set)
  mcp [--read-only] [--host H]             an MCP server on stdio for agents (claude mcp add grove -- grove mcp),
                                           of host H's daemon with --host
  approval-mcp --session ID                Claude Code's permission prompt tool for a session (grove passes it)
  acp-bridge --session ID [--resume A] [--acp-mode M] [--prompt=P] -- agent…
                                           run an ACP agent's turn, asking through grove (grove runs it)
  codex-bridge --session ID --mode M --prompt=TEXT [--resume THREAD] -- codex app-server …
                                           one turn of Codex that asks through grove (grove runs it)
  sandbox-net --dir D --record F [--session ID --ask] [--allow HOST]… [--refuse HOST]… -- bwrap …
                                           a confined session's network proxy around its bwrap (grove runs it)
  pty-hold --socket S --output F --cols C --rows R -- command…
                                           hold a terminal session's program under a pseudo-terminal (grove runs it)
  agents                                   agents and whether they are installed
  host ls                                  the hosts: the store's (online, version, running sessions, last seen)
                                           and the saved SSH hosts (url, reachable, version); with no daemon
                                           running here, the saved SSH hosts alone
  host add <name> <ssh://[user@]box[:port][?socket=PATH]>
                                           save an SSH host in hosts.json (no daemon needed)
  host rm <name>                           forget a saved SSH host
  socket                                   the daemon's socket path (no daemon needed); with --host before it,
                                           the local socket forwarded to that host's daemon
  doctor                                   whether this machine can confine agents (a sandbox made for real),
                                           and what to install if not (no daemon needed)
  install [--dry-run]                      install the user service (systemd --user / launchd)
  uninstall [--dry-run]                    remove it

  --json   machine-readable output        ids may be given by a unique prefix
  --host NAME|ssh://[user@]box[:port][?socket=PATH]   (before the command; or GROVE_HOST)
           run the command against that machine's daemon over ssh (a saved name or a URL), with the
           same output and exit statuses; daemon, doctor, install, uninstall, host add|rm are this machine's,
           takeover and open are refused with a host
  A project is named by id, name, or NAME@HOST on a team: a bare NAME is this host's project of
  that name, or the only one of that name on the team. Lists on a team have a HOST column.
  An automation is named by id or name (with --project P, among that project's).
exit: 0 ok, 1 API error, 2 usage error, 3 daemon not running or its host not reachable over ssh`;

export function usage(msg: string): never {
  throw new CliError(`${msg}\n\n${USAGE}`, EXIT.USAGE);
}
