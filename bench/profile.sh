#!/usr/bin/env bash
# Benchmark of `POST /api/perfil/dados/` with all eight scopes and a warm
# cache, next to `POST /api/token/verify/`, against the release binary in one
# run of the server (see docs/performance.md), plus the server's CPU time per
# profile request and the database round trips one profile request costs,
# read from PostgreSQL's own counters. With
# BENCH_BASE_BIN, a second credencial binary (e.g. main's: "before" a change)
# is served at the same time on its own database and measured in the same
# rounds, so that the two profile throughputs compare under the same load.
# With BENCH_BASE_ENGINE, the second server runs on that storage engine (the
# same binary unless BENCH_BASE_BIN names another), so that SQLite and
# PostgreSQL compare in one run.
#
#   1. `credencial demo` on a fresh database (ana: validated, two experiences,
#      two degrees; the registries are the built-in sandbox; tokens living an
#      hour, so that none expires mid-run); an OAuth2 access token of
#      `demo-host` for ana with every scope is obtained as an application
#      obtains one: the authorization-code flow played with curl (login
#      form, consent, code, exchange at /oauth/token/), so it has the shape
#      and key the server under test gives client tokens (since issue 22,
#      RS256 with the demo's OpenID Connect key and `typ: at+jwt`; a base
#      binary from before, HS256 with the shared secret);
#   2. a warm-up request fills the scope cache (registries called once);
#   3. verify and profile (and the base binary's profile) alternate, same
#      wrk settings, BENCH_ROUNDS rounds; each profile phase also reads the
#      CPU time (user + system) its server process used, per request (on
#      PostgreSQL the database's own CPU is not in it);
#   4. a profile-only phase per binary is bracketed by reads of
#      pg_stat_database (xact_commit of its database: every statement runs
#      in its own transaction), giving statements per request. PostgreSQL
#      only: SQLite has no such counter, and the summary says it was skipped.
# Loopback only, every load bounded in time, the servers stopped on exit.
#
# Usage: bash bench/profile.sh
# Knobs: BENCH_PORT (18100; the base binary on +2), BENCH_ROUNDS (2),
#        BENCH_DURATION (8), BENCH_CONNECTIONS (32),
#        BENCH_SKIP_BUILD (set: reuse the release binary),
#        BENCH_BIN (measure this binary instead of target/release/credencial,
#        no build: e.g. one built from a clean checkout while the shared
#        working tree is being edited),
#        BENCH_BASE_BIN (a second binary, measured as "before"),
#        BENCH_BASE_LABEL (the second binary's name in the table: "base"),
#        BENCH_ENGINE (postgres or sqlite: the storage engine of the binary
#        under test; unset, DATABASE_URL's scheme, else postgres),
#        BENCH_BASE_ENGINE (sqlite or postgres: serve a second server on this
#        engine, BENCH_BASE_BIN or else the same binary; default: the
#        second server, if any, on BENCH_ENGINE),
#        BENCH_DB_CONNECTIONS (the servers' database pool; default: theirs, 10;
#        on SQLite, the read-only connections beside the one writer)
# Databases: PostgreSQL credencial_bench_profile (the second server:
# credencial_bench_profile_base), dropped before the run and left after it
# for inspection; SQLite: fresh files in the output directory
# (profile.db, profile_base.db), removed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

PORT=${BENCH_PORT:-18100}
ROUNDS=${BENCH_ROUNDS:-2}
DURATION=${BENCH_DURATION:-8}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
BASE_BIN=${BENCH_BASE_BIN:-}
ENGINE=$(bench_engine) || exit 2
BASE_ENGINE=${BENCH_BASE_ENGINE:-$ENGINE}
case $BASE_ENGINE in sqlite | postgres) ;; *) echo "BENCH_BASE_ENGINE: sqlite or postgres" >&2; exit 2 ;; esac
# The second server: BENCH_BASE_BIN, or this binary on BENCH_BASE_ENGINE.
if [[ -z $BASE_BIN && -n ${BENCH_BASE_ENGINE:-} ]]; then BASE_BIN=${BENCH_BIN:-./target/release/credencial}; fi
# The columns of the second server: "base" (another binary), or its engine.
if [[ $BASE_ENGINE != "$ENGINE" ]]; then
    LABEL=$(engine_name "$ENGINE") BASE_LABEL=$(engine_name "$BASE_ENGINE")
