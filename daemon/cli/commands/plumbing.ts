// Commands that are processes of their own rather than one request: the daemon, the service's
// install, and the stdio servers and bridges grove runs for agents. Each answers its exit status
// (-1: the process runs on until a signal).
import type { Client } from '../../client/calls.ts';
import { EXIT } from '../errors.ts';
import { usage } from '../usage.ts';
import { str } from '../../runtime/str.ts';

export interface Plumbing {
  values: Record<string, string | boolean | string[] | undefined>;
  rest: string[];
  connect: () => Client;
}

// Runs `fn` with a client, closed after it.
async function withClient<T>(p: Plumbing, fn: (api: Client) => Promise<T>): Promise<T> {
  const api = p.connect();
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

const version = async () => (await import('../../runtime/root.ts')).VERSION;
const session = (p: Plumbing, command: string): string => {
  const s = p.values.session;
  if (typeof s !== 'string' || s === '') usage(`grove ${command} needs --session <grove session id>`);
  return s;
};

export const PLUMBING: Record<string, (p: Plumbing, word: string) => Promise<number>> = {
  async install(p, word) {
    const platform = (p.values.platform ?? process.platform) as string;
    if (platform !== 'linux' && platform !== 'darwin') usage(`grove ${word} supports linux (systemd --user) and darwin (launchd), not ${platform}`);
    const { install, uninstall } = await import('../install.ts');
    const dryRun = p.values['dry-run'] === true;
    const plan = (word === 'install' ? install : uninstall)(platform, dryRun, (s) => (p.values.json ? undefined : process.stdout.write(s + '\n')));
    if (p.values.json) process.stdout.write(JSON.stringify({ dry_run: dryRun, ...plan }, null, 2) + '\n');
    return EXIT.OK;
  },
  async uninstall(p, word) {
    return PLUMBING.install!(p, word);
  },
  async daemon() {
    const { runDaemon } = await import('../../main.ts');
    await runDaemon();
    return -1; // the daemon runs until a signal ends the process
  },
  async mcp(p) {
    const { runMcp } = await import('../../mcp/server.ts');
    const v = await version();
    await withClient(p, (api) => runMcp({ api, readOnly: p.values['read-only'] === true, version: v }));
    return EXIT.OK;
  },
  // What this machine needs to confine agents (DESIGN §18), checked for real (a namespace made)
  // with this PATH, as the daemon started from it would: 0 when it can, 1 saying what to install.
  // And whether a pseudo-terminal can be made for terminal sessions (DESIGN §21), by making one.
  async doctor(p) {
    const [{ checkSandbox }, { checkPty }] = await Promise.all([import('../../sandbox/check.ts'), import('../../terminal/check.ts')]);
    const [r, pty] = await Promise.all([checkSandbox({ path: process.env.PATH ?? '' }), checkPty()]);
    if (p.values.json) process.stdout.write(JSON.stringify({ sandbox: r, pty }, null, 2) + '\n');
    else {
      process.stdout.write(r.ok ? `sandbox: ok: agent sessions can be confined (${r.bwrap})\n` : `sandbox: missing ${r.missing}: ${r.detail}\n`);
      process.stdout.write(pty.ok ? 'terminal: ok: terminal sessions can run (a pseudo-terminal was made)\n' : `terminal: cannot run terminal sessions: ${pty.detail}\n`);
    }
    return r.ok && pty.ok ? EXIT.OK : EXIT.API;
  },
  async 'approval-mcp'(p, word) {
    const s = session(p, word);
    const { runPermit } = await import('../../bridges/permit.ts');
    const v = await version();
    await withClient(p, (api) => runPermit({ api, session: s, version: v }));
    return EXIT.OK;
  },
  async 'acp-bridge'(p, word) {
    const s = session(p, word);
    if (p.rest.length === 0) usage("grove acp-bridge needs the agent's command after --");
    const { runAcpBridge } = await import('../../bridges/acp.ts');
    const out = (line: unknown) => void process.stdout.write(JSON.stringify(line) + '\n');
    return withClient(p, (api) =>
      runAcpBridge({ api, session: s, resume: str(p.values.resume), mode: str(p.values['acp-mode']), prompt: str(p.values.prompt), command: p.rest, cwd: process.cwd(), out }),
    );
  },
  async 'codex-bridge'(p, word) {
    const s = session(p, word);
    const { mode, resume, prompt } = p.values;
    if (mode !== 'read' && mode !== 'edit') usage('grove codex-bridge needs --mode read|edit');
    if (p.rest.length === 0) usage('grove codex-bridge needs the command of codex app-server after --');
    const { runCodexBridge } = await import('../../bridges/codex.ts');
    const v = await version();
    return withClient(p, (api) => runCodexBridge({ api, session: s, mode, resume: (resume as string | undefined) ?? null, prompt: (prompt as string | undefined) ?? '', command: p.rest, version: v }));
  },
  async 'sandbox-net'(p, word) {
    const { dir, record } = p.values;
    if (typeof dir !== 'string' || dir === '') usage(`grove ${word} needs --dir <folder of the proxy's sockets>`);
    if (typeof record !== 'string' || record === '') usage(`grove ${word} needs --record <file of refused connections>`);
    if (p.rest.length === 0) usage(`grove ${word} needs the confined command (bwrap's argv) after --`);
    const { parseNetworkEntry } = await import('../../sandbox/allow.ts');
    const allow = list(p.values.allow).map((a) => parseNetworkEntry(a) ?? usage(`grove ${word}: --allow ${a} is not a host, *.host, host:port or an IP`));
    const refuse = list(p.values.refuse).map((a) => parseNetworkEntry(a) ?? usage(`grove ${word}: --refuse ${a} is not a host, *.host, host:port or an IP`));
    const { runSandboxNet } = await import('../../sandbox/net.ts');
    const run = (ask?: Parameters<typeof runSandboxNet>[0]['ask']) => runSandboxNet({ dir, record, allow, refuse, ask, command: p.rest });
    if (p.values.ask !== true) return run();
    const s = session(p, word);
    const { networkAsk } = await import('../../bridges/network.ts');
    const stop = new AbortController();
    return withClient(p, (api) => run(networkAsk(api, s, stop.signal)).finally(() => stop.abort()));
  },
  // A terminal session's program under a pseudo-terminal (DESIGN §21), held by this process.
  async 'pty-hold'(p, word) {
    const { socket, output } = p.values;
    if (typeof socket !== 'string' || socket === '') usage(`grove ${word} needs --socket <path of the holder's socket>`);
    if (typeof output !== 'string' || output === '') usage(`grove ${word} needs --output <path of the session's output file>`);
    // Loaded here: the schemas (TypeBox) are no other command's cost at start.
    const { MAX_TERMINAL_DIM } = await import('../../../schemas/terminal.ts');
    const cols = dimension(p.values.cols, MAX_TERMINAL_DIM, `grove ${word} needs --cols <1..${MAX_TERMINAL_DIM}>`);
    const rows = dimension(p.values.rows, MAX_TERMINAL_DIM, `grove ${word} needs --rows <1..${MAX_TERMINAL_DIM}>`);
    if (p.rest.length === 0) usage(`grove ${word} needs the program's command after --`);
    const { runHolder } = await import('../../terminal/holder.ts');
    return runHolder({ socket, output, cols, rows, command: p.rest });
  },
};

// A terminal's width or height, given as an option.
function dimension(v: unknown, max: number, problem: string): number {
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= max ? n : usage(problem);
}

// A repeatable option's values.
function list(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
}
