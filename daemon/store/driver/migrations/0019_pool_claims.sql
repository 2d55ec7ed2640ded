-- A claim of a warm pool slot (DESIGN §16) in progress: the task's name and branch, stored before
-- `git branch -m` gives the slot that branch, so that a daemon stopped between the rename and the
-- row becoming the task is put right at its next start (the rename undone, the slot free again).
ALTER TABLE tasks ADD COLUMN claim_name text;
ALTER TABLE tasks ADD COLUMN claim_branch text;
