#!/usr/bin/env bash
# What the access log costs the profile read, with the durable settings
# (PostgreSQL `synchronous_commit` on, SQLite `synchronous=FULL`): the
# release binary ("logged") and the same sources built with the
# benchmark-only `bench-unlogged` feature ("unlogged": the read and its
# grant check, no log row) served side by side by bench/profile.sh, once on
# SQLite and once on PostgreSQL. Its table's "profile / unlogged" column is
# the ratio the target names (>= 0.8 on each engine; docs/performance.md).
#
# Usage: bash bench/access_log.sh
# Knobs: BENCH_ENGINES ("sqlite postgres"), BENCH_SKIP_BUILD (set: reuse
#        target/release/credencial and bench/out/credencial-unlogged), and
#        bench/profile.sh's (BENCH_ROUNDS, BENCH_DURATION, BENCH_CONNECTIONS).
# Both binaries come from this working tree; cargo keeps both feature sets'
# artifacts, so the second build only links.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

UNLOGGED=bench/out/credencial-unlogged
mkdir -p bench/out
if [[ -z ${BENCH_SKIP_BUILD:-} ]]; then
    cargo build --release --locked --features bench-unlogged --bin credencial
    cp target/release/credencial "$UNLOGGED"
    cargo build --release --locked --bin credencial
fi
[[ -x $UNLOGGED ]] || { echo "$UNLOGGED is missing: run without BENCH_SKIP_BUILD" >&2; exit 1; }

for engine in ${BENCH_ENGINES:-sqlite postgres}; do
    BENCH_ENGINE=$engine BENCH_BIN=./target/release/credencial BENCH_BASE_BIN=$UNLOGGED BENCH_BASE_LABEL=unlogged \
        bash bench/profile.sh
done
