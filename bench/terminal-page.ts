/// <reference lib="dom" />
// The dashboard's terminal (DESIGN §21) in the same Chromium as its tests, with its 100,000-line
// scrollback full: a task's shell on the task's page, a key typed to its echo drawn on the screen,
// measured in the page (the key's `keydown` to the mutation of xterm's rows that shows it), with
// the scrollback empty (the baseline, same page, same run) and after `seq 100000`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, KEEP_NAMES } from '../test/helpers/browser.ts';
import { call, fixtureHome, readyTask, startBenchDaemon } from './daemon.ts';
import type { Row } from './table.ts';
import { round, summarize } from './stats.ts';

const KEYS = 'abcdefghijklmnoprstuvwxyz';
// Keys typed on one line before it is cleared (Ctrl-U): the line never wraps.
const PER_LINE = 20;

// The rows xterm draws (its DOM renderer: one div a row), as text.
const rowsText = (page: Page) => page.locator('.terminal .xterm-rows').evaluate((rows) => [...rows.children].map((r) => (r.textContent ?? '').trimEnd()));

async function untilRow(page: Page, what: string, check: (row: string) => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if ((await rowsText(page)).some(check)) return;
    if (Date.now() > end) throw new Error(`no row ${what} on the screen`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// `n` keys typed one at a time; each one's milliseconds from its keydown to the rows showing it.
async function echoes(page: Page, n: number): Promise<number[]> {
  const out: number[] = [];
  let line = '';
  for (let i = 0; i < n; i++) {
    if (i % PER_LINE === 0 && line !== '') {
      await page.keyboard.press('Control+U');
      const gone = line;
      await untilRow(page, 'cleared', (row) => !row.endsWith(gone), 10_000).catch(() => {});
      line = '';
    }
    const key = KEYS[i % KEYS.length]!;
    line += key;
    // The watch is set before the key goes, so that an echo drawn at once is not missed.
    await page.evaluate((want) => {
      const rows = document.querySelector('.terminal .xterm-rows')!;
      const w = window as unknown as { __keyAt: number; __echo: Promise<number> };
      w.__echo = new Promise((resolve) => {
        const mo = new MutationObserver(() => {
          if ([...rows.children].some((r) => (r.textContent ?? '').trimEnd().endsWith(want))) {
            mo.disconnect();
            resolve(performance.now() - w.__keyAt);
          }
        });
        mo.observe(rows, { childList: true, subtree: true, characterData: true });
      });
    }, line);
    await page.keyboard.press(key);
    out.push(await page.evaluate(() => (window as unknown as { __echo: Promise<number> }).__echo));
  }
  await page.keyboard.press('Control+U');
  return out;
}

export async function benchTerminalPage(opts: { template: string; lines: number; keys: number }) {
  const home = fixtureHome(opts.template);
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-termpage-'));
  const d = await startBenchDaemon({ template: null, home, port: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  let shell: string | null = null;
  try {
    const { task } = await readyTask(d.api, root, 'terminal page');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(KEEP_NAMES);
    await context.addInitScript(() => document.addEventListener('keydown', () => ((window as unknown as { __keyAt: number }).__keyAt = performance.now()), true));
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
    await page.getByRole('button', { name: 'Terminal', exact: true }).click();
    const card = page.locator('section[aria-label="Terminals"] .turn');
    await card.locator('.terminal[data-state="live"]').waitFor();
    shell = await card.getAttribute('data-session');
    await untilRow(page, 'with a prompt', (row) => row.trim() !== '', 20_000);

    const warm = 5;
    const empty = (await echoes(page, opts.keys + warm)).slice(warm);
    const t0 = performance.now();
    await page.keyboard.type(`seq ${opts.lines}`);
    await page.keyboard.press('Enter');
    await untilRow(page, `${opts.lines}`, (row) => row === String(opts.lines), 600_000);
    const printed_s = (performance.now() - t0) / 1000;
    const full = (await echoes(page, opts.keys + warm)).slice(warm);
    const e = summarize(empty);
    const f = summarize(full);
    return {
      lines: opts.lines,
      keys: opts.keys,
      shown_s: round(printed_s),
      empty: { p50: round(e.median), p99: round(e.p99) },
      full: { p50: round(f.median), p99: round(f.p99) },
    };
  } finally {
    if (shell !== null) await call(d.api, 'DELETE', `/api/sessions/${shell}`).catch(() => {});
    await browser.close();
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export function terminalPageRows(t: Awaited<ReturnType<typeof benchTerminalPage>>): Row[] {
  return [
    {
      what: `dashboard terminal: a key to its echo on the screen with ${t.lines.toLocaleString('en')} lines in its scrollback (\`seq\` in the task's shell, on the screen after ${t.shown_s} s) vs the same page with none (ms, p99 of ${t.keys}, in the page)`,
      grove: t.full.p99,
      base: t.empty.p99,
      ratio: round(t.full.p99 / t.empty.p99),
      target: { op: '≤', limit: 100, of: 'ms' },
    },
    { what: 'dashboard terminal: the same key to its echo (ms, p50)', grove: t.full.p50, base: t.empty.p50, ratio: round(t.full.p50 / t.empty.p50) },
  ];
}
