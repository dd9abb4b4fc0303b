-- One fixed request to wrk's URL: METHOD (default GET), BODY (JSON, when
-- set) and TOKEN (a bearer token, when set). Used for login and for one
-- list page.
package.path = (os.getenv("BENCH_LUA_DIR") or ".") .. "/?.lua;" .. package.path
local report = require("report")

wrk.method = os.getenv("METHOD") or "GET"
local body = os.getenv("BODY")
if body then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end
local token = os.getenv("TOKEN")
if token and #token > 0 then wrk.headers["Authorization"] = "Bearer " .. token end

setup = report.setup
done = report.done
