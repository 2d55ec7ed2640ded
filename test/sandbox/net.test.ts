import '../helpers/env.ts';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseNetworkEntry, type NetEntry } from '../../daemon/sandbox/allow.ts';
import { bwrapArgv } from '../../daemon/sandbox/bwrap.ts';
import { checkSandbox } from '../../daemon/sandbox/check.ts';
import { netLauncher, netPlan, runSandboxNet, sandboxNetArgv } from '../../daemon/sandbox/net.ts';
import { policyFor } from '../../daemon/sandbox/policy.ts';
import type { NetTarget } from '../../daemon/sandbox/proxy.ts';
import { GROVE } from '../helpers/cli.ts';
import { ROOT } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';
import { BIG_BYTES as BIG, naming as server } from '../helpers/http.ts';
import { machineAddress, sandboxFixture, type SandboxFixture } from '../helpers/sandbox.ts';
import { marker, processesMatching, waitPidGone } from '../helpers/state.ts';

const PATH = process.env.PATH ?? '/usr/bin:/bin';
const entries = (...s: string[]): NetEntry[] => s.map((e) => parseNetworkEntry(e) ?? assert.fail(e));

interface Confined {
  dir: string;
  record: string;
  argv: string[];
  env: Record<string, string>;
  /** the agent's output, written to a file in its worktree */
  out: string;
}

// A session's parts: a worktree's policy, the proxy's folder, the record file, and bwrap's argv
// around `script` (its output goes to `out`, in the worktree; the command's own stdout is fd 9).
// `o.socat`: another socat; `o.dir`: the proxy's folder in the fixture (default: a temporary
// folder); `o.readDeny`: folders hidden from the agent.
async function confinedSession(t: TestContext, allow: NetEntry[], script: string, o: { socat?: string; dir?: (f: SandboxFixture) => string; readDeny?: string[] } = {}): Promise<Confined> {
  const c = await checkSandbox({ path: PATH });
  assert.ok(c.ok, JSON.stringify(c));
  const socat = o.socat ?? c.socat;
  const f = sandboxFixture(t);
  const p = policyFor({ ...f.input, readDeny: o.readDeny ?? [] });
  assert.ok(p.ok);
  const dir = o.dir ? o.dir(f) : makeTempDir(t, 'grove-net-');
  const record = path.join(makeTempDir(t, 'grove-net-record-'), 'blocked.jsonl');
  const out = path.join(f.worktree, 'out.txt');
  const argv = bwrapArgv(c.bwrap, p.policy, ['sh', '-c', `exec 9>&1 >${out} 2>&1\n${script}`], { plan: netPlan(dir, allow), socat });
  return { dir, record, argv, out, env: { PATH, HOME: f.home } };
}

function records(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => {
    const r = JSON.parse(l);
    assert.equal(r.kind, 'network');
    assert.ok(!Number.isNaN(Date.parse(r.at)));
    return r.target;
  });
}

