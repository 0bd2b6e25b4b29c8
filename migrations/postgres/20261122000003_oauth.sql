-- OAuth2 provider: registered clients and single-use authorization codes.

-- Registered clients (managed with `credencial client create|update|list`).
-- Confidential clients have a secret, stored only as a Django PBKDF2 hash;
-- public clients have none and must use PKCE. Redirect URIs are stored as
-- registered and matched exactly.
CREATE TABLE oauth_clients (
    client_id       TEXT PRIMARY KEY CHECK (client_id ~ '^[A-Za-z0-9._~-]{1,100}$'),
    name            TEXT NOT NULL,
    secret_hash     TEXT,
    confidential    BOOLEAN NOT NULL,
    redirect_uris   TEXT[] NOT NULL CHECK (cardinality(redirect_uris) > 0),
    require_pkce    BOOLEAN NOT NULL DEFAULT FALSE,
    -- Optional scopes enabled for the client; the required ones
    -- (dados_publicos, cpf, email) are granted whatever this holds.
    enabled_scopes  TEXT[] NOT NULL DEFAULT '{}' CHECK (enabled_scopes <@ ARRAY[
        'dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
        'experiencia_profissional', 'formacao_academica', 'cursos_cdp'
    ]::TEXT[]),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT oauth_clients_secret_iff_confidential CHECK (confidential = (secret_hash IS NOT NULL))
);

-- Authorization codes, keyed by the SHA-256 of the code: the code itself is
-- never stored. A code is redeemable while used_at IS NULL and
-- expires_at > now; redemption sets used_at in the same statement that
-- checks it, so a code is redeemed at most once across all instances.
CREATE TABLE oauth_codes (
    code_hash             BYTEA PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    client_id             TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id               BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri          TEXT NOT NULL,
    -- Whether the authorization request named redirect_uri (the token
    -- request must then repeat it).
    redirect_uri_explicit BOOLEAN NOT NULL,
    -- Granted scopes, space-separated.
    scope                 TEXT NOT NULL,
    -- PKCE S256 challenge (43 base64url characters), if the client sent one.
    code_challenge        TEXT CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
    issued_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at            TIMESTAMPTZ NOT NULL,
    used_at               TIMESTAMPTZ
);
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
CREATE INDEX oauth_codes_user_id_idx ON oauth_codes (user_id);
