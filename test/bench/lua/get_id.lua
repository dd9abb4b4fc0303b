-- GET <PREFIX><id> with a bearer token (TOKEN), the id drawn at random per
-- request from the first column of IDS_FILE. With RATE (requests/s over
-- all connections) and CONNECTIONS set, each connection waits a random
-- pause (uniform, mean CONNECTIONS/RATE s) before each request: an open
-- loop at about RATE, for the latency at a given load.
package.path = (os.getenv("BENCH_LUA_DIR") or ".") .. "/?.lua;" .. package.path
local report = require("report")

local prefix = os.getenv("PREFIX") or "/cache/user/"
local headers = { ["Authorization"] = "Bearer " .. (os.getenv("TOKEN") or "") }
local ids = {}

setup = report.setup
done = report.done

init = function(args)
  report.seed(tid)
  for _, line in ipairs(report.lines("IDS_FILE")) do
    ids[#ids + 1] = line:match("^(%S+)")
  end
end

request = function()
  if #ids == 0 then return wrk.format("GET", prefix .. "none", headers) end
  return wrk.format("GET", prefix .. ids[math.random(#ids)], headers)
end

local rate = tonumber(os.getenv("RATE") or "")
if rate and rate > 0 then
  local mean_ms = tonumber(os.getenv("CONNECTIONS") or "1") * 1000 / rate
  delay = function() return math.floor(2 * mean_ms * math.random()) end
end
