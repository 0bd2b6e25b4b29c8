-- wrk script: POST /api/token/verify/ with a valid access token.
-- Run from the repository root (run.sh does): the helpers are loaded by path.
local report = dofile("bench/report.lua")
report.post('{"token":"' .. report.token() .. '"}')
delay = report.pacing()
done = report.done
