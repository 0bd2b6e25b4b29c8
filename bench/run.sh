#!/usr/bin/env bash
# Benchmark of `POST /api/token/verify/` against the release binary, on
# loopback, in one run of the server (see docs/performance.md):
#   1. warm-up;
#   2. throughput: the no-op JSON route (`POST /_noop/`) and verify,
#      alternating (noop, verify, noop, verify …) with the same wrk settings;
#      target: mean verify rps >= 0.8 x mean noop rps;
#   3. latency: verify at a fixed, moderate load with the server otherwise
#      idle, then the same while a second wrk keeps `pair` (PBKDF2)
#      saturating the hashing pool, alternating (idle, pair, idle, pair …);
#      target: verify p99 under pair load <= 2 x idle p99;
#   4. bare: verify against a bare actix-web + jsonwebtoken handler
#      (bench/bare: same HS256 secret, same claims, same body, `200 {}`, no
#      middleware, no log), at BENCH_BARE_CONNECTIONS (4 and 32)
#      connections, interleaved (bare, credencial[, base] per connection
#      count and round); with BENCH_BASE_BIN, a second credencial binary
#      (e.g. the base revision of a change: "before") is served at the same
#      time and measured in the same rounds; target: verify rps >= 0.9 x
#      bare rps at each connection count.
# The servers log at the service's default level (one line per request)
# unless RUST_LOG is set; their logs are files in the output directory,
# emptied before each measurement so that they stay small.
# Every load is bounded in time; the server is stopped on exit. Raw wrk
# outputs, the server log and a markdown summary go to bench/out/<timestamp>/
# (git-ignored).
#
# Usage: bash bench/run.sh
#
# Knobs (environment):
#   BENCH_PORT (18000)            BENCH_ROUNDS (3)
#   BENCH_DURATION (10)           seconds per throughput phase
#   BENCH_CONNECTIONS (32)        throughput connections (wrk -t1)
#   BENCH_LAT_DURATION (20)       seconds per latency phase
#   BENCH_LAT_CONNECTIONS (4)     latency connections (wrk -t1)
#   BENCH_LAT_DELAY_MS (1)        pause of each latency connection between
#                                 requests (wrk has no fixed-rate mode and
#                                 wrk2 is not packaged by Debian; 0 = closed
#                                 loop, which saturates the server)
#   BENCH_PAIR_CONNECTIONS (8)    connections of the concurrent pair load
#   BENCH_WARMUP (5)              seconds of warm-up per route
#   BENCH_PHASES ("throughput latency bare")
#   BENCH_BARE_CONNECTIONS ("4 32") connection counts of the bare phase
#   BENCH_BASE_BIN                a second credencial binary served and
#                                 measured in the bare phase ("before";
#                                 BENCH_BASE_REVISION: its label)
#   BENCH_QUIET_WAIT (120)        at most this many seconds waiting for a
#                                 quiet machine before each phase
#   BENCH_SKIP_BUILD              set: use the existing release binaries
#                                 (target/release/credencial, bench-bare)
#   BENCH_BIN                     benchmark this binary instead (no build),
#                                 e.g. one built from a clean checkout while
#                                 the working tree is being edited
#                                 (BENCH_BIN_REVISION: its label in the summary)
#   BENCH_HASHING_PRIORITY        experiment, off by default: "nice" or "idle"
#                                 lowers the OS priority of the server's
#                                 hashing threads (nice 19 / SCHED_IDLE) during
#                                 the pair phases, to show what that change in
#                                 the service would do
#   BENCH_ENGINE (postgres)       the storage engine of the servers: postgres
#                                 or sqlite; unset, a DATABASE_URL with the
#                                 sqlite scheme selects SQLite
#   DATABASE_URL                  PostgreSQL: postgres://postgres@127.0.0.1:5432/credencial_bench
#                                 (reused between runs; the base binary uses
#                                 <name>_base). SQLite: a fresh file in the
#                                 output directory, bench/out/<timestamp>/credencial.db
#                                 (the base binary: credencial-base.db beside
#                                 it); a sqlite:// URL given here must name a
#                                 file that does not exist yet. The SQLite
#                                 files are removed on exit.
#   RUST_LOG                      passed to the servers when set (unset: the
#                                 service's default level, INFO)
#   BENCH_METRICS                 "on" or "off": SERVICE_METRICS_ENABLED of the
#                                 binary under test (unset: the demo's default,
#                                 on); never passed to BENCH_BASE_BIN, which may
#                                 predate the setting
#   SERVICE_WORKERS, SERVICE_HASHING_THREADS, SERVICE_PASSWORD_ITERATIONS:
#                                 passed to the server when set (unset: the
#                                 service's defaults)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

