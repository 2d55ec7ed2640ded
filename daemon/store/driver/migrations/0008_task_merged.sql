-- When and as which commit a task's branch was merged into its base (DESIGN §9).
ALTER TABLE tasks ADD COLUMN merged_at timestamptz;
ALTER TABLE tasks ADD COLUMN merged_commit text;
