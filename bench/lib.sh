# Shell helpers shared by the scripts that run the release binary on
# loopback (bench/run.sh, bench/profile.sh, bench/soak.sh, tests/fuzz/run.sh).
# Source it; it defines functions only.

# wait_until_serving BASE PID LOG SECONDS
# Polls BASE/healthz until it answers 200. Returns 1, with the reason on
# stderr, when process PID exits first (its LOG is printed) or when SECONDS
# pass without an answer.
wait_until_serving() {
    local base=$1 pid=$2 server_log=$3 limit=$4
    local deadline=$((SECONDS + limit))
    until curl -sf -o /dev/null --max-time 1 "$base/healthz"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$server_log" >&2
            echo "the server exited before answering $base/healthz" >&2
            return 1
        fi
        if ((SECONDS >= deadline)); then
            echo "no answer on $base/healthz after $limit s" >&2
            return 1
        fi
        sleep 0.2
    done
}
