-- Account administration (issue 13, accounts): a password a staff user set
-- (temporary) must be changed at the next login, and the recent successful
-- logins of each account.

-- Set with a temporary password; the web pages send the person to
-- /conta/senha/ and the token pair is refused until they change it (the
-- change clears it).
ALTER TABLE users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT FALSE;

-- Successful logins: `via` is 'pair' (POST /api/token/pair/), 'account'
-- (/conta/entrar/) or 'oauth' (the login step of /oauth/authorize/).
-- Bounded by the periodic purge: rows older than the retention, and rows
-- beyond the newest few of each account, are deleted.
CREATE TABLE user_logins (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id  BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    via      TEXT NOT NULL CHECK (via IN ('pair', 'account', 'oauth'))
);
CREATE INDEX user_logins_user_idx ON user_logins (user_id, id DESC);
CREATE INDEX user_logins_at_idx ON user_logins (at);

-- The account search (name, username, e-mail as substrings, ignoring case)
-- scans; the CPF (exact) and username (exact) have unique indexes already.
