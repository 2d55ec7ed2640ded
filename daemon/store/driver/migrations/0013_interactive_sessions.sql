-- Take-over (DESIGN §15): a session may be an agent run in the person's own terminal.
ALTER TABLE sessions DROP CONSTRAINT sessions_kind_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_kind_check CHECK (kind IN ('agent', 'service', 'interactive'));