PORT=${BENCH_PORT:-18000}
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
LAT_DURATION=${BENCH_LAT_DURATION:-20}
LAT_CONNECTIONS=${BENCH_LAT_CONNECTIONS:-4}
LAT_DELAY_MS=${BENCH_LAT_DELAY_MS:-1}
PAIR_CONNECTIONS=${BENCH_PAIR_CONNECTIONS:-8}
WARMUP=${BENCH_WARMUP:-5}
PHASES=${BENCH_PHASES:-throughput latency bare}
BARE_CONNECTIONS=${BENCH_BARE_CONNECTIONS:-4 32}
BASE_BIN=${BENCH_BASE_BIN:-}
HASHING_PRIORITY=${BENCH_HASHING_PRIORITY:-}
# The pair load starts this long before the verify measurement and ends this
# long after it, so the measurement sees the hashing pool saturated throughout.
PAIR_LEAD=3
# Before each phase, wait until the machine is quiet (CPU busy <= QUIET_MAX %
# over one second, our server idle) for at most QUIET_WAIT seconds; a phase
# that starts on a busy machine is flagged in the summary.
QUIET_MAX=15
QUIET_WAIT=${BENCH_QUIET_WAIT:-120}
THREADS=1
BASE="http://127.0.0.1:${PORT}"
BARE_BASE="http://127.0.0.1:$((PORT + 1))"
BEFORE_BASE="http://127.0.0.1:$((PORT + 2))"
ENGINE=$(bench_engine) || exit 2
# One secret for every contender: the bare handler checks the same tokens.
SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
LOG_LEVEL_DESC=${RUST_LOG:-"default (INFO: one line per request)"}
METRICS=${BENCH_METRICS:-}
case $METRICS in "") METRICS_DESC="the demo's default (on, if the binary has them)" ;; on) METRICS_DESC=on ;; off) METRICS_DESC=off ;; *) echo "BENCH_METRICS: on or off" >&2; exit 2 ;; esac

case " $PHASES " in *" throughput "* | *" latency "* | *" bare "*) ;; *) echo "BENCH_PHASES: throughput, latency and/or bare" >&2; exit 2 ;; esac
case $HASHING_PRIORITY in "" | nice | idle) ;; *) echo "BENCH_HASHING_PRIORITY: nice or idle" >&2; exit 2 ;; esac

OUT="bench/out/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- database ----------------------------------------------------------------

# DATABASE_URL serves the binary under test, BASE_DATABASE_URL the base
# binary. SQLite: fresh files (`credencial demo` takes an instance lock on
# its file, and a run must not inherit another run's rows), removed on exit.
SQLITE_FILES=()
if [[ $ENGINE == sqlite ]]; then
    if [[ ${DATABASE_URL:-} == sqlite:* ]]; then
        DB_FILE=$(sqlite_path "$DATABASE_URL")
    else
        DB_FILE=$OUT/credencial.db
    fi
    BASE_DB_FILE=${DB_FILE%.db}-base.db
    for f in "$DB_FILE" "$BASE_DB_FILE"; do
        [[ ! -e $f ]] || die "$f exists; the benchmark needs a fresh SQLite file (remove it with its -wal, -shm, .lock and -access-log* files, or leave DATABASE_URL unset)"
    done
    SQLITE_FILES=("$DB_FILE" "$BASE_DB_FILE")
    DATABASE_URL=sqlite://$DB_FILE
    BASE_DATABASE_URL=sqlite://$BASE_DB_FILE
    DB_DESC="SQLite, a fresh file ($DB_FILE)"
else
    case ${DATABASE_URL:-} in postgres:* | postgresql:*) ;; *) DATABASE_URL=postgres://postgres@127.0.0.1:5432/credencial_bench ;; esac
    BASE_DATABASE_URL=${DATABASE_URL}_base
    DB_DESC="PostgreSQL, database ${DATABASE_URL##*/}"
fi
export DATABASE_URL

# --- tools -------------------------------------------------------------------

