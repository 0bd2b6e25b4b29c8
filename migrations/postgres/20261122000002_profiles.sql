-- Own profile data of the profile service.
ALTER TABLE users
    ADD COLUMN avatar TEXT NOT NULL DEFAULT '',
    -- Whether the user validated the registration through the tax id (CPF);
    -- the receita_federal scope is only answered for validated users.
    ADD COLUMN receita_validated BOOLEAN NOT NULL DEFAULT FALSE,
    -- Set once the professional experiences were supplemented from CNES.
    ADD COLUMN cnes_supplemented_at TIMESTAMPTZ;

-- Professional experiences; datetimes carry no zone, as the contract gives them.
CREATE TABLE experiences (
    id              BIGSERIAL PRIMARY KEY,
    user_id         BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    estabelecimento TEXT NOT NULL,
    profissao       TEXT NOT NULL,
    data_inicio     TIMESTAMP,
    data_fim        TIMESTAMP,
    municipio       TEXT NOT NULL DEFAULT '',
    descricao       TEXT NOT NULL DEFAULT '',
    -- 'user' (registered by the user) or 'cnes' (supplemented from CNES).
    origin          TEXT NOT NULL DEFAULT 'user' CHECK (origin IN ('user', 'cnes')),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX experiences_user_id_idx ON experiences (user_id);

-- Academic degrees, stored as the contract's codes.
CREATE TABLE degrees (
    id           BIGSERIAL PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    instituicao  TEXT NOT NULL,
    curso        TEXT NOT NULL,
    data_inicio  DATE NOT NULL,
    data_fim     DATE,
    municipio    TEXT NOT NULL DEFAULT '',
    descricao    TEXT NOT NULL DEFAULT '',
    grau         CHAR(3) NOT NULL
        CHECK (grau IN ('GRA', 'ESP', 'MES', 'MEP', 'DTR', 'PDR', 'ENF', 'ENM', 'EPT', 'ERM')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX degrees_user_id_idx ON degrees (user_id);

-- Durable cache of upstream scope data, shared by every instance.
CREATE TABLE scope_snapshots (
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope       TEXT NOT NULL,
    payload     JSONB NOT NULL,
    fetched_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, scope)
);
