-- The whole schema of the embedded store (SQLite), equal in meaning to what
-- migrations/postgres/ builds up to 20261127000200. SQLite starts from this
-- baseline: it has no history of deployments to carry forward. A later
-- change to the schema adds a migration to BOTH folders.
--
-- How PostgreSQL's types are kept here (docs/architecture.md, "Storage"):
-- - instants (TIMESTAMPTZ) are INTEGER Unix seconds, but for the throttle
--   windows' starts (login_failures.window_start), which the port counts in
--   milliseconds;
-- - dates are TEXT 'YYYY-MM-DD', the experiences' zone-less datetimes TEXT
--   'YYYY-MM-DDTHH:MM:SS';
-- - BOOLEAN is INTEGER 0/1, BYTEA is BLOB;
-- - TEXT[] is TEXT holding a JSON array of strings, JSONB is TEXT checked
--   with json_valid;
-- - regular-expression checks are GLOB patterns; checks that need a
--   subquery (the allowed scope names in an array) are triggers.
-- Every table but host_users (see there) is STRICT, so a value of the wrong
-- type is refused as PostgreSQL would refuse it, and ids are AUTOINCREMENT, so the id of a
-- deleted row is never given to another (a token names its user by id).

CREATE TABLE users (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    username              TEXT NOT NULL UNIQUE CHECK (length(username) <= 150),
    password              TEXT NOT NULL,
    is_active             INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    identificacao         TEXT NOT NULL DEFAULT '',
    nome_usual            TEXT NOT NULL DEFAULT '',
    email                 TEXT NOT NULL DEFAULT '',
    campus                TEXT NOT NULL DEFAULT '',
    tipo_usuario          TEXT NOT NULL DEFAULT '',
    name                  TEXT NOT NULL DEFAULT '',
    cpf                   TEXT UNIQUE CHECK (length(cpf) = 11 AND cpf NOT GLOB '*[^0-9]*'),
    created_at            INTEGER NOT NULL DEFAULT (unixepoch()),
    avatar                TEXT NOT NULL DEFAULT '',
    receita_validated     INTEGER NOT NULL DEFAULT 0 CHECK (receita_validated IN (0, 1)),
    cnes_supplemented_at  INTEGER,
    is_staff              INTEGER NOT NULL DEFAULT 0 CHECK (is_staff IN (0, 1)),
    must_change_password  INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
    genero                TEXT NOT NULL DEFAULT '' CHECK (length(genero) <= 50),
    data_de_nascimento    TEXT CHECK (data_de_nascimento IS date(data_de_nascimento))
) STRICT;
-- An e-mail address belongs to one account, ignoring case (SQLite's lower()
-- folds ASCII only; the service compares addresses as it stores them).
CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email)) WHERE email <> '';
-- Once validated through the tax id, the account's CPF cannot change.
CREATE TRIGGER users_validated_cpf_frozen BEFORE UPDATE OF cpf ON users
    FOR EACH ROW WHEN OLD.receita_validated AND NEW.cpf IS NOT OLD.cpf
BEGIN
    SELECT RAISE(ABORT, 'the CPF of a validated account cannot change');
END;

-- Issued refresh tokens: current while rotated_at is NULL (see the
-- PostgreSQL migrations for families, revocation and the grace window).
CREATE TABLE refresh_tokens (
    jti               TEXT PRIMARY KEY,
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at        INTEGER NOT NULL,
    rotated_at        INTEGER,
    created_at        INTEGER NOT NULL DEFAULT (unixepoch()),
    family            TEXT NOT NULL,
    revoked           INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
    successor_jti     TEXT,
    successor_sealed  BLOB
) STRICT;
CREATE INDEX refresh_tokens_user_id_idx ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);
CREATE INDEX refresh_tokens_current_family_idx ON refresh_tokens (family) WHERE rotated_at IS NULL;
CREATE INDEX refresh_tokens_sealed_idx ON refresh_tokens (rotated_at) WHERE successor_sealed IS NOT NULL;

CREATE TABLE experiences (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    estabelecimento  TEXT NOT NULL,
    profissao        TEXT NOT NULL,
    data_inicio      TEXT CHECK (data_inicio IS strftime('%Y-%m-%dT%H:%M:%S', data_inicio)),
    data_fim         TEXT CHECK (data_fim IS strftime('%Y-%m-%dT%H:%M:%S', data_fim)),
    municipio        TEXT NOT NULL DEFAULT '',
    descricao        TEXT NOT NULL DEFAULT '',
    origin           TEXT NOT NULL DEFAULT 'user' CHECK (origin IN ('user', 'cnes')),
    created_at       INTEGER NOT NULL DEFAULT (unixepoch())
) STRICT;
CREATE INDEX experiences_user_id_idx ON experiences (user_id);

