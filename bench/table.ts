// The bench's table: a row per measure, its target, and whether it was met.
import { round } from './stats.ts';

// A target bounds the ratio (×), grove's own figure (MB, ms), or what grove adds to its baseline
// (ms beyond); `ok` is any other condition the row needs (every creation succeeded, every line stored).
export interface Target {
  op: '≤' | '≥';
  limit: number;
  of: 'ratio' | 'MB' | 'ms' | 'ms beyond';
  ok?: boolean;
}

export interface Row {
  what: string;
  grove: number;
  base: number;
  ratio: number;
  target?: Target;
}

export function le(limit: number, ok?: boolean): Target {
  return { op: '≤', limit, of: 'ratio', ...(ok === undefined ? {} : { ok }) };
}

export function mb(limit: number): Target {
  return { op: '≤', limit, of: 'MB' };
}

export function met(r: Row): boolean {
  const t = r.target!;
  const v = t.of === 'ratio' ? r.ratio : t.of === 'ms beyond' ? r.grove - r.base : r.grove;
  return (t.op === '≤' ? v <= t.limit : v >= t.limit) && t.ok !== false;
}

export function targetText(t: Target): string {
  return t.of === 'ratio' ? `${t.op} ${t.limit}×` : t.of === 'ms beyond' ? `${t.op} baseline + ${t.limit} ms` : `${t.op} ${t.limit} ${t.of}`;
}

export function judge(rows: Row[]): Array<Row & { met: boolean | null }> {
  return rows.map((r) => ({ ...r, met: r.target ? met(r) : null }));
}

// The rows as a Markdown table, and how many targets were met.
export function printTable(judged: Array<Row & { met: boolean | null }>): void {
  console.log('\n| measure | grove | baseline | ratio | target | met |\n|---|---|---|---|---|---|');
  for (const r of judged) {
    console.log(`| ${r.what} | ${fmt(r.grove)} | ${fmt(r.base)} | ${r.ratio.toFixed(2)} | ${r.target ? targetText(r.target) : ''} | ${r.met === null ? '' : r.met ? 'met' : 'missed'} |`);
  }
  const missed = judged.filter((r) => r.met === false).length;
  console.log(`\ntargets: ${judged.filter((r) => r.met !== null).length - missed} met, ${missed} missed`);
}

function fmt(n: number): string {
  return String(round(n, n < 10 ? 2 : 0));
}
