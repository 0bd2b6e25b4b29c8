-- The e-mail key (previous migration) becomes the one uniqueness rule of
-- addresses, in place of lower(email). `credencial migrate` has keyed every
-- account before it applies this; an account an older instance created in
-- between has no key yet, and running `credencial migrate` again keys it.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM users WHERE email_key IS NULL) THEN
        RAISE EXCEPTION 'some accounts have no e-mail key yet: run `credencial migrate` (it computes the keys before this migration), not another migration tool';
    END IF;
END
$$;

CREATE UNIQUE INDEX users_email_key_key ON users (email_key) WHERE email_key <> '';
DROP INDEX users_email_lower_key;
