-- Browser sessions kept on the server (issue 23): the cookie holds a random
-- id, this table its SHA-256 hash. Ending a session deletes its row.
CREATE TABLE sessions (
    id            BIGSERIAL PRIMARY KEY,
    token_hash    BYTEA NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    user_id       BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    auth_time     BIGINT NOT NULL,
    amr           TEXT NOT NULL,
    acr           TEXT NOT NULL,
    device        TEXT NOT NULL,
    place         TEXT NOT NULL
);
-- A person's sessions (the list, "end all"); the purge by expiry.
CREATE INDEX sessions_user_idx ON sessions (user_id, id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
