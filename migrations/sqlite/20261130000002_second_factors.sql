-- Second factors (issue 23). A TOTP secret is sealed with the key of the
-- setting `second_factor_key`; `last_step` is the last step used, so that
-- each step passes once (a conditional update: of two concurrent uses of
-- one code exactly one wins). Recovery codes are kept as SHA-256 hashes.
CREATE TABLE user_totp (
    user_id       INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret_sealed BLOB NOT NULL,
    confirmed_at  INTEGER,
    last_step     INTEGER
) STRICT;
CREATE TABLE recovery_codes (
    user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash BLOB NOT NULL CHECK (length(code_hash) = 32),
    PRIMARY KEY (user_id, code_hash)
) STRICT, WITHOUT ROWID;
-- A session opened by a password whose account has a second factor waits
-- for it: only the second-factor page accepts it.
ALTER TABLE sessions ADD COLUMN second_factor_pending INTEGER NOT NULL DEFAULT 0 CHECK (second_factor_pending IN (0, 1));
