-- Turns (DESIGN §17): the turn an agent session's end recorded, {n, commit}; null for a session
-- without one (a service, one whose worktree was gone, one that ended before turns existed).
ALTER TABLE sessions ADD COLUMN turn jsonb;
