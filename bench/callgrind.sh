#!/usr/bin/env bash
# Instructions per request of one route, counted by callgrind (valgrind):
# deterministic where wall-clock figures on a shared 2-core machine are not,
# so it is the development loop's measure (docs/performance.md). The whole
# server process is counted (request workers, the log writer thread, …), in
# user space only (the kernel's share of a write or a socket is not).
#
#   `credencial demo` (or the bare contender) under callgrind with
#   instrumentation off, one request worker; a pause-free wrk -c1 warm-up;
#   instrumentation on; wrk -c1 for CG_DURATION seconds; dump; the total
#   instructions over the requests wrk counted.
#
# Usage: bash bench/callgrind.sh BIN [verify|noop] [LABEL]
#   BIN: a credencial release binary, or bench-bare's (then verify only)
# Knobs: CG_PORT (18200), CG_DURATION (15), CG_WARMUP (3), RUST_LOG (passed
# when set; unset: the service's default level), DATABASE_URL
# (postgres://postgres@127.0.0.1:5432/credencial_callgrind).
# Output: bench/out/<timestamp>-callgrind-<label>/ (callgrind.out for
# callgrind_annotate, wrk output, server log, result line).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

BIN=${1:?usage: bench/callgrind.sh BIN [verify|noop] [LABEL]}
ROUTE=${2:-verify}
LABEL=${3:-$(basename "$BIN")-$ROUTE}
PORT=${CG_PORT:-18200}
DURATION=${CG_DURATION:-15}
WARMUP=${CG_WARMUP:-3}
BASE="http://127.0.0.1:${PORT}"
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/credencial_callgrind}
OUT="bench/out/$(date +%Y%m%d-%H%M%S)-callgrind-$LABEL"
mkdir -p "$OUT"
SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
case $ROUTE in verify) path=/api/token/verify/ ;; noop) path=/_noop/ ;; *) echo "route: verify or noop" >&2; exit 2 ;; esac

bare=""
[[ $(basename "$BIN") == bench-bare ]] && bare=1
vg=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$OUT/callgrind.out")
if [[ -n $bare ]]; then
    env BARE_BIND="127.0.0.1:$PORT" BARE_JWT_SECRET="$SECRET" BARE_WORKERS=1 "${vg[@]}" "$BIN" >"$OUT/server.log" 2>&1 &
else
    env SERVICE_BIND="127.0.0.1:$PORT" SERVICE_WORKERS=1 SERVICE_BENCH_NOOP_ROUTE=true SERVICE_JWT_SECRET="$SECRET" \
        SERVICE_PASSWORD_ITERATIONS=1000 "${vg[@]}" "$BIN" demo >"$OUT/server.log" 2>&1 &
fi
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
wait_until_serving "$BASE" "$PID" "$OUT/server.log" 300 || exit 1

# A token: from the server itself, or (bare) minted with the secret.
if [[ -n $bare ]]; then
    BENCH_TOKEN=$(SECRET=$SECRET python3 - <<'PY'
import base64, hashlib, hmac, json, os, time, uuid
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
now = int(time.time())
claims = {"token_type": "access", "exp": now + 3600, "iat": now, "jti": uuid.uuid4().hex, "user_id": 1}
head = b64(json.dumps({"typ": "JWT", "alg": "HS256"}).encode()) + "." + b64(json.dumps(claims).encode())
print(head + "." + b64(hmac.new(os.environ["SECRET"].encode(), head.encode(), hashlib.sha256).digest()))
PY
)
else
    BENCH_TOKEN=$(curl -sf --max-time 60 -H 'Content-Type: application/json' \
        -d '{"username":"ana","password":"ana-demo-2026"}' "$BASE/api/token/pair/" | sed -n 's/.*"access":"\([^"]*\)".*/\1/p')
fi
[[ -n $BENCH_TOKEN ]] || { echo "no token" >&2; exit 1; }
export BENCH_TOKEN
wrk -t1 -c1 -d"${WARMUP}s" -s "bench/$ROUTE.lua" "$BASE$path" >"$OUT/warmup.txt"
callgrind_control -i on "$PID" >/dev/null
wrk -t1 -c1 -d"${DURATION}s" -s "bench/$ROUTE.lua" "$BASE$path" >"$OUT/wrk.txt"
callgrind_control -i off "$PID" >/dev/null
callgrind_control -d "$PID" >/dev/null
requests=$(sed -n 's/^BENCH_RESULT requests=\([0-9]*\).*/\1/p' "$OUT/wrk.txt")
grep -q 'errors_status=0 ' "$OUT/wrk.txt" || { echo "non-2xx answers: $OUT/wrk.txt" >&2; exit 1; }
# The dump is written per thread part; sum every file's totals.
total=$(cat "$OUT"/callgrind.out* | awk '/^totals:/ { s += $2 } END { print s }')
result="$LABEL $ROUTE RUST_LOG=${RUST_LOG:-default}: $requests requests, $total instructions, $(awk -v t="$total" -v r="$requests" 'BEGIN { printf "%.0f", t / r }') per request"
echo "$result" | tee "$OUT/result.txt"
