import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { acpBridgeCommand, agentModes, agentsOf, APPROVAL_TOOL, APPROVAL_TOOL_TIMEOUT_MS, BUILTIN_AGENTS, buildCommand, modeArgs, pinsSession } from '../../daemon/agents/agents.ts';
import { GroveError } from '../../daemon/errors.ts';
import { ROOT } from '../../daemon/runtime/root.ts';
import { SettingsError } from '../../daemon/runtime/settings.ts';
import { ApprovalTimeoutS, TimeoutS } from '../../schemas/config.ts';

test('buildCommand: mode and request args just before {prompt} (before its --), the prompt as one argument, dropped with its -- when absent', () => {
  const def = { command: ['tool', '-x', '--', '{prompt}', '--tail'] };
  assert.deepEqual(buildCommand(def.command, { prompt: '--version', before: ['--m', 'a'] }), ['tool', '-x', '--m', 'a', '--', '--version', '--tail']);
  assert.deepEqual(buildCommand(def.command, { prompt: undefined, before: ['--m'] }), ['tool', '-x', '--m', '--tail']);
  assert.deepEqual(buildCommand(def.command, { prompt: '', before: [] }), ['tool', '-x', '--tail'], 'an empty prompt is no prompt');
  assert.deepEqual(buildCommand(['tool', '{prompt}'], { prompt: '- a', before: ['b'] }), ['tool', 'b', '- a'], 'no -- in the template: right before the prompt');
  assert.deepEqual(buildCommand(['tool', 'run'], { prompt: 'ignored', before: ['b'] }), ['tool', 'run', 'b'], 'no {prompt}: at the end');
  assert.deepEqual(buildCommand(['{prompt}'], { prompt: 'p', before: [] }), ['p']);
  // Attached, for CLIs that would read a separate `- x` as an option.
  const attached = { command: ['gem', '-o', 'json', '--prompt={prompt}'] };
  assert.deepEqual(buildCommand(attached.command, { prompt: '- fix', before: ['--m'] }), ['gem', '-o', 'json', '--m', '--prompt=- fix']);
  assert.deepEqual(buildCommand(attached.command, { prompt: undefined, before: ['--m'] }), ['gem', '-o', 'json', '--m']);
});

