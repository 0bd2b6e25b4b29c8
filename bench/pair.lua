-- wrk script: POST /api/token/pair/ with a demo user's credentials; every
-- request costs one PBKDF2 verification on the hashing pool.
-- BENCH_PAIR_USERNAME / BENCH_PAIR_PASSWORD override the user (ana).
local report = dofile("bench/report.lua")
local username = os.getenv("BENCH_PAIR_USERNAME") or "ana"
local password = os.getenv("BENCH_PAIR_PASSWORD") or "ana-demo-2026"
report.post('{"username":"' .. username .. '","password":"' .. password .. '"}')
done = report.done
