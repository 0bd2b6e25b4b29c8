#!/usr/bin/env bash
# Mixed load and soak against the release binary, on loopback (see
# docs/performance.md, "Mixed load and soak"):
#   1. `credencial demo` on a fresh database, with a known HS256 secret, an
#      OpenID Connect key pair made for the run by `credencial keys generate`
#      (SERVICE_OIDC_SIGNING_KEY_FILE: the key the service signs client
#      applications' tokens with, which loadgen mints the profile token
#      with) and RUST_LOG=warn;
#   2. SOAK_USERS users seeded for the pair requests (PBKDF2 at
#      SOAK_ITERATIONS, see below), each with its own random password;
#   3. bench/loadgen, open loop at a constant SOAK_RATE: verify 70 %,
#      refresh 10 %, profile 15 %, pair 5 %, for SOAK_WARMUP + SOAK_DURATION
#      seconds (latency measured from each request's scheduled time); before
#      the clock starts it logs in a pool of refresh tokens and reads the
#      profile once, which fills the registries' cache;
#   4. before the warm-up, SOAK_SATURATE connections fill the server's
#      per-worker request pools (3 s of GET /readyz, then 10 s to settle);
#   5. the server's resident memory (VmRSS) is read every 5 s; the run fails
#      on any error or on growth >= 10 % between the end of the warm-up and
#      the end of the load.
# Bounded in time; the server is stopped and the database dropped on exit.
# BENCH_ENGINE=sqlite (or a DATABASE_URL with the sqlite scheme) runs the
# server on a fresh SQLite file in the output directory instead, removed on
# exit; the summary then counts "database is locked" in the server's log.
# The loadgen's summary, the RSS readings, the server's log and a summary
# with the binary's provenance and the machine's state go to
# bench/out/<timestamp>-soak/ (git-ignored). Exit status: the loadgen's
# (0 pass, 1 fail, 2 could not run); on SQLite, 1 as well when the server's
# log says "database is locked".
#
# Usage: bash bench/soak.sh
#
# Knobs (environment):
#   SOAK_RATE (1000)         requests per second, all routes together
#   SOAK_DURATION (300)      seconds of the measured window
#   SOAK_WARMUP (30)         seconds of warm-up before it
#   SOAK_MIX (verify=70,refresh=10,profile=15,pair=5)
#   SOAK_USERS (16)          users pair logs in, in turn
#   SOAK_ITERATIONS (20000)  PBKDF2 iterations of those users' hashes (and the
#                            server's SERVICE_PASSWORD_ITERATIONS)
#   SOAK_REFRESH_POOL (32)   refresh tokens in rotation
#   BENCH_ENGINE (postgres)  the storage engine: postgres (database
#                            credencial_soak) or sqlite (bench/out/<timestamp>-soak/soak.db);
#                            unset, DATABASE_URL's scheme decides
#   SOAK_SYNC_COMMIT (on)    PostgreSQL's synchronous_commit for the soak
#                            database; "off" takes the disk's flush latency out
#                            of the commits (refresh, pair) on a machine whose
#                            disk stalls under other work (see
#                            docs/performance.md); the summary says which.
#                            PostgreSQL only: SQLite runs with the adapter's
#                            own setting (WAL, synchronous=NORMAL)
#   SOAK_SATURATE (1024)     connections that keep GET /readyz busy for 3 s
#                            before the warm-up, filling the server's
#                            per-worker request pools (bounded; see
#                            bench/loadgen/src/saturate.rs and
#                            docs/performance.md); 0 skips it
#   SOAK_PORT (18200)
#   SOAK_SKIP_BUILD          set: use the existing release binaries
#   SOAK_BIN                 soak this server binary instead (no build of it),
#                            e.g. one built from a clean checkout
#                            (SOAK_BIN_REVISION: its label in the summary)
#
# Why 1,000 req/s and 20,000 iterations: pair costs one PBKDF2-SHA256 hash,
# and the server hashes on cores - 1 = 1 thread. On the project's machine
# (2 cores) one login took 72 ms at 600,000 iterations (the service's
# default), 14 ms at 100,000 and 4.3 ms at 20,000 (curl, idle server); so the
# hashing thread sustains about 14 logins per second at the default and 8 at
# Django's 1,000,000. At 5 % of the mix that would cap the whole load at 280
# (160) req/s with the hashing thread saturated, and pair's queue, not the
# service, would set every figure. At 20,000 iterations the 50 logins per
# second of a 1,000 req/s load keep the hashing thread about 15 % busy, and
# the whole load takes about half a core of the server, PostgreSQL and the
# load generator together on a quiet machine: loaded, not saturated, so the
# soak measures what it is for (errors, memory over time, latency of every
# route). The cost of a production hash is measured by bench/run.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