test('built-ins: the prompt after `--` or attached, the mode flags before it, as each CLI was checked (docs/agents.md)', () => {
  const build = (name: string, mode: 'read' | 'edit' | 'full', prompt = '- fix the failing test') =>
    buildCommand(BUILTIN_AGENTS[name]!.command, { prompt, before: modeArgs(BUILTIN_AGENTS[name]!, name, mode), session: 'S' });
  assert.deepEqual(build('claude', 'edit'), ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--session-id', 'S', '--permission-mode', 'acceptEdits', '--', '- fix the failing test']);
  assert.deepEqual(build('codex', 'read', '--version'), ['codex', 'exec', '--json', '-c', 'sandbox_mode=read-only', '--', '--version']);
  assert.deepEqual(build('codex', 'full'), ['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '--', '- fix the failing test']);
  assert.deepEqual(build('amp', 'full'), ['amp', '--stream-json', '--dangerously-allow-all', '--execute=- fix the failing test']);
  assert.throws(() => build('amp', 'read'), /MODE_UNSUPPORTED|cannot run in mode read/);
  for (const [name, def] of Object.entries(BUILTIN_AGENTS)) {
    if (def.protocol === 'acp') continue; // the prompt goes to grove's bridge (below)
    for (const mode of Object.keys(agentModes(def)) as Array<'read' | 'edit' | 'full'>) {
      assert.ok(build(name, mode).some((a) => a.endsWith('- fix the failing test')), `${name} ${mode} carries the prompt`);
      assert.equal(build(name, mode).at(-1)!.endsWith('- fix the failing test'), true, `${name} ${mode}: the prompt is last`);
    }
  }
});

test('resume: each built-in that can continue a conversation puts its id where its CLI reads it, the mode again, the prompt last', () => {
  const resume = (name: string, mode: 'read' | 'edit' | 'full') =>
    buildCommand(BUILTIN_AGENTS[name]!.resume!, { prompt: '- go on', before: modeArgs(BUILTIN_AGENTS[name]!, name, mode), session: 'abc-1' });
  assert.deepEqual(resume('claude', 'edit'), ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--resume', 'abc-1', '--permission-mode', 'acceptEdits', '--', '- go on']);
  assert.deepEqual(resume('codex', 'edit'), ['codex', 'exec', 'resume', '--json', 'abc-1', '-c', 'sandbox_mode=workspace-write', '--', '- go on']);
  assert.deepEqual(resume('amp', 'edit'), ['amp', 'threads', 'continue', 'abc-1', '--stream-json', '--execute=- go on']);
  assert.equal(BUILTIN_AGENTS.aider!.resume, undefined, 'aider cannot continue a conversation');
  assert.deepEqual(pinsSession(BUILTIN_AGENTS.claude!.command), true);
  assert.deepEqual(pinsSession(BUILTIN_AGENTS.codex!.command), false);
});

test('ACP built-ins (gemini, qwen, copilot, opencode): the agent under `grove acp-bridge` for the session, the prompt attached, the mode as an ACP mode or as flags, a follow-up by --resume', () => {
  const bridge = (session: string, rest: string[]) => [process.execPath, path.join(ROOT, 'bin', 'grove.js'), 'acp-bridge', '--session', session, ...rest];
  const acp = (name: string, mode: 'read' | 'edit' | 'full', resume: string | null = null, prompt: string | null = '- fix the failing test') => {
    const def = BUILTIN_AGENTS[name]!;
    assert.equal(def.protocol, 'acp', name);
    const agent = buildCommand(def.command, { before: modeArgs(def, name, mode) });
    return acpBridgeCommand({ session: 'G', resume, acpMode: def.acp_modes?.[mode] ?? null, prompt, agent });
  };
  assert.deepEqual(acp('gemini', 'edit'), bridge('G', ['--acp-mode', 'autoEdit', '--prompt=- fix the failing test', '--', 'gemini', '--acp', '--skip-trust']));
  assert.deepEqual(acp('gemini', 'read', 'abc-1', '--version'), bridge('G', ['--resume', 'abc-1', '--acp-mode', 'default', '--prompt=--version', '--', 'gemini', '--acp', '--skip-trust']));
  assert.deepEqual(acp('gemini', 'full', null, null), bridge('G', ['--acp-mode', 'yolo', '--', 'gemini', '--acp', '--skip-trust']), 'no prompt: none passed');
  assert.deepEqual(acp('qwen', 'edit'), bridge('G', ['--acp-mode', 'auto-edit', '--prompt=- fix the failing test', '--', 'qwen', '--acp']));
  assert.deepEqual(acp('qwen', 'read').slice(5, 7), ['--acp-mode', 'default']);
  assert.deepEqual(acp('copilot', 'read'), bridge('G', ['--prompt=- fix the failing test', '--', 'copilot', '--acp', '--no-auto-update']));
  assert.deepEqual(acp('copilot', 'edit').slice(-1), ['--allow-tool=write']);
  assert.deepEqual(acp('copilot', 'full').slice(-1), ['--allow-all']);
  assert.deepEqual(acp('opencode', 'read'), bridge('G', ['--acp-mode', 'grove-read', '--prompt=- fix the failing test', '--', 'opencode', 'acp']));
  // OpenCode's agents for grove's modes, given in its config: read asks edits, shell and fetches; edit asks shell and fetches; full asks nothing.
  const config = JSON.parse(BUILTIN_AGENTS.opencode!.env!.OPENCODE_CONFIG_CONTENT!);
  assert.deepEqual(
    Object.fromEntries(Object.entries(config.agent).map(([name, a]: [string, any]) => [name, [a.mode, a.permission]])),
    {
      'grove-read': ['primary', { edit: 'ask', bash: 'ask', webfetch: 'ask' }],
      'grove-edit': ['primary', { edit: 'allow', bash: 'ask', webfetch: 'ask' }],
      'grove-full': ['primary', { edit: 'allow', bash: 'allow', webfetch: 'allow' }],
    },
  );
  // A user's ACP agent without `modes` has the modes of its acp_modes.
  assert.deepEqual(agentModes({ command: ['x'], protocol: 'acp', acp_modes: { read: 'ask', full: 'yolo' } }), { read: [], full: [] });
});

test('interactive: every built-in that can resume has its interactive resume (grove takeover), checked against each CLI\'s --help; the id in place, the args at the end, no prompt and no mode', () => {
  const interactive = (name: string) => buildCommand(BUILTIN_AGENTS[name]!.interactive!, { before: ['--x'], session: 'abc-1' });
  assert.deepEqual(interactive('claude'), ['claude', '--resume', 'abc-1', '--x']);
  assert.deepEqual(interactive('codex'), ['codex', 'resume', '--no-daemon', 'abc-1', '--x']);
  assert.deepEqual(interactive('gemini'), ['gemini', '--skip-trust', '--resume', 'abc-1', '--x']);
  assert.deepEqual(interactive('qwen'), ['qwen', '--resume', 'abc-1', '--x']);
  assert.deepEqual(interactive('copilot'), ['copilot', '--resume=abc-1', '--x']);
  assert.deepEqual(interactive('opencode'), ['opencode', '--session', 'abc-1', '--x']);
  assert.deepEqual(interactive('amp'), ['amp', 'threads', 'continue', 'abc-1', '--x']);
  assert.deepEqual(interactive('cursor'), ['cursor-agent', '--resume', 'abc-1', '--x']);
  // Every built-in that continues a conversation (by its resume, or through the ACP bridge) has one.
  for (const [name, def] of Object.entries(BUILTIN_AGENTS)) assert.equal(def.interactive !== undefined, def.resume !== undefined || def.protocol === 'acp', name);
  const listed = agentsOf({ config: { agents: { mine: { command: ['mine'] } } }, configFile: 'config.json' }).list();
  assert.deepEqual(listed.find((a) => a.name === 'claude')!.interactive, ['claude', '--resume', '{session}']);
  assert.equal(listed.find((a) => a.name === 'mine')!.interactive, null);
});

test("terminal: Claude Code's and Codex's own interfaces with the prompt after `--`, the mode's flags before it; Codex without its shared background server; Gemini CLI's and Qwen Code's with the prompt attached to --prompt-interactive, their approval modes, --resume to continue; no other built-in has one", () => {
  const terminal = (name: string, mode: 'read' | 'edit' | 'full') => buildCommand(BUILTIN_AGENTS[name]!.terminal!, { prompt: '- go', before: modeArgs(BUILTIN_AGENTS[name]!, name, mode), session: 'abc-1' });
  assert.deepEqual(terminal('claude', 'edit'), ['claude', '--session-id', 'abc-1', '--permission-mode', 'acceptEdits', '--', '- go']);
  assert.deepEqual(terminal('codex', 'full'), ['codex', '--no-daemon', '--dangerously-bypass-approvals-and-sandbox', '--', '- go']);
  // An ACP agent's interactive program takes its own mode arguments (`terminal_modes`).
  const own = (name: string, parts: 'terminal' | 'terminal_resume', mode: 'read' | 'edit' | 'full') => buildCommand(BUILTIN_AGENTS[name]![parts]!, { prompt: '- go', before: BUILTIN_AGENTS[name]!.terminal_modes![mode]!, session: 'abc-1' });
  assert.deepEqual(own('gemini', 'terminal', 'read'), ['gemini', '--skip-trust', '--session-id', 'abc-1', '--approval-mode', 'default', '--prompt-interactive=- go']);
  assert.deepEqual(own('gemini', 'terminal_resume', 'full'), ['gemini', '--skip-trust', '--resume', 'abc-1', '--approval-mode', 'yolo', '--prompt-interactive=- go']);
  assert.deepEqual(own('qwen', 'terminal', 'edit'), ['qwen', '--session-id', 'abc-1', '--approval-mode', 'auto-edit', '--prompt-interactive=- go']);
  assert.deepEqual(own('qwen', 'terminal_resume', 'read'), ['qwen', '--resume', 'abc-1', '--approval-mode', 'default', '--prompt-interactive=- go']);
  assert.deepEqual(Object.keys(BUILTIN_AGENTS).filter((name) => BUILTIN_AGENTS[name]!.terminal), ['claude', 'codex', 'gemini', 'opencode', 'copilot', 'qwen']);
});

test("terminal: Copilot CLI's and OpenCode's own interfaces with the prompt attached, their terminal_modes, their terminal_resume", () => {
  const run = (name: string, parts: 'terminal' | 'terminal_resume', mode: 'read' | 'edit' | 'full', prompt = '- go') =>
    buildCommand(BUILTIN_AGENTS[name]![parts]!, { prompt, before: BUILTIN_AGENTS[name]!.terminal_modes![mode]!, session: 'abc-1' });
  assert.deepEqual(run('copilot', 'terminal', 'read'), ['copilot', '--no-auto-update', '--session-id=abc-1', '--interactive=- go']);
  assert.deepEqual(run('copilot', 'terminal', 'edit'), ['copilot', '--no-auto-update', '--session-id=abc-1', '--allow-tool=write', '--interactive=- go']);
  assert.deepEqual(run('copilot', 'terminal_resume', 'full'), ['copilot', '--no-auto-update', '--resume=abc-1', '--allow-all', '--interactive=- go']);
  assert.deepEqual(run('copilot', 'terminal', 'edit', ''), ['copilot', '--no-auto-update', '--session-id=abc-1', '--allow-tool=write'], 'no prompt: its interface alone');
  assert.deepEqual(run('opencode', 'terminal', 'edit'), ['opencode', '--agent', 'grove-edit', '--prompt=- go']);
  assert.deepEqual(run('opencode', 'terminal_resume', 'read'), ['opencode', '--mini', '--session', 'abc-1', '--agent', 'grove-read', '--prompt=- go']);
  assert.deepEqual(run('opencode', 'terminal', 'full', ''), ['opencode', '--agent', 'grove-full']);
  assert.equal(BUILTIN_AGENTS.opencode!.env!.OPENCODE_DISABLE_AUTOUPDATE, '1');
});

test('modes: an agent without modes has edit only; a mode it does not list is MODE_UNSUPPORTED', () => {
  assert.deepEqual(agentModes({ command: ['x'] }), { edit: [] });
  assert.deepEqual(modeArgs({ command: ['x'] }, 'x', 'edit'), []);
  assert.throws(() => modeArgs({ command: ['x'] }, 'x', 'full'), (e: unknown) => e instanceof GroveError && e.code === 'MODE_UNSUPPORTED' && e.status === 422);
  const def = { command: ['x'], modes: { read: ['--ro'], full: ['--yolo'] } };
  assert.deepEqual(modeArgs(def, 'x', 'read'), ['--ro']);
  assert.throws(() => modeArgs(def, 'x', 'edit'), /x cannot run in mode edit; it supports read, full/);
});

test("agentsOf: the settings' agents, with the user's; a default_agent naming none of them is a SettingsError naming the file", () => {
  const configFile = '/users/u/.config/grove/config.json';
  const agents = agentsOf({ configFile, config: { agents: { mine: { command: ['mine', '{prompt}'] } }, default_agent: 'mine' } });
  assert.equal(agents.has('mine'), true);
  assert.equal(agents.has('codex'), true);
  assert.equal(agentsOf({ configFile, config: { default_agent: 'codex' } }).has('codex'), true);
  assert.equal(agentsOf({ configFile, config: {} }).has('claude'), true, 'no default_agent: nothing to check');
  // `constructor` is a member of every object, not an agent.
  for (const name of ['nobody', 'constructor']) {
    assert.throws(() => agentsOf({ configFile, config: { default_agent: name } }), (err: unknown) => {
      assert.ok(err instanceof SettingsError);
      assert.equal(err.message, `config file ${configFile} is invalid: /default_agent ${JSON.stringify(name)} is neither a built-in agent nor one of /agents`);
      return true;
    });
  }
});

test("approvals: claude in read and edit names grove's approval server for the session (its socket, this Node and package); full, other agents and a user's claude get nothing; ACP agents ask through the bridge", () => {
  const configFile = '/users/u/.config/grove/config.json';
  const agents = agentsOf({ configFile, socketPath: '/tmp/g.sock', config: { agents: { mine: { command: ['mine', '{prompt}'] } } } });
  for (const mode of ['read', 'edit'] as const) {
    const args = agents.approvalArgs('claude', mode, 'sess-1');
    assert.equal(args.length, 4);
    assert.deepEqual([args[0], args[2], args[3]], ['--mcp-config', '--permission-prompt-tool', APPROVAL_TOOL]);
    assert.equal(APPROVAL_TOOL, 'mcp__grove__approve');
    const server = JSON.parse(args[1]!).mcpServers.grove;
    assert.deepEqual(server, {
      type: 'stdio',
      command: process.execPath,
      args: [path.join(ROOT, 'bin', 'grove.js'), 'approval-mcp', '--session', 'sess-1'],
      env: { GROVE_SOCKET: '/tmp/g.sock' },
      timeout: APPROVAL_TOOL_TIMEOUT_MS,
    });
  }
  // A wait grove bounds never outlasts Claude Code's timeout of the call (a tool error); Claude
  // Code's own default (about 28 h) is shorter than a session's longest bound.
  const longest = Math.max(TimeoutS.maximum!, ApprovalTimeoutS.maximum!) * 1000;
  assert.ok(APPROVAL_TOOL_TIMEOUT_MS > longest && longest > 28 * 3600 * 1000, `${APPROVAL_TOOL_TIMEOUT_MS} ms against ${longest} ms`);
  assert.ok(APPROVAL_TOOL_TIMEOUT_MS <= 2 ** 31 - 1, 'a delay a JS timer takes as is');
  assert.deepEqual(agents.approvalArgs('claude', 'full', 'sess-1'), [], 'full allows all by itself');
  for (const name of ['codex', 'gemini', 'copilot', 'qwen', 'mine']) assert.deepEqual(agents.approvalArgs(name, 'edit', 'sess-1'), [], name);
  const approvals = Object.fromEntries(agents.list().map((a) => [a.name, a.approvals]));
  assert.deepEqual(
    Object.keys(approvals).filter((n) => approvals[n]),
    ['claude', 'codex', 'copilot', 'gemini', 'opencode', 'qwen'],
    'claude and codex, and the ACP agents through the ACP bridge',
  );
  // A user's own ACP agent asks through the bridge too; a user's gemini that is not ACP does not.
  const users = agentsOf({ configFile, socketPath: '/tmp/g.sock', config: { agents: { a: { protocol: 'acp', command: ['a'] }, gemini: { command: ['gemini', '{prompt}'] } } } });
  assert.deepEqual(users.list().filter((a) => a.approvals).map((a) => a.name), ['a', 'claude', 'codex', 'copilot', 'opencode', 'qwen']);
  assert.deepEqual(users.acpBridgeEnv(), { GROVE_SOCKET: '/tmp/g.sock' });
  // They continue a conversation with their own command (the bridge resumes the session).
  assert.deepEqual(users.list().find((a) => a.name === 'a')!.resume, ['a']);
  assert.deepEqual(users.list().find((a) => a.name === 'gemini')!.resume, null);
  // A user's own `claude` is their command: grove adds nothing to it.
  const own = agentsOf({ configFile, socketPath: '/tmp/g.sock', config: { agents: { claude: { command: ['claude', '-p', '{prompt}'] } } } });
  assert.deepEqual(own.approvalArgs('claude', 'edit', 'sess-1'), []);
  assert.equal(own.list().find((a) => a.name === 'claude')!.approvals, false);
  // Without a socket (no daemon), nothing to name.
  assert.deepEqual(agentsOf({ configFile, config: {} }).approvalArgs('claude', 'edit', 'sess-1'), []);
});

test("approvals: codex in read and edit runs as grove's codex-bridge over `codex app-server` (the mode, the thread of a follow-up, the prompt attached, the request's args to app-server); full, a user's codex and no socket keep `codex exec`", () => {
  const configFile = '/users/u/.config/grove/config.json';
  const agents = agentsOf({ configFile, socketPath: '/tmp/g.sock', config: {} });
  const grove = [process.execPath, path.join(ROOT, 'bin', 'grove.js'), 'codex-bridge', '--session', 'sess-1'];
  assert.deepEqual(agents.bridgeCommand('codex', 'edit', 'sess-1', { prompt: '- fix it', resume: null, args: [] }), {
    command: [...grove, '--mode', 'edit', '--prompt=- fix it', '--', 'codex', 'app-server'],
    env: { GROVE_SOCKET: '/tmp/g.sock' },
  });
  assert.deepEqual(agents.bridgeCommand('codex', 'read', 'sess-1', { prompt: 'go on', resume: 'th-1', args: ['-c', 'model="o3"'] })!.command, [
    ...grove, '--mode', 'read', '--resume', 'th-1', '--prompt=go on', '--', 'codex', 'app-server', '-c', 'model="o3"',
  ]);
  assert.equal(agents.bridgeCommand('codex', 'full', 'sess-1', { prompt: 'p', resume: null, args: [] }), null, 'full stays on codex exec');
  for (const name of ['claude', 'gemini']) assert.equal(agents.bridgeCommand(name, 'edit', 'sess-1', { prompt: 'p', resume: null, args: [] }), null, name);
  const own = agentsOf({ configFile, socketPath: '/tmp/g.sock', config: { agents: { codex: { command: ['codex', 'exec', '{prompt}'] } } } });
  assert.equal(own.bridgeCommand('codex', 'edit', 'sess-1', { prompt: 'p', resume: null, args: [] }), null, "a user's own codex is their command");
  assert.equal(own.list().find((a) => a.name === 'codex')!.approvals, false);
  assert.equal(agentsOf({ configFile, config: {} }).bridgeCommand('codex', 'edit', 'sess-1', { prompt: 'p', resume: null, args: [] }), null);
});
