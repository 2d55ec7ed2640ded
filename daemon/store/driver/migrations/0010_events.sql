-- One stream of everything (DESIGN §11): every change, recorded in the transaction that makes it.
-- seq comes from a sequence, so it only grows, across restarts too. No foreign keys: the events
-- of a removed project stay readable.
CREATE TABLE events (
  seq bigserial PRIMARY KEY,
  type text NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  project_id uuid,
  task_id uuid,
  session_id uuid,
  data jsonb NOT NULL
);
CREATE INDEX events_project ON events (project_id, seq);
CREATE INDEX events_task ON events (task_id, seq);
