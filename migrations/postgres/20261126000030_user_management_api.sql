-- The user-management API (issue 13, item 4), compatible with the Sabiá API.

-- Per-application API token: `<lookup>.<secret>`. The lookup (16 hex
-- digits) finds the application with one indexed read; only the SHA-256 of
-- the secret (256 random bits) is stored, compared in constant time by the
-- service. The permissions are granted separately (read, create users).
-- Issuing a new token replaces the old one at once.
ALTER TABLE oauth_clients
    ADD COLUMN api_token_lookup TEXT UNIQUE CHECK (api_token_lookup ~ '^[0-9a-f]{16}$'),
    ADD COLUMN api_token_hash BYTEA CHECK (octet_length(api_token_hash) = 32),
    ADD COLUMN api_permissions TEXT[] NOT NULL DEFAULT '{}'
        CHECK (api_permissions <@ ARRAY['users:read', 'users:create']::TEXT[]),
    ADD CONSTRAINT oauth_clients_api_token_whole
        CHECK ((api_token_lookup IS NULL) = (api_token_hash IS NULL));

-- What a host application sends when it pre-registers a person. A
-- pre-registered account has an unusable password (Django's convention: a
-- value starting with '!', which no login accepts); the person claims the
-- account by signing up with the same CPF and e-mail.
ALTER TABLE users
    ADD COLUMN genero TEXT NOT NULL DEFAULT '' CHECK (length(genero) <= 50),
    ADD COLUMN data_de_nascimento DATE;
