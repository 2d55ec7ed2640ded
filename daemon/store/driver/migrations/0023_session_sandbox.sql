-- The sandbox (DESIGN §18): whether the session's agent ran confined ({"confined": bool,
-- "reason"?: text}), and the setting it was started with ("auto", true or false), which a
-- follow-up in its conversation keeps. Null on sessions from before confinement.
ALTER TABLE sessions ADD COLUMN sandbox jsonb;
ALTER TABLE sessions ADD COLUMN sandbox_setting jsonb;
