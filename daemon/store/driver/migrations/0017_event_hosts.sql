-- The host where each event happened (DESIGN §14.2): on a shared store the hooks of an event run
-- there only. Null for events recorded before hosts existed.
ALTER TABLE events ADD COLUMN host_id uuid;