install_packages() {
    local runner=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || die "need root (or sudo) to install: $*"
        runner=(sudo)
    fi
    command -v apt-get >/dev/null || die "no apt-get here; install $* by hand"
    log "installing $* (apt-get)"
    "${runner[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${runner[@]}" apt-get install -y -qq "$@" >/dev/null
}

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v curl >/dev/null || missing+=(curl)
((${#missing[@]} == 0)) || install_packages "${missing[@]}"
{ wrk --version 2>&1 || true; } | grep -q "^wrk" || die "wrk does not run"
WRK_VERSION=$({ wrk --version 2>&1 || true; } | head -n1 | cut -d' ' -f1-2)

# --- server ------------------------------------------------------------------

SERVER_PID=""
BARE_PID=""
BEFORE_PID=""
BG_PIDS=()
stop_server() {
    local pid=$1
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    local pid
    for pid in "${BG_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    stop_server "$SERVER_PID"
    stop_server "$BARE_PID"
    stop_server "$BEFORE_PID"
    rm -f "$OUT/credencial" "$OUT/credencial-base" "$OUT/bench-bare" "$OUT/.times"
    for f in "${SQLITE_FILES[@]}"; do sqlite_remove "$f"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$BENCH_BIN
elif [[ -z ${BENCH_SKIP_BUILD:-} ]]; then
    log "building the release binary"
    cargo build --release --bin credencial
    BIN=target/release/credencial
else
    BIN=target/release/credencial
fi
[[ -x $BIN ]] || die "$BIN is missing"
if [[ " $PHASES " == *" bare "* ]]; then
    if [[ -z ${BENCH_SKIP_BUILD:-} ]]; then
        log "building the bare contender (bench/bare)"
        cargo build --release -p bench-bare
    fi
    [[ -x target/release/bench-bare ]] || die "target/release/bench-bare is missing"
    cp target/release/bench-bare "$OUT/bench-bare"
    if [[ -n $BASE_BIN ]]; then
        [[ -x $BASE_BIN ]] || die "BENCH_BASE_BIN: $BASE_BIN is missing"
        cp "$BASE_BIN" "$OUT/credencial-base"
    fi
fi
# Keep a copy for the whole run, so a rebuild meanwhile cannot swap it.
cp "$BIN" "$OUT/credencial"
BIN_NAME=$BIN
BIN=$OUT/credencial
if [[ -n ${BENCH_BIN:-} ]]; then
    BIN_DESC="$BIN_NAME${BENCH_BIN_REVISION:+, revision $BENCH_BIN_REVISION}"
else
    BIN_DESC="$BIN_NAME, revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [[ -n $(git status --porcelain --untracked-files=no -- crates src Cargo.toml Cargo.lock 2>/dev/null) ]]; then
        BIN_DESC="$BIN_DESC + uncommitted changes"
    fi
fi

for base in "$BASE" "$BARE_BASE" "$BEFORE_BASE"; do
    if curl -s -o /dev/null --max-time 1 "$base/healthz"; then
        die "something already answers on $base; stop it or set BENCH_PORT"
    fi
done

# start_demo BIN PORT DATABASE_URL LOG [METRICS]: `credencial demo`, in the
# background (its pid in STARTED_PID); METRICS (on/off), when given, is its
# SERVICE_METRICS_ENABLED. The log is opened for appending, so that it can
# be emptied while the server writes (empty_logs).
start_demo() {
    local env=(SERVICE_BIND="127.0.0.1:$2" SERVICE_BENCH_NOOP_ROUTE=true SERVICE_JWT_SECRET="$SECRET" DATABASE_URL="$3")
    if [[ -n ${RUST_LOG+set} ]]; then env+=(RUST_LOG="$RUST_LOG"); fi
    case ${5:-} in on) env+=(SERVICE_METRICS_ENABLED=true) ;; off) env+=(SERVICE_METRICS_ENABLED=false) ;; esac
    env -u RUST_LOG "${env[@]}" "$1" demo >>"$4" 2>&1 &
    STARTED_PID=$!
}
: >"$OUT/server.log"
log "starting $BIN_NAME demo on 127.0.0.1:$PORT (database: $(engine_name "$ENGINE") ${DATABASE_URL##*/}, log level: $LOG_LEVEL_DESC, metrics: $METRICS_DESC)"
start_demo "$BIN" "$PORT" "$DATABASE_URL" "$OUT/server.log" "$METRICS"
SERVER_PID=$STARTED_PID

# Readiness: the first start creates, migrates and seeds the database, which
# hashes two passwords.
wait_until_serving "$BASE" "$SERVER_PID" "$OUT/server.log" 120 || die "the server did not start"
log "server ready (pid $SERVER_PID)"
if [[ " $PHASES " == *" bare "* ]]; then
    : >"$OUT/bare.log"
    env BARE_BIND="127.0.0.1:$((PORT + 1))" BARE_JWT_SECRET="$SECRET" ${SERVICE_WORKERS:+BARE_WORKERS=$SERVICE_WORKERS} \
        "$OUT/bench-bare" >>"$OUT/bare.log" 2>&1 &
    BARE_PID=$!
    wait_until_serving "$BARE_BASE" "$BARE_PID" "$OUT/bare.log" 30 || die "the bare contender did not start"
    log "bare contender ready (pid $BARE_PID)"
    if [[ -n $BASE_BIN ]]; then
        : >"$OUT/server-base.log"
        log "starting the base binary $BASE_BIN on 127.0.0.1:$((PORT + 2)) (database: $(engine_name "$ENGINE") ${BASE_DATABASE_URL##*/})"
        start_demo "$OUT/credencial-base" "$((PORT + 2))" "$BASE_DATABASE_URL" "$OUT/server-base.log"
        BEFORE_PID=$STARTED_PID
        wait_until_serving "$BEFORE_BASE" "$BEFORE_PID" "$OUT/server-base.log" 120 || die "the base binary did not start"
        log "base binary ready (pid $BEFORE_PID)"
    fi
fi
# The start-up lines are kept; the request lines of each measurement replace
# the previous ones.
for f in server server-base; do
    [[ -e $OUT/$f.log ]] && cp "$OUT/$f.log" "$OUT/$f-start.log"
done
empty_logs() {
    local f
    for f in server server-base; do
        if [[ -e $OUT/$f.log ]]; then : >"$OUT/$f.log"; fi
    done
}

# The server's threads at start: the main runtime's workers. Tokio threads
# created later by the request workers' spawn_blocking are the hashing threads.
STARTUP_TIDS=" $(ls "/proc/$SERVER_PID/task" | tr '\n' ' ') "

# A fresh access token (they live 5 minutes by default, so every phase takes
# a new one rather than relying on the run being short), checked once.
# new_token [BASE]: from the server at BASE (default: the one under test).
new_token() {
    local base=${1:-$BASE} answer token status
    answer=$(curl -sf --max-time 30 -H 'Content-Type: application/json' \
        -d '{"username":"ana","password":"ana-demo-2026"}' "$base/api/token/pair/") \
        || die "pair failed"
    token=$(sed -n 's/.*"access":"\([^"]*\)".*/\1/p' <<<"$answer")
    [[ -n $token ]] || die "no access token in the pair answer: $answer"
    status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
        -d "{\"token\":\"$token\"}" "$base/api/token/verify/")
    [[ $status == 200 ]] || die "verify of a fresh token answered $status"
    printf '%s' "$token"
}

# --- measurement helpers -----------------------------------------------------

CLK_TCK=$(getconf CLK_TCK)
# CPU ticks (user + system) the server (TICKS_PID, default the server under
# test) has used so far.
server_ticks() { awk '{print $14 + $15}' "/proc/${TICKS_PID:-$SERVER_PID}/stat"; }

# Machine-wide CPU busy percentage over one second.
cpu_busy_pct() {
    local a b
    a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%d", 100 * (y[1] - x[1]) / (y[2] - x[2]) }'
}

# wait_quiet PHASE: wait (bounded) for other work on the machine to stop.
NOISY=()
wait_quiet() {
    local busy deadline=$((SECONDS + QUIET_WAIT))
    while busy=$(cpu_busy_pct); ((busy > QUIET_MAX)); do
        if ((SECONDS >= deadline)); then
            log "warning: the machine is still ${busy}% busy; measuring $1 anyway"
            NOISY+=("$1 (${busy}% busy)")
            return
        fi
        log "machine ${busy}% busy (other processes?); waiting before $1"
    done
}

# CPU used on the machine by anything but the server and our wrk processes
# during a measurement (in cores): another build or test run on the machine
# shows up here. (During the pair phases it also holds PostgreSQL's share of
# the pair requests, which is small.)
machine_busy_ticks() { awk '/^cpu / { print $2+$3+$4+$7+$8+$9 }' /proc/stat; }
# CPU seconds of this shell's waited-for children (the foreground wrk runs),
# into CHILD_SECS; `times` must run in this shell, not in a $(…) subshell.
children_secs() {
    times >"$OUT/.times"
    CHILD_SECS=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + substr(a[2], 1, length(a[2]) - 1) } printf "%.3f", t }' "$OUT/.times")
}
pid_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# other_begin [PID] … other_end [PID]: around a measurement; PID is a wrk
# running in the background meanwhile. other_end sets OTHER (cores).
other_begin() {
    children_secs
    O_C=$CHILD_SECS O_T=$(date +%s.%N) O_M=$(machine_busy_ticks) O_S=$(server_ticks) O_P=$(pid_ticks "${1:-0}")
}
other_end() {
    local t m s p
    t=$(date +%s.%N) m=$(machine_busy_ticks) s=$(server_ticks) p=$(pid_ticks "${1:-0}")
    children_secs
    OTHER=$(calc "(($m - $O_M) / $CLK_TCK - ($s - $O_S) / $CLK_TCK - ($CHILD_SECS - $O_C) - ($p - $O_P) / $CLK_TCK) / ($t - $O_T)")
}
OTHER_MAX=${BENCH_OTHER_MAX:-0.15}
DISTURBED=()

