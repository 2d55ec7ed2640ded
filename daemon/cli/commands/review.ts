// `grove changes`, `diff`, `commit`, `rebase`, `merge` and `push`: a task's work, reviewed and landed.
import type { MergeBody } from '../../../schemas/review.ts';
import type { Command } from '../ctx.ts';
import { arg, print, str } from '../ctx.ts';
import { table } from '../format.ts';
import { task } from '../lookup.ts';
import { colourDiff, page } from '../render.ts';
import { usage } from '../usage.ts';
import { range } from './turns.ts';

export const commands: Record<string, Command> = {
  async changes(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const r = range(c);
    const ch = await c.api.changes(t.id, r);
    const between = r.from !== undefined || r.to !== undefined;
    print(c, ch, () =>
      [
        between
          ? `${t.branch}: ${ch.files.length} file(s) changed from ${r.from ?? 'base'} to ${r.to ?? 'work'}`
          : `${t.branch}: ${ch.ahead} commit(s) ahead of ${ch.base}, ${ch.behind} behind; ${ch.uncommitted} uncommitted file(s)`,
        table(
          ch.files.map((f) => ({ ...f, path: f.old_path ? `${f.old_path} → ${f.path}` : f.path, lines: f.binary ? 'binary' : `+${f.additions} -${f.deletions}` })),
          ['status', 'lines', 'path'],
        ),
      ].join('\n'),
    );
  },
  async diff(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const res = await c.api.diff(t.id, c.positionals[1] || undefined, range(c));
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    const truncated = res.headers['grove-diff-truncated'] === 'true';
    if (c.json) return c.out(JSON.stringify({ diff: text, truncated }));
    if (truncated) process.stderr.write('grove: the diff is over 10 MiB and was cut\n');
    if (!process.stdout.isTTY) return void process.stdout.write(text);
    await page(colourDiff(text));
  },
  async commit(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const message = str(c.values.message);
    if (message === undefined) usage('commit needs -m <message>');
    const r = await c.api.commit(t.id, message);
    print(c, r, () => `committed ${r.files.length} file(s) on ${t.branch}: ${r.commit.slice(0, 12)}`);
  },
  async rebase(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const r = await c.api.rebase(t.id);
    print(c, r, () => `rebased ${r.branch} onto ${r.base}`);
  },
  async merge(c) {
    const t = await task(c, arg(c, 0, 'task'));
    if (c.values.squash && c.values.ff) usage('merge takes --squash or --ff, not both');
    const body: MergeBody = { strategy: c.values.squash ? 'squash' : c.values.ff ? 'ff' : 'merge' };
    if (typeof c.values.message === 'string') body.message = c.values.message;
    const r = await c.api.merge(t.id, body);
    print(c, r, () => `merged ${t.branch} into ${r.base} (${r.strategy}): ${r.base} is at ${r.commit.slice(0, 12)}`);
  },
  async push(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const r = await c.api.push(t.id, str(c.values.remote));
    print(c, r, () => `pushed ${r.branch} to ${r.remote}`);
  },
};
