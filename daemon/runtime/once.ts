// The one close() idiom: safe to call twice, every caller waits on the first call's work.
export function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | null = null;
  return () => (p ??= fn());
}
