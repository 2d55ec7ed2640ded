import path from 'node:path';
import type { AgentDefinition, Mode, UserConfig } from '../../schemas/config.ts';
import { GroveError } from '../errors.ts';
import { ROOT } from '../runtime/root.ts';
import { SettingsError, type Settings } from '../runtime/settings.ts';
import { which } from '../runtime/which.ts';

export const PROMPT = '{prompt}';

// Each CLI in its non-interactive mode, with structured (JSON lines) output where it has one,
// the prompt where that CLI reads it as text (after `--`, or attached as `--prompt=`), and its
// own flags per mode; a mode it cannot enforce is left out (docs/agents.md says how each was checked).
export const SESSION = '{session}';

// Each CLI in its non-interactive mode, with structured (JSON lines) output where it has one,
// the prompt where that CLI reads it as text (after `--`, or attached as `--prompt=`), its own
// flags per mode (a mode it cannot enforce is left out), how it continues a conversation (and,
// `interactive`, in the person's terminal: grove takeover), the dialect its output speaks, and
// what it needs when confined (DESIGN §18: its state folders, its provider's hosts)
// (docs/agents.md says how each was checked).
export const BUILTIN_AGENTS: Readonly<Record<string, AgentDefinition>> = {
  claude: {
    sandbox: { write: ['~/.claude'], hosts: ['api.anthropic.com', 'statsig.anthropic.com', 'console.anthropic.com', 'claude.ai'] },
    command: ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--session-id', SESSION, '--', PROMPT],
    resume: ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--resume', SESSION, '--', PROMPT],
    interactive: ['claude', '--resume', SESSION],
    terminal: ['claude', '--session-id', SESSION, '--', PROMPT],
    // Its interface installs the official plugin marketplace at start unless its config says it has
    // (from downloads.claude.ai, else github.com): confined, each new session would ask for them.
    env: { CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1' },
    format: 'claude',
    modes: {
      read: ['--permission-mode', 'plan'],
      edit: ['--permission-mode', 'acceptEdits'],
      full: ['--permission-mode', 'bypassPermissions'],
    },
  },
  codex: {
    // `codex app-server` (read and edit) syncs its curated plugins from GitHub at start; its
    // interface (a terminal session) fetches a tip to show from raw.githubusercontent.com.
    sandbox: { write: ['~/.codex'], hosts: ['api.openai.com', 'chatgpt.com', 'auth.openai.com'], refuse: ['github.com', 'api.github.com', 'raw.githubusercontent.com'] },
    command: ['codex', 'exec', '--json', '--', PROMPT],
    resume: ['codex', 'exec', 'resume', '--json', SESSION, '--', PROMPT],
    // --no-daemon: else its interface (0.171.0) runs on a shared background server of its own,
    // installed from the network at first use and left running after it, and until that is
    // installed the prompt is not sent.
    interactive: ['codex', 'resume', '--no-daemon', SESSION],
    terminal: ['codex', '--no-daemon', '--', PROMPT],
    format: 'codex',
    modes: {
      read: ['-c', 'sandbox_mode=read-only'],
      edit: ['-c', 'sandbox_mode=workspace-write'],
      full: ['--dangerously-bypass-approvals-and-sandbox'],
    },
  },
  // Gemini CLI speaks ACP (`--acp`): through grove's bridge its shell and its writes outside the
  // mode's reach are asked about (headless `-p` offers no shell in `default` or `auto_edit` at all).
  gemini: {
    // Its interface (a terminal session) asks registry.npmjs.org for a newer version at start.
    sandbox: { write: ['~/.gemini'], hosts: ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com', 'play.googleapis.com'], refuse: ['registry.npmjs.org'] },
    protocol: 'acp',
    command: ['gemini', '--acp', '--skip-trust'],
    interactive: ['gemini', '--skip-trust', '--resume', SESSION],
    // Its interface (0.61.0) with the prompt sent at once: `--prompt-interactive`, attached so that a
    // prompt starting with `-` stays text (a positional prompt is a headless run where CI=true).
    // The id it is given (`--session-id`) is the one its `--resume` takes.
    terminal: ['gemini', '--skip-trust', '--session-id', SESSION, `--prompt-interactive=${PROMPT}`],
    terminal_resume: ['gemini', '--skip-trust', '--resume', SESSION, `--prompt-interactive=${PROMPT}`],
    // Its approval modes, those its ACP modes are.
    terminal_modes: { read: ['--approval-mode', 'default'], edit: ['--approval-mode', 'auto_edit'], full: ['--approval-mode', 'yolo'] },
    modes: { read: [], edit: [], full: [] },
    acp_modes: { read: 'default', edit: 'autoEdit', full: 'yolo' },
  },
  aider: {
    sandbox: { write: ['~/.aider'], hosts: ['api.openai.com', 'api.anthropic.com', 'openrouter.ai'] },
    command: ['aider', '--no-pretty', '--no-stream', '--yes-always', `--message=${PROMPT}`],
    modes: { read: ['--chat-mode', 'ask'], edit: [], full: [] },
  },
  amp: {
    sandbox: { write: ['~/.config/amp', '~/.local/share/amp', '~/.cache/amp'], hosts: ['ampcode.com', '*.ampcode.com'] },
    command: ['amp', '--stream-json', `--execute=${PROMPT}`],
    resume: ['amp', 'threads', 'continue', SESSION, '--stream-json', `--execute=${PROMPT}`],
    interactive: ['amp', 'threads', 'continue', SESSION],
    format: 'claude',
    modes: { edit: [], full: ['--dangerously-allow-all'] },
  },
  // OpenCode speaks ACP (`opencode acp`) and offers its agents as the session's `mode` option; its
  // permissions allow everything unless configured, so grove defines one agent per mode, whose
  // `ask` goes to grove's bridge (OPENCODE_CONFIG_CONTENT is merged over the user's own config).
  opencode: {
    sandbox: { write: ['~/.local/share/opencode', '~/.config/opencode', '~/.cache/opencode', '~/.local/state/opencode'], hosts: ['opencode.ai', 'models.dev', 'api.anthropic.com', 'api.openai.com'], refuse: ['registry.npmjs.org'] },
    protocol: 'acp',
    command: ['opencode', 'acp'],
    interactive: ['opencode', '--session', SESSION],
    // Its interface (1.18.33) sends `--prompt` at once in a new session only; with `--session` it
    // opens the conversation and drops the prompt, so a conversation is continued in its minimal
    // interface (`--mini`), which sends it. It names its session itself, and writes no transcript
    // grove reads: an ended terminal session cannot be continued (only a headless one's can).
    terminal: ['opencode', `--prompt=${PROMPT}`],
    terminal_resume: ['opencode', '--mini', '--session', SESSION, `--prompt=${PROMPT}`],
    // Grove's agent per mode, as over ACP; the person at the terminal answers its `ask`s.
    terminal_modes: { read: ['--agent', 'grove-read'], edit: ['--agent', 'grove-edit'], full: ['--agent', 'grove-full'] },
    modes: { read: [], edit: [], full: [] },
    acp_modes: { read: 'grove-read', edit: 'grove-edit', full: 'grove-full' },
    env: {
      // Else its interface asks the npm registry for a newer release at start, and upgrades
      // itself to a patch release.
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_CONFIG_CONTENT: JSON.stringify({
        agent: {
          'grove-read': { mode: 'primary', description: "grove's read mode: edits, shell commands and fetches are asked", permission: { edit: 'ask', bash: 'ask', webfetch: 'ask' } },
          'grove-edit': { mode: 'primary', description: "grove's edit mode: edits run, shell commands and fetches are asked", permission: { edit: 'allow', bash: 'ask', webfetch: 'ask' } },
          'grove-full': { mode: 'primary', description: "grove's full mode: everything runs", permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' } },
        },
      }),
    },
  },
  // Copilot CLI and Qwen Code speak ACP too (`--acp`); Copilot's modes are its tool flags (its ACP
  // session modes are agent, plan and autopilot), Qwen's are its approval modes as ACP modes.
  copilot: {
    sandbox: { write: ['~/.copilot', '~/.cache/copilot'], hosts: ['api.githubcopilot.com', '*.githubcopilot.com', 'api.github.com', 'github.com'] },
    protocol: 'acp',
    command: ['copilot', '--acp', '--no-auto-update'],
    interactive: ['copilot', `--resume=${SESSION}`],
    // Its interface: `--interactive=` sends the prompt at once; `--session-id` pins the id of a new
    // session, which `--resume` continues; `--no-auto-update` as in `command`.
    terminal: ['copilot', '--no-auto-update', `--session-id=${SESSION}`, `--interactive=${PROMPT}`],
    terminal_resume: ['copilot', '--no-auto-update', `--resume=${SESSION}`, `--interactive=${PROMPT}`],
    // The same tool flags as its ACP command's: in `read` its interface asks before each write.
    terminal_modes: { read: [], edit: ['--allow-tool=write'], full: ['--allow-all'] },
    modes: { read: [], edit: ['--allow-tool=write'], full: ['--allow-all'] },
  },
  qwen: {
    // Its usage statistics go to Alibaba Cloud's RUM unless the user's settings turn them off; its
    // interface (a terminal session) asks registry.npmjs.org for a newer version at start.
    sandbox: { write: ['~/.qwen'], hosts: ['dashscope.aliyuncs.com', 'dashscope-intl.aliyuncs.com', 'chat.qwen.ai'], refuse: ['*.rum.aliyuncs.com', 'registry.npmjs.org'] },
    protocol: 'acp',
    command: ['qwen', '--acp'],
    interactive: ['qwen', '--resume', SESSION],
    // Its interface (0.15.10, 0.24.4) with the prompt sent at once: `--prompt-interactive`, attached so that
    // a prompt starting with `-` stays text (a positional prompt is a one-shot headless run, so
    // the default `interactive -- prompt` cannot continue a conversation here). The id it is
    // given (`--session-id`) is the one its `--resume` takes.
    terminal: ['qwen', '--session-id', SESSION, `--prompt-interactive=${PROMPT}`],
    terminal_resume: ['qwen', '--resume', SESSION, `--prompt-interactive=${PROMPT}`],
    // Its approval modes, those its ACP modes are.
    terminal_modes: { read: ['--approval-mode', 'default'], edit: ['--approval-mode', 'auto-edit'], full: ['--approval-mode', 'yolo'] },
    modes: { read: [], edit: [], full: [] },
    acp_modes: { read: 'default', edit: 'auto-edit', full: 'yolo' },
    // Its interface's update check keeps its state in ~/.config/configstore, not ~/.qwen: confined,
    // where that cannot be written, its notice at exit throws and the session ends failed. Without
    // the notifier the check itself still runs (refused above when confined).
    env: { NO_UPDATE_NOTIFIER: '1' },
  },
  cursor: {
    sandbox: { write: ['~/.cursor', '~/.config/cursor'], hosts: ['*.cursor.sh', 'cursor.com', '*.cursor.com'] },
    command: ['cursor-agent', '-p', '--output-format', 'stream-json', '--trust', PROMPT],
    resume: ['cursor-agent', '-p', '--output-format', 'stream-json', '--trust', '--resume', SESSION, PROMPT],
    interactive: ['cursor-agent', '--resume', SESSION],
    format: 'cursor',
    modes: { read: ['--mode', 'ask'], edit: [], full: ['--force'] },
  },
};

// The modes an agent can honour, with their arguments: an agent that lists none has `edit` only
// (an ACP agent without `modes`: those of its `acp_modes`, with no arguments).
export function agentModes(def: AgentDefinition): Partial<Record<Mode, string[]>> {
  if (def.modes) return def.modes;
  if (def.protocol === 'acp' && def.acp_modes) return Object.fromEntries(Object.keys(def.acp_modes).map((m) => [m, []]));
  return { edit: [] };
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

// The command a session runs (DESIGN §8): `command` (or `resume`, to continue a conversation)
// with `{session}` replaced by the agent's session id, the mode's arguments, then the request's
// args, just before the prompt's element (before the `--` that precedes it, so they stay options),
// then the prompt as one argument read as text: `{prompt}` alone, or attached (`--prompt={prompt}`)
// for CLIs that read a leading `-` as an option otherwise. Without a prompt that element and its
// `--` are dropped; a command with no `{prompt}` gets the arguments at its end.
export function buildCommand(parts: string[], opts: { prompt?: string | undefined; before: string[]; session?: string | null }): string[] {
  const command = parts.map((part) => (part.includes(SESSION) && opts.session ? part.replaceAll(SESSION, opts.session) : part));
  const at = command.findIndex((part) => part.endsWith(PROMPT));
  if (at === -1) return [...command, ...opts.before];
  const from = at > 0 && command[at - 1] === '--' ? at - 1 : at;
  const attached = command[at]!.slice(0, -PROMPT.length);
  const prompt = opts.prompt !== undefined && opts.prompt !== '' ? [...command.slice(from, at), attached + opts.prompt] : [];
  return [...command.slice(0, from), ...opts.before, ...prompt, ...command.slice(at + 1)];
}

// Whether a command pins the agent's session id (`{session}` in it): grove then makes one.
export function pinsSession(parts: string[]): boolean {
  return parts.some((part) => part.includes(SESSION));
}

// The tool Claude Code calls for each call its mode would refuse: `approve` of the `grove` MCP
// server that `grove approval-mcp` runs (DESIGN §15, docs/agents.md "Approvals").
export const APPROVAL_TOOL = 'mcp__grove__approve';

// The built-ins that ask through grove, and in which modes: `full` allows all by itself. (An agent
// with `protocol: "acp"` always asks through grove's ACP bridge.)
const APPROVAL_MODES: Readonly<Record<string, readonly Mode[]>> = { claude: ['read', 'edit'], codex: ['read', 'edit'] };

// This package's own `grove` run by this Node, with its arguments.
export const groveCommand = (...args: string[]) => [process.execPath, path.join(ROOT, 'bin', 'grove.js'), ...args];

// What every bridge grove runs for a session (the ACP bridge, Codex's bridge, Claude Code's
// approval server) is told to reach the daemon: its socket, in the variable `grove` reads first
// (runtime/paths.ts), over whatever the session's environment names (a project's own grove).
export function bridgeEnv(socketPath: string): Record<string, string> {
  return { GROVE_SOCKET: socketPath };
}

// How long Claude Code lets one call of grove's approval server run (its per-server `timeout`, in
// ms): past it the model gets a tool error, neither an allow nor a denial. The largest delay a JS
// timer takes (about 24.8 days), beyond every bound grove sets on a wait (`timeout_s` and
// `approval_timeout_s` are at most 7 days), so grove's expiry or the session's end answers first.
export const APPROVAL_TOOL_TIMEOUT_MS = 2 ** 31 - 1;

// The command of an ACP agent's session (DESIGN §15): `grove acp-bridge` for grove session
// `session`, run by the daemon's own Node, with the agent's command after `--`. The prompt goes
// attached (`--prompt=`), so it is text whatever it starts with.
export function acpBridgeCommand(opts: { session: string; resume: string | null; acpMode: string | null; prompt: string | null; agent: string[] }): string[] {
  return groveCommand(
    'acp-bridge',
    '--session',
    opts.session,
    ...(opts.resume !== null ? ['--resume', opts.resume] : []),
    ...(opts.acpMode !== null ? ['--acp-mode', opts.acpMode] : []),
    ...(opts.prompt !== null && opts.prompt !== '' ? [`--prompt=${opts.prompt}`] : []),
    '--',
    ...opts.agent,
  );
}

// What Claude Code is told beside those arguments: in -p it connects MCP servers in the
// background, and a call it asks about before grove's server is up fails as "not found" instead
// of being asked; it then waits for them before the model's first turn.
export const APPROVAL_SERVER_ENV: Readonly<Record<string, string>> = { MCP_CONNECTION_NONBLOCKING: '0' };

// Claude Code's arguments naming grove's approval server for grove session `session`: this
// package's own `grove` run by this Node, told the daemon's socket.
export function approvalArgs(socketPath: string, session: string): string[] {
  const server = {
    type: 'stdio',
    command: process.execPath,
    args: groveCommand('approval-mcp', '--session', session).slice(1),
    env: bridgeEnv(socketPath),
    timeout: APPROVAL_TOOL_TIMEOUT_MS,
  };
  return ['--mcp-config', JSON.stringify({ mcpServers: { grove: server } }), '--permission-prompt-tool', APPROVAL_TOOL];
}

// The command of a codex session that asks through grove (`codex exec` never asks): grove's
// `codex-bridge` running one turn of `codex app-server` (with the request's args), told the
// daemon's socket; a follow-up names the thread it continues.
export function codexBridgeCommand(socketPath: string, session: string, mode: 'read' | 'edit', ask: { prompt: string; resume: string | null; args: string[] }) {
  const resume = ask.resume !== null ? ['--resume', ask.resume] : [];
  return {
    command: groveCommand('codex-bridge', '--session', session, '--mode', mode, ...resume, `--prompt=${ask.prompt}`, '--', 'codex', 'app-server', ...ask.args),
    env: bridgeEnv(socketPath),
  };
}

// The built-in agents with the user's additions and overrides; with the daemon's socket, the
// built-ins that can ask (Claude Code, Codex) are given grove's approval bridge.
export function createAgents(config: Pick<UserConfig, 'agents'>, opts: { socketPath?: string } = {}) {
  const all: Record<string, AgentDefinition> = { ...BUILTIN_AGENTS, ...(config.agents ?? {}) };
  const builtin = (name: string) => Object.hasOwn(BUILTIN_AGENTS, name) && !(config.agents && Object.hasOwn(config.agents, name));
  const asks = (name: string) => all[name]!.protocol === 'acp' || (builtin(name) && Object.hasOwn(APPROVAL_MODES, name));
  const bridged = (name: string, mode: Mode) => builtin(name) && APPROVAL_MODES[name]?.includes(mode) === true;
  return {
    list() {
      return Object.keys(all)
        .sort()
        .map((name) => ({
          name,
          command: all[name]!.command,
          // An ACP agent continues with its own command: the bridge resumes or loads the session.
          resume: all[name]!.protocol === 'acp' ? all[name]!.command : (all[name]!.resume ?? null),
          interactive: all[name]!.interactive ?? null,
          terminal: all[name]!.terminal ?? null,
          available: which(all[name]!.command[0]!) !== null,
          builtin: builtin(name),
          approvals: asks(name),
        }));
    },
    // The arguments that route agent `name`'s refusals in `mode` to grove session `session` as
    // approvals: none for an agent (or a user's override) without a bridge, or a mode that allows all.
    // `socket` is the session's own (DESIGN §18), else the daemon's.
    approvalArgs(name: string, mode: Mode, session: string, socket = opts.socketPath): string[] {
      if (name !== 'claude' || !bridged(name, mode) || socket === undefined) return [];
      return approvalArgs(socket, session);
    },
    // What the ACP bridge, run as the session's process, is told to reach the daemon (nothing
    // without a socket: then it finds the daemon's as any `grove` does).
    acpBridgeEnv(socket = opts.socketPath): Record<string, string> {
      return socket !== undefined ? bridgeEnv(socket) : {};
    },
    // The whole command (and its variables) that runs agent `name` in `mode` through its bridge,
    // when the bridge replaces the agent's own command (Codex); null otherwise.
    bridgeCommand(name: string, mode: Mode, session: string, ask: { prompt: string; resume: string | null; args: string[] }, socket = opts.socketPath): { command: string[]; env: Record<string, string> } | null {
      if (name !== 'codex' || !bridged(name, mode) || socket === undefined || mode === 'full') return null;
      return codexBridgeCommand(socket, session, mode, ask);
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

// The agents of the daemon's settings. A default_agent that names none of them is a settings
// error, found before the daemon starts anything (exit 78, as any other invalid config).
export function agentsOf(settings: Pick<Settings, 'config' | 'configFile'> & Partial<Pick<Settings, 'socketPath'>>): Agents {
  const agents = createAgents(settings.config, { ...(settings.socketPath !== undefined ? { socketPath: settings.socketPath } : {}) });
  const name = settings.config.default_agent;
  if (name !== undefined && !agents.has(name)) {
    throw new SettingsError(`config file ${settings.configFile} is invalid: /default_agent ${JSON.stringify(name)} is neither a built-in agent nor one of /agents`);
  }
  return agents;
}
