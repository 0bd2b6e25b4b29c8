-- wrk script of bench/scale.sh: POST /api/perfil/dados/ with the OAuth2
-- access token in SCALE_TOKEN, counting the 5xx answers (what a stalled
-- writer or an exhausted pool gives) besides wrk's latency figures. One
-- line at the end:
--   SCALE_LOAD requests=… rps=… p50_ms=… p99_ms=… max_ms=… status_5xx=… non_2xx=… socket_errors=…
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("SCALE_TOKEN")
if token == nil or token == "" then error("SCALE_TOKEN is not set") end
wrk.headers["Authorization"] = "Bearer " .. token

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  status_5xx = 0
  non_2xx = 0
end

function response(status, headers, body)
  if status >= 500 then status_5xx = status_5xx + 1 end
  if status < 200 or status > 299 then non_2xx = non_2xx + 1 end
end

function done(summary, latency, requests)
  local s5, n2 = 0, 0
  for _, t in ipairs(threads) do
    s5 = s5 + t:get("status_5xx")
    n2 = n2 + t:get("non_2xx")
  end
  local e = summary.errors
  local function ms(us) return string.format("%.3f", us / 1000) end
  io.write(string.format(
    "SCALE_LOAD requests=%d rps=%.1f p50_ms=%s p99_ms=%s max_ms=%s status_5xx=%d non_2xx=%d socket_errors=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6), ms(latency:percentile(50)),
    ms(latency:percentile(99)), ms(latency.max), s5, n2, e.connect + e.read + e.write + e.timeout))
end
