-- The access report (issue 12, "Quem acessou meus dados"): one row per
-- answered POST /api/perfil/dados/. Append-only: rows are inserted, read
-- and purged after the retention period (access_log_retention_days), never
-- updated. There is no foreign key to oauth_clients, so the report keeps
-- naming a client that was deleted since (by its id).
CREATE TABLE access_log (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL CHECK (client_id ~ '^[A-Za-z0-9._~-]{1,100}$'),
    -- The scopes actually answered.
    scopes       TEXT[] NOT NULL CHECK (scopes <@ ARRAY[
        'dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
        'experiencia_profissional', 'formacao_academica', 'cursos_cdp'
    ]::TEXT[]),
    accessed_at  TIMESTAMPTZ NOT NULL,
    request_id   TEXT NOT NULL CHECK (length(request_id) <= 200)
);
-- A person's report, newest first, paged.
CREATE INDEX access_log_user_idx ON access_log (user_id, accessed_at DESC, id DESC);
-- The retention purge.
CREATE INDEX access_log_accessed_at_idx ON access_log (accessed_at);

CREATE FUNCTION access_log_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'access_log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER access_log_append_only BEFORE UPDATE ON access_log
    FOR EACH ROW EXECUTE FUNCTION access_log_refuse_update();
