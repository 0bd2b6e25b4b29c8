#!/usr/bin/env bash
# Scale benchmark (issue 28, item 6): does every operation stay flat as the
# data grows? For each storage engine, a SMALL and a LARGE database are
# built with the service's own schema (`credencial migrate`) and bulk rows
# made by SQL (bench/scale/load-*.sql: Brazilian names, CPFs with valid check
# digits, e-mail keys), and the same operations are timed on both in one
# run, each as the median of several requests after a warm-up:
#   - login at /conta/entrar/ by username and by CPF (the same password and
#     hash cost on both sizes), a token pair and a refresh
#     (/api/token/pair/, /api/token/refresh/);
#   - the profile read (POST /api/perfil/dados/, OAuth2 token from the
#     authorization-code flow);
#   - the user-management API: GET /usuarios/{cpf}/ and /usuarios/?cpfs=
#     with 1,000 CPFs;
#   - the person's access report (/conta/acessos/, the first and a deep
#     page) for a person with SCALE_HEAVY_ROWS access-log rows;
#   - the panel's account search (/admin/usuarios/?q= by a whole CPF, a
#     whole e-mail, a name prefix, and empty) and the audit page
#     (/admin/auditoria/), with a staff session;
#   - start-up (process start to the first 200 of /healthz), the server's
#     resident memory, a SIGTERM when idle, and `credencial export` (time
#     and peak memory, GNU time's %M);
#   - profile reads under load (wrk, SCALE_LOAD_SECS s after a 2-s warm-up):
#     requests/s, p50, p99, max, 5xx answers.
# Then, on the LARGE database only, the purge: SCALE_PURGE_ROWS expired
# refresh tokens and as many access-log rows past the retention are added,
# and the server started with `purge_start_delay_secs` 0:
#   - SIGTERM while the purge works through them (time until exit);
#   - the same profile load during the purge, next to the load on the same
#     database without a backlog (above);
#   - how long the pass takes (polled, at most SCALE_PURGE_WAIT s).
# Output, in bench/out/scale-<timestamp>/ (results.txt, summary.md, the
# server logs): one table per engine ("operation | small | large |
# large/small") and two for the purge, plus one machine-readable line per
# measurement (size=purge: the purge test's figures; size=during: the load
# during the purge):
#   scale engine=sqlite|postgres size=small|large|purge|during op=… value=… unit=…
#
# Sizes: LARGE has SCALE_USERS users (N), SMALL SCALE_SMALL_USERS, each with
# 5×N access-log rows (within the retention), 2×N live refresh tokens (half
# rotated), N/2 grants and N/10 audit-trail rows; plus a person
# (bench.pessoa) and a staff member (bench.admin) made with the CLI.
#
# Usage: bash bench/scale.sh
# Knobs:
#   CREDENCIAL_BIN            the binary to measure (default: `cargo build
#                             --release --bin credencial` here, then
#                             target/release/credencial)
#   BENCH_ENGINES             "sqlite postgres" (default), or one of them
#   SCALE_USERS               LARGE users (1000000; 5000000 for the state run)
#   SCALE_SMALL_USERS         SMALL users (10000)
#   SCALE_HEAVY_ROWS          access-log rows of bench.pessoa (5000; the deep
#                             report page is 9/10 of the way through them)
#   SCALE_PURGE_ROWS          purge backlog, of each kind (default: SCALE_USERS)
#   SCALE_REPEAT              requests timed per operation (7), after one warm-up
#   SCALE_LOGIN_REPEAT        logins/pairs timed (5): each hashes a password
#   SCALE_PASSWORD_ITERATIONS PBKDF2 iterations of every stored hash (default:
#                             the service's, 600,000; lower it for a debug build)
#   SCALE_NAME_QUERY          the panel's name-prefix search ("Maria Sou")
#   SCALE_LOAD_SECS           each wrk phase (20)
#   SCALE_LOAD_CONNECTIONS    wrk connections (8)
#   SCALE_PURGE_WAIT          longest wait for the purge to finish (900 s)
#   SCALE_SIGTERM_AFTER       seconds between the first 200 and the SIGTERM (1)
#   SCALE_EXPORT_TIMEOUT      longest export (1800 s)
#   SCALE_REQUEST_TIMEOUT     longest single request (60 s)
#   SCALE_MAX_MINUTES         budget: past it, export and the purge tests are
#                             skipped, with a message (240)
#   SCALE_PORT                the server's port (18300)
#   SCALE_WORK_DIR            where the SQLite files and exports go (a new
#                             directory under /tmp); SCALE_KEEP=1 keeps them
# Needs: curl, python3, sqlite3, psql and PostgreSQL at 127.0.0.1:5432 (trust,
# user postgres; databases credencial_scale_small/_large are made and dropped),
# GNU time at /usr/bin/time, wrk (installed with apt-get if missing).
# Disk: at 1,000,000 users about 1.7 GB (SQLite) and 3 GB (PostgreSQL),
# one engine at a time, plus the export file (about 2 GB); at 5,000,000,
# 15 GB (PostgreSQL) and an 11 GB export.
# Duration on this 2-core machine with the release build: 1,000,000 users
# about 30 minutes for both engines with SCALE_PURGE_WAIT=300 (2026-11-29:
# 29 min 30 s), of which building takes about 3 min (SQLite) and 9 min
# (PostgreSQL: the search terms' trigger), the exports 1 and 1.5 min, and
# the purge's wait the rest: SQLite's paced purge drains a 2,000,000-row
# backlog in about 25 min, longer than the default wait (900 s), which then
# reports not_drained; 5,000,000 users, PostgreSQL only, with
# SCALE_PURGE_ROWS=2000000 SCALE_PURGE_WAIT=300: 75 minutes (2026-11-29),
# of which building takes about 50 and the export 10 (an 11 GB file; keep
# about 30 GB of disk free).
# Every request, load phase, wait and export is bounded; the servers are
# stopped and the databases removed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