function made(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

// curl inside, printing `label=<http code>:<body>` (or the exit code when it had no answer).
const curl = (label: string, args: string) => `b=$(curl -sS -m 10 -w ' %{http_code}' ${args} 2>/dev/null); echo "${label}=$? $b"`;

async function runConfined(s: Confined, allow: NetEntry[], ask?: (t: NetTarget) => Promise<boolean>): Promise<{ code: number; out: string }> {
  const code = await runSandboxNet({ dir: s.dir, record: s.record, allow, ask, command: ['env', '-i', ...Object.entries(s.env).map(([k, v]) => `${k}=${v}`), ...s.argv] });
  return { code, out: readFileSync(s.out, 'utf8') };
}

test('confined: an allowed loopback port answers through the proxy and on its own port; loopback is not proxied (another port finds nothing listening); another host is refused and recorded once per connection; a direct connection goes nowhere', { timeout: 60_000 }, async (t) => {
  const ok = await server(t, 'allowed');
  const other = await server(t, 'other');
  const allow = entries(`127.0.0.1:${ok}`, 'registry.npmjs.org');
  const script = [
    curl('proxied', `--noproxy '' http://127.0.0.1:${ok}/a`),
    curl('loopback', `http://127.0.0.1:${ok}/l`),
    curl('direct', `--noproxy '*' http://127.0.0.1:${ok}/b`),
    `${process.execPath} -e "fetch('http://127.0.0.1:${ok}/fetch').then(r => r.text()).then(b => console.log('fetch=' + b), e => console.log('fetch=failed', e.cause?.code))"`,
    curl('other', `http://127.0.0.1:${other}/`),
    curl('other-proxied', `--noproxy '' http://127.0.0.1:${other}/`),
    curl('other-direct', `--noproxy '*' http://127.0.0.1:${other}/`),
    curl('host', 'https://example.com/'),
    curl('host-direct', `--noproxy '*' http://93.184.215.14/`),
    'echo "noproxy=[$NO_PROXY$no_proxy] socket=[$GROVE_SOCKET]"',
    'exit 7',
  ].join('\n');
  const s = await confinedSession(t, allow, script);
  s.env.NO_PROXY = 'example.com';
  s.env.GROVE_SOCKET = '/nowhere/grove.sock';
  const r = await runConfined(s, allow);
  assert.equal(r.code, 7, r.out);
  assert.match(r.out, /^proxied=0 allowed GET \/a 200$/m, r.out);
  assert.match(r.out, /^loopback=0 allowed GET \/l 200$/m, r.out);
  assert.match(r.out, /^direct=0 allowed GET \/b 200$/m, r.out);
  assert.match(r.out, /^fetch=allowed GET \/fetch$/m, r.out);
  assert.match(r.out, /^other=7  000$/m, r.out); // not proxied: nothing listens on that port inside
  assert.match(r.out, /^other-proxied=0 grove: the sandbox does not allow 127\.0\.0\.1:\d+\n 403$/m, r.out);
  assert.match(r.out, /^other-direct=7  000$/m, r.out); // refused: nothing listens on that port inside
  assert.match(r.out, /^host=56  000$/m, r.out); // the proxy's 403 to the CONNECT
  assert.match(r.out, /^host-direct=7  000$/m, r.out); // no route: the namespace has only lo
  // NO_PROXY is loopback, the session's own replaced; GROVE_SOCKET kept: a session's is its own
  // socket, which answers its approvals only.
  const loopback = 'localhost,127.0.0.1,::1,[::1],127.0.0.0/8';
  assert.ok(r.out.includes(`noproxy=[${loopback}${loopback}] socket=[/nowhere/grove.sock]`), r.out);
  assert.deepEqual(records(s.record), [`127.0.0.1:${other}`, 'example.com:443']);
});

test('confined: 50 MB from a loopback server arrive whole through the proxy and through the loopback port', { timeout: 120_000 }, async (t) => {
  const port = await server(t, 'big');
  const allow = entries(`127.0.0.1:${port}`);
  const script = [
    `curl -sS -o "$TMPDIR/p" http://127.0.0.1:${port}/big && echo "proxied=$(wc -c < "$TMPDIR/p")"`,
    `curl -sS --noproxy '*' -o "$TMPDIR/d" http://127.0.0.1:${port}/big && echo "direct=$(wc -c < "$TMPDIR/d")"`,
    'rm -f "$TMPDIR/p" "$TMPDIR/d"',
  ].join('\n');
  const s = await confinedSession(t, allow, script);
  const r = await runConfined(s, allow);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`^proxied=${BIG}$`, 'm'), r.out);
  assert.match(r.out, new RegExp(`^direct=${BIG}$`, 'm'), r.out);
});

