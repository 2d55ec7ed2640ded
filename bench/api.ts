// API throughput and latency: GET /api/projects and GET /api/sessions/:id at concurrency 1 and
// 32 over the socket, against a bare node:http server (its own process) answering the same JSON
// on a socket; and the TCP front against a bare undici forwarder of the same shape in front of
// the same socket (and, for information, against the socket directly). Also session start
// against a raw spawn, and requests on new connections (no target: the front looks up each
// one's owner).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { sseEnd } from '../daemon/client/sse.ts';
import { spawnWrapped } from '../daemon/sessions/spawn.ts';
import { sessionFiles } from '../daemon/sessions/wrapper.ts';
import { call, FIXTURE_AGENT, fixtureHome, readyTask, spawnUntil, startBenchDaemon, stopProcess } from './daemon.ts';
import { round, summarize } from './stats.ts';

const AGENT = FIXTURE_AGENT;
// Session starts not counted, on both sides: just after it is ready, a new daemon keeps a core
// busy in V8's helper thread (tiering up PGlite's WebAssembly), which slows the first starts of
// both sides.
const WARM_STARTS = 20;

// `total` requests at `concurrency`; returns requests/s and latency percentiles.
async function load(pool: Pool, urlPath: string, total: number, concurrency: number) {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        const res = await pool.request({ method: 'GET', path: urlPath });
        await res.body.text();
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const st = summarize(lat);
  return { rps: round(total / secs, 0), p50_ms: round(st.median), p99_ms: round(st.p99) };
}

type Load = Awaited<ReturnType<typeof load>>;

// One GET on a connection of its own (no keep-alive), as curl or a script makes it.
function freshGet(target: http.RequestOptions, urlPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get({ ...target, path: urlPath, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      })
      .on('error', reject);
  });
}

// New connections: a GET on a connection of its own through the TCP front against the socket;
// and a keep-alive client on the socket while another client opens a TCP connection per request,
// against the same client alone.
async function benchNewConnections(api: Pool, socketPath: string, port: number, n: number) {
  const tcp = { host: '127.0.0.1', port };
  const sock = { socketPath };
  for (let i = 0; i < 30; i++) {
    await freshGet(tcp, '/api/projects');
    await freshGet(sock, '/api/projects');
  }
  const viaTcp: number[] = [];
  const viaSock: number[] = [];
  for (let i = 0; i < n; i++) {
    viaTcp.push(await freshGet(tcp, '/api/projects'));
    viaSock.push(await freshGet(sock, '/api/projects'));
  }
  const quiet = await load(api, '/api/projects', n * 5, 1);
  let stop = false;
  const churn = (async () => {
    while (!stop) await freshGet(tcp, '/api/projects');
  })();
  const churned = await load(api, '/api/projects', n * 5, 1);
  stop = true;
  await churn;
  const t = summarize(viaTcp);
  const u = summarize(viaSock);
  return {
    new_connection_ms: { tcp_front: t, socket: u, ratio_p50: round(t.median / u.median) },
    socket_while_tcp_connections_churn_ms: { churned, quiet, ratio_p50: round(churned.p50_ms / quiet.p50_ms) },
  };
}

// Each figure's median over the rounds, and how many rounds there were.
function medianOfRounds(rs: Load[]): Load & { rounds: number } {
  const med = (k: keyof Load) => summarize(rs.map((r) => r[k])).median;
  return { rps: med('rps'), p50_ms: med('p50_ms'), p99_ms: med('p99_ms'), rounds: rs.length };
}

