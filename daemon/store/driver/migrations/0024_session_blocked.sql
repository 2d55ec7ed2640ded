-- What the sandbox refused a confined session (DESIGN §18): [{"kind", "target", "count"}], each
-- target once. Null until something is refused; the API shows it as the result's `blocked`.
ALTER TABLE sessions ADD COLUMN blocked jsonb;