test('confined: the agent starts only once the listeners inside listen, however long socat takes', { timeout: 60_000 }, async (t) => {
  const port = await server(t, 'first');
  const allow = entries(`127.0.0.1:${port}`);
  // the agent's very first act is to connect, through the proxy and on the loopback port
  const script = [curl('proxied', `http://127.0.0.1:${port}/p`), curl('direct', `--noproxy '*' http://127.0.0.1:${port}/d`)].join('\n');
  const s = await confinedSession(t, allow, script, { socat: path.join(ROOT, 'test', 'fixtures', 'slow-socat.sh') });
  const r = await runConfined(s, allow);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /^proxied=0 first GET \/p 200$/m, r.out);
  assert.match(r.out, /^direct=0 first GET \/d 200$/m, r.out);
});

test("confined: a unix socket in a hidden folder (the daemon's) is out of reach, while the proxy's folder inside grove's hidden data folder is bound", { timeout: 60_000 }, async (t) => {
  const port = await server(t, 'through');
  const allow = entries(`127.0.0.1:${port}`);
  // A daemon's socket in a folder of its own, as grove's is (XDG_RUNTIME_DIR/grove, /tmp/grove-<uid>).
  const runtime = makeTempDir(t, 'grove-run-');
  const daemonSocket = path.join(runtime, 'grove.sock');
  const daemon = http.createServer((_req, res) => res.end('the daemon answered'));
  daemon.listen(daemonSocket);
  await once(daemon, 'listening');
  t.after(() => new Promise((r) => daemon.close(r)));
  const script = [curl('daemon', `--unix-socket ${daemonSocket} http://grove/api/health`), curl('proxied', `http://127.0.0.1:${port}/x`)].join('\n');
  const s = await confinedSession(t, allow, script, { readDeny: [runtime], dir: (f) => made(path.join(f.input.groveData, 'sessions', 's1', 'net')) });
  const r = await runConfined(s, allow);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /^daemon=7  000$/m, r.out);
  assert.match(r.out, /^proxied=0 through GET \/x 200$/m, r.out);
});

test('confined: an IPv6 loopback entry [::1]:port answers through the proxy and on [::1] inside', { timeout: 60_000 }, async (t) => {
  const port = await server(t, 'six', '::1');
  const allow = entries(`[::1]:${port}`);
  const script = [curl('proxied', `http://[::1]:${port}/p`), curl('direct', `--noproxy '*' http://[::1]:${port}/d`)].join('\n');
  const s = await confinedSession(t, allow, script);
  const r = await runConfined(s, allow);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /^proxied=0 six GET \/p 200$/m, r.out);
  assert.match(r.out, /^direct=0 six GET \/d 200$/m, r.out);
});

test('confined, asking: a blocked host waits for the answer: allowed it goes through, denied it is refused and recorded', { timeout: 60_000 }, async (t) => {
  // A host only the proxy reaches: loopback is not proxied inside.
  const host = machineAddress();
  const port = await server(t, 'asked', host);
  const asked: NetTarget[] = [];
  const answers = [true, false];
  const ask = async (target: NetTarget) => {
    asked.push(target);
    return answers.shift()!;
  };
  const script = [curl('first', `http://${host}:${port}/1`), curl('second', `http://${host}:${port}/2`)].join('\n');
  const s = await confinedSession(t, [], script);
  const r = await runConfined(s, [], ask);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /^first=0 asked GET \/1 200$/m, r.out);
  assert.ok(r.out.includes(`second=0 grove: the sandbox does not allow ${host}:${port}\n 403`), r.out);
  assert.deepEqual(asked, [{ host, port }, { host, port }]);
  assert.deepEqual(records(s.record), [`${host}:${port}`]);
});

