import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.ts';

export const Health = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String(),
    pid: Type.Integer(),
    started_at: Timestamp,
  },
  { $id: 'Health' },
);
export type Health = Static<typeof Health>;
