import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';

// A slot of a project's warm pool (DESIGN §16): a task prepared ahead, not yet anyone's.
export const PoolSlot = Type.Object(
  {
    id: Id,
    status: Type.Union([Type.Literal('setting_up'), Type.Literal('ready'), Type.Literal('setup_failed'), Type.Literal('claimed')], {
      description: 'claimed while a POST /api/tasks makes it a task',
    }),
    base: Type.String({ description: 'the ref it was made from: the default base' }),
    base_commit: Type.String({ description: 'the commit its worktree was made at' }),
    created_at: Timestamp,
    age_s: Type.Integer({ minimum: 0 }),
  },
  { $id: 'PoolSlot' },
);
export type PoolSlot = Static<typeof PoolSlot>;

export const ProjectPool = Type.Object(
  {
    project_id: Id,
    size: Type.Integer({ minimum: 0, description: "its .grove.json's pool.size; 0 without a pool" }),
    ttl_s: Type.Union([Type.Integer(), Type.Null()]),
    slots: Type.Array(PoolSlot),
  },
  { $id: 'ProjectPool' },
);
export type ProjectPool = Static<typeof ProjectPool>;
