#!/usr/bin/env bash
# Tokens per second of the client_credentials grant (`POST /oauth/token/`
# as demo-oidc, HTTP Basic) against `POST /api/token/pair/` (ana's
# password), on one release demo, alternating the two for BENCH_ROUNDS
# rounds (see docs/performance.md). Both cost one PBKDF2 verification on
# the hashing pool; the ratio shows what the grant adds around it.
#
# Usage: bash bench/machine_token.sh
# Knobs: BENCH_ROUNDS (2), BENCH_DURATION (10 s), BENCH_CONNECTIONS (8).
# Output: bench/out/machine-token-<timestamp>/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BIN=${CREDENCIAL_BIN:-${CARGO_TARGET_DIR:-target}/release/credencial}
ROUNDS=${BENCH_ROUNDS:-2}
DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-8}
PORT=${BENCH_PORT:-18731}
OUT_DIR=bench/out/machine-token-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT_DIR"
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
[[ -x $BIN ]] || { echo "$BIN is missing: cargo build --release" >&2; exit 1; }
BIN=$(realpath "$BIN")

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
(cd "$OUT_DIR" && exec env -u DATABASE_URL SERVICE_BIND="127.0.0.1:$PORT" RUST_LOG=warn \
    SERVICE_JWT_SECRET=bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz \
    "$BIN" demo) </dev/null >"$OUT_DIR/server.log" 2>&1 &
PIDS+=($!)
wait_until_serving "http://127.0.0.1:$PORT" "$!" "$OUT_DIR/server.log" 120
B="http://127.0.0.1:$PORT"
[[ $(curl -s -o /dev/null -w '%{http_code}' -u demo-oidc:demo-oidc-secret -d grant_type=client_credentials "$B/oauth/token/") == 200 ]] ||
    { echo "the demo does not issue demo-oidc a client_credentials token" >&2; exit 1; }

run() { # NAME SCRIPT PATH ROUND
    local out="$OUT_DIR/$1-$4.txt"
    timeout $((DURATION + 20)) wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s -s "bench/$2" "$B$3" >"$out"
    grep -o 'rps=[0-9.]*' "$out" | cut -d= -f2
}

declare -a MACHINE PAIR
for ((r = 1; r <= ROUNDS; r++)); do
    MACHINE+=("$(run machine machine_token.lua /oauth/token/ "$r")")
    PAIR+=("$(run pair pair.lua /api/token/pair/ "$r")")
    echo "round $r: client_credentials ${MACHINE[-1]} tokens/s, pair ${PAIR[-1]} pairs/s"
done
python3 - "${MACHINE[*]}" "${PAIR[*]}" <<'PY'
import statistics, sys
m = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
print(f"median: client_credentials {statistics.median(m):.1f} tokens/s, pair {statistics.median(p):.1f} pairs/s, "
      f"ratio {statistics.median(m) / statistics.median(p):.2f}x")
PY