CREATE TABLE degrees (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    instituicao  TEXT NOT NULL,
    curso        TEXT NOT NULL,
    data_inicio  TEXT NOT NULL CHECK (data_inicio IS date(data_inicio)),
    data_fim     TEXT CHECK (data_fim IS date(data_fim)),
    municipio    TEXT NOT NULL DEFAULT '',
    descricao    TEXT NOT NULL DEFAULT '',
    grau         TEXT NOT NULL
        CHECK (grau IN ('GRA', 'ESP', 'MES', 'MEP', 'DTR', 'PDR', 'ENF', 'ENM', 'EPT', 'ERM')),
    created_at   INTEGER NOT NULL DEFAULT (unixepoch())
) STRICT;
CREATE INDEX degrees_user_id_idx ON degrees (user_id);

CREATE TABLE scope_snapshots (
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope       TEXT NOT NULL,
    payload     TEXT NOT NULL CHECK (json_valid(payload)),
    fetched_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope)
) STRICT;

CREATE TABLE oauth_clients (
    client_id                  TEXT PRIMARY KEY
        CHECK (length(client_id) BETWEEN 1 AND 100 AND client_id NOT GLOB '*[^A-Za-z0-9._~-]*'),
    name                       TEXT NOT NULL,
    secret_hash                TEXT,
    confidential               INTEGER NOT NULL CHECK (confidential IN (0, 1)),
    redirect_uris              TEXT NOT NULL
        CHECK (json_valid(redirect_uris) AND json_type(redirect_uris) = 'array' AND json_array_length(redirect_uris) > 0),
    require_pkce               INTEGER NOT NULL DEFAULT 0 CHECK (require_pkce IN (0, 1)),
    enabled_scopes             TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(enabled_scopes) AND json_type(enabled_scopes) = 'array'),
    created_at                 INTEGER NOT NULL DEFAULT (unixepoch()),
    updated_at                 INTEGER NOT NULL DEFAULT (unixepoch()),
    is_active                  INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    api_token_lookup           TEXT UNIQUE
        CHECK (length(api_token_lookup) = 16 AND api_token_lookup NOT GLOB '*[^0-9a-f]*'),
    api_token_hash             BLOB CHECK (length(api_token_hash) = 32),
    api_permissions            TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(api_permissions) AND json_type(api_permissions) = 'array'),
    post_logout_redirect_uris  TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(post_logout_redirect_uris) AND json_type(post_logout_redirect_uris) = 'array'),
    CONSTRAINT oauth_clients_secret_iff_confidential CHECK (confidential = (secret_hash IS NOT NULL)),
    CONSTRAINT oauth_clients_api_token_whole CHECK ((api_token_lookup IS NULL) = (api_token_hash IS NULL))
) STRICT;
CREATE TRIGGER oauth_clients_known_values_insert BEFORE INSERT ON oauth_clients
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in enabled_scopes') FROM json_each(NEW.enabled_scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
    SELECT RAISE(ABORT, 'unknown permission in api_permissions') FROM json_each(NEW.api_permissions)
        WHERE value NOT IN ('users:read', 'users:create');
END;
CREATE TRIGGER oauth_clients_known_values_update BEFORE UPDATE OF enabled_scopes, api_permissions ON oauth_clients
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in enabled_scopes') FROM json_each(NEW.enabled_scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
    SELECT RAISE(ABORT, 'unknown permission in api_permissions') FROM json_each(NEW.api_permissions)
        WHERE value NOT IN ('users:read', 'users:create');
END;

CREATE TABLE oauth_codes (
    code_hash              BLOB PRIMARY KEY CHECK (length(code_hash) = 32),
    client_id              TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id                INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri           TEXT NOT NULL,
    redirect_uri_explicit  INTEGER NOT NULL CHECK (redirect_uri_explicit IN (0, 1)),
    scope                  TEXT NOT NULL,
    code_challenge         TEXT
        CHECK (length(code_challenge) = 43 AND code_challenge NOT GLOB '*[^A-Za-z0-9_-]*'),
    issued_at              INTEGER NOT NULL DEFAULT (unixepoch()),
    expires_at             INTEGER NOT NULL,
    used_at                INTEGER,
    nonce                  TEXT CHECK (length(CAST(nonce AS BLOB)) BETWEEN 1 AND 512),
    auth_time              INTEGER
) STRICT;
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
CREATE INDEX oauth_codes_user_id_idx ON oauth_codes (user_id);