test('grove sandbox-net keeps forwarding after the process that started it is gone (a daemon restart does not cut the network), and exits with the agent', { timeout: 60_000 }, async (t) => {
  const port = await server(t, 'after');
  const allow = entries(`127.0.0.1:${port}`);
  const fifos = makeTempDir(t, 'grove-net-fifo-');
  const go = path.join(fifos, 'go');
  execFileSync('mkfifo', [go]);
  // The agent says it is up, waits for the test's word, then fetches and ends.
  const script = ['echo up >&9', `read x < ${go}`, curl('after', `http://127.0.0.1:${port}/x`), 'exit 3'].join('\n');
  const s = await confinedSession(t, allow, script);
  const runner = [...sandboxNetArgv({ grove: [process.execPath, GROVE], dir: s.dir, record: s.record, allow }), ...s.argv];
  // A parent shell starts the runner in the background and exits: the runner is then an orphan.
  const parent = spawn('sh', ['-c', '"$@" 2>&1 & echo "$!"', 'sh', ...runner], { env: s.env, stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  parent.stdout.setEncoding('utf8');
  parent.stdout.on('data', (d) => (text += d));
  const [code] = await once(parent, 'exit');
  assert.equal(code, 0);
  const pid = Number(text.split('\n')[0]);
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended
    }
  });
  // The agent's `up` comes through the pipe the shell left the runner.
  while (!text.includes('up\n')) await once(parent.stdout, 'data');
  writeFileSync(go, 'go\n');
  await waitPidGone(pid);
  assert.match(readFileSync(s.out, 'utf8'), /^after=0 after GET \/x 200$/m);
  assert.ok(!existsSync(path.join(s.dir, 'proxy.sock')), 'the proxy stopped with the agent');
});

test('grove sandbox-net passes a TERM sent to it alone on to its command and answers its end as a shell does (128 + the signal), its proxy stopped', { timeout: 60_000 }, async (t) => {
  const dir = makeTempDir(t, 'grove-net-');
  const record = path.join(dir, 'blocked.jsonl');
  const m = marker(t);
  const runner = [...sandboxNetArgv({ grove: [process.execPath, GROVE], dir, record, allow: [] }), 'sh', '-c', `echo up; exec sleep ${m}`];
  const p = spawn(runner[0]!, runner.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => p.kill('SIGKILL'));
  p.stdout.setEncoding('utf8');
  let text = '';
  while (!text.includes('up\n')) text += (await once(p.stdout, 'data'))[0];
  assert.ok(existsSync(path.join(dir, 'proxy.sock')));
  const ended = once(p, 'exit');
  p.kill('SIGTERM');
  const [code, signal] = await ended;
  assert.deepEqual([code, signal], [143, null]);
  assert.ok(!existsSync(path.join(dir, 'proxy.sock')));
  assert.deepEqual(processesMatching(m), []);
});

test('netPlan: the proxy takes 127.0.0.1:3128 inside unless a loopback entry does; one listener per address and port; sandboxNetArgv writes the entries back', () => {
  const plain = netPlan('/run/s', entries('registry.npmjs.org'));
  assert.deepEqual(plain, { dir: '/run/s', proxyPort: 3128, proxySocket: '/run/s/proxy.sock', forwards: [] });
  const taken = netPlan('/run/s', entries('127.0.0.1:3128', 'localhost:3128', '[::1]:3128', '127.0.0.1:3129', '*.localhost:80'));
  assert.equal(taken.proxyPort, 3130);
  assert.deepEqual(
    taken.forwards.map((f) => [f.bind, f.port, f.host]),
    [['127.0.0.1', 3128, '127.0.0.1'], ['::1', 3128, '::1'], ['127.0.0.1', 3129, '127.0.0.1']],
  );
  const argv = sandboxNetArgv({ grove: ['node', 'grove.js'], dir: '/run/s', record: '/run/r.jsonl', allow: entries('*.github.com', '[::1]:8080'), askSession: 'S1' });
  assert.deepEqual(argv, ['node', 'grove.js', 'sandbox-net', '--dir', '/run/s', '--record', '/run/r.jsonl', '--session', 'S1', '--ask', '--allow', '*.github.com', '--allow', '[::1]:8080', '--']);
  assert.throws(() => netLauncher(netPlan('/run/a,b', []), '/usr/bin/socat', ['true']), /socat or sh would misread/);
});
