import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AgentDefinition, SandboxSetting } from '../../schemas/config.ts';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Session, SessionSandbox } from '../../schemas/session.ts';
import { WORKTREES_DIR } from '../../workers/worktree/folders.ts';
import { GroveError } from '../errors.ts';
import { bwrapArgv } from '../sandbox/bwrap.ts';
import type { SandboxCheck } from '../sandbox/check.ts';
import { policyFor } from '../sandbox/policy.ts';
import { baseUrlEntries, projectSandbox, sandboxPath, settingOf } from '../sandbox/settings.ts';
import { parseNetworkEntry } from '../sandbox/allow.ts';
import { netPlan, sandboxNetArgv } from '../sandbox/net.ts';
import { groveCommand } from '../agents/agents.ts';

// What confining a session needs (DESIGN §18): the daemon's answer to "can this machine
// confine" (checked once at its start), the user's home, grove's own files, the user
// config's setting and every project of this host (whose worktrees other sessions may not read).
export interface ConfineDeps {
  check: SandboxCheck;
  home: string;
  grove: { dataDir: string; configFile: string; socketPath: string };
  userSetting: SandboxSetting | undefined;
  projectPaths: () => Promise<string[]>;
}

// A folder that is grove's own (`…/grove/`, `/tmp/grove-<uid>/`, a GROVE_HOME) is hidden whole,
// else the file: a bind lasts only as long as the file it covers, and grove makes its socket again
// at every start (docs/decisions/sandbox.md).
function ownFolderOr(file: string): string {
  const dir = path.dirname(file);
  return path.basename(dir).startsWith('grove') ? dir : file;
}

export function createConfine(deps: ConfineDeps) {
  // Whether a session of `kind` runs confined, asked with `asked` in a project of `config`;
  // SANDBOX_UNAVAILABLE for `true` where this machine cannot confine (nothing has started then).
  function decide(kind: Exclude<Session['kind'], 'interactive'>, asked: SandboxSetting | null, config: ProjectConfig): SessionSandbox {
    const chosen = settingOf(asked, config, deps.userSetting);
    if (kind === 'service') return { confined: false, reason: "a service is the project's own code: services are not confined" };
    if (kind === 'terminal') return { confined: false, reason: "a task's shell is the person's own, as their terminal is: not confined" };
    if (chosen.setting === false) return { confined: false, reason: `sandbox is false (${chosen.from})` };
    if (!deps.check.ok) {
      if (chosen.setting === true) {
        throw new GroveError('SANDBOX_UNAVAILABLE', `sandbox is true (${chosen.from}), but this machine cannot confine a session: ${deps.check.detail}`);
      }
      return { confined: false, reason: `this machine cannot confine a session: ${deps.check.detail}` };
    }
    return { confined: true };
  }

  // The command that runs `command` confined in the worktree `cwd` of the project at
  // `projectPath`: its TMPDIR is `tmpdir` (made here), the agent's state folders are made if
  // missing; its network through the session's proxy (`net`), run in the session's process group
  // as `grove sandbox-net` around bwrap. NOT_A_GIT_REPO when the worktree is not one.
  async function wrap(opts: {
    command: string[];
    cwd: string;
    projectPath: string;
    config: ProjectConfig;
    agent: AgentDefinition | null;
    tmpdir: string;
    /** the session's own folder for the repository folder's scratch copy */
    scratchDir: string;
    write?: string[];
    /** the proxy's folder, the file refused connections are recorded in, the session to ask about them (read/edit) or null, the session's environment (its base URLs) */
    net: { dir: string; record: string; askSession: string | null; env: Record<string, string> };
  }): Promise<string[]> {
    if (!deps.check.ok) throw new Error('wrap() needs a machine that confines');
    const sandbox = projectSandbox(opts.config);
    const at = (p: string) => sandboxPath(p, opts.projectPath, deps.home);
    const agentState = (opts.agent?.sandbox?.write ?? []).map(at);
    // Off the thread, as every session starts beside others on a busy disk.
    await mkdir(opts.tmpdir, { recursive: true, mode: 0o700 });
    // An agent's own state is its to make: a fresh machine has no ~/.codex yet.
    for (const dir of agentState) await mkdir(dir, { recursive: true, mode: 0o700 });
    const worktreeRoots = (await deps.projectPaths()).map((p) => path.join(p, WORKTREES_DIR));
    const r = policyFor({
      worktree: opts.cwd,
      home: deps.home,
      tmpdir: opts.tmpdir,
      scratchDir: opts.scratchDir,
      agentState,
      write: [...(sandbox.write ?? []).map(at), ...(opts.write ?? [])],
      readDeny: [...(sandbox.read_deny ?? []).map(at), ownFolderOr(deps.grove.socketPath)],
      groveData: deps.grove.dataDir,
      groveConfig: ownFolderOr(deps.grove.configFile),
      // Every project's worktrees folder: the session's own worktree is bound again inside it.
      otherWorktrees: worktreeRoots,
    });
    if (!r.ok) throw new GroveError(r.code, r.message);
    const allow = [
      ...[...(opts.agent?.sandbox?.hosts ?? []), ...(sandbox.network ?? [])].map(parseNetworkEntry).filter((e) => e !== null),
      ...baseUrlEntries(opts.net.env),
    ];
    await mkdir(opts.net.dir, { recursive: true, mode: 0o700 });
    const refuse = (opts.agent?.sandbox?.refuse ?? []).map(parseNetworkEntry).filter((e) => e !== null);
    const runner = sandboxNetArgv({ grove: groveCommand(), dir: opts.net.dir, record: opts.net.record, allow, refuse, ...(opts.net.askSession !== null ? { askSession: opts.net.askSession } : {}) });
    return [...runner, ...bwrapArgv(deps.check.bwrap, r.policy, opts.command, { plan: netPlan(opts.net.dir, allow), socat: deps.check.socat })];
  }

  return { decide, wrap };
}

export type Confine = ReturnType<typeof createConfine>;
