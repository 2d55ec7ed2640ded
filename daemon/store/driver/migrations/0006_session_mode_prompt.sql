-- What a session was asked to do (DESIGN §8): its mode and its prompt. Sessions started before
-- modes existed ran as the built-ins did then, which is `edit` at most.
ALTER TABLE sessions ADD COLUMN mode text NOT NULL DEFAULT 'edit' CHECK (mode IN ('read', 'edit', 'full'));
ALTER TABLE sessions ADD COLUMN prompt text;
