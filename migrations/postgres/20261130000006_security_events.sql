-- A person's security activity (issue 23): logins (method, device, place)
-- and every change to their factors, password and sessions, listed newest
-- first on /conta/seguranca/; kept a year (the periodic purge, oldest
-- first by `at`).
CREATE TABLE security_events (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at      BIGINT NOT NULL,
    kind    TEXT NOT NULL,
    detail  TEXT NOT NULL,
    device  TEXT NOT NULL,
    place   TEXT NOT NULL
);
CREATE INDEX security_events_user_idx ON security_events (user_id, id DESC);
CREATE INDEX security_events_at_idx ON security_events (at);
