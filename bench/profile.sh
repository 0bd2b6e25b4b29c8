#!/usr/bin/env bash
# Benchmark of `POST /api/perfil/dados/` with all eight scopes and a warm
# cache, next to `POST /api/token/verify/`, against the release binary in one
# run of the server (see docs/performance.md), plus the database round trips
# one profile request costs, read from PostgreSQL's own counters. With
# BENCH_BASE_BIN, a second credencial binary (e.g. main's: "before" a change)
# is served at the same time on its own database and measured in the same
# rounds, so that the two profile throughputs compare under the same load.
#
#   1. `credencial demo` on a fresh database (ana: validated, two experiences,
#      two degrees; the registries are the built-in sandbox); ana's consent
#      to `demo-host` is stored (a grant row, as the consent page stores it);
#   2. a warm-up request fills the scope cache (registries called once);
#   3. verify and profile (and the base binary's profile) alternate, same
#      wrk settings, BENCH_ROUNDS rounds;
#   4. a profile-only phase per binary is bracketed by reads of
#      pg_stat_database (xact_commit of its database: every statement runs
#      in its own transaction), giving statements per request.
# Loopback only, every load bounded in time, the servers stopped on exit.
#
# Usage: bash bench/profile.sh
# Knobs: BENCH_PORT (18100; the base binary on +2), BENCH_ROUNDS (2),
#        BENCH_DURATION (8), BENCH_CONNECTIONS (32),
#        BENCH_SKIP_BUILD (set: reuse the release binary),
#        BENCH_BASE_BIN (a second binary, measured as "before"),
#        BENCH_DB_CONNECTIONS (the servers' database pool; default: theirs, 10)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

PORT=${BENCH_PORT:-18100}
ROUNDS=${BENCH_ROUNDS:-2}
DURATION=${BENCH_DURATION:-8}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
BASE_BIN=${BENCH_BASE_BIN:-}
BASE="http://127.0.0.1:${PORT}"
BEFORE="http://127.0.0.1:$((PORT + 2))"
DB=credencial_bench_profile
DB_BEFORE=${DB}_base
OUT="bench/out/$(date +%Y%m%d-%H%M%S)-profile"
mkdir -p "$OUT"
log() { printf '[profile-bench %s] %s\n' "$(date +%T)" "$*" >&2; }
db_url() { echo "postgres://postgres@127.0.0.1:5432/$1"; }

if ! command -v wrk >/dev/null; then
    log "installing wrk"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
[ -n "${BENCH_SKIP_BUILD:-}" ] || cargo build --release --locked --bin credencial
if [[ -n $BASE_BIN ]]; then
    [[ -x $BASE_BIN ]] || { log "BENCH_BASE_BIN: $BASE_BIN is missing"; exit 1; }
fi
for db in "$DB" "$DB_BEFORE"; do
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS ${db} WITH (FORCE)"
done

SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
# start BIN URL DATABASE LOG: `credencial demo` in the background.
start() {
    local port=${2##*:}
    env DATABASE_URL="$(db_url "$3")" SERVICE_JWT_SECRET="$SECRET" SERVICE_BIND="127.0.0.1:${port}" RUST_LOG=warn \
        ${BENCH_DB_CONNECTIONS:+SERVICE_DATABASE_MAX_CONNECTIONS=$BENCH_DB_CONNECTIONS} "$1" demo >"$4" 2>&1 &
    PIDS+=($!)
    wait_until_serving "$2" "$!" "$4" 60 || exit 1
}
start ./target/release/credencial "$BASE" "$DB" "$OUT/server.log"
[[ -z $BASE_BIN ]] || start "$BASE_BIN" "$BEFORE" "$DB_BEFORE" "$OUT/server-base.log"

ACCESS=$(curl -fsS -X POST "$BASE/api/token/pair/" -H 'Content-Type: application/json' \
    -d '{"username": "ana", "password": "ana-demo-2026"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access"])')

# prepare URL DATABASE: stores ana's consent to demo-host, prints an OAuth2
# access token for it with every scope (signed like the service signs them:
# HS256 with the configured secret), and warms the cache with one read.
ALL="dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp"
prepare() {
    local ana token
    ana=$(psql -h 127.0.0.1 -U postgres -d "$2" -Atc "SELECT id FROM users WHERE username = 'ana'")
    psql -h 127.0.0.1 -U postgres -d "$2" -qc "INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
        VALUES ($ana, 'demo-host', string_to_array('$ALL', ' '), now(), now()) ON CONFLICT DO NOTHING"
    token=$(SECRET=$SECRET ANA_ID=$ana SCOPE=$ALL python3 - <<'PY'
import base64, hashlib, hmac, json, os, time, uuid
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
now = int(time.time())
claims = {"token_type": "access", "iat": now, "exp": now + 3600, "jti": uuid.uuid4().hex,
          "user_id": int(os.environ["ANA_ID"]), "client_id": "demo-host", "aud": "demo-host",
          "scope": os.environ["SCOPE"]}
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
sig = hmac.new(os.environ["SECRET"].encode(), head.encode(), hashlib.sha256).digest()
print(head + "." + b64(sig))
PY
)
    curl -fsS -X POST "$1/api/perfil/dados/" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{}' \
        | python3 -c '
import json, sys
p = json.load(sys.stdin)
want = ["avatar", "cnes", "cpf", "cursos_cdp", "email", "experiencia_profissional", "formacao_academica", "name", "receita_federal"]
assert sorted(p) == want, sorted(p)
assert "erro" not in p["receita_federal"] and "erro" not in p["cnes"], p' >&2
    echo "$token"
}
OAUTH=$(prepare "$BASE" "$DB")
[[ -z $BASE_BIN ]] || OAUTH_BEFORE=$(prepare "$BEFORE" "$DB_BEFORE")
log "cache warm; profile answer has all nine keys${BASE_BIN:+ (both binaries)}"

run() { # route-script token url label
    BENCH_TOKEN=$2 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "bench/$1.lua" "$3" >"$OUT/$4.txt"
    grep '^BENCH_RESULT' "$OUT/$4.txt"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

rows=""
for r in $(seq 1 "$ROUNDS"); do
    v=$(run verify "$ACCESS" "$BASE/api/token/verify/" "verify-$r")
    p=$(run profile "$OAUTH" "$BASE/api/perfil/dados/" "profile-$r")
    row="| $r | $(echo "$v" | field rps) | $(echo "$p" | field rps) | $(ratio "$(echo "$p" | field rps)" "$(echo "$v" | field rps)") | $(echo "$v" | field p99_ms) | $(echo "$p" | field p99_ms) | $(echo "$p" | field errors_status) |"
    if [[ -n $BASE_BIN ]]; then
        b=$(run profile "$OAUTH_BEFORE" "$BEFORE/api/perfil/dados/" "profile-base-$r")
        row+=" $(echo "$b" | field rps) | $(ratio "$(echo "$p" | field rps)" "$(echo "$b" | field rps)") | $(echo "$b" | field p99_ms) |"
    fi
    rows+="$row"$'\n'
done

commits() { # database
    psql -h 127.0.0.1 -U postgres -d postgres -Atc "SELECT pg_stat_clear_snapshot(); SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'" | tail -n1
}
# statements URL TOKEN DATABASE LABEL: statements per profile request.
statements() {
    local before after p
    sleep 11 # backends flush their counters at least every 10 s when idle
    before=$(commits "$3")
    p=$(run profile "$2" "$1/api/perfil/dados/" "$4")
    sleep 11
    after=$(commits "$3")
    python3 -c "print(f'{($after - $before) / $(echo "$p" | field requests):.3f}')"
}
per_request=$(statements "$BASE" "$OAUTH" "$DB" profile-roundtrips)
[[ -z $BASE_BIN ]] || per_request_before=$(statements "$BEFORE" "$OAUTH_BEFORE" "$DB_BEFORE" profile-roundtrips-base)
logged=$(psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT count(*) FROM access_log" 2>/dev/null || echo "-")

{
    echo "## Profile endpoint vs verify — $(date -u +%FT%TZ)"
    echo
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); client and server share the cores; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "- wrk -t1 -c$CONNECTIONS, ${DURATION} s per phase, alternating; profile = all eight scopes of ana, warm cache; database pool: ${BENCH_DB_CONNECTIONS:-10} connections per server."
    [[ -z $BASE_BIN ]] || echo "- Base (\"before\") binary: $BASE_BIN, served at the same time on its own database."
    echo
    if [[ -n $BASE_BIN ]]; then
        echo "| round | verify rps | profile rps | profile / verify | verify p99 ms | profile p99 ms | profile non-2xx | base profile rps | profile / base | base profile p99 ms |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    else
        echo "| round | verify rps | profile rps | profile / verify | verify p99 ms | profile p99 ms | profile non-2xx |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
    fi
    printf '%s' "$rows"
    echo
    echo "Database statements per profile request (pg_stat_database): **$per_request**${BASE_BIN:+ (base: $per_request_before)} (target: at most 2 with the grant check and the access-log row); access-log rows written: $logged."
} | tee "$OUT/summary.md"
