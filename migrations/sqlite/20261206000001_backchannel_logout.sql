-- OpenID Connect Back-Channel Logout (issue 27). A client may name where
-- it is told that a session ended; a code carries its session's `sid`
-- into the ID token; each session remembers the clients it issued a code
-- for an ID token to; and an outbox holds the logout tokens to deliver,
-- queued in the statement that ends the session.
ALTER TABLE oauth_clients ADD COLUMN backchannel_logout_uri TEXT;
ALTER TABLE oauth_codes ADD COLUMN sid TEXT;
CREATE TABLE session_clients (
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_id  TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    sid        TEXT NOT NULL,
    PRIMARY KEY (session_id, client_id)
);
-- A client's deletion.
CREATE INDEX session_clients_client_idx ON session_clients (client_id);
-- `due_at` is when the next try is due; a claim moves it to the end of its
-- lease, so a claimed delivery is nobody else's until then.
CREATE TABLE logout_deliveries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id  TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL,
    sid        TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    due_at     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX logout_deliveries_due_idx ON logout_deliveries (due_at);
CREATE INDEX logout_deliveries_client_idx ON logout_deliveries (client_id);
