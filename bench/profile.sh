#!/usr/bin/env bash
# Benchmark of `POST /api/perfil/dados/` with all eight scopes and a warm
# cache, next to `POST /api/token/verify/`, against the release binary in one
# run of the server (see docs/performance.md), plus the database round trips
# one profile request costs, read from PostgreSQL's own counters.
#
#   1. `credencial demo` on a fresh database (ana: validated, two experiences,
#      two degrees; the registries are the built-in sandbox);
#   2. a warm-up request fills the scope cache (registries called once);
#   3. verify and profile alternate, same wrk settings, BENCH_ROUNDS rounds;
#   4. a profile-only phase is bracketed by reads of pg_stat_database
#      (xact_commit of the bench database: every statement runs in its own
#      transaction), giving statements per request.
# Loopback only, every load bounded in time, the server stopped on exit.
#
# Usage: bash bench/profile.sh
# Knobs: BENCH_PORT (18100), BENCH_ROUNDS (2), BENCH_DURATION (8),
#        BENCH_CONNECTIONS (32), BENCH_SKIP_BUILD (set: reuse the release binary)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

PORT=${BENCH_PORT:-18100}
ROUNDS=${BENCH_ROUNDS:-2}
DURATION=${BENCH_DURATION:-8}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
BASE="http://127.0.0.1:${PORT}"
DB=credencial_bench_profile
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/${DB}"
OUT="bench/out/$(date +%Y%m%d-%H%M%S)-profile"
mkdir -p "$OUT"
log() { printf '[profile-bench %s] %s\n' "$(date +%T)" "$*" >&2; }

if ! command -v wrk >/dev/null; then
    log "installing wrk"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
[ -n "${BENCH_SKIP_BUILD:-}" ] || cargo build --release --locked --bin credencial
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)"

SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
SERVICE_JWT_SECRET=$SECRET SERVICE_BIND=127.0.0.1:${PORT} RUST_LOG=warn \
    ./target/release/credencial demo >"$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true' EXIT
wait_until_serving "$BASE" "$SERVER" "$OUT/server.log" 60 || exit 1

ANA_ID=$(psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT id FROM users WHERE username = 'ana'")
ACCESS=$(curl -fsS -X POST "$BASE/api/token/pair/" -H 'Content-Type: application/json' \
    -d '{"username": "ana", "password": "ana-demo-2026"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access"])')
# An OAuth2 access token for demo-host with every scope, signed like the
# service signs them (HS256 with the configured secret).
OAUTH=$(SECRET=$SECRET ANA_ID=$ANA_ID python3 - <<'PY'
import base64, hashlib, hmac, json, os, time, uuid
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
now = int(time.time())
claims = {"token_type": "access", "iat": now, "exp": now + 3600, "jti": uuid.uuid4().hex,
          "user_id": int(os.environ["ANA_ID"]), "client_id": "demo-host", "aud": "demo-host",
          "scope": "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp"}
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
sig = hmac.new(os.environ["SECRET"].encode(), head.encode(), hashlib.sha256).digest()
print(head + "." + b64(sig))
PY
)
curl -fsS -X POST "$BASE/api/perfil/dados/" -H "Authorization: Bearer $OAUTH" -H 'Content-Type: application/json' -d '{}' \
    | tee "$OUT/profile-sample.json" | python3 -c '
import json, sys
p = json.load(sys.stdin)
want = ["avatar", "cnes", "cpf", "cursos_cdp", "email", "experiencia_profissional", "formacao_academica", "name", "receita_federal"]
assert sorted(p) == want, sorted(p)
assert "erro" not in p["receita_federal"] and "erro" not in p["cnes"], p'
log "cache warm; profile answer has all nine keys"

run() { # route-script token label
    BENCH_TOKEN=$2 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "bench/$1.lua" "$BASE/$3" >"$OUT/$4.txt"
    grep '^BENCH_RESULT' "$OUT/$4.txt"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

rows=""
for r in $(seq 1 "$ROUNDS"); do
    v=$(run verify "$ACCESS" api/token/verify/ "verify-$r")
    p=$(run profile "$OAUTH" api/perfil/dados/ "profile-$r")
    rows+="| $r | $(echo "$v" | field rps) | $(echo "$p" | field rps) | $(python3 -c "print(f'{$(echo "$p" | field rps)/$(echo "$v" | field rps):.3f}')") | $(echo "$v" | field p99_ms) | $(echo "$p" | field p99_ms) | $(echo "$p" | field errors_status) |"$'\n'
done

commits() {
    psql -h 127.0.0.1 -U postgres -d postgres -Atc "SELECT pg_stat_clear_snapshot(); SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '${DB}'" | tail -n1
}
sleep 11 # backends flush their counters at least every 10 s when idle
before=$(commits)
p=$(run profile "$OAUTH" api/perfil/dados/ "profile-roundtrips")
sleep 11
after=$(commits)
requests=$(echo "$p" | field requests)
per_request=$(python3 -c "print(f'{($after - $before) / $requests:.3f}')")

{
    echo "## Profile endpoint vs verify — $(date -u +%FT%TZ)"
    echo
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); client and server share the cores."
    echo "- wrk -t1 -c$CONNECTIONS, ${DURATION} s per phase, alternating; profile = all eight scopes of ana, warm cache."
    echo
    echo "| round | verify rps | profile rps | profile / verify | verify p99 ms | profile p99 ms | profile non-2xx |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    printf '%s' "$rows"
    echo
    echo "Database statements per profile request (pg_stat_database, $requests requests): **$per_request** (target: at most 3)."
} | tee "$OUT/summary.md"
