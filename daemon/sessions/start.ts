import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Mode, SandboxSetting } from '../../schemas/config.ts';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import { isLive, type CreateSession, type Interface, type Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { acpBridgeCommand, APPROVAL_SERVER_ENV, buildCommand, modeArgs, pinsSession, PROMPT } from '../agents/agents.ts';
import { holderCommand } from '../terminal/command.ts';
import { GroveError } from '../errors.ts';
import { isSameProcessAlive, processStartTime } from '../proc/stat.ts';
import { terminate } from '../proc/terminate.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import { publicSession, type NewSession, type SessionRecord } from '../store/sessions.ts';
import { taskEnv } from '../tasks/env.ts';
import type { SessionServiceDeps } from './deps.ts';
import type { Live, SessionSignals } from './live.ts';
import { findSession } from './record.ts';
import type { SpawnResult } from './spawner.ts';
import { recordTranscriptPlace } from './transcript.ts';
import { sessionFiles, sessionSocket } from './wrapper.ts';
import { which } from '../runtime/which.ts';

const GITHUB_TOKEN_ENV = ['GH_TOKEN', 'GITHUB_TOKEN'];

// What the service was given, the sessions it follows, and their wake-ups.
export type StartDeps = SessionServiceDeps & { live: Live; signals: Pick<SessionSignals, 'output'> };

// What a session is asked to do, in which conversation: from a new session's body, a follow-up's,
// or a queued row. `resume` is the agent's session id to continue (null: a new conversation).
export type Ask = Pick<NewSession, 'agent' | 'mode' | 'prompt' | 'conversation_id' | 'parent_id'> & {
  /** headless, or under a pseudo-terminal (DESIGN §21) */
  interface: Interface;
  args: string[];
  /** the request's sandbox setting (DESIGN §18); null: the project's or the user's applies */
  sandbox_setting: SandboxSetting | null;
  timeout_s: number | null;
  approval_timeout_s: number | null;
  resume: string | null;
};

// What an agent's command is built from: an agent's ask (a task's shell has no agent).
type AgentAsk = Pick<Ask, 'mode' | 'prompt' | 'args' | 'resume' | 'interface'> & { agent: string };

// The default window of a terminal session until a client says its size.
const TERMINAL_COLS = 120;
const TERMINAL_ROWS = 40;

// What a session runs: its command line, the id it pins for the agent (if any), its own variables.
export interface Built {
  command: string[];
  pinned: string | null;
  env: Record<string, string>;
}

// Where a task's sessions run: a ready task with its worktree.
export interface Place {
  task: Task;
  project: Project;
  config: ProjectConfig;
  cwd: string;
}

// Starts sessions: all is checked before a process runs, and an unrecorded start leaves nothing.
export function createStart(deps: StartDeps) {
  const { sessions, live, log } = deps;

  // A session's own socket closed and its folder gone: at its end, or a start undone.
  async function closeSocket(id: string): Promise<void> {
    await deps.sockets.close(id);
    rmSync(sessionSocket(deps.dataDir, id).dir, { recursive: true, force: true });
  }

  // The task a session runs in, ready, with its worktree there.
  async function place(taskId: string): Promise<Place> {
    const task = await deps.getTask(taskId);
    if (deps.gate.isClosing(taskId)) throw new GroveError('TASK_NOT_READY', `task ${task.name} is being archived; nothing starts on it`);
    if (task.status !== 'ready') throw new GroveError('TASK_NOT_READY', `task ${task.name} is ${task.status}; sessions start on ready tasks`);
    const project = await deps.getProject(task.project_id);
    const config = deps.configs.load(project.path);
    const cwd = path.join(project.path, task.worktree_path);
    if (!existsSync(cwd)) throw new GroveError('TASK_NOT_READY', `the worktree of task ${task.name} is missing (${cwd})`);
    return { task, project, config, cwd };
  }

  // The command line of `ask` (DESIGN §8), the id it pins for the agent if its command does,
  // and the agent's own variables; with grove's session id, the agent's approval bridge too.
  function commandOf(ask: AgentAsk, bridge?: { session: string; socket: string }): Built {
    const def = deps.agents.get(ask.agent);
    if (ask.interface === 'terminal') return terminalCommandOf(ask);
    if (def.protocol === 'acp') return acpCommandOf(ask, bridge);
    if (ask.resume !== null && !def.resume) {
      throw new GroveError('RESUME_UNSUPPORTED', `agent ${ask.agent} has no command to continue a conversation ("resume")`);
    }
    const parts = ask.resume !== null ? def.resume! : def.command;
    const pinned = ask.resume === null && pinsSession(parts) ? randomUUID() : null;
    const approval = bridge !== undefined ? deps.agents.approvalArgs(ask.agent, ask.mode, bridge.session, bridge.socket) : [];
    const before = [...modeArgs(def, ask.agent, ask.mode), ...approval, ...ask.args];
    const own = buildCommand(parts, { prompt: ask.prompt ?? undefined, before, session: ask.resume ?? pinned });
    if (which(own[0]!) === null) {
      throw new GroveError('AGENT_NOT_INSTALLED', `${own[0]} (agent ${ask.agent}) is not on the daemon's PATH`);
    }
    // An agent whose bridge runs it (Codex through `codex app-server`) has the bridge's command.
    const wrapped = bridge !== undefined ? deps.agents.bridgeCommand(ask.agent, ask.mode, bridge.session, { prompt: ask.prompt ?? '', resume: ask.resume, args: ask.args }, bridge.socket) : null;
    return { command: wrapped?.command ?? own, pinned, env: { ...(def.env ?? {}), ...(wrapped?.env ?? {}), ...(approval.length > 0 ? APPROVAL_SERVER_ENV : {}), GROVE_AGENT: ask.agent } };
  }

  // An agent's own interactive program (DESIGN §21): its `terminal` command for a new
  // conversation, its `interactive` one with the prompt to continue one. The person at the
  // terminal answers its questions there: no approval bridge.
  function terminalCommandOf(ask: AgentAsk): Built {
    const def = deps.agents.get(ask.agent);
    const parts = ask.resume !== null ? (def.terminal_resume ?? (def.interactive ? [...def.interactive, '--', PROMPT] : null)) : (def.terminal ?? null);
    if (parts === null) {
      const which = ask.resume !== null ? '"interactive"' : '"terminal"';
      throw new GroveError('INTERFACE_UNSUPPORTED', `agent ${ask.agent} has no interactive command (${which} in its definition) to run in a terminal session`);
    }
    const pinned = ask.resume === null && pinsSession(parts) ? randomUUID() : null;
    // The mode is checked as for any session; an ACP agent's modes are ACP session modes, whose
    // interactive program takes its own arguments for them (`terminal_modes`), if any.
    const own = modeArgs(def, ask.agent, ask.mode);
    const before = [...(def.terminal_modes?.[ask.mode] ?? (def.protocol === 'acp' ? [] : own)), ...ask.args];
    const command = buildCommand(parts, { prompt: ask.prompt ?? undefined, before, session: ask.resume ?? pinned });
    if (which(command[0]!) === null) {
      throw new GroveError('AGENT_NOT_INSTALLED', `${command[0]} (agent ${ask.agent}) is not on the daemon's PATH`);
    }
    return { command, pinned, env: { ...(def.env ?? {}), GROVE_AGENT: ask.agent } };
  }

  // An ACP agent's session (DESIGN §15): its command with the mode's arguments and the request's
  // run under grove's bridge, which sets its ACP mode, sends the prompt and continues `resume`.
  function acpCommandOf(ask: AgentAsk, bridge?: { session: string; socket: string }): Built {
    const def = deps.agents.get(ask.agent);
    const agent = buildCommand(def.command, { before: [...modeArgs(def, ask.agent, ask.mode), ...ask.args] });
    if (which(agent[0]!) === null) {
      throw new GroveError('AGENT_NOT_INSTALLED', `${agent[0]} (agent ${ask.agent}) is not on the daemon's PATH`);
    }
    const command = acpBridgeCommand({ session: bridge?.session ?? 'unknown', resume: ask.resume, acpMode: def.acp_modes?.[ask.mode] ?? null, prompt: ask.prompt ?? null, agent });
    return { command, pinned: null, env: { ...(def.env ?? {}), ...deps.agents.acpBridgeEnv(bridge?.socket), GROVE_AGENT: ask.agent } };
  }

  // `running` once the process is confirmed alive, after the 201 has said `starting`.
  function markRunning(id: string, pid: number, pidStart: string | null): void {
    setImmediate(() => {
      if (pidStart === null || !isSameProcessAlive(pid, pidStart)) return;
      void sessions.markRunning(id).then((changed) => {
        if (!changed) return;
        log.debug({ session: id }, 'session running');
        deps.signals.output.changed(id);
      });
    });
  }

  // Runs `ask` as session `id`: a new row, or (`queued`) the queued row of that id, which gets its
  // process; null when that row was cancelled meanwhile (then nothing runs). An agent's command
  // is built from its definition; a service's is given.
  // Runs `fn` (which stores a session row) in the task's turn, once the task is checked ready
  // again there: an archive that began since `place` refuses it (see tasks/gate.ts).
  function admit<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    return deps.gate.admit(taskId, async () => {
      await place(taskId);
      return fn();
    });
  }

  // An archive of the task has begun or is done: what waited to start there is cancelled.
  async function archiving(taskId: string): Promise<boolean> {
    return deps.gate.isClosing(taskId) || (await deps.getTask(taskId)).status === 'archived';
  }

  // A terminal session needs a pseudo-terminal: where none can be made, nothing starts.
  async function checkTerminal(ask: Pick<Ask, 'interface'>): Promise<void> {
    if (ask.interface !== 'terminal') return;
    const pty = await deps.pty();
    if (!pty.ok) throw new GroveError('INTERFACE_UNSUPPORTED', `no pseudo-terminal can be made on this machine, so no terminal session can run: ${pty.detail}`);
  }

  function launch(id: string, at: Place, ask: Ask, opts: { queued: boolean; kind?: Exclude<Session['kind'], 'interactive'>; built?: Built }): Promise<SessionRecord | null> {
    return admit(at.task.id, () => launchAdmitted(id, at, ask, opts));
  }

  async function launchAdmitted(id: string, at: Place, ask: Ask, opts: { queued: boolean; kind?: Exclude<Session['kind'], 'interactive'>; built?: Built }): Promise<SessionRecord | null> {
    const { queued } = opts;
    await checkTerminal(ask);
    const kind = opts.kind ?? 'agent';
    // An agent's bridges ask through the session's own socket (DESIGN §18), open before it starts.
    const socket = opts.built === undefined ? sessionSocket(deps.dataDir, id) : null;
    const { command, pinned, env: own } = opts.built ?? commandOf({ ...ask, agent: ask.agent! }, { session: id, socket: socket!.path });
    // Decided before anything is made: `sandbox: true` on a machine that cannot confine starts nothing.
    const sandbox = deps.confine.decide(kind, ask.sandbox_setting, at.config);
    // A confined session's GROVE_SOCKET is its own, where its proxy asks (and anything in it that
    // runs `grove`, which may not reach the daemon's).
    const env: Record<string, string> = { ...taskEnv(at.project, at.task, at.config), ...own, GROVE_SESSION_ID: id, ...(sandbox.confined && socket !== null ? { GROVE_SOCKET: socket.path } : {}) };
    // The GitHub token grove reads for intake (DESIGN §20) is not the agent's, unless the project
    // says so (.grove.json github.pass_token) or its env sets one.
    if (kind === 'agent' && at.config.github?.pass_token !== true) for (const k of GITHUB_TOKEN_ENV) if (at.config.env?.[k] === undefined && own[k] === undefined) delete env[k];
    const files = sessionFiles(deps.dataDir, id);
    const undo = async (pgid?: number) => {
      if (pgid !== undefined) await terminate(pgid, { graceMs: 0 });
      if (socket !== null) await closeSocket(id);
      rmSync(files.dir, { recursive: true, force: true });
    };
    // The wrapper first, held (see wrapper.ts): the row is then written once, with its pid, and
    // only then does the agent run.
    let started: SpawnResult;
    try {
      if (socket !== null) await deps.sockets.open(id, socket.path);
      const run = sandbox.confined
        ? await deps.confine.wrap({
            command,
            cwd: at.cwd,
            projectPath: at.project.path,
            config: at.config,
            agent: ask.agent !== null && deps.agents.has(ask.agent) ? deps.agents.get(ask.agent) : null,
            tmpdir: path.join(files.dir, 'tmp'),
            scratchDir: path.join(files.dir, 'git'),
            write: socket !== null ? [socket.dir] : [],
            // In read and edit a refused host is asked about (DESIGN §18); full refuses it.
            net: { dir: path.join(files.dir, 'net'), record: files.blocked, askSession: ask.mode !== 'full' && socket !== null ? id : null, env },
          })
        : command;
      // A terminal session's program runs under its holder (DESIGN §21), itself under the wrapper:
      // the holder's output is the session's, its exit status the program's.
      const held = ask.interface === 'terminal' ? holderCommand({ socket: files.pty, output: files.stdout, cols: TERMINAL_COLS, rows: TERMINAL_ROWS, command: run }) : run;
      // Where its agent's transcript will be (DESIGN §21), recorded before the agent runs.
      if (ask.interface === 'terminal' && kind === 'agent' && ask.agent !== null) {
        await recordTranscriptPlace(files.transcript, deps.agents.get(ask.agent), { cwd: at.cwd, env, agentSessionId: pinned ?? ask.resume, startedAt: new Date().toISOString() });
      }
      started = await deps.spawner.start({ files, command: held, cwd: at.cwd, env });
    } catch (err) {
      await undo();
      throw err;
    }
    const deadline = ask.timeout_s !== null ? new Date(Date.now() + ask.timeout_s * 1000).toISOString() : null;
    const { resume: _, ...fields } = ask;
    const row: NewSession = { id, task_id: at.task.id, kind, command, ...fields, agent_session_id: pinned, deadline, sandbox };
    const record = (pid: number | null, pidStart: string | null) =>
      queued
        ? sessions.launch(id, { command, pid, pid_start: pidStart, agent_session_id: pinned, deadline, sandbox })
        : sessions.insert({ ...row, ...(pid !== null ? { pid, pid_start: pidStart } : {}) });
    if (!started.ok) {
      log.error({ err: started.message, session: id }, 'session failed to start');
      if (socket !== null) await closeSocket(id);
      if ((await record(null, null)) === null) return null;
      await sessions.end(id, 'failed', null);
      return findSession(sessions, id);
    }
    const { pid } = started;
    const pidStart = processStartTime(pid);
    let rec: SessionRecord | null;
    try {
      rec = await record(pid, pidStart);
    } catch (err) {
      await undo(pid);
      throw err;
    }
    if (rec === null) {
      await undo(pid);
      return null;
    }
    const entry = live.follow(rec);
    // The spawner's child: its exit is an event, and the wrapper has written `exit` by then.
    void started.exited.then((end) => {
      if (live.get(id) !== entry) return; // already ended
      if (end === 'untracked') return live.watch(rec); // the spawner is gone
      if (entry.killing) return; // the kill records the end itself, as `killed`
      entry.pump.finish({}).catch((err: unknown) => log.error({ err, session: id }, 'finishing session failed'));
    });
    started.go();
    log.info({ session: id, task: at.task.id, agent: ask.agent, pid, conversation: ask.conversation_id }, 'session started');
    markRunning(id, pid, pidStart);
    return rec;
  }

  // A new session, which starts a conversation: the agent and the mode named by the body, else by
  // .grove.json, else by the user config (the mode else `edit`); the time limit likewise.
  function askOf(config: ProjectConfig, input: CreateSession, id: string): Ask {
    const agent = input.agent ?? config.agent ?? deps.defaultAgent;
    if (agent === undefined) {
      throw new GroveError('AGENT_REQUIRED', 'no agent given, and neither the project (.grove.json "agent") nor the user config ("default_agent") names one');
    }
    const mode: Mode = input.mode ?? config.mode ?? deps.defaultMode ?? 'edit';
    const timeout = input.timeout_s ?? config.timeout_s ?? deps.defaultTimeoutS ?? null;
    return {
      agent,
      mode,
      prompt: input.prompt ?? null,
      args: input.args ?? [],
      timeout_s: timeout,
      approval_timeout_s: input.approval_timeout_s ?? null,
      conversation_id: id,
      parent_id: null,
      sandbox_setting: input.sandbox ?? null,
      resume: null,
      interface: input.interface ?? 'headless',
    };
  }

  async function start(taskId: string, input: CreateSession): Promise<Session> {
    const at = await place(taskId);
    const id = randomUUID();
    return publicSession((await launch(id, at, askOf(at.config, input, id), { queued: false }))!);
  }

  // The first session of a task made with it (DESIGN §17), checked against the project's config
  // before anything is made: its agent named and installed, its mode one the agent has.
  function planFirst(projectPath: string, input: CreateSession): Ask {
    const ask = askOf(deps.configs.load(projectPath), input, randomUUID());
    commandOf({ ...ask, agent: ask.agent! });
    return ask;
  }

  // Starts a service of the task's `.grove.json` (DESIGN §10): a session of kind `service`, its
  // command run with `sh -c`; one at a time per service, 409 SERVICE_RUNNING while one runs.
  const serviceTurns = createKeyedMutex();
  async function startService(taskId: string, name: string): Promise<Session> {
    const at = await place(taskId);
    const services = at.config.services ?? {};
    const svc = Object.hasOwn(services, name) ? services[name] : undefined;
    if (!svc) throw new GroveError('NOT_FOUND', `the project's .grove.json has no service named ${JSON.stringify(name)}`);
    return serviceTurns.run(`${taskId}/${name}`, async () => {
      const all = (await sessions.listOfTask(taskId)) ?? [];
      const running = all.find((s) => s.kind === 'service' && s.agent === name && isLive(s.status));
      if (running) throw new GroveError('SERVICE_RUNNING', `service ${name} is already running (session ${running.id}); stop it with DELETE /api/sessions/${running.id}`);
      const id = randomUUID();
      const ask: Ask = { agent: name, mode: 'edit', prompt: null, args: [], timeout_s: null, approval_timeout_s: null, conversation_id: id, parent_id: null, sandbox_setting: null, resume: null, interface: 'headless' };
      const built: Built = { command: ['sh', '-c', svc.command], pinned: null, env: { GROVE_SERVICE: name } };
      return publicSession((await launch(id, at, ask, { queued: false, kind: 'service', built }))!);
    });
  }

  // A shell in the task's worktree with its environment, under a pseudo-terminal (DESIGN §21): a
  // session of kind `terminal` with no agent. The user's $SHELL, else sh, interactive.
  async function startShell(taskId: string): Promise<Session> {
    const at = await place(taskId);
    const id = randomUUID();
    const shell = process.env.SHELL && which(process.env.SHELL) !== null ? process.env.SHELL : 'sh';
    const ask: Ask = { agent: null, mode: 'edit', prompt: null, args: [], timeout_s: null, approval_timeout_s: null, conversation_id: id, parent_id: null, sandbox_setting: null, resume: null, interface: 'terminal' };
    const built: Built = { command: [shell, '-i'], pinned: null, env: {} };
    return publicSession((await launch(id, at, ask, { queued: false, kind: 'terminal', built }))!);
  }

  return { start, planFirst, startService, startShell, launch, admit, archiving, place, commandOf, closeSocket };
}

export type Starter = ReturnType<typeof createStart>;
