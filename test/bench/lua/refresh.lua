-- POST <RPATH> {"refreshToken": …} with rotation: every refresh token is
-- presented once, and each response's new refresh token is presented
-- next. wrk does not say which connection a response came on, so each
-- thread keeps a pool of unused tokens (its share of the lines of
-- TOKENS_FILE, one login each; more than the thread's connections):
-- request() takes one out, response() puts the new one in. A failed
-- refresh loses its token; should the pool run dry, the request carries
-- an invalid token and counts as an error.
package.path = (os.getenv("BENCH_LUA_DIR") or ".") .. "/?.lua;" .. package.path
local report = require("report")

local path = os.getenv("RPATH") or "/auth/refresh"
local headers = { ["Content-Type"] = "application/json" }
local pool = {}

setup = report.setup
done = report.done

init = function(args)
  report.seed(tid)
  pool = report.lines("TOKENS_FILE", tid)
end

request = function()
  local t = table.remove(pool) or "pool-ran-dry"
  return wrk.format("POST", path, headers, '{"refreshToken":"' .. t .. '"}')
end

response = function(status, headers, body)
  if status ~= 201 and status ~= 200 then return end
  local t = body:match('"refreshToken"%s*:%s*"([^"]+)"')
  if t then pool[#pool + 1] = t end
end
