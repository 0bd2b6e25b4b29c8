#!/usr/bin/env bash
# Requests per second of an authenticated account page (`GET /conta/`, the
# person's overview: the session read, then the account's data) for one or
# two release binaries of credencial, in one run (see docs/performance.md):
# each binary runs `demo` (its SQLite file in a fresh directory) on its own
# port, ana logs in once with curl, then wrk sends her session cookie,
# alternating the binaries for BENCH_ROUNDS rounds. With BENCH_BASE_BIN (a
# build of an earlier revision: "before"), the summary gives the ratio.
#
# Usage: BENCH_BASE_BIN=/path/to/old/credencial bash bench/account_page.sh
# Knobs: BENCH_ROUNDS (3), BENCH_DURATION (10 s), BENCH_CONNECTIONS (8).
# Every load is bounded in time; the servers stop on exit. Output:
# bench/out/account-<timestamp>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BIN=${CREDENCIAL_BIN:-${CARGO_TARGET_DIR:-target}/release/credencial}
BASE_BIN=${BENCH_BASE_BIN:-}
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-8}
OUT_DIR=bench/out/account-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT_DIR"
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
[[ -x $BIN ]] || { echo "$BIN is missing: cargo build --release" >&2; exit 1; }

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# serve NAME BINARY PORT: runs the demo in its own directory until exit.
serve() {
    local name=$1 bin port=$3 dir="$OUT_DIR/$1"
    bin=$(realpath "$2") # before the cd below: the path may be relative
    mkdir -p "$dir"
    (cd "$dir" && exec env -u DATABASE_URL SERVICE_BIND="127.0.0.1:$port" RUST_LOG=warn \
        SERVICE_JWT_SECRET=bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz \
        "$bin" demo) </dev/null >"$dir/server.log" 2>&1 &
    PIDS+=($!)
    wait_until_serving "http://127.0.0.1:$port" "$!" "$dir/server.log" 120
}

# session NAME PORT: logs ana in with curl; prints her session cookie.
session() {
    local name=$1 port=$2 jar="$OUT_DIR/$1/cookies" form token cookie
    form=$(curl -s -c "$jar" "http://127.0.0.1:$port/conta/entrar/")
    token=$(grep -o 'name="csrf_token" value="[^"]*"' <<<"$form" | head -1 | sed 's/.*value="//; s/"$//')
    curl -s -o /dev/null -b "$jar" -c "$jar" "http://127.0.0.1:$port/conta/entrar/" \
        --data-urlencode "csrf_token=$token" --data-urlencode next=/conta/ \
        --data-urlencode username=ana --data-urlencode password=ana-demo-2026
    cookie=$(awk '$6 == "credencial_session" { print $6 "=" $7 }' "$jar")
    [[ -n $cookie ]] || { echo "$name: no session cookie after the login" >&2; return 1; }
    [[ $(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "http://127.0.0.1:$port/conta/") == 200 ]] ||
        { echo "$name: the cookie does not open /conta/" >&2; return 1; }
    echo "$cookie"
}

rps() { # NAME PORT COOKIE ROUND
    local out="$OUT_DIR/$1-$4.txt"
    timeout $((DURATION + 10)) wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -H "Cookie: $3" \
        "http://127.0.0.1:$2/conta/" >"$out"
    grep -q "Non-2xx" "$out" && { echo "$1: non-2xx answers (see $out)" >&2; exit 1; }
    awk '/Requests\/sec/ { print $2 }' "$out"
}

serve head "$BIN" 18100
NEW_COOKIE=$(session head 18100)
if [[ -n $BASE_BIN ]]; then
    serve base "$BASE_BIN" 18101
    BASE_COOKIE=$(session base 18101)
fi
timeout 20 wrk -t1 -c"$CONNECTIONS" -d5s -H "Cookie: $NEW_COOKIE" http://127.0.0.1:18100/conta/ >/dev/null
if [[ -n $BASE_BIN ]]; then
    timeout 20 wrk -t1 -c"$CONNECTIONS" -d5s -H "Cookie: $BASE_COOKIE" http://127.0.0.1:18101/conta/ >/dev/null
fi

{
    echo "| round | this build rps |${BASE_BIN:+ base rps | ratio |}"
    echo "|---|---|${BASE_BIN:+---|---|}"
    for round in $(seq 1 "$ROUNDS"); do
        new=$(rps head 18100 "$NEW_COOKIE" "$round")
        if [[ -n $BASE_BIN ]]; then
            old=$(rps base 18101 "$BASE_COOKIE" "$round")
            echo "| $round | $new | $old | $(awk -v a="$new" -v b="$old" 'BEGIN { printf "%.3f", a / b }') |"
        else
            echo "| $round | $new |"
        fi
    done
} | tee "$OUT_DIR/summary.md"
