-- The panel's account search by text (issue 28): trigram indexes on the
-- username, name and address, so that `ILIKE '%text%'` is answered from
-- an index instead of reading every account. pg_trgm ships with
-- PostgreSQL (contrib) and is a trusted extension: the database's owner
-- may create it. Where it is not installed, the migration warns and goes
-- on; the search then still answers, reading the whole table
-- (docs/configuration.md, "Account search").
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'pg_trgm is not available (%): the account search by text will read every account', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        CREATE INDEX users_username_trgm_idx ON users USING gin (username gin_trgm_ops);
        CREATE INDEX users_name_trgm_idx ON users USING gin (name gin_trgm_ops);
        CREATE INDEX users_email_trgm_idx ON users USING gin (email gin_trgm_ops);
    END IF;
END
$$;
