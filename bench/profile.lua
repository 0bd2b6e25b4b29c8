-- wrk script: POST /api/perfil/dados/ with an OAuth2 access token (all
-- eight scopes) in the Authorization header and an empty JSON body.
local report = dofile("bench/report.lua")
report.post("{}")
wrk.headers["Authorization"] = "Bearer " .. report.token()
done = report.done