RATE=${SOAK_RATE:-1000}
DURATION=${SOAK_DURATION:-300}
WARMUP=${SOAK_WARMUP:-30}
MIX=${SOAK_MIX:-verify=70,refresh=10,profile=15,pair=5}
USERS=${SOAK_USERS:-16}
ITERATIONS=${SOAK_ITERATIONS:-20000}
REFRESH_POOL=${SOAK_REFRESH_POOL:-32}
SATURATE=${SOAK_SATURATE:-1024}
SYNC_COMMIT=${SOAK_SYNC_COMMIT:-on}
PORT=${SOAK_PORT:-18200}
BASE="http://127.0.0.1:${PORT}"
ENGINE=$(bench_engine) || exit 2

OUT="bench/out/$(date +%Y%m%d-%H%M%S)-soak"
mkdir -p "$OUT"
if [[ $ENGINE == sqlite ]]; then
    # A fresh file for every run, in the run's own directory.
    DB=$OUT/soak.db
    export DATABASE_URL="sqlite://${DB}"
else
    DB=credencial_soak
    export DATABASE_URL="postgres://postgres@127.0.0.1:5432/${DB}"
fi

log() { printf '[soak %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 2; }

# --- tools -------------------------------------------------------------------

missing=()
command -v curl >/dev/null || missing+=(curl)
if [[ $ENGINE == sqlite ]]; then
    command -v sqlite3 >/dev/null || missing+=(sqlite3)
else
    command -v psql >/dev/null || missing+=(postgresql-client)
fi
if ((${#missing[@]})); then
    [[ $(id -u) -eq 0 ]] || die "install ${missing[*]} (needs root)"
    log "installing ${missing[*]} (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
psql_db() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -Atq "$@"; }
# sql QUERY: one query on the soak database, rows unaligned, no header.
sql() {
    if [[ $ENGINE == sqlite ]]; then sqlite_sql "$DB" "$1"; else psql_db -d "$DB" -c "$1"; fi
}
drop_database() {
    if [[ $ENGINE == sqlite ]]; then sqlite_remove "$DB"; else psql_db -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)"; fi
}

# --- binaries ----------------------------------------------------------------

if [[ -z ${SOAK_SKIP_BUILD:-} ]]; then
    log "building the release binaries (credencial, loadgen)"
    if [[ -n ${SOAK_BIN:-} ]]; then
        cargo build --release --locked -p loadgen --bin loadgen
    else
        cargo build --release --locked -p credencial --bin credencial -p loadgen --bin loadgen
    fi
fi
BIN_NAME=${SOAK_BIN:-target/release/credencial}
[[ -x $BIN_NAME ]] || die "$BIN_NAME is missing"
[[ -x target/release/loadgen ]] || die "target/release/loadgen is missing"
# Copies for the whole run, so that a rebuild meanwhile cannot swap them.
cp "$BIN_NAME" "$OUT/credencial"
cp target/release/loadgen "$OUT/loadgen"
BIN=$OUT/credencial
if [[ -n ${SOAK_BIN:-} ]]; then
    BIN_DESC="$BIN_NAME${SOAK_BIN_REVISION:+, revision $SOAK_BIN_REVISION}"
else
    BIN_DESC="$BIN_NAME, revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [[ -n $(git status --porcelain --untracked-files=no -- crates src migrations Cargo.toml Cargo.lock 2>/dev/null) ]]; then
        BIN_DESC="$BIN_DESC + uncommitted changes"
    else
        BIN_DESC="$BIN_DESC (clean tree)"
    fi
fi

# --- server ------------------------------------------------------------------

SERVER_PID=""
VMSTAT_PID=""
cleanup() {
    [[ -z $VMSTAT_PID ]] || kill "$VMSTAT_PID" 2>/dev/null || true
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    drop_database 2>/dev/null || true
    rm -f "$OUT/credencial" "$OUT/loadgen" "$OUT/users.txt" "$OUT"/oidc-private.pem "$OUT"/oidc-public.pem
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if curl -s -o /dev/null --max-time 1 "$BASE/healthz"; then
    die "something already answers on $BASE; stop it or set SOAK_PORT"
fi
case $SYNC_COMMIT in on | off) ;; *) die "SOAK_SYNC_COMMIT: on or off" ;; esac
if [[ $ENGINE == postgres ]]; then
    psql_db -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)"
    # Created here (demo migrates an existing database) so that the setting
    # holds for every connection of the server.
    psql_db -d postgres -c "CREATE DATABASE ${DB}"
    psql_db -d postgres -c "ALTER DATABASE ${DB} SET synchronous_commit = ${SYNC_COMMIT}"
    DB_DESC="PostgreSQL, database $DB, synchronous_commit $SYNC_COMMIT"
