-- PUT <PREFIX><id> with If-Match: each request replaces an entry that no
-- other request has in flight, at the version the previous response for
-- it returned, so every request should succeed (200).
--
-- wrk does not say which connection a response came on, so each thread
-- keeps a pool of entries instead of one per connection: request() takes
-- one out, response() puts it back with its new version, read from the
-- ETag header (or the body's "version") and the body's id. The pool starts
-- with the thread's share of PUT_ENTRIES lines of ENTRIES_FILE (`id key`,
-- seeded at version 1) after the first PUT_SKIP (so a repeated run takes
-- fresh entries); it must hold more entries than the thread has
-- connections. An entry whose request failed is lost to the
-- pool; should the pool run dry, a request goes without If-Match for a
-- random entry of the share (and its answer refills the pool).
package.path = (os.getenv("BENCH_LUA_DIR") or ".") .. "/?.lua;" .. package.path
local report = require("report")

local prefix = os.getenv("PREFIX") or "/cache/user/"
local assignee = os.getenv("ASSIGNEE") or ""
local token = "Bearer " .. (os.getenv("TOKEN") or "")
local share, pool, keys = {}, {}, {}
local counter = 0

setup = report.setup
done = report.done

init = function(args)
  report.seed(tid)
  local limit = tonumber(os.getenv("PUT_ENTRIES") or "256")
  local skip = tonumber(os.getenv("PUT_SKIP") or "0")
  for _, line in ipairs(report.lines("ENTRIES_FILE", tid, limit, skip)) do
    local id, key = line:match("^(%S+)%s+(%S+)")
    keys[id] = key
    share[#share + 1] = id
    pool[#pool + 1] = { id = id, version = "1" }
  end
end

request = function()
  counter = counter + 1
  local e = table.remove(pool, 1)
  local h = { ["Authorization"] = token, ["Content-Type"] = "application/json" }
  if e then
    h["If-Match"] = '"' .. e.version .. '"'
  else
    e = { id = share[math.random(#share)] }
  end
  local body = '{"key":"' .. keys[e.id] .. '","type":"settings",' ..
    '"data":"{\\"theme\\":\\"light\\",\\"n\\":' .. counter .. '}","assignee":{"id":"' .. assignee .. '"},"expiresIn":"1h"}'
  return wrk.format("PUT", prefix .. e.id, h, body)
end

response = function(status, headers, body)
  if status ~= 200 and status ~= 201 then return end
  local version = headers["Etag"] or headers["ETag"] or headers["etag"]
  version = version and version:match("(%d+)") or body:match('"version"%s*:%s*(%d+)')
  for id in body:gmatch('"id"%s*:%s*"([^"]+)"') do
    if keys[id] then
      if version then pool[#pool + 1] = { id = id, version = version } end
      return
    end
  end
end
