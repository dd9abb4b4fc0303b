-- Shared by the test/bench/lua scripts: thread numbering, file reading and the
-- one RESULT line test/bench/run parses.
local M = {}

local created = 0

-- setup numbers wrk's threads 1..n (runs in wrk's main Lua state).
function M.setup(thread)
  created = created + 1
  thread:set("tid", created)
end

-- nthreads is the thread count test/bench/run passes (wrk does not tell scripts).
function M.nthreads()
  return tonumber(os.getenv("NTHREADS") or "1")
end

-- lines returns the non-empty lines of the file named by env var name:
-- after skipping the first skip lines (when given), at most limit lines
-- (when given), of which each thread keeps those whose 1-based index i has
-- (i - 1) % nthreads == tid - 1 when tid is given (its own share).
function M.lines(name, tid, limit, skip)
  local path = os.getenv(name)
  if not path then error(name .. " is not set") end
  local out, i, seen = {}, 0, 0
  local n = M.nthreads()
  for line in io.lines(path) do
    if #line > 0 then
      seen = seen + 1
      if not skip or seen > skip then
        i = i + 1
        if limit and i > limit then break end
        if not tid or (i - 1) % n == tid - 1 then out[#out + 1] = line end
      end
    end
  end
  return out
end

-- seed makes each thread's random sequence its own.
function M.seed(tid)
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919 + tonumber(tostring({}):sub(8), 16) % 100000)
end

-- done prints the RESULT line: request rate, latency percentiles (ms),
-- requests, HTTP errors (status >= 400, wrk's "non-2xx") and socket errors.
function M.done(summary, latency, requests)
  local secs = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f reqs=%d non2xx=%d sockerr=%d timeouts=%d\n",
    summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests, e.status,
    e.connect + e.read + e.write + e.timeout, e.timeout))
end

return M
