-- bench/scale.sh: the bulk data of one PostgreSQL database, by SQL; the same
-- rows as load-sqlite.sql (see there), in PostgreSQL's types. Read after
-- names.sql and the temp tables p and clients the script writes.
SET synchronous_commit = off;
SET maintenance_work_mem = '512MB';
SET work_mem = '64MB';

CREATE TEMP TABLE counts AS
SELECT (SELECT count(*) FROM first_names) AS nf, (SELECT count(*) FROM surnames) AS ns,
       (SELECT count(*) FROM clients) AS nc;

\echo loading users
INSERT INTO users (username, password, is_active, identificacao, nome_usual, email, campus, tipo_usuario, name, cpf,
                   created_at, avatar, receita_validated, is_staff, must_change_password, genero, data_de_nascimento,
                   email_key, email_verified)
WITH h AS (
    SELECT i,
           ((i * 2654435761) % 4294967296) / 4096 AS h1,
           ((i * 2246822519) % 4294967296) / 4096 AS h2,
           ((i * 3266489917) % 4294967296) / 4096 AS h3,
           ((i * 668265263) % 4294967296) / 4096 AS h4,
           100000000 + (i * 275604541) % 900000000 AS b
    FROM generate_series(1::bigint, (SELECT users FROM p)) AS i
),
d AS (
    SELECT h.*, (b / 100000000) % 10 AS d1, (b / 10000000) % 10 AS d2, (b / 1000000) % 10 AS d3,
           (b / 100000) % 10 AS d4, (b / 10000) % 10 AS d5, (b / 1000) % 10 AS d6, (b / 100) % 10 AS d7,
           (b / 10) % 10 AS d8, b % 10 AS d9
    FROM h
),
c AS (
    SELECT d.*, ((d1 * 10 + d2 * 9 + d3 * 8 + d4 * 7 + d5 * 6 + d6 * 5 + d7 * 4 + d8 * 3 + d9 * 2) * 10 % 11) % 10 AS c1,
           CASE h4 % 5 WHEN 0 THEN 'gmail.com' WHEN 1 THEN 'hotmail.com' WHEN 2 THEN 'yahoo.com.br'
                       WHEN 3 THEN 'outlook.com' ELSE 'saude.gov.br' END AS domain
    FROM d
)
SELECT f.slug || '.' || s1.slug || c.i,
       (SELECT pw FROM p),
       c.h4 % 50 <> 0,
       (2000000 + c.i)::text,
       f.name,
       f.slug || '.' || s1.slug || c.i || '@' || c.domain,
       CASE c.h4 % 4 WHEN 0 THEN 'Central' WHEN 1 THEN 'Norte' WHEN 2 THEN 'Sul' ELSE '' END,
       CASE c.h4 % 3 WHEN 0 THEN 'Servidor' WHEN 1 THEN 'Aluno' ELSE 'Cidadão' END,
       f.name || ' ' || s1.name || ' ' || s2.name,
       c.b::text || c.c1::text ||
           ((((d1 * 11 + d2 * 10 + d3 * 9 + d4 * 8 + d5 * 7 + d6 * 6 + d7 * 5 + d8 * 4 + d9 * 3 + c1 * 2) * 10 % 11) % 10))::text,
       to_timestamp((SELECT now FROM p) - 86400 * 365 * 6 + c.i * (86400 * 365 * 6 / ((SELECT users FROM p) + 1))),
       '',
       c.h4 % 3 = 0,
       false,
       false,
       f.genero,
       DATE '1950-01-01' + (c.h3 % 20000)::int,
       f.slug || '.' || s1.slug || c.i || '@' || c.domain,
       c.h4 % 2 = 0
FROM c
CROSS JOIN counts
JOIN first_names f ON f.k = c.h1 % counts.nf
JOIN surnames s1 ON s1.k = c.h2 % counts.ns
JOIN surnames s2 ON s2.k = c.h3 % counts.ns;

\echo loading access_log
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
SELECT 1 + ((i * 2654435761) % 4294967296) / 4096 % (SELECT users FROM p),
       cl.client_id,
       CASE i % 3 WHEN 0 THEN ARRAY['dados_publicos', 'cpf', 'email'] WHEN 1 THEN ARRAY['dados_publicos', 'cpf']
                  ELSE ARRAY['dados_publicos', 'cpf', 'email', 'experiencia_profissional'] END,
       to_timestamp((SELECT now FROM p) - 60 - ((i * 2246822519) % 4294967296) % (86400 * 365 * 4)),
       md5(i::text || 'access')
FROM generate_series(1::bigint, (SELECT log_rows FROM p)) AS i
JOIN clients cl ON cl.k = i % (SELECT nc FROM counts);

\echo loading refresh_tokens
INSERT INTO refresh_tokens (jti, user_id, expires_at, rotated_at, created_at, family, revoked)
SELECT jti, 1 + ((i * 668265263) % 4294967296) / 4096 % (SELECT users FROM p), to_timestamp(e),
       CASE WHEN i % 2 = 1 THEN to_timestamp(e - 86400 + 300) END, to_timestamp(e - 86400), jti, false
FROM (SELECT i, md5(i::text || 'refresh') AS jti,
             (SELECT now FROM p) + 86400 + ((i * 3266489917) % 4294967296) % 86400 AS e
      FROM generate_series(1::bigint, (SELECT tokens FROM p)) AS i) AS t;

\echo loading oauth_grants
INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
SELECT 2 * i, cl.client_id, ARRAY['cpf', 'dados_publicos', 'email'],
       to_timestamp((SELECT now FROM p) - 86400 * 400 + i % 86400), to_timestamp((SELECT now FROM p) - i % (86400 * 30))
FROM generate_series(1::bigint, (SELECT grants FROM p)) AS i
JOIN clients cl ON cl.k = i % (SELECT nc FROM counts)
WHERE 2 * i <= (SELECT users FROM p);

\echo loading audit_log
INSERT INTO audit_log (at, actor_kind, actor, actor_user_id, action, target_kind, target, changes, request_id)
SELECT to_timestamp((SELECT now FROM p) - 86400 * 730 + i * (86400 * 730 / ((SELECT audit_rows FROM p) + 1))),
       CASE WHEN i % 10 = 0 THEN 'cli' ELSE 'staff' END,
       CASE WHEN i % 10 = 0 THEN 'root' ELSE 'equipe' || (i % 7) END,
       NULL,
       CASE i % 5 WHEN 0 THEN 'user.deactivate' WHEN 1 THEN 'user.reactivate' WHEN 2 THEN 'user.staff'
                  WHEN 3 THEN 'user.lift_throttle' ELSE 'user.end_sessions' END,
       'user',
       u.username,
       CASE i % 5 WHEN 0 THEN '[["is_active","false"]]' WHEN 1 THEN '[["is_active","true"]]'
                  WHEN 2 THEN '[["is_staff","false"]]' ELSE '[]' END::jsonb,
       md5(i::text || 'audit')
FROM generate_series(1::bigint, (SELECT audit_rows FROM p)) AS i
JOIN users u ON u.id = 1 + ((i * 374761393) % 4294967296) % (SELECT users FROM p);
\echo loaded