ENGINES=${BENCH_ENGINES:-sqlite postgres}
LARGE_USERS=${SCALE_USERS:-1000000}
SMALL_USERS=${SCALE_SMALL_USERS:-10000}
HEAVY_ROWS=${SCALE_HEAVY_ROWS:-5000}
PURGE_ROWS=${SCALE_PURGE_ROWS:-$LARGE_USERS}
REPEAT=${SCALE_REPEAT:-7}
LOGIN_REPEAT=${SCALE_LOGIN_REPEAT:-5}
ITERATIONS=${SCALE_PASSWORD_ITERATIONS:-600000}
NAME_QUERY=${SCALE_NAME_QUERY:-Maria Sou}
LOAD_SECS=${SCALE_LOAD_SECS:-20}
LOAD_CONNECTIONS=${SCALE_LOAD_CONNECTIONS:-8}
PURGE_WAIT=${SCALE_PURGE_WAIT:-900}
SIGTERM_AFTER=${SCALE_SIGTERM_AFTER:-1}
EXPORT_TIMEOUT=${SCALE_EXPORT_TIMEOUT:-1800}
REQUEST_TIMEOUT=${SCALE_REQUEST_TIMEOUT:-60}
MAX_MINUTES=${SCALE_MAX_MINUTES:-240}
PORT=${SCALE_PORT:-18300}
BASE="http://127.0.0.1:$PORT"
PG_ADMIN=(env PGOPTIONS=--client-min-messages=warning psql -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 -Atq)
PASSWORD=bench-scale-senha-2026
PERSONA=bench.pessoa
ADMIN=bench.admin
APP=bench-app
REDIRECT="$BASE/auth/callback/"
BULK_TABLES="'users', 'access_log', 'refresh_tokens', 'oauth_grants', 'audit_log'"

log() { printf '[scale %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }
for knob in LARGE_USERS SMALL_USERS HEAVY_ROWS PURGE_ROWS REPEAT LOGIN_REPEAT ITERATIONS LOAD_SECS LOAD_CONNECTIONS \
    PURGE_WAIT SIGTERM_AFTER EXPORT_TIMEOUT REQUEST_TIMEOUT MAX_MINUTES PORT; do
    [[ ${!knob} =~ ^[0-9]+$ ]] || die "$knob must be a whole number, not \"${!knob}\""
done
((SMALL_USERS >= 100 && LARGE_USERS >= SMALL_USERS)) || die "SCALE_SMALL_USERS must be at least 100 and at most SCALE_USERS"
((REPEAT >= 1 && LOGIN_REPEAT >= 1 && HEAVY_ROWS >= 100)) || die "SCALE_REPEAT, SCALE_LOGIN_REPEAT ≥ 1 and SCALE_HEAVY_ROWS ≥ 100"
for engine in $ENGINES; do
    case $engine in sqlite | postgres) ;; *) die "BENCH_ENGINES: sqlite and/or postgres, not \"$engine\"" ;; esac
done

# --- tools and binary -----------------------------------------------------------
for tool in curl python3 awk; do command -v "$tool" >/dev/null || die "$tool is needed"; done
[[ -x /usr/bin/time ]] || die "GNU time is needed at /usr/bin/time (apt-get install time)"
[[ " $ENGINES " != *" sqlite "* ]] || command -v sqlite3 >/dev/null || die "sqlite3 is needed (apt-get install sqlite3)"
[[ " $ENGINES " != *" postgres "* ]] || command -v psql >/dev/null || die "psql is needed (apt-get install postgresql-client)"
if ! command -v wrk >/dev/null; then
    log "installing wrk"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
if [[ -n ${CREDENCIAL_BIN:-} ]]; then
    BIN=$(realpath "$CREDENCIAL_BIN")
else
    log "building the release binary"
    cargo build --release --bin credencial
    BIN=$PWD/target/release/credencial
fi
[[ -x $BIN ]] || die "$BIN is missing or not executable"
# A binary from before issue 28 knows no purge_start_delay_secs (and would
# refuse the setting): it purges at every start.
if grep -qa purge_start_delay_secs "$BIN"; then HAS_PURGE_DELAY=1; else HAS_PURGE_DELAY=""; fi

OUT=bench/out/scale-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
mkdir -p "${SCALE_WORK_DIR:-/tmp}"
WORK=$(mktemp -d "${SCALE_WORK_DIR:-/tmp}/credencial-scale.XXXXXX")
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
SERVER_PID="" POLLER_PID=""
PG_DATABASES=()

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -n $SERVER_PID ]]; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        local i
        for ((i = 0; i < 100; i++)); do alive "$SERVER_PID" || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    [[ -z $POLLER_PID ]] || kill "$POLLER_PID" 2>/dev/null || true
    local db
    for db in "${PG_DATABASES[@]}"; do
        "${PG_ADMIN[@]}" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    done
    if [[ -n ${SCALE_KEEP:-} ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

over_budget() { ((SECONDS > MAX_MINUTES * 60)); }

# --- results ----------------------------------------------------------------------
declare -A RESULT UNIT
OPS=()
# record ENGINE SIZE OP VALUE UNIT: keeps a measurement and prints its line.
record() {
    local key="$1/$2/$3"
    [[ -v "UNIT[$3]" ]] || OPS+=("$3")
    RESULT[$key]=$4
    UNIT[$3]=$5
    echo "scale engine=$1 size=$2 op=$3 value=$4 unit=$5" | tee -a "$OUT/results.txt"
}
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m }'; }
is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

# --- databases ----------------------------------------------------------------------
pg_name() { echo "credencial_scale_$1"; }
db_url() {
    case $1 in
        sqlite) echo "sqlite://$WORK/$2.db" ;;
        postgres) echo "postgres://postgres@127.0.0.1:5432/$(pg_name "$2")" ;;
    esac
}
# sql ENGINE SIZE QUERY: rows as a|b, no header.
sql() {
    case $1 in
        sqlite) sqlite_sql "$WORK/$2.db" "$3" ;;
        postgres) psql -h 127.0.0.1 -U postgres -d "$(pg_name "$2")" -v ON_ERROR_STOP=1 -Atqc "$3" ;;
    esac
}
# sql_script ENGINE SIZE: runs standard input in one session (temp tables
# live until its end); what the script prints (.print, \echo) goes to the log.
sql_script() {
    case $1 in
        sqlite) sqlite_shell "$WORK/$2.db" ;;
        postgres) psql -h 127.0.0.1 -U postgres -d "$(pg_name "$2")" -v ON_ERROR_STOP=1 -Atq -f - ;;
    esac | while IFS= read -r line; do log "  $1 $2: $line"; done
    return "${PIPESTATUS[0]}"
}
# cli ENGINE SIZE ARGS…: a credencial command on the database (standard input passed on).
cli() {
    local engine=$1 size=$2
    shift 2
    env DATABASE_URL="$(db_url "$engine" "$size")" SERVICE_JWT_SECRET="$SECRET" RUST_LOG=warn \
        SERVICE_PASSWORD_ITERATIONS="$ITERATIONS" "$BIN" "$@"
}
# cpf_of I: the CPF the loader gives user number I (valid check digits).
cpf_of() {
    python3 - "$1" <<'PY'
import sys
b = str(100000000 + (int(sys.argv[1]) * 275604541) % 900000000)
d = [int(c) for c in b]
c1 = sum(x * (10 - k) for k, x in enumerate(d)) * 10 % 11 % 10
c2 = (sum(x * (11 - k) for k, x in enumerate(d)) + c1 * 2) * 10 % 11 % 10
print(f"{b}{c1}{c2}")
PY
}
# The stored hash of every loaded account: PBKDF2-SHA256 in Django's format,
# at the iterations the CLI's accounts get, so that one password costs the same.
PASSWORD_HASH=$(python3 - "$PASSWORD" "$ITERATIONS" <<'PY'
import base64, hashlib, sys
password, iterations = sys.argv[1], int(sys.argv[2])
salt = "scalebenchsalt01"
digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
print(f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(digest).decode()}")
PY
)

