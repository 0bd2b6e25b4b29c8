#!/usr/bin/env bash
# `credencial export` and `import` in constant memory (issue 28, item 3):
# two SQLite databases, a small and a large one (users and access-log rows
# made by SQL), each exported to a file and imported into a fresh SQLite
# file and a fresh PostgreSQL database, with the peak resident memory and
# the time of every step. One line a step:
#   transfer size=… step=export|import_sqlite|import_postgres rows=… peak_kb=… secs=…
# The peak should not grow with the size.
# Knobs: SMALL_USERS (10000), SMALL_LOG (50000), LARGE_USERS (200000),
# LARGE_LOG (1000000).
# Needs: the release binary (built here), sqlite3, GNU time at
# /usr/bin/time, psql and PostgreSQL at 127.0.0.1:5432 (trust, postgres).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin credencial >/dev/null 2>&1
bin="$PWD/target/release/credencial"
work=$(mktemp -d)
trap 'rm -rf "$work"; psql -qh 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS bench_transfer" >/dev/null 2>&1 || true' EXIT
export SERVICE_JWT_SECRET=bench-transfer-secret-of-at-least-32-bytes

# make DB USERS LOG: a migrated SQLite file with USERS accounts and LOG access-log rows.
make() {
    DATABASE_URL="sqlite://$1" "$bin" migrate >/dev/null 2>&1
    sqlite3 "$1" >/dev/null <<SQL
ATTACH DATABASE '$1-access-log' AS access;
PRAGMA journal_mode=WAL;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
INSERT INTO users (username, password, email, email_key, name, created_at)
SELECT 'u' || i, '!unusable', 'u' || i || '@example.gov.br', 'u' || i || '@example.gov.br', 'Pessoa ' || i, 1800000000 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $3)
INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id)
SELECT 1 + (i % $2), 'portal', '["cpf","email"]', 1800000000 + i, 'req-' || i FROM n;
SQL
}

# step SIZE NAME DATABASE_URL ARGS…: runs the binary, prints its line.
step() {
    local size=$1 name=$2 url=$3
    shift 3
    local out
    out=$(DATABASE_URL="$url" /usr/bin/time -f "peak_kb=%M secs=%e" "$bin" "$@" 2>&1 | grep -v '^credencial \(export\|import\):\|WARN')
    local rows
    rows=$(grep -oE '(exported|imported) [0-9]+' <<<"$out" | grep -oE '[0-9]+')
    echo "transfer size=$size step=$name rows=$rows $(grep -oE 'peak_kb=[0-9]+ secs=[0-9.]+' <<<"$out")"
}

for size in small large; do
    if [ "$size" = small ]; then users=${SMALL_USERS:-10000} log=${SMALL_LOG:-50000}; else users=${LARGE_USERS:-200000} log=${LARGE_LOG:-1000000}; fi
    make "$work/$size.db" "$users" "$log"
    step "$size" export "sqlite://$work/$size.db" export --out "$work/$size.jsonl"
    DATABASE_URL="sqlite://$work/$size-in.db" "$bin" migrate >/dev/null 2>&1
    step "$size" import_sqlite "sqlite://$work/$size-in.db" import --in "$work/$size.jsonl"
    psql -qh 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS bench_transfer" -c "CREATE DATABASE bench_transfer" >/dev/null 2>&1
    DATABASE_URL=postgres://postgres@127.0.0.1/bench_transfer "$bin" migrate >/dev/null 2>&1
    step "$size" import_postgres postgres://postgres@127.0.0.1/bench_transfer import --in "$work/$size.jsonl"
    step "$size" export_postgres postgres://postgres@127.0.0.1/bench_transfer export --out "$work/$size-pg.jsonl"
done
