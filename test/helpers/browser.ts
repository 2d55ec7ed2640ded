// Headless Chromium (Debian's, driven by playwright-core) for the dashboard's tests: one browser
// per test file, closed after its last test; each page records the console errors it saw.
import { after } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.GROVE_CHROMIUM ?? '/usr/bin/chromium';
// The flags of a headless run on a closed network (tests and bench/dashboard.ts alike).
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// tsx compiles test code keeping function names through a `__name` helper, which functions given
// to page.evaluate then call in a page that lacks it.
export const KEEP_NAMES = { content: 'globalThis.__name = (f) => f;' };

// The file's browser, launched by the first test that asks.
export function sharedBrowser(): () => Promise<Browser> {
  let browser: Promise<Browser> | null = null;
  after(async () => {
    if (browser) await (await browser).close();
  });
  return () => (browser ??= chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }));
}

// A new page in a context of its own, closed after the test, with the errors it logged.
export async function openPage(t: { after(fn: () => unknown): void }, browser: Browser, opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; errors: string[]; failures: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: opts.colorScheme ?? 'light' });
  t.after(() => context.close());
  await context.addInitScript(KEEP_NAMES);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  // The console names no address: which request failed is kept beside it.
  const failures: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) void r.text().then((body) => failures.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname} ${body.slice(0, 300)}`), () => {});
  });
  return { page, errors, failures };
}
