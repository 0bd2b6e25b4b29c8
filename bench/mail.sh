#!/usr/bin/env bash
# The outbox's throughput and its wait after the relay returns (issue 24),
# on both engines, in one run: the ignored tests of tests/api/mail_bench.rs
# built in release, each starting the service (`serve`, its background
# sender) against a real SMTP server on loopback. Prints one line a
# measure:
#   mail_bench engine=… mails=N write_ms=… deliver_ms=… mails_per_sec=…
#   mail_bench engine=… relay_down_s=40 waited_after_return_ms=…
# Knobs: MAIL_BENCH_COUNT (2000 mails), MAIL_BENCH_DOWN_SECS (40).
# Needs PostgreSQL at 127.0.0.1:5432 for the `api` binary (as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
for binary in api api_sqlite; do
    cargo test --release -p credencial --test "$binary" mail_bench:: -- --ignored --nocapture --test-threads 1 2>&1 \
        | grep -E 'mail_bench engine|test result|panicked'
done
