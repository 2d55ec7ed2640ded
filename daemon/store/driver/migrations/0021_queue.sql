-- The merge queue (DESIGN §17): one row per queued task, in the queue of its project and base
-- branch, landed in `pos` order. A task is in at most one queue (its id is the key). A row goes
-- when its task lands or is taken out; one `fixing` waits for the follow-up session `fix_session`
-- to end, then goes to the back of the queue. `reason`, `files` and `output` say why the last
-- landing failed.
CREATE TABLE queue_entries (
  task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  base text NOT NULL,
  pos bigserial NOT NULL,
  strategy text NOT NULL CHECK (strategy IN ('merge', 'squash', 'ff')),
  fix boolean NOT NULL DEFAULT false,
  tries integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'landing', 'fixing')),
  reason text,
  files jsonb,
  output jsonb,
  fix_session uuid,
  -- The running check's process group, stopped at the next start if a killed daemon left it.
  check_pid integer,
  check_pid_start text,
  added_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queue_entries_order ON queue_entries (project_id, base, pos);
