-- Services (DESIGN §10): a session may run one of the project's services instead of an agent.
ALTER TABLE sessions ADD COLUMN kind text NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent', 'service'));
-- Teardown is logged as setup is: each command and line belongs to one phase of the task.
ALTER TABLE setup_commands ADD COLUMN phase text NOT NULL DEFAULT 'setup' CHECK (phase IN ('setup', 'teardown'));
ALTER TABLE setup_lines ADD COLUMN phase text NOT NULL DEFAULT 'setup' CHECK (phase IN ('setup', 'teardown'));
ALTER TABLE setup_commands DROP CONSTRAINT setup_commands_pkey;
ALTER TABLE setup_commands ADD PRIMARY KEY (task_id, phase, idx);
ALTER TABLE setup_lines DROP CONSTRAINT setup_lines_pkey;
ALTER TABLE setup_lines ADD PRIMARY KEY (task_id, phase, seq);
-- An archive under way (its teardown running): a daemon stopped then finishes it at its next start.
ALTER TABLE tasks ADD COLUMN archiving_since timestamptz;