export async function benchApi(opts: { template: string; requests: number; rounds: number; sessionStarts: number }) {
  const home = fixtureHome(opts.template);
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-api-'));
  const d = await startBenchDaemon({ template: null, home, port: true });
  const bareSock = path.join(root, 'bare.sock');
  try {
    const { repo, task } = await readyTask(d.api, root, 'api');

    // Session start: the 201 against a raw spawn of the same command through the same wrapper.
    const starts: number[] = [];
    const raws: number[] = [];
    let session: any;
    // Each side starts on a quiet machine: the raw child is awaited to its exit, and grove's
    // session to its recorded end (its event stream closes after `end`); otherwise the next start
    // would share the daemon's store thread with the writes that end the previous session.
    for (let i = 0; i < opts.sessionStarts + WARM_STARTS; i++) {
      let t0 = performance.now();
      session = await call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: 'exit:0' });
      starts.push(performance.now() - t0);
      const stream = await d.api.request({ method: 'GET', path: `/api/sessions/${session.id}/output`, headers: { accept: 'text/event-stream' } });
      if ((await sseEnd(stream.body)) === null) throw new Error('the session stream closed before its end');
      t0 = performance.now();
      const child = spawnWrapped({ files: sessionFiles(root, `raw-${i}`), command: [AGENT, 'exit:0'], cwd: repo, env: { PATH: process.env.PATH ?? '' } });
      if (child.pid === undefined) throw new Error('raw spawn failed');
      raws.push(performance.now() - t0);
      child.go(); // the wrapper holds until told (see wrapper.ts)
      await child;
    }
    const s = summarize(starts.slice(WARM_STARTS));
    const r = summarize(raws.slice(WARM_STARTS));

    // The same JSON from a bare node:http server on a socket.
    const projectsJson = JSON.stringify(await call(d.api, 'GET', '/api/projects'));
    const sessionJson = JSON.stringify(await call(d.api, 'GET', `/api/sessions/${session.id}`));
    // In a process of its own, like the daemon: in the bench's process it would share one event
    // loop with the client (no wake-up between processes at concurrency 1, one core for both at 32).
    const table = JSON.stringify({ '/api/projects': projectsJson, [`/api/sessions/${session.id}`]: sessionJson });
    const { proc: bare } = await spawnUntil(['bench/bare-http.mjs', bareSock, table], process.env, (l) => l === 'ready');
    const barePool = new Pool('http://localhost', { socketPath: bareSock, connections: 32 });
    // What any front of DESIGN's shape (a second HTTP hop through undici) costs: a bare
    // forwarder in front of the daemon's socket, as the TCP front is.
    const { proc: fwd, line: fwdPort } = await spawnUntil(['bench/bare-forwarder.mjs', d.socketPath], process.env, (l) => /^\d+$/.test(l));
    const fwdPool = new Pool(`http://127.0.0.1:${fwdPort}`, { connections: 32 });
    const tcpPool = new Pool(`http://127.0.0.1:${d.port}`, { connections: 32 });
    const out: Record<string, unknown> = {};
    for (const [name, p] of [
      ['projects', '/api/projects'],
      ['session', `/api/sessions/${session.id}`],
    ] as const) {
      for (const c of [1, 32]) {
        // Warm-up of every server measured (JIT, connections), not only grove's.
        for (const pool of [d.api, barePool, tcpPool, fwdPool]) await load(pool, p, 500, c);
        // Rounds alternate between the servers, and each figure is the median over the rounds:
        // a burst is short, and a pause of either side (a GC, a checkpoint, other processes on
        // the machine) swings a single burst's ratio.
        const rounds: Record<'grove' | 'raw' | 'tcp' | 'forwarded', Load[]> = { grove: [], raw: [], tcp: [], forwarded: [] };
        // At 32 a round of `requests` is over too soon to measure: five times as many.
        const n = c === 1 ? opts.requests : opts.requests * 5;
        for (let i = 0; i < opts.rounds; i++) {
          rounds.grove.push(await load(d.api, p, n, c));
          rounds.raw.push(await load(barePool, p, n, c));
          rounds.tcp.push(await load(tcpPool, p, n, c));
          rounds.forwarded.push(await load(fwdPool, p, n, c));
        }
        const grove = medianOfRounds(rounds.grove);
        const raw = medianOfRounds(rounds.raw);
        const tcp = medianOfRounds(rounds.tcp);
        const forwarded = medianOfRounds(rounds.forwarded);
        out[`${name}_c${c}`] = {
          socket: grove,
          bare_node_http: raw,
          tcp_front: tcp,
          throughput_vs_bare: round(grove.rps / raw.rps),
          tcp_p50_vs_socket: round(tcp.p50_ms / grove.p50_ms),
          bare_forwarder: forwarded,
          tcp_p50_vs_forwarder: round(tcp.p50_ms / forwarded.p50_ms),
          // as a cost, like the p50s: the forwarder's rate over the front's
          tcp_rps_vs_forwarder: round(forwarded.rps / tcp.rps),
        };
      }
    }
    const fresh = await benchNewConnections(d.api, d.socketPath, d.port!, opts.requests / 10);
    await barePool.close();
    await tcpPool.close();
    await fwdPool.close();
    await stopProcess(fwd, 'stdin');
    await stopProcess(bare, 'stdin');
    return {
      session_start_ms: { grove: s, raw_spawn: r, ratio_p50: round(s.median / r.median) },
      ...out,
      ...fresh,
    };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
