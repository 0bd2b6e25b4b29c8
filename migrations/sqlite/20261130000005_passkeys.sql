-- Passkeys (issue 23): WebAuthn credentials, several per account. `data` is
-- the credential as webauthn-rs serialises it (public key, counter, flags:
-- no secret); `credential_id` is unique across accounts (the authenticator
-- names it at a login by passkey alone); `user_handle` is the account's
-- random WebAuthn user handle, the same on all of its passkeys.
CREATE TABLE passkeys (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id BLOB NOT NULL UNIQUE CHECK (length(credential_id) BETWEEN 1 AND 1023),
    user_handle   BLOB NOT NULL CHECK (length(user_handle) BETWEEN 1 AND 64),
    name          TEXT NOT NULL,
    data          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER
) STRICT;
CREATE INDEX passkeys_user_idx ON passkeys (user_id, id);
-- WebAuthn ceremonies in progress (a challenge and what it expects), kept
-- here so that any instance can finish one; taken (deleted) once.
CREATE TABLE webauthn_ceremonies (
    id_hash    BLOB PRIMARY KEY CHECK (length(id_hash) = 32),
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT NOT NULL,
    state      TEXT NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX webauthn_ceremonies_expires_idx ON webauthn_ceremonies (expires_at);