# backlog_counts ENGINE SIZE NOW: "expired refresh tokens, access-log rows past the
# default retention (1,825 days)" at the instant NOW.
backlog_counts() {
    local old=$(($3 - 1825 * 86400))
    case $1 in
        sqlite) sql "$1" "$2" "SELECT (SELECT count(*) FROM refresh_tokens WHERE expires_at < $3), (SELECT count(*) FROM access_log WHERE accessed_at < $old)" ;;
        postgres) sql "$1" "$2" "SELECT (SELECT count(*) FROM refresh_tokens WHERE expires_at < to_timestamp($3)), (SELECT count(*) FROM access_log WHERE accessed_at < to_timestamp($old))" ;;
    esac | tr '|' ' '
}
# backlog_left ENGINE SIZE NOW: 1 while a backlog row of either kind is left,
# else 0 (two index probes: cheap enough to poll during a load phase).
backlog_left() {
    local old=$(($3 - 1825 * 86400))
    case $1 in
        sqlite) sql "$1" "$2" "SELECT EXISTS (SELECT 1 FROM refresh_tokens WHERE expires_at < $3)
            OR EXISTS (SELECT 1 FROM access_log WHERE accessed_at < $old)" ;;
        postgres) sql "$1" "$2" "SELECT (EXISTS (SELECT 1 FROM refresh_tokens WHERE expires_at < to_timestamp($3))
            OR EXISTS (SELECT 1 FROM access_log WHERE accessed_at < to_timestamp($old)))::int" ;;
    esac
}
# fill_backlog ENGINE SIZE ROWS: tops both backlogs up to ROWS rows (expired a
# day to a month ago; access-log rows 5 to 6 years old), spread over the users.
fill_backlog() {
    local engine=$1 size=$2 rows=$3 now tokens logs need_t need_l users
    now=$(date +%s)
    read -r tokens logs < <(backlog_counts "$engine" "$size" "$now")
    need_t=$((rows > tokens ? rows - tokens : 0))
    need_l=$((rows > logs ? rows - logs : 0))
    users=$(sql "$engine" "$size" "SELECT max(id) FROM users")
    log "$engine $size: purge backlog +$need_t expired refresh tokens, +$need_l old access-log rows"
    case $engine in
        sqlite) sql_script "$engine" "$size" <<SQL
PRAGMA cache_size = -1048576;
BEGIN;
INSERT INTO refresh_tokens (jti, user_id, expires_at, rotated_at, created_at, family, revoked)
WITH RECURSIVE n(i) AS (SELECT 1 WHERE $need_t > 0 UNION ALL SELECT i + 1 FROM n WHERE i < $need_t)
SELECT lower(hex(randomblob(16))), 1 + ((i * 668265263) % 4294967296) / 4096 % $users,
       $now - 86400 - i % (86400 * 29), NULL, $now - 2 * 86400 - i % (86400 * 29), lower(hex(randomblob(16))), 0
FROM n;
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
WITH RECURSIVE n(i) AS (SELECT 1 WHERE $need_l > 0 UNION ALL SELECT i + 1 FROM n WHERE i < $need_l)
SELECT 1 + ((i * 2654435761) % 4294967296) / 4096 % $users, 'portal-1', '["dados_publicos","cpf"]',
       $now - 86400 * (1825 + 2) - ((i * 2246822519) % 4294967296) % (86400 * 365), lower(hex(randomblob(16)))
FROM n;
COMMIT;
SQL
            ;;
        postgres) sql_script "$engine" "$size" <<SQL
SET synchronous_commit = off;
INSERT INTO refresh_tokens (jti, user_id, expires_at, rotated_at, created_at, family, revoked)
SELECT md5(random()::text || i), 1 + ((i * 668265263) % 4294967296) / 4096 % $users,
       to_timestamp($now - 86400 - i % (86400 * 29)), NULL, to_timestamp($now - 2 * 86400 - i % (86400 * 29)),
       md5(random()::text || i), false
FROM generate_series(1::bigint, $need_t) AS i;
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
SELECT 1 + ((i * 2654435761) % 4294967296) / 4096 % $users, 'portal-1', ARRAY['dados_publicos', 'cpf'],
       to_timestamp($now - 86400 * (1825 + 2) - ((i * 2246822519) % 4294967296) % (86400 * 365)), md5(random()::text || i)
FROM generate_series(1::bigint, $need_l) AS i;
ANALYZE refresh_tokens;
ANALYZE access_log;
SQL
            ;;
    esac
}