else
    [[ -z ${SOAK_SYNC_COMMIT:-} ]] || log "SOAK_SYNC_COMMIT is PostgreSQL's; ignored on SQLite"
    # `credencial demo` creates the file (mode 0600).
    DB_DESC="SQLite, a fresh file ($DB; WAL, synchronous=NORMAL, one writer connection, busy timeout 5 s)"
fi

SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
# The provider's key pair: the server signs client applications' tokens
# with it (RS256, typ at+jwt; docs/resource-servers.md), and loadgen mints
# the profile token with it (the demo would otherwise make one of its own).
"$BIN" keys generate --alg RS256 --out "$OUT" --name oidc >/dev/null
export SERVICE_JWT_SECRET=$SECRET SERVICE_PASSWORD_ITERATIONS=$ITERATIONS SERVICE_OIDC_SIGNING_KEY_FILE=$OUT/oidc-private.pem
log "starting $BIN_NAME demo on $BASE ($(engine_name "$ENGINE") database $DB, PBKDF2 $ITERATIONS iterations)"
SERVICE_BIND="127.0.0.1:${PORT}" RUST_LOG=warn "$BIN" demo >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
wait_until_serving "$BASE" "$SERVER_PID" "$OUT/server.log" 120 || die "the server did not start"
log "server ready (pid $SERVER_PID)"

# --- users -------------------------------------------------------------------

: >"$OUT/users.txt"
for i in $(seq -w 1 "$USERS"); do
    password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    printf '%s\n' "$password" | RUST_LOG=warn "$BIN" user create --username "soak-$i" --name "Soak User $i" \
        --email "soak-$i@example.invalid" >/dev/null
    printf 'soak-%s %s\n' "$i" "$password" >>"$OUT/users.txt"
done
ANA_ID=$(sql "SELECT id FROM users WHERE username = 'ana'")
[[ -n $ANA_ID ]] || die "no user ana in $DB"
# Her consent to demo-host, as the consent page stores it: the profile
# endpoint answers a client's tokens only while the grant exists. (SQLite's
# schema: scopes a JSON array, instants Unix seconds.)
GRANTED="'cnes', 'cursos_cdp', 'experiencia_profissional', 'formacao_academica', 'receita_federal'"
if [[ $ENGINE == sqlite ]]; then
    sql "INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
        VALUES ($ANA_ID, 'demo-host', json_array($GRANTED), unixepoch(), unixepoch()) ON CONFLICT DO NOTHING"
else
    sql "INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
        VALUES ($ANA_ID, 'demo-host', ARRAY[$GRANTED], now(), now()) ON CONFLICT DO NOTHING"
fi
log "seeded $USERS users; the profile requests read ana's (id $ANA_ID) with every scope"

# --- load --------------------------------------------------------------------

cpu_busy_pct() {
    local a b
    a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%d", 100 * (y[1] - x[1]) / (y[2] - x[2]) }'
}
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_BEFORE=$(cpu_busy_pct)
STARTED=$(date -u +%FT%TZ)
log "load: $RATE req/s, ${WARMUP} s warm-up + ${DURATION} s measured, mix $MIX (machine ${BUSY_BEFORE}% busy before)"
# The machine's I/O wait once a second: a disk that stalls shows up here.
if command -v vmstat >/dev/null; then
    vmstat -n 1 $((WARMUP + DURATION + 20)) >"$OUT/vmstat.txt" 2>&1 &
    VMSTAT_PID=$!