-- The client component's default host user table (the demo's). It stands
-- for a host application's own table, so it is the one table here that is
-- not STRICT: the client component reads each column's class from its
-- declared type, as it would read a host's (VARCHAR(n)/CHAR(n)/TEXT text,
-- DATE 'YYYY-MM-DD', BOOLEAN 0/1, JSONB JSON text, TIMESTAMP Unix seconds),
-- and STRICT allows only INTEGER, REAL, TEXT, BLOB and ANY. The checks keep
-- the values as typed as STRICT would.
CREATE TABLE host_users (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    username     VARCHAR(150) NOT NULL UNIQUE CHECK (typeof(username) = 'text' AND length(username) <= 150),
    email        VARCHAR(254) CHECK (email IS NULL OR typeof(email) = 'text' AND length(email) <= 254),
    first_name   VARCHAR(150) CHECK (first_name IS NULL OR typeof(first_name) = 'text' AND length(first_name) <= 150),
    last_name    VARCHAR(150) CHECK (last_name IS NULL OR typeof(last_name) = 'text' AND length(last_name) <= 150),
    cpf          CHAR(11) UNIQUE CHECK (cpf IS NULL OR typeof(cpf) = 'text' AND length(cpf) <= 11),
    birth_date   DATE CHECK (birth_date IS date(birth_date)),
    mother_name  TEXT CHECK (mother_name IS NULL OR typeof(mother_name) = 'text'),
    city         TEXT CHECK (city IS NULL OR typeof(city) = 'text'),
    state        CHAR(2) CHECK (state IS NULL OR typeof(state) = 'text' AND length(state) <= 2),
    profile      JSONB CHECK (profile IS NULL OR json_valid(profile)),
    is_active    BOOLEAN NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    date_joined  TIMESTAMP NOT NULL DEFAULT (unixepoch()) CHECK (typeof(date_joined) = 'integer'),
    last_login   TIMESTAMP CHECK (last_login IS NULL OR typeof(last_login) = 'integer')
);

CREATE TABLE login_failures (
    key           TEXT PRIMARY KEY
        CHECK (length(key) > 0 AND (key GLOB 'username:?*' OR key GLOB 'client:?*' OR key GLOB 'address:?*')),
    failures      INTEGER NOT NULL CHECK (failures > 0),
    window_start  INTEGER NOT NULL
) STRICT;
CREATE INDEX login_failures_window_start_idx ON login_failures (window_start);

CREATE TABLE oauth_grants (
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id         TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scopes            TEXT NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    first_granted_at  INTEGER NOT NULL,
    last_used_at      INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
) STRICT;
CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);
CREATE TRIGGER oauth_grants_known_scopes_insert BEFORE INSERT ON oauth_grants
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in scopes') FROM json_each(NEW.scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
END;
CREATE TRIGGER oauth_grants_known_scopes_update BEFORE UPDATE OF scopes ON oauth_grants
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in scopes') FROM json_each(NEW.scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
END;

-- The access report: append-only (inserted, read, purged; never updated).
CREATE TABLE access_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL
        CHECK (length(client_id) BETWEEN 1 AND 100 AND client_id NOT GLOB '*[^A-Za-z0-9._~-]*'),
    scopes       TEXT NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    accessed_at  INTEGER NOT NULL,
    request_id   TEXT NOT NULL CHECK (length(request_id) <= 200)
) STRICT;
CREATE INDEX access_log_user_idx ON access_log (user_id, accessed_at DESC, id DESC);
CREATE INDEX access_log_accessed_at_idx ON access_log (accessed_at);
CREATE TRIGGER access_log_known_scopes BEFORE INSERT ON access_log
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in scopes') FROM json_each(NEW.scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
END;
CREATE TRIGGER access_log_append_only BEFORE UPDATE ON access_log
BEGIN
    SELECT RAISE(ABORT, 'access_log is append-only');
END;

CREATE TABLE tax_id_attempts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    attempted_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX tax_id_attempts_user_idx ON tax_id_attempts (user_id, attempted_at);
CREATE INDEX tax_id_attempts_attempted_at_idx ON tax_id_attempts (attempted_at);

-- The audit trail: append-only (never updated or deleted); no foreign
-- keys, it outlives what it names.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             INTEGER NOT NULL DEFAULT (unixepoch()),
    actor_kind     TEXT NOT NULL CHECK (actor_kind IN ('staff', 'cli', 'application')),
    actor          TEXT NOT NULL CHECK (length(actor) <= 200),
    actor_user_id  INTEGER,
    action         TEXT NOT NULL CHECK (action GLOB '[a-z_]*.[a-z_]*' AND action NOT GLOB '*[^a-z_.]*'
                                        AND length(action) - length(replace(action, '.', '')) = 1
                                        AND action NOT GLOB '.*' AND action NOT GLOB '*.'),
    target_kind    TEXT NOT NULL CHECK (target_kind IN ('client', 'user', 'none')),
    target         TEXT NOT NULL CHECK (length(target) <= 200),
    changes        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(changes) AND json_type(changes) = 'array'),
    request_id     TEXT CHECK (length(request_id) <= 200)
) STRICT;
CREATE INDEX audit_log_actor_idx ON audit_log (lower(actor), id DESC);
CREATE INDEX audit_log_target_idx ON audit_log (lower(target), id DESC);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- Successful logins ('pair', 'account' or 'oauth'), kept small by the purge.
CREATE TABLE user_logins (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at       INTEGER NOT NULL DEFAULT (unixepoch()),
    via      TEXT NOT NULL CHECK (via IN ('pair', 'account', 'oauth'))
) STRICT;
CREATE INDEX user_logins_user_idx ON user_logins (user_id, id DESC);
CREATE INDEX user_logins_at_idx ON user_logins (at);