# field FILE KEY: a value from the BENCH_RESULT line of a wrk output.
field() {
    awk -v k="$2" '/^BENCH_RESULT/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"
}

# Fails the run if a wrk output shows any error or non-2xx answer.
check_clean() {
    local f=$1 k v
    grep -q '^BENCH_RESULT' "$f" || die "no result in $f"
    for k in errors_connect errors_read errors_write errors_status errors_timeout; do
        v=$(field "$f" "$k")
        [[ $v == 0 ]] || die "$f: $k=$v (see the file)"
    done
}

# wrk_run NAME SCRIPT PATH CONNECTIONS SECONDS [wrk options…]; WRK_BASE
# (default: the server under test) picks the server.
wrk_run() {
    local name=$1 script=$2 path=$3 conns=$4 secs=$5
    shift 5
    empty_logs
    wrk -t"$THREADS" -c"$conns" -d"${secs}s" --latency "$@" -s "bench/$script" "${WRK_BASE:-$BASE}$path" >"$OUT/$name.txt"
}

# calc EXPR: floating-point arithmetic.
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

# mean_of ARRAY PREFIX / median_of ARRAY PREFIX: over ARRAY[PREFIX-1..ROUNDS].
mean_of() {
    local -n arr=$1
    local r
    for r in $(seq "$ROUNDS"); do echo "${arr[$2-$r]}"; done | awk '{ s += $1 } END { printf "%.3f", s / NR }'
}
median_of() {
    local -n arr=$1
    local r
    for r in $(seq "$ROUNDS"); do echo "${arr[$2-$r]}"; done | sort -g |
        awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Experiment only: lower the priority of the hashing threads (tokio threads
# created after start-up) every half second until killed.
deprioritise_hashing() {
    local tid comm
    while kill -0 "$SERVER_PID" 2>/dev/null; do
        for tid in $(ls "/proc/$SERVER_PID/task" 2>/dev/null); do
            [[ $STARTUP_TIDS == *" $tid "* ]] && continue
            comm=$(cat "/proc/$SERVER_PID/task/$tid/comm" 2>/dev/null) || continue
            [[ $comm == tokio-* ]] || continue
            if [[ $HASHING_PRIORITY == idle ]]; then
                chrt --idle -p 0 "$tid" >/dev/null 2>&1 || true
            else
                renice -n 19 -p "$tid" >/dev/null 2>&1 || true
            fi
        done
        sleep 0.5
    done
}

# --- 1. warm-up --------------------------------------------------------------

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
wait_quiet warm-up
BENCH_TOKEN=$(new_token)
export BENCH_TOKEN
log "warm-up: ${WARMUP} s noop, ${WARMUP} s verify"
wrk_run warmup-noop noop.lua /_noop/ "$CONNECTIONS" "$WARMUP"
wrk_run warmup-verify verify.lua /api/token/verify/ "$CONNECTIONS" "$WARMUP"
check_clean "$OUT/warmup-verify.txt"
if [[ -n $BARE_PID ]]; then
    log "warm-up: ${WARMUP} s bare"
    WRK_BASE=$BARE_BASE wrk_run warmup-bare verify.lua /api/token/verify/ "$CONNECTIONS" "$WARMUP"
    check_clean "$OUT/warmup-bare.txt"
fi
if [[ -n $BEFORE_PID ]]; then
    log "warm-up: ${WARMUP} s base"
    BENCH_TOKEN=$(new_token "$BEFORE_BASE") WRK_BASE=$BEFORE_BASE \
        wrk_run warmup-base verify.lua /api/token/verify/ "$CONNECTIONS" "$WARMUP"
    check_clean "$OUT/warmup-base.txt"
fi

# A round disturbed by other processes (> OTHER_MAX cores of someone else's
# CPU during one of its measurements) is measured again, up to MAX_ATTEMPTS
# times; its raw files are kept with a ".disturbed-N" suffix.
MAX_ATTEMPTS=3
REPEATED=0

# run_round KIND R: measure round R of KIND (throughput or latency).
run_round() {
    local kind=$1 r=$2 attempt f files
    for attempt in $(seq "$MAX_ATTEMPTS"); do
        ROUND_NOTES=()
        "${kind}_round" "$r"
        ((${#ROUND_NOTES[@]} == 0)) && return
        if ((attempt < MAX_ATTEMPTS)); then
            log "$kind round $r was disturbed by other processes; measuring it again"
            REPEATED=$((REPEATED + 1))
            if [[ $kind == throughput ]]; then
                files=("$OUT"/tput-*-"$r".txt)
            else
                files=("$OUT"/lat-*-"$r".txt "$OUT/pairload-$r.txt")
            fi
            for f in "${files[@]}"; do
                [[ -e $f ]] && mv "$f" "$f.disturbed-$attempt"
            done
        fi
    done
    DISTURBED+=("${ROUND_NOTES[@]}")
}

# note_other PHASE CORES: flag a measurement disturbed by other processes.
note_other() {
    if awk "BEGIN { exit !($2 > $OTHER_MAX) }"; then
        log "warning: other processes used $2 cores during $1"
        ROUND_NOTES+=("$1 ($2 cores)")
    fi
}

# --- 2. throughput: noop vs verify, alternating --------------------------------

declare -A RPS CPU_US TOTHER
throughput_round() {
    local r=$1 route path t0 t1 f
    for route in noop verify; do
        wait_quiet "throughput $route $r"
        BENCH_TOKEN=$(new_token)
        export BENCH_TOKEN
        if [[ $route == noop ]]; then path=/_noop/; else path=/api/token/verify/; fi
        log "throughput round $r: $route (${DURATION} s, -t$THREADS -c$CONNECTIONS)"
        t0=$(server_ticks)
        other_begin
        wrk_run "tput-$route-$r" "$route.lua" "$path" "$CONNECTIONS" "$DURATION"
        other_end
        t1=$(server_ticks)
        TOTHER[$route-$r]=$OTHER
        note_other "throughput $route $r" "$OTHER"
        f="$OUT/tput-$route-$r.txt"
        check_clean "$f"
        RPS[$route-$r]=$(field "$f" rps)
        # Server CPU time per request, in microseconds.
        CPU_US[$route-$r]=$(calc "($t1 - $t0) / $CLK_TCK * 1e6 / $(field "$f" requests)")
    done
}

if [[ " $PHASES " == *" throughput "* ]]; then
    for r in $(seq "$ROUNDS"); do run_round throughput "$r"; done
    NOOP_RPS=$(mean_of RPS noop)
    VERIFY_RPS=$(mean_of RPS verify)
    TPUT_RATIO=$(calc "$VERIFY_RPS / $NOOP_RPS")
fi

# --- 3. latency: idle vs under a concurrent pair load, alternating -----------

declare -A P50 P99 P999 LRPS LCPU LOTHER PAIR_RPS PAIR_P50
latency_round() {
    local r=$1 cond pair_pid prio_pid t0 t1 f
    for cond in idle pair; do
        wait_quiet "latency $cond $r"
        BENCH_TOKEN=$(new_token)
        export BENCH_TOKEN
        pair_pid="" prio_pid=""
        if [[ $cond == pair ]]; then
            log "latency round $r: pair load -t$THREADS -c$PAIR_CONNECTIONS for $((LAT_DURATION + 2 * PAIR_LEAD)) s"
            # wrk itself in the background (not a function: its pid is
            # wrk's); the pacing is for the verify connections only.
            BENCH_DELAY_MS=0 wrk -t"$THREADS" -c"$PAIR_CONNECTIONS" -d"$((LAT_DURATION + 2 * PAIR_LEAD))s" \
                --latency --timeout 60s -s bench/pair.lua "$BASE/api/token/pair/" >"$OUT/pairload-$r.txt" &
            pair_pid=$!
            BG_PIDS+=("$pair_pid")
            if [[ -n $HASHING_PRIORITY ]]; then
                deprioritise_hashing &
                prio_pid=$!
                BG_PIDS+=("$prio_pid")
            fi
            sleep "$PAIR_LEAD"
        fi
        log "latency round $r: verify $cond (${LAT_DURATION} s, -t$THREADS -c$LAT_CONNECTIONS, pause ${LAT_DELAY_MS} ms)"
        t0=$(server_ticks)
        other_begin "$pair_pid"
        wrk_run "lat-$cond-$r" verify.lua /api/token/verify/ "$LAT_CONNECTIONS" "$LAT_DURATION"
        other_end "$pair_pid"
        t1=$(server_ticks)
        LOTHER[$cond-$r]=$OTHER
        note_other "latency $cond $r" "$OTHER"
        f="$OUT/lat-$cond-$r.txt"
        check_clean "$f"
        P50[$cond-$r]=$(field "$f" p50_ms)
        P99[$cond-$r]=$(field "$f" p99_ms)
        P999[$cond-$r]=$(field "$f" p999_ms)
        LRPS[$cond-$r]=$(field "$f" rps)
        # Server CPU use during the measurement, in cores.
        LCPU[$cond-$r]=$(calc "($t1 - $t0) / $CLK_TCK / $(field "$f" duration_s)")
        if [[ -n $pair_pid ]]; then
            wait "$pair_pid" || die "the pair load failed"
            if [[ -n $prio_pid ]]; then
                kill "$prio_pid" 2>/dev/null || true
                wait "$prio_pid" 2>/dev/null || true
            fi
            BG_PIDS=()
            check_clean "$OUT/pairload-$r.txt"
            PAIR_RPS[$r]=$(field "$OUT/pairload-$r.txt" rps)
            PAIR_P50[$r]=$(field "$OUT/pairload-$r.txt" p50_ms)
        fi
    done
}

if [[ " $PHASES " == *" latency "* ]]; then
    export BENCH_DELAY_MS=$LAT_DELAY_MS
    for r in $(seq "$ROUNDS"); do run_round latency "$r"; done
    IDLE_P99=$(median_of P99 idle)
    PAIR_P99=$(median_of P99 pair)
    LAT_RATIO=$(calc "$PAIR_P99 / $IDLE_P99")
fi

# --- 4. bare: verify vs the bare handler (and the base binary), interleaved -

# Contenders: the bare handler, the server under test (verify) and, with
# BENCH_BASE_BIN, the base binary; each round measures them one after the
# other at every connection count, in an order that rotates with the round.
CONTENDERS=(bare verify)
if [[ -n $BASE_BIN ]]; then CONTENDERS=(bare verify base); fi
contender_url() { case $1 in bare) echo "$BARE_BASE" ;; verify) echo "$BASE" ;; base) echo "$BEFORE_BASE" ;; esac; }
contender_pid() { case $1 in bare) echo "$BARE_PID" ;; verify) echo "$SERVER_PID" ;; base) echo "$BEFORE_PID" ;; esac; }
declare -A BRPS BCPU BOTHER BP99
bare_round() {
    local r=$1 c i n=${#CONTENDERS[@]} who t0 t1 f
    for c in $BARE_CONNECTIONS; do
        for i in $(seq 0 $((n - 1))); do
            who=${CONTENDERS[$(((i + r - 1) % n))]}
            wait_quiet "bare $who c$c $r"
            if [[ $who == base ]]; then BENCH_TOKEN=$(new_token "$BEFORE_BASE"); else BENCH_TOKEN=$(new_token); fi
            export BENCH_TOKEN
            log "bare round $r: $who (${DURATION} s, -t$THREADS -c$c)"
            TICKS_PID=$(contender_pid "$who")
            t0=$(server_ticks)
            other_begin
            WRK_BASE=$(contender_url "$who") wrk_run "bare-$who-c$c-$r" verify.lua /api/token/verify/ "$c" "$DURATION"
            other_end
            t1=$(server_ticks)
            TICKS_PID=""
            f="$OUT/bare-$who-c$c-$r.txt"
            check_clean "$f"
            BRPS[$who-$c-$r]=$(field "$f" rps)
            BP99[$who-$c-$r]=$(field "$f" p99_ms)
            BOTHER[$who-$c-$r]=$OTHER
            BCPU[$who-$c-$r]=$(calc "($t1 - $t0) / $CLK_TCK * 1e6 / $(field "$f" requests)")
        done
    done
}
# bmean KIND WHO CONNS: mean of BRPS/BCPU/… over the rounds.
bmean() {
    local -n arr=$1
    local r
    for r in $(seq "$ROUNDS"); do echo "${arr[$2-$3-$r]}"; done | awk '{ s += $1 } END { printf "%.3f", s / NR }'
}
if [[ " $PHASES " == *" bare "* ]]; then
    for r in $(seq "$ROUNDS"); do bare_round "$r"; done
    declare -A BARE_RATIO BASE_RATIO
    for c in $BARE_CONNECTIONS; do
        BARE_RATIO[$c]=$(calc "$(bmean BRPS verify "$c") / $(bmean BRPS bare "$c")")
        if [[ -n $BASE_BIN ]]; then BASE_RATIO[$c]=$(calc "$(bmean BRPS base "$c") / $(bmean BRPS bare "$c")"); fi
    done
fi
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- summary -----------------------------------------------------------------

verdict() { if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "**NOT met**"; fi; }

{
    echo "## credencial benchmark — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), Linux $(uname -r); client and server share the cores."
    echo "- Server: \`credencial demo\` (release, $BIN_DESC), SERVICE_WORKERS=${SERVICE_WORKERS:-default}," \
        "SERVICE_HASHING_THREADS=${SERVICE_HASHING_THREADS:-default}," \
        "SERVICE_PASSWORD_ITERATIONS=${SERVICE_PASSWORD_ITERATIONS:-default}," \
        "log level: $LOG_LEVEL_DESC, to a file; metrics: $METRICS_DESC${HASHING_PRIORITY:+; experiment: hashing threads at \"$HASHING_PRIORITY\" OS priority during the pair phases}."
    echo "- Storage: $DB_DESC${BASE_BIN:+ (the base binary on its own database of the same engine)}."
    if [[ -n $BARE_PID ]]; then
        echo "- Bare contender: \`bench/bare\` (actix-web + jsonwebtoken, same secret, claims and body, no middleware, no log)${BASE_BIN:+; base binary: \`$BASE_BIN\`${BENCH_BASE_REVISION:+, revision $BENCH_BASE_REVISION}, \`credencial demo\` at the same log level on its own database}."
    fi
    echo "- Load average (1, 5, 15 min): $LOADAVG_START at the start, $LOADAVG_END at the end."
    echo "- Load: $WRK_VERSION; throughput -t$THREADS -c$CONNECTIONS, ${DURATION} s per phase;" \
        "latency -t$THREADS -c$LAT_CONNECTIONS with a ${LAT_DELAY_MS} ms pause per connection between requests, ${LAT_DURATION} s per phase;" \
        "pair load -t$THREADS -c$PAIR_CONNECTIONS; $ROUNDS round(s), alternating."
    if ((${#NOISY[@]} > 0)); then
        echo "- Note: the machine was not quiet within ${QUIET_WAIT} s before: ${NOISY[*]} (what counts is the other-CPU check during each measurement)."
    fi
    if ((${#DISTURBED[@]} > 0)); then
        echo "- **Warning**: other processes used more than $OTHER_MAX cores during: ${DISTURBED[*]}, even after $MAX_ATTEMPTS attempts; rerun on a quiet machine."
    fi
    if ((REPEATED > 0)); then
        echo "- $REPEATED round(s) were measured again because other processes used more than $OTHER_MAX cores meanwhile (raw files *.disturbed-N)."
    fi
    if [[ " $PHASES " == *" throughput "* ]]; then
        echo
        echo "### Throughput: verify vs the no-op route (same run, alternating)"
        echo
        echo "| round | noop rps | verify rps | verify / noop | noop server CPU µs/req | verify server CPU µs/req | other CPU (cores) noop / verify |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for r in $(seq "$ROUNDS"); do
            echo "| $r | ${RPS[noop-$r]} | ${RPS[verify-$r]} | $(calc "${RPS[verify-$r]} / ${RPS[noop-$r]}") | ${CPU_US[noop-$r]} | ${CPU_US[verify-$r]} | ${TOTHER[noop-$r]} / ${TOTHER[verify-$r]} |"
        done
        echo "| **mean** | **$(printf '%.0f' "$NOOP_RPS")** | **$(printf '%.0f' "$VERIFY_RPS")** | **$TPUT_RATIO** | $(mean_of CPU_US noop) | $(mean_of CPU_US verify) | |"
        echo
        echo "Server CPU per request, verify / noop: $(calc "$(mean_of CPU_US verify) / $(mean_of CPU_US noop)") (the inverse is the rps ratio a server-bound machine would show)."
    fi
    if [[ " $PHASES " == *" latency "* ]]; then
        echo
        echo "### Verify latency: idle vs under a concurrent pair load (alternating)"
        echo
        echo "| round | load | verify rps | p50 ms | p99 ms | p99.9 ms | p99 / idle p99 | server CPU (cores) | other CPU (cores) | pair rps | pair p50 ms |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        met_rounds=0
        for r in $(seq "$ROUNDS"); do
            rr=$(calc "${P99[pair-$r]} / ${P99[idle-$r]}")
            if awk "BEGIN { exit !($rr <= 2.0) }"; then met_rounds=$((met_rounds + 1)); fi
            echo "| $r | idle | ${LRPS[idle-$r]} | ${P50[idle-$r]} | ${P99[idle-$r]} | ${P999[idle-$r]} | | ${LCPU[idle-$r]} | ${LOTHER[idle-$r]} | | |"
            echo "| $r | pair | ${LRPS[pair-$r]} | ${P50[pair-$r]} | ${P99[pair-$r]} | ${P999[pair-$r]} | $rr | ${LCPU[pair-$r]} | ${LOTHER[pair-$r]} | ${PAIR_RPS[$r]} | ${PAIR_P50[$r]} |"
        done
        echo
        echo "Median over rounds: p99 idle **$IDLE_P99 ms**, p99 under pair **$PAIR_P99 ms**" \
            "(p50 $(median_of P50 idle) / $(median_of P50 pair) ms); mean p99 $(mean_of P99 idle) / $(mean_of P99 pair) ms" \
            "($(calc "$(mean_of P99 pair) / $(mean_of P99 idle)") ×). Rounds within 2 × their idle p99: $met_rounds of $ROUNDS."
    fi
    if [[ " $PHASES " == *" bare "* ]]; then
        echo
        echo "### Verify vs the bare handler (same run, interleaved)"
        echo
        if [[ -n $BASE_BIN ]]; then
            echo "| connections | round | bare rps | verify rps | base rps | verify / bare | base / bare | server CPU µs/req bare / verify / base | other CPU (cores) bare / verify / base |"
            echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
        else
            echo "| connections | round | bare rps | verify rps | verify / bare | server CPU µs/req bare / verify | other CPU (cores) bare / verify |"
            echo "|---:|---|---:|---:|---:|---:|---:|"
        fi
        for c in $BARE_CONNECTIONS; do
            for r in $(seq "$ROUNDS"); do
                if [[ -n $BASE_BIN ]]; then
                    echo "| $c | $r | ${BRPS[bare-$c-$r]} | ${BRPS[verify-$c-$r]} | ${BRPS[base-$c-$r]} | $(calc "${BRPS[verify-$c-$r]} / ${BRPS[bare-$c-$r]}") | $(calc "${BRPS[base-$c-$r]} / ${BRPS[bare-$c-$r]}") | ${BCPU[bare-$c-$r]} / ${BCPU[verify-$c-$r]} / ${BCPU[base-$c-$r]} | ${BOTHER[bare-$c-$r]} / ${BOTHER[verify-$c-$r]} / ${BOTHER[base-$c-$r]} |"
                else
                    echo "| $c | $r | ${BRPS[bare-$c-$r]} | ${BRPS[verify-$c-$r]} | $(calc "${BRPS[verify-$c-$r]} / ${BRPS[bare-$c-$r]}") | ${BCPU[bare-$c-$r]} / ${BCPU[verify-$c-$r]} | ${BOTHER[bare-$c-$r]} / ${BOTHER[verify-$c-$r]} |"
                fi
            done
            if [[ -n $BASE_BIN ]]; then
                echo "| $c | **mean** | **$(printf '%.0f' "$(bmean BRPS bare "$c")")** | **$(printf '%.0f' "$(bmean BRPS verify "$c")")** | **$(printf '%.0f' "$(bmean BRPS base "$c")")** | **${BARE_RATIO[$c]}** | **${BASE_RATIO[$c]}** | $(bmean BCPU bare "$c") / $(bmean BCPU verify "$c") / $(bmean BCPU base "$c") | |"
            else
                echo "| $c | **mean** | **$(printf '%.0f' "$(bmean BRPS bare "$c")")** | **$(printf '%.0f' "$(bmean BRPS verify "$c")")** | **${BARE_RATIO[$c]}** | $(bmean BCPU bare "$c") / $(bmean BCPU verify "$c") | |"
            fi
        done
        echo
        echo "Ratios of the mean rps over the rounds. Server CPU per request is the server's own CPU time (/proc) over the requests wrk counted: bare / verify is the rps ratio a server-bound machine would show."
    fi
    echo
    echo "### Targets"
    echo
    echo "| target | measured | verdict |"
    echo "|---|---:|---|"
    if [[ " $PHASES " == *" throughput "* ]]; then
        echo "| verify rps ≥ 0.8 × noop rps | $TPUT_RATIO × | $(verdict "$TPUT_RATIO >= 0.8") |"
    fi
    if [[ " $PHASES " == *" latency "* ]]; then
        echo "| verify p99 under pair ≤ 2 × idle p99 (medians over rounds) | $LAT_RATIO × | $(verdict "$LAT_RATIO <= 2.0") ($met_rounds of $ROUNDS rounds) |"
    fi
    if [[ " $PHASES " == *" bare "* ]]; then
        for c in $BARE_CONNECTIONS; do
            echo "| verify rps ≥ 0.9 × bare rps, $c connections | ${BARE_RATIO[$c]} ×${BASE_BIN:+ (base: ${BASE_RATIO[$c]} ×)} | $(verdict "${BARE_RATIO[$c]} >= 0.9") |"
        done
    fi
} | tee "$OUT/summary.md"

log "raw outputs in $OUT"