else
    LABEL="" BASE_LABEL=${BENCH_BASE_LABEL:-base}
fi
BASE="http://127.0.0.1:${PORT}"
BEFORE="http://127.0.0.1:$((PORT + 2))"
DB=credencial_bench_profile
DB_BEFORE=${DB}_base
OUT="bench/out/$(date +%Y%m%d-%H%M%S)-profile"
mkdir -p "$OUT"
log() { printf '[profile-bench %s] %s\n' "$(date +%T)" "$*" >&2; }
# db_url ENGINE DATABASE: the DATABASE_URL of a database name.
db_url() {
    case $1 in
        postgres) echo "postgres://postgres@127.0.0.1:5432/$2" ;;
        sqlite) echo "sqlite://$OUT/${2#credencial_bench_}.db" ;;
    esac
}
# sql ENGINE DATABASE QUERY: one query, rows unaligned, no header.
sql() {
    case $1 in
        postgres) psql -h 127.0.0.1 -U postgres -d "$2" -v ON_ERROR_STOP=1 -Atqc "$3" ;;
        sqlite) sqlite_sql "$(sqlite_path "$(db_url sqlite "$2")")" "$3" ;;
    esac
}

if ! command -v wrk >/dev/null; then
    log "installing wrk"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
BIN=${BENCH_BIN:-./target/release/credencial}
[[ -n ${BENCH_SKIP_BUILD:-}${BENCH_BIN:-} ]] || cargo build --release --locked --bin credencial
[[ -x $BIN ]] || { log "$BIN is missing"; exit 1; }
if [[ -n $BASE_BIN ]]; then
    [[ -x $BASE_BIN ]] || { log "BENCH_BASE_BIN: $BASE_BIN is missing"; exit 1; }
fi
if [[ " $ENGINE ${BASE_BIN:+$BASE_ENGINE} " == *" sqlite "* ]] && ! command -v sqlite3 >/dev/null; then
    log "installing sqlite3"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 >/dev/null
