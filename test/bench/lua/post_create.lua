-- POST <CPATH> creating an entry with a unique key per request, owned by
-- ASSIGNEE, with a bearer token (TOKEN). RUN_TAG keeps keys of separate
-- runs apart.
package.path = (os.getenv("BENCH_LUA_DIR") or ".") .. "/?.lua;" .. package.path
local report = require("report")

local path = os.getenv("CPATH") or "/cache/user"
local assignee = os.getenv("ASSIGNEE") or ""
local headers = {
  ["Authorization"] = "Bearer " .. (os.getenv("TOKEN") or ""),
  ["Content-Type"] = "application/json",
}
local counter, tag = 0, ""

setup = report.setup
done = report.done

init = function(args)
  report.seed(tid)
  tag = (os.getenv("RUN_TAG") or tostring(os.time())) .. "-" .. tostring(tid)
end

request = function()
  counter = counter + 1
  local body = '{"key":"wrk-' .. tag .. '-' .. counter .. '","type":"settings",' ..
    '"data":"{\\"theme\\":\\"dark\\"}","assignee":{"id":"' .. assignee .. '"},"expiresIn":"1h"}'
  return wrk.format("POST", path, headers, body)
end
