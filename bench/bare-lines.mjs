// The rows both bare ingestion baselines insert (pglite-insert.mjs, pg-insert.mjs): `lines` lines
// of 80 bytes in batches of `batch`, as one statement's table and parameters each.
export const BARE_TABLE = '(session_id uuid, seq int, stream text, text text, at timestamptz, PRIMARY KEY (session_id, seq))';
const SID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

export function* bareBatches(table, lines, batch) {
  for (let start = 1; start <= lines; start += batch) {
    const n = Math.min(batch, lines - start + 1);
    const texts = Array.from({ length: n }, (_, i) => `line ${start + i}`.padEnd(79));
    const at = new Date().toISOString();
    yield {
      sql: `INSERT INTO ${table} SELECT $1, $2 + o - 1, s, t, a::timestamptz FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(s, t, a, o)`,
      params: [SID, start, texts.map(() => 'stdout'), texts, texts.map(() => at)],
    };
  }
}
