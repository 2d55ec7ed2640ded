-- Terminal sessions (DESIGN §21): every session is headless or runs under a pseudo-terminal; a
-- task's shell is a session of kind `terminal` with no agent.
ALTER TABLE sessions ADD COLUMN interface text NOT NULL DEFAULT 'headless' CHECK (interface IN ('headless', 'terminal'));
ALTER TABLE sessions DROP CONSTRAINT sessions_kind_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_kind_check CHECK (kind IN ('agent', 'service', 'interactive', 'terminal'));
ALTER TABLE sessions ALTER COLUMN agent DROP NOT NULL;
