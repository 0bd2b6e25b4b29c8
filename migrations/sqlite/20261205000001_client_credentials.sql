-- An application may get tokens for itself with the client_credentials
-- grant (issue 27): off by default, only for confidential clients.
ALTER TABLE oauth_clients ADD COLUMN client_credentials INTEGER NOT NULL DEFAULT 0
    CHECK (client_credentials IN (0, 1) AND (NOT client_credentials OR confidential));
