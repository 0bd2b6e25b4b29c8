-- Second factors (issue 23). A TOTP secret is sealed with the key of the
-- setting `second_factor_key`; `last_step` is the last step used, so that
-- each step passes once (a conditional update: of two concurrent uses of
-- one code exactly one wins). Recovery codes are kept as SHA-256 hashes.
CREATE TABLE user_totp (
    user_id       BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret_sealed BYTEA NOT NULL,
    confirmed_at  BIGINT,
    last_step     BIGINT
);
CREATE TABLE recovery_codes (
    user_id   BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash BYTEA NOT NULL CHECK (octet_length(code_hash) = 32),
    PRIMARY KEY (user_id, code_hash)
);
-- A session opened by a password whose account has a second factor waits
-- for it: only the second-factor page accepts it.
ALTER TABLE sessions ADD COLUMN second_factor_pending BOOLEAN NOT NULL DEFAULT FALSE;
