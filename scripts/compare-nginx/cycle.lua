-- wrk script of scripts/compare-nginx.sh: cycles through the requests listed in a file,
-- one per line, "PATH" or "PATH TOKEN" (sent as "Authorization: Bearer TOKEN"), with
-- the headers given to wrk with -H.
--   wrk ... -s cycle.lua URL -- LISTFILE
-- Requests are formatted once in init; the second wrk thread starts half the list on,
-- so the two threads do not ask for the same file at the same time.
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local reqs, i = {}, 0

function init(args)
  local f = assert(io.open(args[1], "r"))
  for line in f:lines() do
    local path, tok = line:match("^(%S+)%s*(%S*)$")
    if path then
      local h = nil
      if tok ~= "" then
        h = { ["Authorization"] = "Bearer " .. tok }
        for k, v in pairs(wrk.headers) do h[k] = v end -- wrk -H (a Host), which wrk.format drops when given h
      end
      reqs[#reqs + 1] = wrk.format("GET", path, h)
    end
  end
  f:close()
  assert(#reqs > 0, "empty request list " .. args[1])
  i = ((tid or 0) * math.floor(#reqs / 2)) % #reqs -- wrk -t2: half a list apart
end

function request()
  i = i % #reqs + 1
  return reqs[i]
end
