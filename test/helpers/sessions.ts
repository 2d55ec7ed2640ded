import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { readPages } from '../../daemon/client/calls.ts';
import { sse, type SseEvent } from '../../daemon/client/sse.ts';
import { addProject, makeHome, removeProject, ROOT, sharedDaemon, startDaemon, type Cleanup, type TestDaemon } from './daemon.ts';
import { makeRepo, makeTempDir } from './git.ts';

export const AGENT = path.join(ROOT, 'test', 'fixtures', 'agent.sh');

// A GROVE_HOME whose user config defines the fixture agent (and more, if given).
export function agentHome(t: Cleanup, config: Record<string, unknown> = {}): string {
  const home = makeHome(t);
  const agents = { fixture: { command: [AGENT, '{prompt}'] }, ...((config.agents as object) ?? {}) };
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ ...config, agents }));
  return home;
}

// A daemon with the fixture agent, a project whose .grove.json names it, and one ready task.
export async function readyTask(t: TestContext, opts: { grove?: Record<string, unknown>; config?: Record<string, unknown> } = {}) {
  const d = await startDaemon(t, { home: agentHome(t, opts.config) });
  return readyTaskOn(d, t, opts.grove);
}

// One daemon for a file's tests, whose user config defines the fixture agent (and more, if given).
export function sharedAgentDaemon(config: Record<string, unknown> = {}): () => Promise<TestDaemon> {
  return sharedDaemon((c) => ({ home: agentHome(c, config) }));
}

// On a running daemon: a project of its own whose .grove.json names the fixture agent (and more,
// if given), and one ready task in it.
export async function readyTaskOn(d: TestDaemon, t: Cleanup, grove: Record<string, unknown> = {}) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', ...grove }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'agent work' } })).json;
  if (task.status !== 'ready') throw new Error(`task is ${task.status}`);
  return { d, repo, project, task };
}

// On a daemon that outlives the test: a project named `name` whose .grove.json names the fixture
// agent, removed (its tasks archived first, its automations with it) before its repository is:
// cleanups run in the order they are registered.
export async function fixtureProject(t: Cleanup, d: TestDaemon, name: string): Promise<any> {
  let id: string | undefined;
  t.after(async () => {
    if (id === undefined) return;
    await removeProject(d, id);
  });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const r = await d.socket('POST', '/api/projects', { body: { path: repo, name } });
  if (r.status !== 201) throw new Error(`adding ${repo}: ${r.text}`);
  id = r.json.id;
  return r.json;
}

// A named pipe the fixture's `wait:` step blocks on until release() writes to it.
export function gate(t: TestContext): { path: string; release(): void } {
  const p = path.join(makeTempDir(t), 'gate');
  execFileSync('mkfifo', [p]);
  return { path: p, release: () => writeFileSync(p, 'go\n') };
}

export function waitSessionEnd(d: TestDaemon, id: string): Promise<any> {
  return d.waitForLog((l) => l.msg === 'session ended' && l.session === id, 60_000);
}

// Every output line of a session, through the JSON pages (the client room's paging loop).
export async function allLines(d: TestDaemon, id: string): Promise<any[]> {
  const out: any[] = [];
  await readPages(0, 5000, async (after) => ((p) => ({ items: p.lines, next: p.next }))((await d.socket('GET', `/api/sessions/${id}/output?after=${after}&limit=5000`)).json), (l) => out.push(l));
  return out;
}

// Every event (of the filters in `query`, e.g. `&project_id=...`), through the JSON pages.
export async function allEvents(d: TestDaemon, query = ''): Promise<any[]> {
  const out: any[] = [];
  await readPages(0, 1000, async (after) => ((p) => ({ items: p.events, next: p.next }))((await d.socket('GET', `/api/events?after=${after}&limit=1000${query}`)).json), (e) => out.push(e));
  return out;
}

// Processes of a process group that are still running (zombies do not count).
export function liveGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const line of execFileSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' }).split('\n')) {
    const [pid, g, stat] = line.trim().split(/\s+/);
    if (Number(g) === pgid && stat && !stat.startsWith('Z')) out.push(Number(pid));
  }
  return out;
}

export type { SseEvent };

// Reads an SSE response into events until `until` says stop (or the stream ends). `stallMs`:
// a reader that takes nothing for that long after the headers, so the server must wait for it.
export async function readSse(
  url: string,
  opts: { headers?: Record<string, string>; until?: (events: SseEvent[]) => boolean; socketPath?: string; stallMs?: number },
): Promise<SseEvent[]> {
  const ac = new AbortController();
  const { Pool } = await import('undici');
  const dispatcher = opts.socketPath ? new Pool('http://localhost', { socketPath: opts.socketPath }) : undefined;
  const res = await request(url, {
    headers: { accept: 'text/event-stream', ...(opts.headers ?? {}) },
    signal: ac.signal,
    ...(dispatcher ? { dispatcher } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`SSE answered ${res.statusCode}: ${await res.body.text()}`);
  const events: SseEvent[] = [];
  try {
    if (opts.stallMs) {
      res.body.pause();
      await delay(opts.stallMs);
    }
    for await (const ev of sse(res.body)) {
      events.push(ev);
      if (opts.until?.(events)) {
        ac.abort();
        return events;
      }
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    await dispatcher?.close().catch(() => {});
  }
  return events;
}

export function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}
