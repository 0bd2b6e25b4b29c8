-- The access log in a file of its own, beside the database
-- (`<file>-access-log`, attached as `access` on every connection): the
-- profile read's appends, the hot path's only writes, then commit to that
-- file's WAL and leave the main file's readers' page caches warm (SQLite
-- empties a connection's cache of a file after another connection commits
-- to it). A table cannot refer to another file's, so `user_id` has no
-- foreign key: accounts are never deleted, and every append is for an
-- account whose grant it checks (or that the service just read). The rows
-- move here from the main file's table after this migration, in Rust
-- (`database::move_access_log`): a transaction across attached WAL files is
-- atomic per file only, so each of its steps writes one file.
CREATE TABLE access.access_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL,
    client_id    TEXT NOT NULL
        CHECK (length(client_id) BETWEEN 1 AND 100 AND client_id NOT GLOB '*[^A-Za-z0-9._~-]*'),
    scopes       TEXT NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    accessed_at  INTEGER NOT NULL,
    request_id   TEXT NOT NULL CHECK (length(request_id) <= 200)
) STRICT;
CREATE INDEX access.access_log_user_idx ON access_log (user_id, accessed_at DESC, id DESC);
CREATE INDEX access.access_log_accessed_at_idx ON access_log (accessed_at);
CREATE TRIGGER access.access_log_known_scopes BEFORE INSERT ON access_log
BEGIN
    SELECT RAISE(ABORT, 'unknown scope in scopes') FROM json_each(NEW.scopes)
        WHERE value NOT IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                            'experiencia_profissional', 'formacao_academica', 'cursos_cdp');
END;
CREATE TRIGGER access.access_log_append_only BEFORE UPDATE ON access_log
BEGIN
    SELECT RAISE(ABORT, 'access_log is append-only');
END;