# build ENGINE SIZE USERS: a migrated database with the bulk rows, the bench
# clients and accounts, analysed.
build() {
    local engine=$1 size=$2 users=$3 t0=$SECONDS now c persona_id
    log "$engine $size: building ($users users)"
    case $engine in
        sqlite) sqlite_remove "$WORK/$size.db" ;;
        postgres)
            "${PG_ADMIN[@]}" -c "DROP DATABASE IF EXISTS $(pg_name "$size") WITH (FORCE)" >/dev/null
            PG_DATABASES+=("$(pg_name "$size")")
            ;;
    esac
    cli "$engine" "$size" migrate >/dev/null 2>"$OUT/$engine-$size-migrate.log" || { cat "$OUT/$engine-$size-migrate.log" >&2; die "migrate failed"; }
    # The applications: bench-app (the OAuth2 flow and the API token) and
    # four portals the bulk grants and access-log rows are spread over.
    cli "$engine" "$size" client create --client-id "$APP" --name "Aplicativo de teste de escala" \
        --redirect-uri "$REDIRECT" --scopes "experiencia_profissional formacao_academica" >"$WORK/out" 2>&1 ||
        { cat "$WORK/out" >&2; die "$engine $size: client create $APP failed"; }
    tail -n1 "$WORK/out" >"$WORK/$engine-$size.app-secret"
    for c in 1 2 3 4; do
        cli "$engine" "$size" client create --client-id "portal-$c" --name "Portal de serviços $c" \
            --redirect-uri "https://portal$c.example.gov.br/auth/callback/" >"$WORK/out" 2>&1 ||
            { cat "$WORK/out" >&2; die "$engine $size: client create portal-$c failed"; }
    done
    now=$(date +%s)
    # The secondary indexes of the bulk tables (not those of a key or a
    # unique constraint) are dropped during the load and made again after
    # it from their own definitions: one sort instead of millions of random
    # inserts, and whatever indexes the migrations define.
    local indexes="$WORK/$engine-$size.indexes.sql" name
    case $engine in
        # Both files' (the access log's indexes are in its own, made there
        # again by a schema-qualified name).
        sqlite) sql "$engine" "$size" "SELECT s || '.' || name || char(9)
            || replace(replace(replace(sql, char(10), ' '), char(13), ' '), 'CREATE INDEX ' || name, 'CREATE INDEX ' || s || '.' || name) || ';'
            FROM (SELECT 'main' AS s, * FROM main.sqlite_master UNION ALL SELECT 'access', * FROM access.sqlite_master)
            WHERE type = 'index' AND tbl_name IN ($BULK_TABLES) AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'" >"$indexes" ;;
        postgres) sql "$engine" "$size" "SELECT indexname || chr(9) || indexdef || ';' FROM pg_indexes i
            WHERE schemaname = 'public' AND tablename IN ($BULK_TABLES) AND indexdef NOT LIKE 'CREATE UNIQUE%'
            AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)" >"$indexes" ;;
    esac
    while IFS=$'\t' read -r name _; do sql "$engine" "$size" "DROP INDEX $name" >/dev/null </dev/null; done <"$indexes"
    {
        cat bench/scale/names.sql
        echo "CREATE TEMP TABLE clients (k INTEGER NOT NULL, client_id TEXT NOT NULL);"
        echo "INSERT INTO clients (k, client_id) VALUES (0, '$APP'), (1, 'portal-1'), (2, 'portal-2'), (3, 'portal-3'), (4, 'portal-4');"
        echo "CREATE TEMP TABLE p (users BIGINT, log_rows BIGINT, tokens BIGINT, grants BIGINT, audit_rows BIGINT, now BIGINT, pw TEXT);"
        echo "INSERT INTO p VALUES ($users, $((5 * users)), $((2 * users)), $((users / 2)), $((users / 10)), $now, '$PASSWORD_HASH');"
        cat "bench/scale/load-$engine.sql"
    } | sql_script "$engine" "$size" || die "$engine $size: loading failed"
    log "$engine $size: indexing ($(wc -l <"$indexes") secondary indexes)"
    {
        [[ $engine == sqlite ]] && echo "PRAGMA cache_size = -1048576; PRAGMA access.cache_size = -1048576;" ||
            echo "SET maintenance_work_mem = '512MB';"
        cut -f2- "$indexes"
        [[ $engine != sqlite ]] || echo "PRAGMA journal_mode = WAL;"
    } | sql_script "$engine" "$size" || die "$engine $size: indexing failed"
    # The person measured (a CPF the loader never gives) and the staff member.
    cli "$engine" "$size" user create --username "$PERSONA" --name "Pessoa de Teste da Escala" \
        --email "$PERSONA@exemplo.gov.br" --cpf "$(cpf_of $((users + 1)))" <<<"$PASSWORD" >/dev/null 2>&1 ||
        die "$engine $size: user create $PERSONA failed"
    cli "$engine" "$size" user create --username "$ADMIN" --name "Equipe de Teste da Escala" --staff \
        --email "$ADMIN@exemplo.gov.br" --cpf "$(cpf_of $((users + 2)))" <<<"$PASSWORD" >/dev/null 2>&1 ||
        die "$engine $size: user create $ADMIN failed"
    persona_id=$(sql "$engine" "$size" "SELECT id FROM users WHERE username = '$PERSONA'")
    log "$engine $size: $HEAVY_ROWS access-log rows for $PERSONA"
    case $engine in
        sqlite) sql_script "$engine" "$size" <<SQL
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $HEAVY_ROWS)
SELECT $persona_id, CASE i % 3 WHEN 0 THEN '$APP' ELSE 'portal-' || (1 + i % 4) END, '["dados_publicos","cpf","email"]',
       $now - 120 - i * (86400 * 365 / $HEAVY_ROWS), lower(hex(randomblob(16)))
FROM n;
SQL
            ;;
        postgres) sql_script "$engine" "$size" <<SQL
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
SELECT $persona_id, CASE i % 3 WHEN 0 THEN '$APP' ELSE 'portal-' || (1 + i % 4) END, ARRAY['dados_publicos', 'cpf', 'email'],
       to_timestamp($now - 120 - i * (86400 * 365 / $HEAVY_ROWS)), md5(i::text || 'heavy')
FROM generate_series(1, $HEAVY_ROWS) AS i;
SQL
            ;;
    esac
    cli "$engine" "$size" client update --client-id "$APP" --rotate-api-token --api-permissions users:read \
        >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "$engine $size: no API token"; }
    tail -n1 "$WORK/out" >"$WORK/$engine-$size.api-token"
    log "$engine $size: analysing"
    case $engine in
        sqlite) sql "$engine" "$size" "ANALYZE;" ;;
        postgres) sql "$engine" "$size" "VACUUM ANALYZE;" ;;
    esac
    # What the measurements use: 1,000 CPFs spread over the loaded accounts,
    # and 50 accounts (CPF, e-mail, username) for single lookups.
    local step=$((users / 1000 > 0 ? users / 1000 : 1))
    sql "$engine" "$size" "SELECT cpf FROM users WHERE id % $step = 0 AND id <= $users ORDER BY id LIMIT 1000" >"$WORK/$engine-$size.cpfs"
    sql "$engine" "$size" "SELECT cpf, email, username FROM users WHERE id % $((users / 50)) = 1 AND id <= $users AND is_active ORDER BY id LIMIT 50" \
        >"$WORK/$engine-$size.sample"
    record "$engine" "$size" build_s $((SECONDS - t0)) s
    record "$engine" "$size" users "$(sql "$engine" "$size" "SELECT count(*) FROM users")" rows
    record "$engine" "$size" access_log_rows "$(sql "$engine" "$size" "SELECT count(*) FROM access_log")" rows
    record "$engine" "$size" name_prefix_matches \
        "$(sql "$engine" "$size" "SELECT count(*) FROM users WHERE name LIKE '${NAME_QUERY//\'/\'\'}%'")" rows
    case $engine in
        sqlite) record "$engine" "$size" database_mib "$(du -cm "$WORK/$size.db"* | tail -n1 | cut -f1)" MiB ;;
        postgres) record "$engine" "$size" database_mib "$(sql "$engine" "$size" "SELECT pg_database_size(current_database()) / 1048576")" MiB ;;
    esac
}

