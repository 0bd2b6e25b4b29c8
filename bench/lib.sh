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

# --- storage engine ------------------------------------------------------------
# The scripts run the service on PostgreSQL (their default, as before the
# embedded store) or on SQLite. BENCH_ENGINE (sqlite or postgres) chooses;
# unset, a DATABASE_URL with the sqlite scheme chooses SQLite.

# bench_engine: prints the engine (sqlite or postgres); returns 2, with the
# reason on stderr, for an unknown BENCH_ENGINE.
bench_engine() {
    local engine=${BENCH_ENGINE:-}
    if [[ -z $engine ]]; then
        case ${DATABASE_URL:-} in sqlite:*) engine=sqlite ;; *) engine=postgres ;; esac
    fi
    case $engine in
        sqlite | postgres) echo "$engine" ;;
        *) echo "BENCH_ENGINE: sqlite or postgres, not \"$engine\"" >&2; return 2 ;;
    esac
}

# engine_name ENGINE: as the summaries spell it.
engine_name() { case $1 in sqlite) echo SQLite ;; postgres) echo PostgreSQL ;; *) echo "$1" ;; esac; }

# sqlite_path URL: the file a sqlite:// URL names (relative to the working
# directory unless it starts with a third slash), without its query.
sqlite_path() {
    local p=${1#sqlite:}
    p=${p#//}
    echo "${p%%\?*}"
}

# sqlite_remove FILE: deletes a SQLite database file and its companions
# (write-ahead log, shared memory, the service's instance lock, the access
# log's own file and its write-ahead log and shared memory).
sqlite_remove() {
    rm -f -- "$1" "$1-wal" "$1-shm" "$1.lock" "$1-access-log" "$1-access-log-wal" "$1-access-log-shm"
}

# sqlite_shell FILE: the sqlite3 shell on FILE with the access log's file
# attached as the service attaches it (`access_log` found by its name),
# waiting up to 5 s for the serving instance's write lock, like the
# service's own busy timeout; stops at the first error. Arguments after
# FILE go to the shell.
sqlite_shell() {
    local file=$1
    shift
    sqlite3 -bail -batch -noheader -cmd ".timeout 5000" -cmd "ATTACH DATABASE '$file-access-log' AS access" "$file" "$@"
}

# sqlite_sql FILE SQL: runs SQL with sqlite_shell (rows as `a|b`, no header).
sqlite_sql() { sqlite_shell "$1" "$2"; }
