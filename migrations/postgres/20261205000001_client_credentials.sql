-- An application may get tokens for itself with the client_credentials
-- grant (issue 27): off by default, only for confidential clients.
ALTER TABLE oauth_clients ADD COLUMN client_credentials BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_client_credentials_confidential
    CHECK (NOT client_credentials OR confidential);
