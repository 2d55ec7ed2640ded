// An instant written as ISO 8601 with its offset or Z (`2026-12-01T09:00:00+01:00`): ms since the
// epoch, or null. A time without an offset is refused: it would be a different instant on each
// host and in each zone.
export function parseInstant(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
