-- Brute-force limits: failed credential checks per key, in fixed windows
-- that start at a key's first failure. Shared by every instance, so the
-- limits hold however many instances serve.
--
-- key is 'username:<name>', 'client:<client_id>' or 'address:<ip>'
-- ('address:<network>/64' for IPv6). A failure after the window has ended
-- starts a new window (one statement, INSERT … ON CONFLICT DO UPDATE).
-- Rows whose window has ended are purged periodically.
CREATE TABLE login_failures (
    key           TEXT PRIMARY KEY CHECK (key ~ '^(username|client|address):.'),
    failures      INTEGER NOT NULL CHECK (failures > 0),
    window_start  TIMESTAMPTZ NOT NULL
);
CREATE INDEX login_failures_window_start_idx ON login_failures (window_start);
