-- wrk script: POST /oauth/token/ with grant_type=client_credentials for the
-- demo's demo-oidc (HTTP Basic); every request costs one PBKDF2
-- verification of the client secret on the hashing pool, like pair's
-- password check. BENCH_CLIENT_ID / BENCH_CLIENT_SECRET override the client.
local report = dofile("bench/report.lua")
local id = os.getenv("BENCH_CLIENT_ID") or "demo-oidc"
local secret = os.getenv("BENCH_CLIENT_SECRET") or "demo-oidc-secret"
local function base64(data)
  local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  return ((data:gsub(".", function(x)
    local r, b = "", x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return chars:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#data % 3 + 1])
end
wrk.method = "POST"
wrk.body = "grant_type=client_credentials"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic " .. base64(id .. ":" .. secret)
done = report.done