# --- the server -----------------------------------------------------------------------
# alive PID: the process runs (a zombie, exited but not yet waited for, does not).
alive() {
    local _pid _comm state
    read -r _pid _comm state _ 2>/dev/null <"/proc/$1/stat" || return 1
    [[ $state != Z ]]
}
# start ENGINE SIZE NAME PURGE_DELAY: serves the database; STARTUP_MS is the
# time from the process's start to the first 200 of /healthz.
STARTUP_MS="" START_NS=""
start() {
    local engine=$1 size=$2 name=$3 delay=$4 t0 code
    local server_log="$OUT/$engine-$size-$name.log"
    local extra=()
    [[ -z $HAS_PURGE_DELAY ]] || extra+=(SERVICE_PURGE_START_DELAY_SECS="$delay")
    t0=$(date +%s%N)
    env DATABASE_URL="$(db_url "$engine" "$size")" SERVICE_JWT_SECRET="$SECRET" SERVICE_BIND="127.0.0.1:$PORT" \
        SERVICE_UPSTREAM_BASE_URL=http://127.0.0.1:9 SERVICE_ACCESS_TOKEN_LIFETIME_SECS=43200 \
        SERVICE_PASSWORD_ITERATIONS="$ITERATIONS" RUST_LOG="warn,credencial_application::purge=info" "${extra[@]}" \
        "$BIN" serve >"$server_log" 2>&1 &
    SERVER_PID=$!
    while :; do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$BASE/healthz" || true)
        [[ $code != 200 ]] || break
        if ! alive "$SERVER_PID"; then
            cat "$server_log" >&2
            SERVER_PID=""
            die "$engine $size: the server exited before answering /healthz"
        fi
        (($(date +%s%N) - t0 < 300 * 1000000000)) || die "$engine $size: no 200 from /healthz after 300 s"
        sleep 0.01
    done
    STARTUP_MS=$((($(date +%s%N) - t0) / 1000000))
    START_NS=$t0
}
# stop LIMIT: SIGTERM, then waits for the exit (SIGKILL after LIMIT s);
# STOP_MS is the time from the signal to the exit, STOP_KILLED set if it was killed.
STOP_MS="" STOP_KILLED=""
stop() {
    local limit=$1 t0
    t0=$(date +%s%N)
    kill -TERM "$SERVER_PID"
    STOP_KILLED=""
    while alive "$SERVER_PID"; do
        if (($(date +%s%N) - t0 > limit * 1000000000)); then
            kill -KILL "$SERVER_PID" 2>/dev/null || true
            STOP_KILLED=1
            break
        fi
        sleep 0.005
    done
    STOP_MS=$((($(date +%s%N) - t0) / 1000000))
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
rss_mib() { awk '/^VmRSS:/ { printf "%.0f\n", $2 / 1024 }' "/proc/$SERVER_PID/status"; }

# --- requests --------------------------------------------------------------------------
# req EXPECT URL CURL_ARGS…: one request; prints its time in ms (curl's
# time_total); the body is in $WORK/body. Another status fails, saying so.
req() {
    local expect=$1 url=$2 w
    shift 2
    w=$(curl -sS -o "$WORK/body" -w '%{http_code} %{time_total}' --max-time "$REQUEST_TIMEOUT" "$@" "$url") ||
        { log "request to $url failed"; return 1; }
    if [[ ${w%% *} != "$expect" ]]; then
        log "$url answered ${w%% *}, not $expect: $(head -c 300 "$WORK/body")"
        return 1
    fi
    awk -v t="${w#* }" 'BEGIN { printf "%.3f\n", t * 1000 }'
}
csrf() { sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p' | head -n1; }
# login_form IDENTIFIER JAR: the form's key in JAR, then the timed POST of
# /conta/entrar/ (303 with a session).
login_form() {
    local jar=$2 token
    rm -f "$jar"
    token=$(curl -sS -c "$jar" --max-time "$REQUEST_TIMEOUT" "$BASE/conta/entrar/" | csrf)
    [[ -n $token ]] || { log "no csrf_token on /conta/entrar/"; return 1; }
    req 303 "$BASE/conta/entrar/" -b "$jar" -c "$jar" --data-urlencode "csrf_token=$token" \
        --data-urlencode next=/conta/ --data-urlencode "username=$1" --data-urlencode "password=$PASSWORD"
}
# session IDENTIFIER: a session cookie (credencial_session=…) of that account.
session() {
    local jar="$WORK/jar-session" cookie
    login_form "$1" "$jar" >/dev/null || return 1
    cookie=$(awk '$6 == "credencial_session" { print $6 "=" $7 }' "$jar")
    [[ -n $cookie ]] || { log "no session cookie after logging $1 in"; return 1; }
    echo "$cookie"
}
json_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$WORK/body" "$1"; }
# oauth_token ENGINE SIZE: an access token of bench-app for the person, from
# the authorization-code flow (login, consent, code, exchange).
oauth_token() {
    local jar="$WORK/jar-oauth" t location code
    local p=(-d response_type=code -d "client_id=$APP" --data-urlencode "redirect_uri=$REDIRECT"
        --data-urlencode "scope=dados_publicos cpf email experiencia_profissional formacao_academica" -d state=scale)
    rm -f "$jar"
    t=$(curl -fsS -G -c "$jar" -b "$jar" "$BASE/oauth/authorize/" "${p[@]}" | csrf)
    curl -fsS -o /dev/null -c "$jar" -b "$jar" "$BASE/oauth/authorize/" "${p[@]}" -d action=login \
        -d "csrf_token=$t" --data-urlencode "username=$PERSONA" --data-urlencode "password=$PASSWORD"
    t=$(curl -fsS -G -c "$jar" -b "$jar" "$BASE/oauth/authorize/" "${p[@]}" | csrf)
    location=$(curl -sS -o /dev/null -w '%{redirect_url}' -b "$jar" "$BASE/oauth/authorize/" "${p[@]}" \
        -d action=approve -d "csrf_token=$t")
    code=$(python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["code"][0])' "$location" 2>/dev/null) ||
        { log "$1 $2: no authorization code (redirect: $location)"; return 1; }
    req 200 "$BASE/oauth/token/" -u "$APP:$(cat "$WORK/$1-$2.app-secret")" -d grant_type=authorization_code \
        -d "code=$code" --data-urlencode "redirect_uri=$REDIRECT" >/dev/null || return 1
    json_field access_token
}

# The operations: OP_NAME I prints one time in ms (I = 0: the warm-up).
op_login_username() { login_form "$PERSONA" "$WORK/jar-login"; }
op_login_cpf() { login_form "$PERSONA_CPF" "$WORK/jar-login"; }
op_pair() {
    req 200 "$BASE/api/token/pair/" -H 'Content-Type: application/json' \
        -d "{\"username\": \"$PERSONA\", \"password\": \"$PASSWORD\"}" || return 1
    json_field refresh >"$WORK/refresh"
}
op_refresh() {
    local ms
    ms=$(req 200 "$BASE/api/token/refresh/" -H 'Content-Type: application/json' \
        -d "{\"refresh\": \"$(cat "$WORK/refresh")\"}") || return 1
    json_field refresh >"$WORK/refresh"
    echo "$ms"
}
op_profile() {
    req 200 "$BASE/api/perfil/dados/" -H "Authorization: Bearer $OAUTH" -H 'Content-Type: application/json' -d '{}' ||
        return 1
    if (($1 == 0)) && [[ $(json_field cpf 2>/dev/null) != "$PERSONA_CPF" ]]; then
        log "the profile read does not carry the person's CPF: $(head -c 300 "$WORK/body")"
        return 1
    fi
}
sample() { sed -n "$(($1 % $(wc -l <"$SAMPLE") + 1))p" "$SAMPLE" | cut -d'|' -f"$2"; }
op_user_by_cpf() { req 200 "$BASE/usuarios/$(sample "$1" 1)/" -H "Authorization: Token $API_TOKEN"; }
op_users_cpfs() {
    local ms
    ms=$(req 200 "$BASE/usuarios/" -G --data-urlencode "cpfs=$(paste -sd, "$CPFS")" -H "Authorization: Token $API_TOKEN") || return 1
    if (($1 == 0)); then
        python3 -c 'import json, sys; n = len(json.load(open(sys.argv[1]))); sys.exit(0 if n == min(100, int(sys.argv[2])) else "?cpfs= found %d users, not %s" % (n, sys.argv[2]))' \
            "$WORK/body" "$(wc -l <"$CPFS")" || return 1
    fi
    echo "$ms"
}
# listed_rows I WHAT: after the warm-up request (I = 0), warns when the page
# in $WORK/body shows no table row (the page answered, but empty).
listed_rows() {
    if (($1 == 0)) && ! grep -Eq '<tr[^>]*><td' "$WORK/body"; then log "warning: $2 lists no rows"; fi
}
op_report_first() {
    req 200 "$BASE/conta/acessos/" -H "Cookie: $PERSON_COOKIE" && listed_rows "$1" "/conta/acessos/"
}
op_report_deep() {
    req 200 "$BASE/conta/acessos/?pagina=$DEEP_PAGE" -H "Cookie: $PERSON_COOKIE" &&
        listed_rows "$1" "/conta/acessos/?pagina=$DEEP_PAGE"
}
# admin_search Q EXPECT_TEXT: the panel's search (only `q=` is relied on).
admin_search() {
    local ms
    ms=$(req 200 "$BASE/admin/usuarios/" -G --data-urlencode "q=$1" -H "Cookie: $ADMIN_COOKIE") || return 1
    if [[ -n $2 ]] && ! grep -qF "$2" "$WORK/body"; then log "the panel's search for $1 does not list $2"; return 1; fi
    echo "$ms"
}
op_admin_cpf() { admin_search "$(sample "$1" 1)" "$(sample "$1" 3)"; }
op_admin_email() { admin_search "$(sample "$1" 2)" "$(sample "$1" 3)"; }
op_admin_name() { admin_search "$NAME_QUERY" "" && listed_rows "$1" "/admin/usuarios/?q=$NAME_QUERY"; }
op_admin_empty() { req 200 "$BASE/admin/usuarios/" -H "Cookie: $ADMIN_COOKIE" && listed_rows "$1" "/admin/usuarios/"; }
op_audit() { req 200 "$BASE/admin/auditoria/" -H "Cookie: $ADMIN_COOKIE" && listed_rows "$1" "/admin/auditoria/"; }

# measure ENGINE SIZE OP REPS FUNCTION: the median of REPS timed calls after
# one warm-up; "error" when a call fails.
measure() {
    local engine=$1 size=$2 op=$3 reps=$4 fn=$5 i t times=()
    for ((i = 0; i <= reps; i++)); do
        if ! t=$("$fn" "$i"); then
            record "$engine" "$size" "$op" error ms
            return 0
        fi
        ((i == 0)) || times+=("$t")
    done
    record "$engine" "$size" "$op" "$(printf '%s\n' "${times[@]}" | median)" ms
}

# settle ENGINE SIZE: before timing, the writes of the loads and of the
# export reach the disk (the page cache's dirty pages; PostgreSQL's
# checkpoint), so that the small database's timings do not pay for the
# large one's load, which ran just before them.
settle() {
    log "$1 $2: settling (sync$([[ $1 != postgres ]] || echo ", CHECKPOINT"))"
    sync
    [[ $1 != postgres ]] || "${PG_ADMIN[@]}" -c "CHECKPOINT" >/dev/null
    sync
}

# run_operations ENGINE SIZE: serve the database and time every operation.
run_operations() {
    local engine=$1 size=$2
    log "$engine $size: serving"
    start "$engine" "$size" serve 86400
    record "$engine" "$size" startup_ms "$STARTUP_MS" ms
    record "$engine" "$size" rss_start_mib "$(rss_mib)" MiB
    PERSONA_CPF=$(sql "$engine" "$size" "SELECT cpf FROM users WHERE username = '$PERSONA'")
    API_TOKEN=$(cat "$WORK/$engine-$size.api-token")
    CPFS="$WORK/$engine-$size.cpfs" SAMPLE="$WORK/$engine-$size.sample"
    DEEP_PAGE=$((HEAVY_ROWS * 9 / 500))
    OAUTH=$(oauth_token "$engine" "$size") || die "$engine $size: no OAuth2 access token"
    echo "$OAUTH" >"$WORK/$engine-$size.oauth"
    PERSON_COOKIE=$(session "$PERSONA") || die "$engine $size: $PERSONA cannot log in"
    ADMIN_COOKIE=$(session "$ADMIN") || die "$engine $size: $ADMIN cannot log in"
    log "$engine $size: timing the operations"
    measure "$engine" "$size" login_username "$LOGIN_REPEAT" op_login_username
    measure "$engine" "$size" login_cpf "$LOGIN_REPEAT" op_login_cpf
    measure "$engine" "$size" token_pair "$LOGIN_REPEAT" op_pair
    measure "$engine" "$size" token_refresh "$REPEAT" op_refresh
    measure "$engine" "$size" profile_read "$REPEAT" op_profile
    measure "$engine" "$size" user_by_cpf "$REPEAT" op_user_by_cpf
    measure "$engine" "$size" users_cpfs_1000 "$REPEAT" op_users_cpfs
    measure "$engine" "$size" access_report_first "$REPEAT" op_report_first
    measure "$engine" "$size" access_report_deep "$REPEAT" op_report_deep
    measure "$engine" "$size" admin_search_cpf "$REPEAT" op_admin_cpf
    measure "$engine" "$size" admin_search_email "$REPEAT" op_admin_email
    measure "$engine" "$size" admin_search_name_prefix "$REPEAT" op_admin_name
    measure "$engine" "$size" admin_search_empty "$REPEAT" op_admin_empty
    measure "$engine" "$size" admin_audit_first "$REPEAT" op_audit
    log "$engine $size: profile reads under load ($LOAD_SECS s, $LOAD_CONNECTIONS connections)"
    warm_up
    record_load "$engine" "$size" "$(wrk_phase "$engine-$size-load")"
    record "$engine" "$size" rss_after_mib "$(rss_mib)" MiB
    stop 60
    record "$engine" "$size" sigterm_idle_ms "$STOP_MS" ms
    [[ -z $STOP_KILLED ]] || log "$engine $size: the idle server did not stop within 60 s (killed)"
}

# export_db ENGINE SIZE: `credencial export`, its time and peak memory.
export_db() {
    local engine=$1 size=$2
    local file="$WORK/$engine-$size.jsonl" status=0 secs kb
    if over_budget; then
        log "$engine $size: export skipped (past SCALE_MAX_MINUTES=$MAX_MINUTES)"
        record "$engine" "$size" export_s skipped s
        return 0
    fi
    log "$engine $size: export"
    rm -f "$file"
    DATABASE_URL="$(db_url "$engine" "$size")" SERVICE_JWT_SECRET="$SECRET" RUST_LOG=warn \
        timeout "$EXPORT_TIMEOUT" /usr/bin/time -o "$WORK/time" -f '%e %M' "$BIN" export --out "$file" \
        2>"$OUT/$engine-$size-export.log" || status=$?
    if ((status != 0)); then
        log "$engine $size: export failed or passed SCALE_EXPORT_TIMEOUT=$EXPORT_TIMEOUT s (status $status; see $OUT/$engine-$size-export.log)"
        record "$engine" "$size" export_s "$( ((status == 124)) && echo timeout || echo error)" s
        rm -f "$file"
        return 0
    fi
    read -r secs kb <"$WORK/time"
    record "$engine" "$size" export_s "$secs" s
    record "$engine" "$size" export_peak_mib $((kb / 1024)) MiB
    record "$engine" "$size" export_file_mib "$(du -m "$file" | cut -f1)" MiB
    rm -f "$file"
}

# warm_up: two seconds of the load, not counted (a fresh process's first
# requests are slower, whatever else it does).
warm_up() {
    SCALE_TOKEN=$OAUTH timeout 30 wrk -t1 -c"$LOAD_CONNECTIONS" -d2s -s bench/scale/load.lua "$BASE/api/perfil/dados/" \
        >/dev/null 2>&1 || true
}
# wrk_phase NAME: profile reads for SCALE_LOAD_SECS s; prints the SCALE_LOAD line.
wrk_phase() {
    SCALE_TOKEN=$OAUTH timeout $((LOAD_SECS + 60)) wrk -t1 -c"$LOAD_CONNECTIONS" -d"${LOAD_SECS}s" --timeout 30s \
        -s bench/scale/load.lua "$BASE/api/perfil/dados/" >"$OUT/$1.txt" 2>&1 || true
    grep '^SCALE_LOAD' "$OUT/$1.txt" || { log "wrk gave no result (see $OUT/$1.txt)"; echo "SCALE_LOAD"; }
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# record_load ENGINE SIZE LINE: the figures of a SCALE_LOAD line, as load_… ops.
LOAD_FIELDS="rps p50_ms p99_ms max_ms status_5xx socket_errors"
record_load() {
    local f unit
    for f in $LOAD_FIELDS; do
        case $f in rps) unit=req/s ;; status_5xx | socket_errors) unit=count ;; *) unit=ms ;; esac
        record "$1" "$2" "load_$f" "$(field "$f" <<<"$3" | grep . || echo error)" "$unit"
    done
}

