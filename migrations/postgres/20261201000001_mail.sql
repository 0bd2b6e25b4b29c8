-- Outbound mail (issue 24). A mail is written here in the same transaction
-- as the change that causes it and delivered afterwards by the background
-- sender. `next_attempt_at` is when the next try is due: a sender claims a
-- due mail by moving it past a lease, so no two senders hold one mail; it
-- is NULL once the mail is sent (`sent_at`) or given up (`failed_at`).
CREATE TABLE mail_outbox (
    id              BIGSERIAL PRIMARY KEY,
    recipient       TEXT NOT NULL,
    kind            TEXT NOT NULL,
    subject         TEXT NOT NULL,
    text_body       TEXT NOT NULL,
    html_body       TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    next_attempt_at BIGINT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    sent_at         BIGINT,
    failed_at       BIGINT
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX mail_outbox_sent_idx ON mail_outbox (sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX mail_outbox_failed_idx ON mail_outbox (id) WHERE failed_at IS NOT NULL;
-- Links mails carry (a password reset): only the SHA-256 of the token is
-- kept; a link is deleted when used or expired. `issued_at` spaces the
-- mails one account can be sent; `email` is the address a confirmation
-- link confirms.
CREATE TABLE mail_links (
    token_hash BYTEA PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT NOT NULL,
    stamp      TEXT NOT NULL,
    issued_at  BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    email      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX mail_links_user_idx ON mail_links (user_id, purpose);
CREATE INDEX mail_links_expires_idx ON mail_links (expires_at);
