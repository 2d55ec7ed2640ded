CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  agent text NOT NULL,
  command jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('starting', 'running', 'exited', 'failed', 'killed', 'lost')),
  pid integer,
  -- the process start time of pid (from /proc/<pid>/stat): pid + start time name one process
  pid_start text,
  exit_code integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  -- how far each output file has been stored as complete lines, and the next seq
  stdout_offset bigint NOT NULL DEFAULT 0,
  stderr_offset bigint NOT NULL DEFAULT 0,
  next_seq integer NOT NULL DEFAULT 1
);
CREATE INDEX sessions_task ON sessions (task_id, created_at);
CREATE INDEX sessions_live ON sessions (status) WHERE status IN ('starting', 'running');

CREATE TABLE session_lines (
  session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq integer NOT NULL,
  stream text NOT NULL,
  text text NOT NULL,
  at timestamptz NOT NULL,
  PRIMARY KEY (session_id, seq)
);
