-- The warm pool (DESIGN §16): a slot is a task row made ahead under a placeholder name, so that
-- its id, ports, worktree and setup log become the task's when it is claimed. `slot` is null for
-- a task, 'free' for a slot that may be claimed, 'claimed' while a claim renames its branch.
-- `slot_config` is the .grove.json its setup ran with: a changed config replaces the slot.
ALTER TABLE tasks ADD COLUMN slot text CHECK (slot IN ('free', 'claimed'));
ALTER TABLE tasks ADD COLUMN slot_config text;
-- A task that was a slot: answered ready at once, with the slot's setup.
ALTER TABLE tasks ADD COLUMN pooled boolean NOT NULL DEFAULT false;
CREATE INDEX tasks_slots ON tasks (project_id, created_at) WHERE slot IS NOT NULL;
