-- bench/scale.sh: the bulk data of one SQLite database, by SQL. Read after
-- names.sql and a temp table p(users, log_rows, tokens, grants, audit_rows,
-- now, pw) the script writes; the schema is the service's own (`credencial
-- migrate` ran first), and the OAuth clients named in temp table clients(k,
-- client_id) exist (made with the CLI). Every value is derived from the row
-- number by a multiplicative hash, so a run is reproducible.
--   users         p.users: Brazilian names, a username and an e-mail made of
--                 them, a CPF with valid check digits, birth date, gender
--   access_log    p.log_rows, spread over the users, within the last 4 years
--                 (inside the default retention of 5: nothing to purge)
--   refresh_tokens p.tokens, alive (expiring in one to two days: none expires
--                 during a run), half rotated
--   oauth_grants  p.grants (every second user, one client each)
--   audit_log     p.audit_rows, staff actions on accounts over two years
PRAGMA cache_size = -1048576;
PRAGMA access.cache_size = -1048576;
PRAGMA synchronous = OFF;
PRAGMA access.synchronous = OFF;
-- No write-ahead log for the load (it would grow to the size of each
-- transaction); bench/scale.sh puts the service's WAL back afterwards.
PRAGMA journal_mode = OFF;

CREATE TEMP TABLE counts AS
SELECT (SELECT count(*) FROM first_names) AS nf, (SELECT count(*) FROM surnames) AS ns,
       (SELECT count(*) FROM clients) AS nc;

.print loading users
BEGIN;
INSERT INTO users (username, password, is_active, identificacao, nome_usual, email, campus, tipo_usuario, name, cpf,
                   created_at, avatar, receita_validated, is_staff, must_change_password, genero, data_de_nascimento,
                   email_key, email_verified)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT users FROM p)),
h AS (
    SELECT i,
           ((i * 2654435761) % 4294967296) / 4096 AS h1,
           ((i * 2246822519) % 4294967296) / 4096 AS h2,
           ((i * 3266489917) % 4294967296) / 4096 AS h3,
           ((i * 668265263) % 4294967296) / 4096 AS h4,
           100000000 + (i * 275604541) % 900000000 AS b
    FROM n
),
d AS (
    SELECT h.*, (b / 100000000) % 10 AS d1, (b / 10000000) % 10 AS d2, (b / 1000000) % 10 AS d3,
           (b / 100000) % 10 AS d4, (b / 10000) % 10 AS d5, (b / 1000) % 10 AS d6, (b / 100) % 10 AS d7,
           (b / 10) % 10 AS d8, b % 10 AS d9
    FROM h
),
c AS (
    SELECT d.*, ((d1 * 10 + d2 * 9 + d3 * 8 + d4 * 7 + d5 * 6 + d6 * 5 + d7 * 4 + d8 * 3 + d9 * 2) * 10 % 11) % 10 AS c1
    FROM d
)
SELECT f.slug || '.' || s1.slug || c.i,
       (SELECT pw FROM p),
       CASE WHEN c.h4 % 50 = 0 THEN 0 ELSE 1 END,
       CAST(2000000 + c.i AS TEXT),
       f.name,
       f.slug || '.' || s1.slug || c.i || '@' ||
           CASE c.h4 % 5 WHEN 0 THEN 'gmail.com' WHEN 1 THEN 'hotmail.com' WHEN 2 THEN 'yahoo.com.br'
                         WHEN 3 THEN 'outlook.com' ELSE 'saude.gov.br' END,
       CASE c.h4 % 4 WHEN 0 THEN 'Central' WHEN 1 THEN 'Norte' WHEN 2 THEN 'Sul' ELSE '' END,
       CASE c.h4 % 3 WHEN 0 THEN 'Servidor' WHEN 1 THEN 'Aluno' ELSE 'Cidadão' END,
       f.name || ' ' || s1.name || ' ' || s2.name,
       CAST(c.b AS TEXT) || c.c1 ||
           (((d1 * 11 + d2 * 10 + d3 * 9 + d4 * 8 + d5 * 7 + d6 * 6 + d7 * 5 + d8 * 4 + d9 * 3 + c1 * 2) * 10 % 11) % 10),
       (SELECT now FROM p) - 86400 * 365 * 6 + c.i * (86400 * 365 * 6 / ((SELECT users FROM p) + 1)),
       '',
       CASE WHEN c.h4 % 3 = 0 THEN 1 ELSE 0 END,
       0,
       0,
       f.genero,
       date('1950-01-01', '+' || (c.h3 % 20000) || ' days'),
       f.slug || '.' || s1.slug || c.i || '@' ||
           CASE c.h4 % 5 WHEN 0 THEN 'gmail.com' WHEN 1 THEN 'hotmail.com' WHEN 2 THEN 'yahoo.com.br'
                         WHEN 3 THEN 'outlook.com' ELSE 'saude.gov.br' END,
       CASE WHEN c.h4 % 2 = 0 THEN 1 ELSE 0 END
FROM c, counts
JOIN first_names f ON f.k = c.h1 % counts.nf
JOIN surnames s1 ON s1.k = c.h2 % counts.ns
JOIN surnames s2 ON s2.k = c.h3 % counts.ns;
COMMIT;

.print loading access_log
BEGIN;
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT log_rows FROM p))
SELECT 1 + ((n.i * 2654435761) % 4294967296) / 4096 % (SELECT users FROM p),
       (SELECT client_id FROM clients WHERE k = n.i % (SELECT nc FROM counts)),
       CASE n.i % 3 WHEN 0 THEN '["dados_publicos","cpf","email"]' WHEN 1 THEN '["dados_publicos","cpf"]'
                    ELSE '["dados_publicos","cpf","email","experiencia_profissional"]' END,
       (SELECT now FROM p) - 60 - ((n.i * 2246822519) % 4294967296) % (86400 * 365 * 4),
       lower(hex(randomblob(16)))
FROM n;
COMMIT;

.print loading refresh_tokens
BEGIN;
INSERT INTO refresh_tokens (jti, user_id, expires_at, rotated_at, created_at, family, revoked)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT tokens FROM p)),
t AS (SELECT i, lower(hex(randomblob(16))) AS jti,
             (SELECT now FROM p) + 86400 + ((i * 3266489917) % 4294967296) % 86400 AS expires_at FROM n)
SELECT jti, 1 + ((i * 668265263) % 4294967296) / 4096 % (SELECT users FROM p), expires_at,
       CASE WHEN i % 2 = 1 THEN expires_at - 86400 + 300 END, expires_at - 86400, jti, 0
FROM t;
COMMIT;

.print loading oauth_grants
BEGIN;
INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT grants FROM p))
SELECT 2 * n.i, (SELECT client_id FROM clients WHERE k = n.i % (SELECT nc FROM counts)),
       '["cpf","dados_publicos","email"]',
       (SELECT now FROM p) - 86400 * 400 + n.i % 86400, (SELECT now FROM p) - n.i % (86400 * 30)
FROM n WHERE 2 * n.i <= (SELECT users FROM p);
COMMIT;

.print loading audit_log
BEGIN;
INSERT INTO audit_log (at, actor_kind, actor, actor_user_id, action, target_kind, target, changes, request_id)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT audit_rows FROM p))
SELECT (SELECT now FROM p) - 86400 * 730 + n.i * (86400 * 730 / ((SELECT audit_rows FROM p) + 1)),
       CASE WHEN n.i % 10 = 0 THEN 'cli' ELSE 'staff' END,
       CASE WHEN n.i % 10 = 0 THEN 'root' ELSE 'equipe' || (n.i % 7) END,
       NULL,
       CASE n.i % 5 WHEN 0 THEN 'user.deactivate' WHEN 1 THEN 'user.reactivate' WHEN 2 THEN 'user.staff'
                    WHEN 3 THEN 'user.lift_throttle' ELSE 'user.end_sessions' END,
       'user',
       u.username,
       CASE n.i % 5 WHEN 0 THEN '[["is_active","false"]]' WHEN 1 THEN '[["is_active","true"]]'
                    WHEN 2 THEN '[["is_staff","false"]]' ELSE '[]' END,
       lower(hex(randomblob(16)))
FROM n JOIN users u ON u.id = 1 + ((n.i * 374761393) % 4294967296) % (SELECT users FROM p);
COMMIT;
.print loaded
