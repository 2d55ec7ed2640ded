import type { OutputLine } from '../../schemas/output.ts';

// What the tables share in turning their rows into the API's shapes.

// A nullable timestamp column as the API writes it (ISO 8601 UTC, DESIGN §3).
export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

// A stored output line (a session's, or a setup's or teardown's) as the API shows it.
export type LineRow = { seq: number; stream: 'stdout' | 'stderr'; text: string; at: Date };
export const toLine = (r: LineRow): OutputLine => ({ seq: r.seq, stream: r.stream, text: r.text, at: r.at.toISOString() });
