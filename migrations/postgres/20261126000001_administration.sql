-- Administration (issue 13): staff accounts and the audit trail.

-- A staff user may use the administration panel (/admin/) with the same
-- login as /conta/.
ALTER TABLE users ADD COLUMN is_staff BOOLEAN NOT NULL DEFAULT FALSE;

-- The audit trail: who (a staff user, an operator at the CLI, or a host
-- application of the user-management API) changed what, when, in which
-- request. Append-only: rows are inserted and read, never updated or
-- deleted (the triggers refuse both). `changes` is a JSON array of
-- [field, new value] pairs, never holding a secret or a password.
-- There is no foreign key to users or oauth_clients: the trail outlives
-- what it names.
CREATE TABLE audit_log (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at             TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    actor_kind     TEXT NOT NULL CHECK (actor_kind IN ('staff', 'cli', 'application')),
    actor          TEXT NOT NULL CHECK (length(actor) <= 200),
    actor_user_id  BIGINT,
    action         TEXT NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    target_kind    TEXT NOT NULL CHECK (target_kind IN ('client', 'user', 'none')),
    target         TEXT NOT NULL CHECK (length(target) <= 200),
    changes        JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(changes) = 'array'),
    request_id     TEXT CHECK (length(request_id) <= 200)
);
CREATE INDEX audit_log_at_idx ON audit_log (id DESC);
CREATE INDEX audit_log_actor_idx ON audit_log (lower(actor), id DESC);
CREATE INDEX audit_log_target_idx ON audit_log (lower(target), id DESC);

CREATE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change();
