/// <reference lib="dom" />
// The dashboard in the same Chromium as its tests (DESIGN §12): the board's first paint with 50
// tasks against the browser showing GET /api/tasks as it is; 100,000 lines of one session shown
// against a bare EventSource reading the same stream on the same origin; a jump to the middle of
// those lines against one frame of the same page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { request } from 'undici';
import { CHROMIUM, CHROMIUM_ARGS, KEEP_NAMES } from '../test/helpers/browser.ts';
import { sseEnd } from '../daemon/client/sse.ts';
import { call, fixtureHome, readyTask, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

const VIEWPORT = { width: 1280, height: 800 };

// A page of its own (a new context: nothing cached), closed by `done`.
async function freshPage(browser: Browser): Promise<{ page: Page; done: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  await context.addInitScript(KEEP_NAMES);
  return { page: await context.newPage(), done: () => context.close() };
}

// Milliseconds from the navigation's start to the first frame at which `ready` (which answers
// performance.now() then) holds. A function, not a string: the dashboard's CSP forbids eval.
async function untilFrame<A>(page: Page, url: string, ready: (arg: A) => number | false, arg: A): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(ready as (arg: unknown) => number | false, arg as unknown, { polling: 'raf', timeout: 300_000 });
  return (await handle.jsonValue()) as number;
}

export async function benchDashboard(opts: { template: string; tasks: number; lines: number; rounds: number }) {
  const home = fixtureHome(opts.template);
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-ui-'));
  const d = await startBenchDaemon({ template: null, home, port: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const base = `http://127.0.0.1:${d.port}`;
    const { task } = await readyTask(d.api, root, 'task 1');
    for (let i = 2; i <= opts.tasks; i++) await call(d.api, 'POST', '/api/tasks', { project_id: task.project_id, name: `task ${i}` });

    // (1) The board with every task on it, from a cold page, against the raw JSON of the same tasks.
    const board = { grove: [] as number[], raw: [] as number[] };
    for (let r = 0; r < opts.rounds + 1; r++) {
      const a = await freshPage(browser);
      const g = await untilFrame(a.page, `${base}/`, (n) => document.querySelectorAll('.card').length >= n && performance.now(), opts.tasks);
      await a.done();
      const b = await freshPage(browser);
      const raw = await untilFrame(b.page, `${base}/api/tasks`, (last) => !!document.body?.textContent?.includes(last) && performance.now(), `task ${opts.tasks}"`);
      await b.done();
      if (r === 0) continue; // warm-up
      board.grove.push(g);
      board.raw.push(raw);
    }

    // (2) One session's lines, printed and stored first; then shown, against a bare EventSource.
    const session = await call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: `print:${opts.lines}` });
    const res = await request(`http://localhost/api/sessions/${session.id}/output`, { dispatcher: d.api, headers: { accept: 'text/event-stream', 'last-event-id': String(opts.lines - 1) } });
    if ((await sseEnd(res.body)) === null) throw new Error('the session did not end');
    const lines = { grove: [] as number[], raw: [] as number[] };
    const jump = { grove: [] as number[], frame: [] as number[] };
    for (let r = 0; r < opts.rounds + 1; r++) {
      const a = await freshPage(browser);
      const g = await untilFrame(
        a.page,
        `${base}/#/tasks/${task.id}`,
        (n) => {
          const o = document.querySelector<HTMLElement>('.output');
          return o?.dataset.lines === n && o.dataset.ended === 'true' && performance.now();
        },
        String(opts.lines),
      );
      // From setting the scroll position to the frame that shows the line there.
      const j = await a.page.evaluate(async (line) => {
        const box = document.querySelector('.raw')!;
        const frame = () => new Promise((r) => requestAnimationFrame(r));
        await frame();
        const t0 = performance.now();
        await frame();
        const oneFrame = performance.now() - t0;
        const t1 = performance.now();
        box.scrollTop = (line - 1) * 18;
        while (!Array.from(box.querySelectorAll('.row')).some((r) => r.textContent!.trimEnd().endsWith(`line ${line}`))) await frame();
        return { ms: performance.now() - t1, oneFrame };
      }, Math.floor(opts.lines / 2));
      await a.done();
      const b = await freshPage(browser);
      await b.page.goto(`${base}/favicon.svg`);
      const raw = await b.page.evaluate(
        (id) =>
          new Promise<number>((resolve) => {
            let n = 0;
            const src = new EventSource(`/api/sessions/${id}/output`);
            src.addEventListener('line', () => n++);
            src.addEventListener('end', () => (src.close(), resolve(n > 0 ? performance.now() : -1)));
          }),
        session.id,
      );
      await b.done();
      if (r === 0) continue;
      lines.grove.push(g);
      lines.raw.push(raw);
      jump.grove.push(j.ms);
      jump.frame.push(j.oneFrame);
    }
    const med = (xs: number[]) => round(summarize(xs).median, 1);
    return {
      tasks: opts.tasks,
      lines: opts.lines,
      rounds: opts.rounds,
      board_first_paint_ms: { grove: med(board.grove), raw_json: med(board.raw), ratio: round(med(board.grove) / med(board.raw)) },
      lines_shown_ms: { grove: med(lines.grove), bare_eventsource: med(lines.raw), ratio: round(med(lines.grove) / med(lines.raw)) },
      jump_to_middle_ms: { grove: med(jump.grove), one_frame: med(jump.frame), ratio: round(med(jump.grove) / med(jump.frame)) },
    };
  } finally {
    await browser.close();
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
