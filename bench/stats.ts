// Order statistics over repeated runs; every figure in bench/ is reported through these.
export function summarize(samples: number[]): { n: number; median: number; p99: number; min: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return { n: s.length, median: at(0.5), p99: at(0.99), min: s[0]!, max: s[s.length - 1]! };
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
