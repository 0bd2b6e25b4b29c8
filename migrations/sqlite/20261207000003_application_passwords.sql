-- Application passwords (issue 43): long random passwords a person makes
-- for a script or a SUAP client that cannot ask for a second factor's
-- code, accepted at /api/token/pair/ only and for their own account only.
-- `password_hash` is the SHA-256 of the password (about 135 random bits:
-- a slow hash adds nothing); a login finds and touches its row by
-- (user_id, password_hash), the page lists by user_id, a revocation
-- deletes by (id, user_id). Nothing expires: a row lives until it is
-- revoked or its account is deleted.
CREATE TABLE application_passwords (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
    password_hash BLOB NOT NULL CHECK (length(password_hash) = 32),
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER
) STRICT;
CREATE UNIQUE INDEX application_passwords_user_hash_idx ON application_passwords (user_id, password_hash);
CREATE INDEX application_passwords_user_idx ON application_passwords (user_id, id);
