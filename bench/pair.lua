-- wrk script: POST /api/token/pair/ with a demo user's credentials; every
-- request costs one PBKDF2 verification on the hashing pool.
local report = dofile("bench/report.lua")
report.post('{"username":"ana","password":"ana-demo-2026"}')
done = report.done
