-- The person in the loop (DESIGN §15). An approval is what an agent asked; (session_id, key) is
-- the agent's own id of the call, so a bridge that asks again finds the same row. No foreign
-- keys, as events: a removed project's approvals stay readable.
CREATE TABLE approvals (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL,
  task_id uuid NOT NULL,
  project_id uuid NOT NULL,
  key text NOT NULL,
  kind text NOT NULL,
  tool text NOT NULL,
  input jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  reason text,
  answer text,
  remember text,
  nonce text NOT NULL,
  timeout_s double precision,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz,
  UNIQUE (session_id, key)
);
CREATE INDEX approvals_pending ON approvals (created_at) WHERE status = 'pending';
CREATE INDEX approvals_session ON approvals (session_id, created_at);

-- Rules a decision's `remember` added: a project's (session_id null) or one session's. Kept by
-- grove, never written into the repository.
CREATE TABLE approval_rules (
  project_id uuid NOT NULL,
  session_id uuid,
  rule text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX approval_rules_once ON approval_rules (project_id, coalesce(session_id, '00000000-0000-0000-0000-000000000000'::uuid), rule);

-- A session's own approval_timeout_s (its request body's); the project's and the user's are read when it asks.
ALTER TABLE sessions ADD COLUMN approval_timeout_s double precision;
-- 'approval' while one of the session's approvals is pending, written with the approval's change.
ALTER TABLE sessions ADD COLUMN waiting text;