# purge_tests ENGINE: on the LARGE database, SIGTERM during a purge, and
# profile reads under load during a purge (compared with the same load on
# the same database without a backlog, in run_operations).
purge_tests() {
    local engine=$1 size=large before after line
    if over_budget; then
        log "$engine: purge tests skipped (past SCALE_MAX_MINUTES=$MAX_MINUTES)"
        record "$engine" purge sigterm_ms skipped ms
        return 0
    fi
    [[ -n $HAS_PURGE_DELAY ]] || log "$engine: this binary has no purge_start_delay_secs: it purges at every start"
    OAUTH=$(cat "$WORK/$engine-$size.oauth")
    fill_backlog "$engine" "$size" "$PURGE_ROWS"
    read -r -a before < <(backlog_counts "$engine" "$size" "$(date +%s)")
    record "$engine" purge backlog_rows $((before[0] + before[1])) rows
    # 1. SIGTERM while the purge runs.
    start "$engine" "$size" sigterm 0
    record "$engine" purge startup_with_backlog_ms "$STARTUP_MS" ms
    sleep "$SIGTERM_AFTER"
    stop 120
    read -r -a after < <(backlog_counts "$engine" "$size" "$(date +%s)")
    record "$engine" purge sigterm_ms "$STOP_MS" ms
    record "$engine" purge purged_before_exit $((before[0] + before[1] - after[0] - after[1])) rows
    [[ -z $STOP_KILLED ]] || log "$engine: the server did not exit within 120 s of SIGTERM (killed)"
    # 2. Profile reads while the purge runs; a poller notes when the backlog
    # is gone (seconds from the process's start, to the second).
    fill_backlog "$engine" "$size" "$PURGE_ROWS"
    local since drained=""
    since=$(date +%s)
    rm -f "$WORK/drained"
    start "$engine" "$size" purge 0
    (
        while ((($(date +%s%N) - START_NS) / 1000000000 < PURGE_WAIT)); do
            if [[ $(backlog_left "$engine" "$size" "$since" 2>/dev/null) == 0 ]]; then
                echo $((($(date +%s%N) - START_NS) / 1000000000)) >"$WORK/drained"
                exit 0
            fi
            sleep 1
        done
    ) &
    POLLER_PID=$!
    warm_up
    read -r -a before < <(backlog_counts "$engine" "$size" "$since")
    record "$engine" purge backlog_at_load_start $((before[0] + before[1])) rows
    log "$engine: profile reads under load during the purge ($LOAD_SECS s, $LOAD_CONNECTIONS connections; backlog left: $((before[0] + before[1])) rows)"
    line=$(wrk_phase "$engine-purge-load")
    read -r -a after < <(backlog_counts "$engine" "$size" "$since")
    record_load "$engine" during "$line"
    record "$engine" purge purged_during_load $((before[0] + before[1] - after[0] - after[1])) rows
    if ((before[0] + before[1] == 0)); then
        log "$engine: the purge was over before the load phase: it measured an idle server (raise SCALE_PURGE_ROWS)"
    elif ((after[0] + after[1] == 0)); then
        log "$engine: the purge finished within the load phase: part of it was idle"
    fi
    # 3. How long the whole pass takes.
    if [[ ! -e $WORK/drained ]]; then log "$engine: waiting for the purge to finish (at most $PURGE_WAIT s from the start)"; fi
    wait "$POLLER_PID" || true
    POLLER_PID=""
    [[ ! -e $WORK/drained ]] || drained=$(cat "$WORK/drained")
    [[ -n $drained ]] || log "$engine: the backlog was not gone $PURGE_WAIT s after the start (SCALE_PURGE_WAIT)"
    # From the server's start to an empty backlog.
    record "$engine" purge drained_after_s "${drained:-not_drained}" s
    stop 60
}

