-- wrk script: POST /_noop/ (SERVICE_BENCH_NOOP_ROUTE=true), the baseline.
-- Same body as verify.lua, so the two differ only in the handler's work.
local report = dofile("bench/report.lua")
report.post('{"token":"' .. report.token() .. '"}')
delay = report.pacing()
done = report.done
