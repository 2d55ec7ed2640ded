-- Dependencies (DESIGN §17): a task's first session made with it waits `queued` until every task
-- named here has merged (a JSON array of task ids; [] waits for none but the task's setup). Null for
-- every other session: its start is the conversation's business (follow-ups, §8).
ALTER TABLE sessions ADD COLUMN after_tasks jsonb;
