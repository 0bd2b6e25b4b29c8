-- The panel's account search by words (issue 28): one row per way an
-- account can be found by the start of what is typed — each word of the
-- name onwards ("maria souza lima", "souza lima", "lima"), the username
-- and the address — so that a search is one range of one index, read in
-- order and stopped when the page is full, whatever the number of
-- accounts or of matches. The FTS5 trigram index it replaces found every
-- match before a page could be sorted (93 ms for a common name at a
-- million accounts, growing with the table).
--
-- Terms are folded the same way on both engines and in the service
-- (credencial_domain::admin::search_key): ASCII capitals and the accented
-- capitals of Portuguese to lower case (SQLite's lower() changes ASCII
-- only; the replace() calls, in two levels because SQLite's parser limits
-- how deep an expression nests, do the rest), nothing else changed. Words
-- are separated by one space however many the name has; at most 200
-- characters a term. The triggers split the name with json_each (the
-- name quoted as a JSON string, its spaces made element separators: a
-- space is never part of an escape), since a trigger cannot hold a
-- recursive query.
DROP TRIGGER IF EXISTS users_search_insert;
DROP TRIGGER IF EXISTS users_search_delete;
DROP TRIGGER IF EXISTS users_search_update;
DROP TABLE IF EXISTS users_search;

CREATE TABLE user_search_terms (
    term TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (term, user_id)
) WITHOUT ROWID;

CREATE INDEX user_search_terms_user_idx ON user_search_terms (user_id);

CREATE TRIGGER user_search_terms_insert AFTER INSERT ON users BEGIN
    INSERT OR IGNORE INTO user_search_terms (term, user_id)
    SELECT substr(CASE field.key WHEN 0 THEN (
               SELECT group_concat(later.value, ' ') FROM (
                   SELECT value FROM json_each('[' || replace(json_quote(field.value), ' ', '","') || ']') WHERE key >= word.key AND value <> '' ORDER BY key
               ) AS later)
           ELSE word.value END, 1, 200), new.id
    FROM (SELECT lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(half.fields, 'Ï', 'ï'), 'Ó', 'ó'), 'Ò', 'ò'), 'Ô', 'ô'), 'Õ', 'õ'), 'Ö', 'ö'), 'Ú', 'ú'), 'Ù', 'ù'), 'Û', 'û'), 'Ü', 'ü'), 'Ç', 'ç'), 'Ñ', 'ñ')) AS fields FROM (SELECT replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(json_array(new.name, new.username, new.email), 'Á', 'á'), 'À', 'à'), 'Â', 'â'), 'Ã', 'ã'), 'Ä', 'ä'), 'É', 'é'), 'È', 'è'), 'Ê', 'ê'), 'Ë', 'ë'), 'Í', 'í'), 'Ì', 'ì'), 'Î', 'î') AS fields) AS half) AS folded,
         json_each(folded.fields) AS field,
         json_each(CASE field.key WHEN 0 THEN '[' || replace(json_quote(field.value), ' ', '","') || ']' ELSE json_array(field.value) END) AS word
    WHERE word.value <> '';
END;

CREATE TRIGGER user_search_terms_update AFTER UPDATE OF name, username, email ON users
WHEN old.name IS NOT new.name OR old.username IS NOT new.username OR old.email IS NOT new.email BEGIN
    DELETE FROM user_search_terms WHERE user_id = old.id;
    INSERT OR IGNORE INTO user_search_terms (term, user_id)
    SELECT substr(CASE field.key WHEN 0 THEN (
               SELECT group_concat(later.value, ' ') FROM (
                   SELECT value FROM json_each('[' || replace(json_quote(field.value), ' ', '","') || ']') WHERE key >= word.key AND value <> '' ORDER BY key
               ) AS later)
           ELSE word.value END, 1, 200), new.id
    FROM (SELECT lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(half.fields, 'Ï', 'ï'), 'Ó', 'ó'), 'Ò', 'ò'), 'Ô', 'ô'), 'Õ', 'õ'), 'Ö', 'ö'), 'Ú', 'ú'), 'Ù', 'ù'), 'Û', 'û'), 'Ü', 'ü'), 'Ç', 'ç'), 'Ñ', 'ñ')) AS fields FROM (SELECT replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(json_array(new.name, new.username, new.email), 'Á', 'á'), 'À', 'à'), 'Â', 'â'), 'Ã', 'ã'), 'Ä', 'ä'), 'É', 'é'), 'È', 'è'), 'Ê', 'ê'), 'Ë', 'ë'), 'Í', 'í'), 'Ì', 'ì'), 'Î', 'î') AS fields) AS half) AS folded,
         json_each(folded.fields) AS field,
         json_each(CASE field.key WHEN 0 THEN '[' || replace(json_quote(field.value), ' ', '","') || ']' ELSE json_array(field.value) END) AS word
    WHERE word.value <> '';
END;

-- The foreign key's cascade needs `PRAGMA foreign_keys` on, which the
-- service sets and the sqlite3 shell does not: an account deleted by hand
-- takes its terms too.
CREATE TRIGGER user_search_terms_delete AFTER DELETE ON users BEGIN
    DELETE FROM user_search_terms WHERE user_id = old.id;
END;

-- The accounts made before this migration, by the same rule.
INSERT OR IGNORE INTO user_search_terms (term, user_id)
SELECT substr(CASE field.key WHEN 0 THEN (
               SELECT group_concat(later.value, ' ') FROM (
                   SELECT value FROM json_each('[' || replace(json_quote(field.value), ' ', '","') || ']') WHERE key >= word.key AND value <> '' ORDER BY key
               ) AS later)
           ELSE word.value END, 1, 200), folded.id
FROM (SELECT half.id AS id, lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(half.fields, 'Ï', 'ï'), 'Ó', 'ó'), 'Ò', 'ò'), 'Ô', 'ô'), 'Õ', 'õ'), 'Ö', 'ö'), 'Ú', 'ú'), 'Ù', 'ù'), 'Û', 'û'), 'Ü', 'ü'), 'Ç', 'ç'), 'Ñ', 'ñ')) AS fields FROM (SELECT id, replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(json_array(name, username, email), 'Á', 'á'), 'À', 'à'), 'Â', 'â'), 'Ã', 'ã'), 'Ä', 'ä'), 'É', 'é'), 'È', 'è'), 'Ê', 'ê'), 'Ë', 'ë'), 'Í', 'í'), 'Ì', 'ì'), 'Î', 'î') AS fields FROM users) AS half) AS folded,
     json_each(folded.fields) AS field,
     json_each(CASE field.key WHEN 0 THEN '[' || replace(json_quote(field.value), ' ', '","') || ']' ELSE json_array(field.value) END) AS word
WHERE word.value <> '';
