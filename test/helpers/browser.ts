/// <reference lib="dom" />
// Headless Chromium (Debian's, driven by playwright-core) for the dashboard's tests: one browser
// per test file, closed after its last test; each page records the console errors it saw.
import assert from 'node:assert/strict';
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
  // A project's board asks for its intake and a task's page for its pull request (DESIGN §20),
  // which the API answers 404 where there is none: that answer is the page's normal, not a
  // failure of it.
  const noneYet = (status: number, url: string) => status === 404 && /\/api\/(projects\/[^/]+\/intake|tasks\/[^/]+\/pr)$/.test(new URL(url).pathname);
  page.on('console', (m) => {
    if (m.type() === 'error' && !(/status of 404/.test(m.text()) && m.location().url && noneYet(404, m.location().url))) errors.push(m.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  // The console names no address: which request failed is kept beside it.
  const failures: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400 && !noneYet(r.status(), r.url())) void r.text().then((body) => failures.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname} ${body.slice(0, 300)}`), () => {});
  });
  return { page, errors, failures };
}

// The focused element's accessible name (aria-label, its label, or its text) and whether a focus
// ring is drawn around it.
export function focused(page: Page) {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body || el.tagName === 'MAIN') return null;
    const label = el.getAttribute('aria-label') ?? (el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null) ?? el.textContent ?? '';
    const cs = getComputedStyle(el);
    return { name: label.trim(), ring: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0 };
  });
}

// Tab until the element named `name` has the focus; every stop on the way must show a focus ring.
export async function tabTo(page: Page, name: string | RegExp, max = 80): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (!f) continue;
    seen.push(f.name);
    assert.ok(f.ring, `a focus ring on "${f.name}"`);
    if (typeof name === 'string' ? f.name === name : name.test(f.name)) return;
  }
  throw new Error(`Tab never reached ${name}; it went through: ${seen.join(' | ')}`);
}

// The contrast ratio (WCAG 2) of each sample's text against the background behind it, and the
// page's own background luminance.
export function contrasts(page: Page, selectors: string[]) {
  return page.evaluate((sels) => {
    const rgb = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
    };
    const behind = (el: Element | null): number[] => {
      for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length < 4 || c[3]! > 0) return c;
      }
      return [255, 255, 255];
    };
    const out: Record<string, number> = {};
    for (const sel of sels) {
      const el = document.querySelector(sel);
      if (!el) throw new Error(`nothing matches ${sel}`);
      const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(behind(el))];
      out[sel] = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
    }
    return { out, page: lum(behind(document.querySelector('main'))) };
  }, selectors);
}
