// A field of a parsed message (an agent's stream, a bridge's JSON-RPC, a hook's body) read as
// text: a non-empty string, else null (absent, empty, or another type).
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
