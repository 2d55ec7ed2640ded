// Headless Chromium (Debian's, driven by playwright-core) for the dashboard's tests: one browser
// per test file, closed after its last test; each page records the console errors it saw.
import { after } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.GROVE_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// The file's browser, launched by the first test that asks.
export function sharedBrowser(): () => Promise<Browser> {
  let browser: Promise<Browser> | null = null;
  after(async () => {
    if (browser) await (await browser).close();
  });
  return () => (browser ??= chromium.launch({ executablePath: CHROMIUM, args: ARGS }));
}

// A new page in a context of its own, closed after the test, with the errors it logged.
export async function openPage(t: { after(fn: () => unknown): void }, browser: Browser, opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: opts.colorScheme ?? 'light' });
  t.after(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  return { page, errors };
}
