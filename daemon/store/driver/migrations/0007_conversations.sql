-- Conversations, results, usage limits and time limits (DESIGN §8). A session may wait its turn
-- (`queued`): it has no process and no command yet, only what it was asked.
ALTER TABLE sessions DROP CONSTRAINT sessions_status_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_status_check
  CHECK (status IN ('queued', 'starting', 'running', 'exited', 'failed', 'killed', 'lost'));
-- Sessions from before conversations each started their own.
ALTER TABLE sessions ADD COLUMN conversation_id uuid;
UPDATE sessions SET conversation_id = id;
ALTER TABLE sessions ALTER COLUMN conversation_id SET NOT NULL;
ALTER TABLE sessions ADD COLUMN parent_id uuid;
ALTER TABLE sessions ADD COLUMN agent_session_id text;
ALTER TABLE sessions ADD COLUMN result jsonb;
ALTER TABLE sessions ADD COLUMN limit_resets_at timestamptz;
ALTER TABLE sessions ADD COLUMN not_before timestamptz;
-- the request's args, kept for a queued session that is started later
ALTER TABLE sessions ADD COLUMN args jsonb NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN timeout_s double precision;
-- when a session with timeout_s is killed: set when its process starts, so a restart re-arms it
ALTER TABLE sessions ADD COLUMN deadline timestamptz;
ALTER TABLE sessions ADD COLUMN timed_out boolean NOT NULL DEFAULT false;
CREATE INDEX sessions_conversation ON sessions (conversation_id, created_at);
CREATE INDEX sessions_queued ON sessions (conversation_id) WHERE status = 'queued';