# --- tables ------------------------------------------------------------------------------
table() { # ENGINE
    local engine=$1 op s l ratio
    echo "### $(engine_name "$engine"): small ($SMALL_USERS users) vs large ($LARGE_USERS users)"
    echo
    echo "| operation | small | large | large/small |"
    echo "|---|---:|---:|---:|"
    for op in "${OPS[@]}"; do
        [[ -v "RESULT[$engine/small/$op]" || -v "RESULT[$engine/large/$op]" ]] || continue
        s=${RESULT[$engine/small/$op]:--} l=${RESULT[$engine/large/$op]:--} ratio=-
        if is_number "$s" && is_number "$l" && awk -v s="$s" 'BEGIN { exit !(s > 0) }'; then
            ratio=$(awk -v s="$s" -v l="$l" 'BEGIN { printf "%.2f×", l / s }')
        fi
        echo "| $op (${UNIT[$op]}) | $s | $l | $ratio |"
    done
    echo
    echo "Purge on the large database ($PURGE_ROWS expired refresh tokens + $PURGE_ROWS access-log rows past the retention):"
    echo
    echo "| measurement | value |"
    echo "|---|---:|"
    for op in backlog_rows startup_with_backlog_ms sigterm_ms purged_before_exit backlog_at_load_start purged_during_load drained_after_s; do
        if [[ -v "RESULT[$engine/purge/$op]" ]]; then echo "| $op (${UNIT[$op]}) | ${RESULT[$engine/purge/$op]} |"; fi
    done
    echo
    echo "| profile reads under load on the large database (wrk -c$LOAD_CONNECTIONS, $LOAD_SECS s) | no backlog | during the purge | during/no backlog |"
    echo "|---|---:|---:|---:|"
    for op in $LOAD_FIELDS; do
        local i=${RESULT[$engine/large/load_$op]:--} d=${RESULT[$engine/during/load_$op]:--}
        ratio=-
        if is_number "$i" && is_number "$d" && awk -v s="$i" 'BEGIN { exit !(s > 0) }'; then
            ratio=$(awk -v s="$i" -v l="$d" 'BEGIN { printf "%.2f×", l / s }')
        fi
        if [[ $i != - || $d != - ]]; then echo "| $op | $i | $d | $ratio |"; fi
    done
    echo
}

