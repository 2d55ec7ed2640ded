// The one close() idiom: safe to call twice, every caller waits on the first call's work (and
// gets its result).
export function once<T = void>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => (p ??= fn());
}
