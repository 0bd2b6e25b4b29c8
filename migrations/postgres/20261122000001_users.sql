-- Users of the token service. `password` holds a Django PBKDF2-SHA256 hash
-- (pbkdf2_sha256$<iterations>$<salt>$<hash>) so a Django table imports as is.
CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    username      VARCHAR(150) NOT NULL UNIQUE,
    password      TEXT NOT NULL,
    is_active     BOOLEAN NOT NULL DEFAULT TRUE,
    -- What the upstream user-data resource (/api/rh/eu/) returns.
    identificacao TEXT NOT NULL DEFAULT '',
    nome_usual    TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    campus        TEXT NOT NULL DEFAULT '',
    tipo_usuario  TEXT NOT NULL DEFAULT '',
    -- For the profile service.
    name          TEXT NOT NULL DEFAULT '',
    cpf           CHAR(11) UNIQUE CHECK (cpf ~ '^[0-9]{11}$'),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Issued refresh tokens. A token is current while rotated_at is NULL;
-- rotation sets it, so a rotated token is refused by every instance.
CREATE TABLE refresh_tokens (
    jti         TEXT PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at  TIMESTAMPTZ NOT NULL,
    rotated_at  TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_user_id_idx ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);
