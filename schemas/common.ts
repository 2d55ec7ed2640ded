import { Type, type Static } from '@sinclair/typebox';

// Ids are lowercase UUIDs (DESIGN §3); uppercase and urn: forms are refused, not normalised.
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export const Id = Type.String({ pattern: UUID_PATTERN, description: 'lowercase UUID' });

// ISO 8601 UTC with milliseconds and Z, the only timestamp form the API emits.
export const Timestamp = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  description: 'ISO 8601 UTC with milliseconds',
});

// Printable text: no C0 or C1 control characters (NUL included), no DEL, and no lone UTF-16
// surrogate (Ajv matches with the `u` flag, so a proper pair is one code point and passes). C1
// codes such as U+009B (CSI) drive some terminals the CLI prints names to; a lone surrogate
// cannot be stored as UTF-8 and would come back as U+FFFD, a different name from the one sent.
export const TEXT_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]*$';

// Linux refuses one argument or one environment string (`NAME=value`) longer than 128 KiB,
// counted in bytes with its NUL (MAX_ARG_STRLEN, E2BIG): the most a prompt, an arg, a setup
// command or an env entry may hold in UTF-8.
export const MAX_ARG_BYTES = 128 * 1024 - 1;

export const IdParams = Type.Object({ id: Id }, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

export const NoQuery = Type.Object({}, { additionalProperties: false });

export const ValidationIssue = Type.Object({
  path: Type.String({ description: 'JSON pointer into the request' }),
  message: Type.String(),
});
export type ValidationIssue = Static<typeof ValidationIssue>;

// RFC 9457 problem details; `code` is the stable part clients branch on.
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(ValidationIssue)),
    files: Type.Optional(Type.Array(Type.String(), { description: 'with CONFLICT: the files that conflict' })),
  },
  { $id: 'Problem' },
);
export type Problem = Static<typeof Problem>;
