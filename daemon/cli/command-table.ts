// The command table, as data: each family of commands (a module of commands/) and the words of
// its commands. A command loads its own family when it runs, not the whole CLI: `grove status`
// needs neither SSH, nor hosts.json, nor the MCP server and the bridges.
import type { Command } from './ctx.ts';

export type Family = () => Promise<{ commands: Record<string, Command> }>;

export const FAMILIES: Array<[load: Family, words: string[]]> = [
  [() => import('./commands/status.ts'), ['status', 'open', 'agents', 'socket']],
  [() => import('./commands/project.ts'), ['project add', 'project ls', 'project rm', 'pool', 'conflicts']],
  [() => import('./commands/task.ts'), ['task new', 'task ls', 'task show', 'task rm']],
  [() => import('./commands/session.ts'), ['session start', 'session ls', 'session show', 'session kill', 'say', 'logs', 'takeover']],
  [() => import('./commands/terminal.ts'), ['attach', 'shell']],
  [() => import('./commands/service.ts'), ['service ls', 'service start', 'service stop']],
  [() => import('./commands/approvals.ts'), ['approvals', 'approve', 'deny']],
  [() => import('./commands/review.ts'), ['changes', 'diff', 'commit', 'rebase', 'merge', 'push']],
  [() => import('./commands/turns.ts'), ['turns', 'restore']],
  [() => import('./commands/queue.ts'), ['queue add', 'queue ls', 'queue rm']],
  [() => import('./commands/pr.ts'), ['pr']],
  [() => import('./commands/auto.ts'), ['auto add', 'auto ls', 'auto show', 'auto run', 'auto pause', 'auto resume', 'auto rm', 'auto runs']],
  [() => import('./commands/intake.ts'), ['intake add', 'intake ls', 'intake rm']],
  [() => import('./commands/events.ts'), ['events', 'watch']],
  [() => import('./commands/host.ts'), ['host ls', 'host add', 'host rm']],
];

// Words → the family that has that command.
export const COMMANDS = new Map(FAMILIES.flatMap(([load, words]) => words.map((w) => [w, load] as const)));

// The command of those words, its family loaded.
export async function loadCommand(name: string): Promise<Command> {
  return (await COMMANDS.get(name)!()).commands[name]!;
}
