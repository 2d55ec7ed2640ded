import { Type, type Static } from '@sinclair/typebox';

// Ids are lowercase UUIDs (DESIGN §3); uppercase and urn: forms are refused, not normalised.
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export const Id = Type.String({ pattern: UUID_PATTERN, description: 'lowercase UUID' });

// ISO 8601 UTC with milliseconds and Z, the only timestamp form the API emits.
export const Timestamp = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  description: 'ISO 8601 UTC with milliseconds',
});

// Printable text: no C0 control characters (NUL included) and no DEL.
export const TEXT_PATTERN = '^[^\\u0000-\\u001f\\u007f]*$';

export const IdParams = Type.Object({ id: Id }, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

export const NoQuery = Type.Object({}, { additionalProperties: false });

export const ValidationIssue = Type.Object({
  path: Type.String({ description: 'JSON pointer into the request' }),
  message: Type.String(),
});

// RFC 9457 problem details; `code` is the stable part clients branch on.
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(ValidationIssue)),
  },
  { $id: 'Problem' },
);
export type Problem = Static<typeof Problem>;