fi
status=0
LOADGEN_OAUTH_KEY_FILE=$OUT/oidc-private.pem timeout $((WARMUP + DURATION + 300)) "$OUT/loadgen" \
    --base-url "$BASE" --rate "$RATE" --duration "$DURATION" --warmup "$WARMUP" --mix "$MIX" \
    --users "$OUT/users.txt" --refresh-pool "$REFRESH_POOL" --profile-user-id "$ANA_ID" \
    --saturate-connections "$SATURATE" --server-pid "$SERVER_PID" --rss-csv "$OUT/rss.csv" --timeline-csv "$OUT/timeline.csv" >"$OUT/loadgen.md" 2>"$OUT/loadgen.log" || status=$?
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$OUT/loadgen.log" >&2
kill -0 "$SERVER_PID" 2>/dev/null || log "warning: the server is no longer running"
WARN_LINES=$(grep -c -E 'WARN|ERROR' "$OUT/server.log" || true)
# SQLite's lock errors (SQLITE_BUSY): none may reach the log.
LOCKED_LINES=$(grep -c "database is locked" "$OUT/server.log" || true)
if [[ $ENGINE == sqlite ]] && ((LOCKED_LINES > 0 && status == 0)); then status=1; fi
# From vmstat's 1-second lines: the highest I/O wait, the seconds with at
# least 20 % I/O wait, the most processes blocked on I/O at once (the first
# line, averages since boot, is skipped).
# Likewise the CPU the hypervisor took from this VM (steal): while it is
# high, every process here stalls at once.
IO_STATE="not measured (no vmstat)"
if [[ -s $OUT/vmstat.txt ]]; then
    IO_STATE=$(awk '$1 == "r" { for (i = 1; i <= NF; i++) { if ($i == "wa") w = i; if ($i == "b") b = i; if ($i == "st") t = i }; next }
        w && $1 ~ /^[0-9]+$/ && ++rows > 1 { n++; if ($w > max) max = $w; if ($w >= 20) stalled++; if ($b > blocked) blocked = $b;
            if (t) { if ($t > maxst) maxst = $t; if ($t >= 20) stolen++ } }
        END { printf "I/O wait at most %d %%, %d of %d seconds with >= 20 %% I/O wait, at most %d processes blocked on I/O; CPU steal at most %d %%, %d seconds with >= 20 %% steal", max, stalled, n, blocked, maxst, stolen }' "$OUT/vmstat.txt")
fi

{
    echo "## Mixed load and soak — $STARTED"
    echo
    if [[ $ENGINE == sqlite ]]; then
        echo "- Command: \`BENCH_ENGINE=sqlite SOAK_RATE=$RATE SOAK_DURATION=$DURATION SOAK_WARMUP=$WARMUP SOAK_SATURATE=$SATURATE bash bench/soak.sh\`"
    else
        echo "- Command: \`SOAK_RATE=$RATE SOAK_DURATION=$DURATION SOAK_WARMUP=$WARMUP SOAK_SATURATE=$SATURATE SOAK_SYNC_COMMIT=$SYNC_COMMIT bash bench/soak.sh\`"
    fi
    echo "- Server: $BIN_DESC; \`credencial demo\`, RUST_LOG=warn, default workers and pool;" \
        "PBKDF2 $ITERATIONS iterations for the $USERS pair users."
    echo "- Storage: $DB_DESC."
    echo "- Load: bench/loadgen (open loop), mix $MIX, $REFRESH_POOL refresh tokens in rotation," \
        "profile = ana with all eight scopes (warm cache)."
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load generator," \
        "server and PostgreSQL share them. Load average (1/5/15 min) before: $LOAD_BEFORE, after: $LOAD_AFTER;" \
        "CPU ${BUSY_BEFORE}% busy in the second before the load; $IO_STATE (\`vmstat.txt\`)."
    echo "- Server log: $WARN_LINES warning or error lines (\`server.log\`)."
    if [[ $ENGINE == sqlite ]]; then
        echo "- \"database is locked\" in the server log: **$LOCKED_LINES** lines. PostgreSQL's CPU below is the idle server's (nothing uses it); SQLite works inside the server's process."
    fi
    echo
    if [[ -s $OUT/loadgen.md ]]; then cat "$OUT/loadgen.md"; else echo "The load generator produced no summary (exit status $status)."; fi
} | tee "$OUT/summary.md"
log "results in $OUT"
exit "$status"
