import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { AgentDefinition, Mode, UserConfig } from '../../schemas/config.ts';
import { GroveError } from '../errors.ts';

export const PROMPT = '{prompt}';

// Each CLI in its non-interactive mode, with structured (JSON lines) output where it has one.
// None is given permission-skipping flags: a user who wants them adds an agent of their own.
export const BUILTIN_AGENTS: Readonly<Record<string, AgentDefinition>> = {
  claude: { command: ['claude', '-p', PROMPT, '--output-format', 'stream-json', '--verbose'] },
  codex: { command: ['codex', 'exec', '--json', PROMPT] },
  gemini: { command: ['gemini', '-p', PROMPT, '--output-format', 'stream-json'] },
  aider: { command: ['aider', '--message', PROMPT, '--yes-always', '--no-pretty', '--no-stream'] },
  amp: { command: ['amp', '--execute', PROMPT, '--stream-json'] },
  opencode: { command: ['opencode', 'run', '--format', 'json', PROMPT] },
  cursor: { command: ['cursor-agent', '-p', PROMPT, '--output-format', 'stream-json'] },
};

// Where `command` resolves: an absolute path as is, a bare name through PATH; null when absent.
export function which(command: string, pathEnv = process.env.PATH ?? ''): string | null {
  const candidates = command.includes('/') ? (path.isAbsolute(command) ? [command] : []) : pathEnv.split(':').filter(Boolean).map((d) => path.join(d, command));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here
    }
  }
  return null;
}

// The modes an agent can honour, with their arguments: an agent that lists none has `edit` only.
export function agentModes(def: AgentDefinition): Partial<Record<Mode, string[]>> {
  return def.modes ?? { edit: [] };
}

// The arguments of `mode` for agent `name`; MODE_UNSUPPORTED when the agent does not list it.
export function modeArgs(def: AgentDefinition, name: string, mode: Mode): string[] {
  const modes = agentModes(def);
  const args = modes[mode];
  if (!args) {
    throw new GroveError('MODE_UNSUPPORTED', `agent ${name} cannot run in mode ${mode}; it supports ${Object.keys(modes).join(', ')}`, {
      errors: [{ path: '/mode', message: `is not a mode of agent ${name}` }],
    });
  }
  return args;
}

// The command a session runs (DESIGN §8): the mode's arguments, then the request's args, just
// before `{prompt}` (before the `--` that precedes it, so they stay options), then the prompt as
// one argument, read as text; without a prompt, `{prompt}` and its `--` are dropped. A command
// with no `{prompt}` gets the arguments at its end.
export function buildCommand(def: AgentDefinition, opts: { prompt?: string | undefined; before: string[] }): string[] {
  const { command } = def;
  const at = command.indexOf(PROMPT);
  if (at === -1) return [...command, ...opts.before];
  const from = at > 0 && command[at - 1] === '--' ? at - 1 : at;
  const prompt = opts.prompt !== undefined && opts.prompt !== '' ? [...command.slice(from, at), opts.prompt] : [];
  return [...command.slice(0, from), ...opts.before, ...prompt, ...command.slice(at + 1)];
}

// The built-in agents with the user's additions and overrides.
export function createAgents(config: Pick<UserConfig, 'agents'>) {
  const all: Record<string, AgentDefinition> = { ...BUILTIN_AGENTS, ...(config.agents ?? {}) };
  return {
    list() {
      return Object.keys(all)
        .sort()
        .map((name) => ({
          name,
          command: all[name]!.command,
          available: which(all[name]!.command[0]!) !== null,
          builtin: name in BUILTIN_AGENTS && !(config.agents && name in config.agents),
        }));
    },
    // Own keys only: `constructor` or `__proto__` must not resolve to Object.prototype's.
    has: (name: string) => Object.hasOwn(all, name),
    get(name: string): AgentDefinition {
      const def = Object.hasOwn(all, name) ? all[name] : undefined;
      if (!def) throw new GroveError('UNKNOWN_AGENT', `no agent named ${JSON.stringify(name)}; see GET /api/agents`);
      return def;
    },
  };
}

export type Agents = ReturnType<typeof createAgents>;
