-- The e-mail key (previous migration) becomes the one uniqueness rule of
-- addresses, in place of lower(email). `credencial migrate` has keyed every
-- account before it applies this. Run by another tool, this stops on the
-- named check below while an account has no key.
CREATE TEMP TABLE email_key_guard (
    unkeyed INTEGER CONSTRAINT run_credencial_migrate_to_compute_the_email_keys CHECK (unkeyed = 0)
);
INSERT INTO email_key_guard SELECT count(*) FROM users WHERE email_key IS NULL;
DROP TABLE email_key_guard;

CREATE UNIQUE INDEX users_email_key_key ON users (email_key) WHERE email_key <> '';
DROP INDEX users_email_lower_key;