fi
# Fresh databases: PostgreSQL's are dropped here; SQLite's are new files in
# the new output directory.
[[ $ENGINE != postgres ]] || psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)"
if [[ -n $BASE_BIN && $BASE_ENGINE == postgres ]]; then
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS ${DB_BEFORE} WITH (FORCE)"
fi
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    for p in "$DB" "$DB_BEFORE"; do sqlite_remove "$(sqlite_path "$(db_url sqlite "$p")")"; done
}
trap cleanup EXIT
# start BIN URL ENGINE DATABASE LOG: `credencial demo` in the background.
start() {
    local port=${2##*:}
    env DATABASE_URL="$(db_url "$3" "$4")" SERVICE_JWT_SECRET="$SECRET" SERVICE_BIND="127.0.0.1:${port}" RUST_LOG=warn \
        SERVICE_ACCESS_TOKEN_LIFETIME_SECS=3600 \
        ${BENCH_DB_CONNECTIONS:+SERVICE_DATABASE_MAX_CONNECTIONS=$BENCH_DB_CONNECTIONS} "$1" demo >"$5" 2>&1 &
    PIDS+=($!)
    wait_until_serving "$2" "$!" "$5" 60 || exit 1
}
start "$BIN" "$BASE" "$ENGINE" "$DB" "$OUT/server.log"
[[ -z $BASE_BIN ]] || start "$BASE_BIN" "$BEFORE" "$BASE_ENGINE" "$DB_BEFORE" "$OUT/server-base.log"

ACCESS=$(curl -fsS -X POST "$BASE/api/token/pair/" -H 'Content-Type: application/json' \
    -d '{"username": "ana", "password": "ana-demo-2026"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access"])')

# prepare URL: prints an OAuth2 access token of demo-host for ana with every
# scope, from the authorization-code flow as tests/fuzz/run.sh plays it (the
# consent stores ana's grant, which the profile endpoint checks), and warms
# the cache with one read. The server issues the token: whatever shape and
# key it gives a client's tokens, the benchmark presents.
ALL="dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp"
csrf() { sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p'; }
prepare() {
    local jar redirect="$1/auth/callback/" t location code token
    local p=(-d response_type=code -d client_id=demo-host --data-urlencode "redirect_uri=$redirect"
        --data-urlencode "scope=$ALL" -d state=bench)
    jar=$(mktemp)
    t=$(curl -fsS -G -c "$jar" -b "$jar" "$1/oauth/authorize/" "${p[@]}" | csrf)
    curl -fsS -o /dev/null -c "$jar" -b "$jar" "$1/oauth/authorize/" "${p[@]}" -d action=login \
        -d "csrf_token=$t" -d username=ana -d password=ana-demo-2026
    t=$(curl -fsS -G -c "$jar" -b "$jar" "$1/oauth/authorize/" "${p[@]}" | csrf)
    location=$(curl -sS -o /dev/null -w '%{redirect_url}' -b "$jar" "$1/oauth/authorize/" "${p[@]}" \
        -d action=approve -d "csrf_token=$t")
    rm -f "$jar"
    code=$(python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["code"][0])' "$location") \
        || { log "no authorization code from $1 (redirect: $location)"; exit 1; }
    token=$(curl -fsS -u demo-host:demo-host-secret "$1/oauth/token/" -d grant_type=authorization_code \
        -d "code=$code" --data-urlencode "redirect_uri=$redirect" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
    curl -fsS -X POST "$1/api/perfil/dados/" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{}' \
        | python3 -c '
import json, sys
p = json.load(sys.stdin)
want = ["avatar", "cnes", "cpf", "cursos_cdp", "email", "experiencia_profissional", "formacao_academica", "name", "receita_federal"]
assert sorted(p) == want, sorted(p)
assert "erro" not in p["receita_federal"] and "erro" not in p["cnes"], p' >&2
    echo "$token"
}
# token_shape TOKEN: its header's alg and typ and its token_type, for the summary.
token_shape() {
    python3 -c '
import base64, json, sys
part = lambda s: json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))
head, claims = (part(p) for p in sys.argv[1].split(".")[:2])
print("%s, typ %s, token_type %s" % (head.get("alg"), head.get("typ"), claims.get("token_type")))' "$1"
}
OAUTH=$(prepare "$BASE")
[[ -z $BASE_BIN ]] || OAUTH_BEFORE=$(prepare "$BEFORE")
log "cache warm; profile answer has all nine keys${BASE_BIN:+ (both servers)}"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
CLK_TCK=$(getconf CLK_TCK)
# ticks PID: CPU ticks (user + system) the process has used so far.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # route-script token url label server-pid: wrk's BENCH_RESULT line and cpu_us= (server CPU µs per request)
    local t0 t1 result
    t0=$(ticks "$5")
    BENCH_TOKEN=$2 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "bench/$1.lua" "$3" >"$OUT/$4.txt"
    t1=$(ticks "$5")
    result=$(grep '^BENCH_RESULT' "$OUT/$4.txt")
    echo "$result cpu_us=$(python3 -c "print(f'{($t1 - $t0) / $CLK_TCK * 1e6 / $(echo "$result" | field requests):.1f}')")"
}
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

rows=""
for r in $(seq 1 "$ROUNDS"); do
    v=$(run verify "$ACCESS" "$BASE/api/token/verify/" "verify-$r" "${PIDS[0]}")
    p=$(run profile "$OAUTH" "$BASE/api/perfil/dados/" "profile-$r" "${PIDS[0]}")
    row="| $r | $(echo "$v" | field rps) | $(echo "$p" | field rps) | $(ratio "$(echo "$p" | field rps)" "$(echo "$v" | field rps)") | $(echo "$v" | field p99_ms) | $(echo "$p" | field p99_ms) | $(echo "$p" | field cpu_us) | $(echo "$p" | field errors_status) |"
    if [[ -n $BASE_BIN ]]; then
        b=$(run profile "$OAUTH_BEFORE" "$BEFORE/api/perfil/dados/" "profile-base-$r" "${PIDS[1]}")
        row+=" $(echo "$b" | field rps) | $(ratio "$(echo "$p" | field rps)" "$(echo "$b" | field rps)") | $(echo "$b" | field p99_ms) | $(echo "$b" | field cpu_us) | $(ratio "$(echo "$p" | field cpu_us)" "$(echo "$b" | field cpu_us)") | $(echo "$b" | field errors_status) |"
    fi
    rows+="$row"$'\n'
done

