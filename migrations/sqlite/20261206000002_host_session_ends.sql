-- The client component's back-channel logout receiver (issue 27): the
-- logout tokens it took (a replay is refused until the token expires) and
-- the host sessions the provider said ended, by `sid` or by person
-- (`sub`), kept as long as a host session lives.
CREATE TABLE host_logout_tokens (
    jti        TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE INDEX host_logout_tokens_expires_idx ON host_logout_tokens (expires_at);
CREATE TABLE host_session_ends (
    key        TEXT PRIMARY KEY,
    ended_at   INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX host_session_ends_expires_idx ON host_session_ends (expires_at);
