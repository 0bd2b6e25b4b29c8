-- The panel's account search by words (issue 28): one row per way an
-- account can be found by the start of what is typed — each word of the
-- name onwards ("maria souza lima", "souza lima", "lima"), the username
-- and the address — so that a search is one range of one B-tree index,
-- read in order and stopped when the page is full, whatever the number of
-- accounts or of matches. The trigram indexes it replaces found every
-- match before a page could be sorted (200 ms for a common name at a
-- million accounts, growing with the table).
--
-- Terms are folded the same way on both engines and in the service
-- (credencial_domain::admin::search_key): ASCII capitals and the accented
-- capitals of Portuguese to lower case, nothing else changed, whatever
-- the database's locale. "C" collation: byte order, so that a prefix is
-- one range of the index on any database.
CREATE TABLE user_search_terms (
    term TEXT COLLATE "C" NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (term, user_id)
);

CREATE INDEX user_search_terms_user_idx ON user_search_terms (user_id);

CREATE FUNCTION credencial_search_fold(value TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZÁÀÂÃÄÉÈÊËÍÌÎÏÓÒÔÕÖÚÙÛÜÇÑ',
                            'abcdefghijklmnopqrstuvwxyzáàâãäéèêëíìîïóòôõöúùûüçñ')
$$;

-- The terms of one account: each word of its name onwards (words are
-- separated by one space, however many the name has), its username, its
-- address (at most 200 characters each).
CREATE FUNCTION credencial_search_terms(name TEXT, username TEXT, email TEXT) RETURNS SETOF TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT DISTINCT left(term, 200) FROM (
        SELECT array_to_string(split.words[i:], ' ') AS term
        FROM (SELECT array_remove(string_to_array(credencial_search_fold(name), ' '), '') AS words) AS split,
             generate_subscripts(split.words, 1) AS i
        UNION ALL SELECT credencial_search_fold(username)
        UNION ALL SELECT credencial_search_fold(email)
    ) AS terms
    WHERE term <> ''
$$;

CREATE FUNCTION user_search_terms_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM user_search_terms WHERE user_id = OLD.id;
    END IF;
    INSERT INTO user_search_terms (term, user_id)
    SELECT term, NEW.id FROM credencial_search_terms(NEW.name, NEW.username, NEW.email) AS term;
    RETURN NULL;
END
$$;

CREATE TRIGGER user_search_terms_insert AFTER INSERT ON users
    FOR EACH ROW EXECUTE FUNCTION user_search_terms_follow();
CREATE TRIGGER user_search_terms_update AFTER UPDATE OF name, username, email ON users
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.username IS DISTINCT FROM NEW.username
                       OR OLD.email IS DISTINCT FROM NEW.email)
    EXECUTE FUNCTION user_search_terms_follow();

INSERT INTO user_search_terms (term, user_id)
SELECT term, users.id FROM users, credencial_search_terms(users.name, users.username, users.email) AS term;

DROP INDEX IF EXISTS users_username_trgm_idx;
DROP INDEX IF EXISTS users_name_trgm_idx;
DROP INDEX IF EXISTS users_email_trgm_idx;