log "binary: $BIN; engines: $ENGINES; small $SMALL_USERS, large $LARGE_USERS users; output: $OUT"
for engine in $ENGINES; do
    build "$engine" small "$SMALL_USERS"
    build "$engine" large "$LARGE_USERS"
    for size in small large; do
        export_db "$engine" "$size"
        settle "$engine" "$size"
        run_operations "$engine" "$size"
    done
    purge_tests "$engine"
    table "$engine" | tee -a "$OUT/tables.md"
    # The engine's files and databases go before the next engine's are built.
    if [[ $engine == sqlite && -z ${SCALE_KEEP:-} ]]; then sqlite_remove "$WORK/small.db"; sqlite_remove "$WORK/large.db"; fi
    if [[ $engine == postgres ]]; then
        for db in "${PG_DATABASES[@]}"; do "${PG_ADMIN[@]}" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; done
        PG_DATABASES=()
    fi
done

{
    echo "## Scale benchmark — $(date -u +%FT%TZ)"
    echo
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "- Binary: $BIN$([[ -n $HAS_PURGE_DELAY ]] || echo " (no purge_start_delay_secs: it purges at every start)")."
    echo "- Each request time is curl's, the median of $REPEAT ($LOGIN_REPEAT for logins and pairs) after a warm-up; passwords: PBKDF2 $ITERATIONS iterations."
    echo "- Run time: $((SECONDS / 60)) min $((SECONDS % 60)) s."
    echo
    cat "$OUT/tables.md"
} >"$OUT/summary.md"
log "done in $((SECONDS / 60)) min $((SECONDS % 60)) s; summary: $OUT/summary.md"