commits() { # database
    psql -h 127.0.0.1 -U postgres -d postgres -Atc "SELECT pg_stat_clear_snapshot(); SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'" | tail -n1
}
# statements URL TOKEN DATABASE LABEL PID: statements per profile request.
statements() {
    local before after p
    sleep 11 # backends flush their counters at least every 10 s when idle
    before=$(commits "$3")
    p=$(run profile "$2" "$1/api/perfil/dados/" "$4" "$5")
    sleep 11
    after=$(commits "$3")
    python3 -c "print(f'{($after - $before) / $(echo "$p" | field requests):.3f}')"
}
# pg_stat_database is PostgreSQL's: a server on SQLite is not counted.
NOT_COUNTED="not measured (pg_stat_database is PostgreSQL's)"
per_request=$NOT_COUNTED per_request_before=$NOT_COUNTED
[[ $ENGINE != postgres ]] || per_request=$(statements "$BASE" "$OAUTH" "$DB" profile-roundtrips "${PIDS[0]}")
if [[ -n $BASE_BIN && $BASE_ENGINE == postgres ]]; then
    per_request_before=$(statements "$BEFORE" "$OAUTH_BEFORE" "$DB_BEFORE" profile-roundtrips-base "${PIDS[1]}")
fi
logged=$(sql "$ENGINE" "$DB" "SELECT count(*) FROM access_log" 2>/dev/null || echo "-")
[[ -z $BASE_BIN ]] || logged_before=$(sql "$BASE_ENGINE" "$DB_BEFORE" "SELECT count(*) FROM access_log" 2>/dev/null || echo "-")

# The first server's columns carry its engine's name when the second
# server runs on the other engine ("SQLite profile rps"), none otherwise.
L=${LABEL:+$LABEL }
{
    echo "## Profile endpoint vs verify — $(date -u +%FT%TZ)"
    echo
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); client and server share the cores; load average (1/5/15 min) at the start: $LOAD_START, at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "- wrk -t1 -c$CONNECTIONS, ${DURATION} s per phase, alternating; profile = all eight scopes of ana, warm cache; database pool: ${BENCH_DB_CONNECTIONS:-10} connections per server."
    echo "- Binary: $BIN."
    echo "- Storage: $(engine_name "$ENGINE") ($(db_url "$ENGINE" "$DB" | sed 's|^postgres://[^/]*/||; s|^sqlite://||'))."
    if [[ -n $BASE_BIN ]]; then
        if [[ $BASE_ENGINE != "$ENGINE" ]]; then
            echo "- Second server: $BASE_BIN on $BASE_LABEL ($(db_url "$BASE_ENGINE" "$DB_BEFORE" | sed 's|^postgres://[^/]*/||; s|^sqlite://||')), served at the same time; its columns are headed $BASE_LABEL."
        else
            echo "- Second binary (\"$BASE_LABEL\"): $BASE_BIN, served at the same time on its own database."
        fi
    fi
    echo "- Profile token (from /oauth/token/): $(token_shape "$OAUTH")${BASE_BIN:+; $BASE_LABEL: $(token_shape "$OAUTH_BEFORE")}."
    echo "- Server CPU µs/req: the server process's user + system time per profile request over the phase$([[ " $ENGINE ${BASE_BIN:+$BASE_ENGINE} " != *" postgres "* ]] || echo " (PostgreSQL's own CPU not included)")."
    echo
    if [[ -n $BASE_BIN ]]; then
        echo "| round | ${L}verify rps | ${L}profile rps | profile / verify | ${L}verify p99 ms | ${L}profile p99 ms | ${L}profile server CPU µs/req | ${L}profile non-2xx | $BASE_LABEL profile rps | ${LABEL:-profile} / $BASE_LABEL | $BASE_LABEL profile p99 ms | $BASE_LABEL profile server CPU µs/req | CPU ${LABEL:-profile} / $BASE_LABEL | $BASE_LABEL profile non-2xx |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    else
        echo "| round | verify rps | profile rps | profile / verify | verify p99 ms | profile p99 ms | profile server CPU µs/req | profile non-2xx |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    fi
    printf '%s' "$rows"
    echo
    echo "Database statements per profile request (pg_stat_database): **${LABEL:+$LABEL: }$per_request**${BASE_BIN:+ ($BASE_LABEL: $per_request_before)} (target: at most 2 with the grant check and the access-log row); access-log rows written: ${LABEL:+$LABEL }$logged${BASE_BIN:+, $BASE_LABEL ${logged_before:-}}."
} | tee "$OUT/summary.md"
