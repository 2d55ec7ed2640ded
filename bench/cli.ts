// CLI latency: `grove status` (node bin/grove.js status) against a running daemon, beside a bare
// `node -e 0`, alternating, after a warm-up of each; with GROVE_BENCH_OLD=<built older
// checkout>[:<another>…], each one's `grove status` against the same daemon in the same rounds. And the same daemon reached through
// `grove --host` (DESIGN §14.1): over a real sshd on loopback and a warm master, beside the local
// `grove status` of the same rounds and the ssh round trip alone (`ssh box true` over the master).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseSshUrl } from '../daemon/client/hosts-file.ts';
import { closeMaster, controlPaths, sshDir } from '../daemon/client/ssh.ts';
import { remoteBin, startSshd } from '../test/helpers/sshd.ts';
import { ROOT, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

// From the spawn of `command args…` to its exit, which must be 0.
function timeRun(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${command} ${args.join(' ')} exited ${code}`))));
  });
}

export async function benchCli(opts: { template: string; runs: number }) {
  const d = await startBenchDaemon({ template: opts.template });
  const cleanups: Array<() => unknown> = [];
  try {
    const env = { ...process.env, GROVE_HOME: d.home };
    const grove = path.join(ROOT, 'bin', 'grove.js');
    // The same daemon as a remote: an sshd whose sessions run this checkout's `grove`, and a
    // client with an ssh config and a runtime folder of its own.
    const c = { after: (fn: () => unknown) => void cleanups.push(fn) };
    const sshd = await startSshd(c, { env: { PATH: `${remoteBin(c, d.socketPath)}:/usr/bin:/bin`, GROVE_HOME: d.home } });
    const runtime = mkdtempSync(path.join(tmpdir(), 'grove-bench-r-'));
    cleanups.push(() => rmSync(runtime, { recursive: true, force: true }));
    const hostEnv = { ...env, GROVE_SSH_CONFIG: sshd.clientConfig, XDG_RUNTIME_DIR: runtime };
    const target = parseSshUrl(sshd.url());
    const sshOpts = { runtimeDir: sshDir(hostEnv, process.getuid?.() ?? 0), env: hostEnv };
    cleanups.push(() => closeMaster(target, sshOpts));
    const { master } = controlPaths(target, sshOpts.runtimeDir);

    const olds = (process.env.GROVE_BENCH_OLD ?? '').split(':').filter(Boolean);
    const runs = {
      status: () => timeRun(process.execPath, [grove, 'status'], env),
      bare: () => timeRun(process.execPath, ['-e', '0'], env),
      ...Object.fromEntries(olds.map((dir, i) => [`old${i}`, () => timeRun(process.execPath, [path.join(dir, 'bin', 'grove.js'), 'status'], env)])),
      // The first one (the warm-up) opens the master and the forward; the rest reuse them.
      host: () => timeRun(process.execPath, [grove, '--host', sshd.url(), 'status'], hostEnv),
      ssh: () => timeRun('ssh', ['-F', sshd.clientConfig, '-o', `ControlPath=${master}`, '-o', 'BatchMode=yes', '-p', String(target.port), target.destination, 'true'], hostEnv),
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
    for (const run of Object.values(runs)) await run();
    for (let i = 0; i < opts.runs; i++) for (const [k, run] of Object.entries(runs)) times[k]!.push(await run());
    const g = summarize(times.status!);
    const n = summarize(times.bare!);
    const h = summarize(times.host!);
    const s = summarize(times.ssh!);
    return {
      grove_status_ms: g,
      node_e0_ms: n,
      ratio_p50: round(g.median / n.median),
      host_status_ms: h,
      ssh_true_ms: s,
      host_ratio_p50: round(h.median / g.median),
      old: olds.map((checkout, i) => ((o) => ({ checkout, status_ms: o, ratio_p50: round(o.median / n.median) }))(summarize(times[`old${i}`]!))),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    await d.stop();
  }
}
