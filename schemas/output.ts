import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.ts';

// One line a process printed (DESIGN §3): seq counts from 1 with no gaps.
export const OutputLine = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]),
    text: Type.String(),
    at: Timestamp,
  },
  { $id: 'OutputLine' },
);
export type OutputLine = Static<typeof OutputLine>;
