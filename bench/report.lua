-- Shared by the wrk scripts: the POST set-up and one machine-readable
-- result line, so run.sh does not have to parse wrk's human output.
--   BENCH_RESULT requests=… rps=… p50_ms=… p99_ms=… errors_status=… …
local M = {}

-- A JSON POST with `body` on every request.
function M.post(body)
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

-- The `done` callback wrk calls once at the end of the run.
function M.done(summary, latency, requests)
  local secs = summary.duration / 1e6
  local e = summary.errors
  local function ms(us) return string.format("%.3f", us / 1000) end
  io.write(string.format(
    "BENCH_RESULT requests=%d duration_s=%.3f rps=%.1f mean_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s p999_ms=%s max_ms=%s"
      .. " errors_connect=%d errors_read=%d errors_write=%d errors_status=%d errors_timeout=%d\n",
    summary.requests, secs, summary.requests / secs, ms(latency.mean),
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)),
    ms(latency:percentile(99.9)), ms(latency.max),
    e.connect, e.read, e.write, e.status, e.timeout))
end

-- The access token run.sh obtained from `pair` (env BENCH_TOKEN).
function M.token()
  local t = os.getenv("BENCH_TOKEN")
  if t == nil or t == "" then error("BENCH_TOKEN is not set") end
  return t
end

-- Optional pacing: BENCH_DELAY_MS > 0 makes every connection wait that long
-- after each answer before sending the next request (wrk does not count
-- the wait in the latency).
function M.pacing()
  local d = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
  if d and d > 0 then
    return function() return d end
  end
  return nil
end

return M
