-- The client component's host user record: the table a host application's
-- users live in, written by the attribute map (`SERVICE_USER_ATTR_MAP`) after
-- an OAuth2 login. The table name is configurable (`SERVICE_USER_TABLE`); this
-- one is the default and the demo's. Its columns are those of a typical
-- (Django-like) user model. Every mapped column may stay NULL: a value the
-- profile cannot give (scope not granted, registry down, not validated) is
-- skipped and the row is still created.
CREATE TABLE host_users (
    id           BIGSERIAL PRIMARY KEY,
    -- The usual get-or-create lookup (`SERVICE_USER_LOOKUP_FIELD`); any
    -- column with a unique constraint of its own can be the lookup instead.
    username     VARCHAR(150) NOT NULL UNIQUE,
    email        VARCHAR(254),
    first_name   VARCHAR(150),
    last_name    VARCHAR(150),
    cpf          CHAR(11) UNIQUE,
    birth_date   DATE,
    mother_name  TEXT,
    city         TEXT,
    state        CHAR(2),
    -- The whole profile payload (`fulljson`).
    profile      JSONB,
    -- A host user switched off by the host is refused at login and never
    -- reactivated by it.
    is_active    BOOLEAN NOT NULL DEFAULT TRUE,
    date_joined  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_login   TIMESTAMPTZ
);
