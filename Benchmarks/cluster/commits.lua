-- wrk script: each request commits a new order of ten items to one of $SESSIONS small
-- sessions (s0, s1, ...), taken at random, so that commits spread over every slot.
local sessions = tonumber(os.getenv("SESSIONS"))
local headers = { ["Content-Type"] = "application/json" }
request = function()
  local items = {}
  for i = 1, 10 do items[i] = i end
  for i = 10, 2, -1 do
    local j = math.random(i)
    items[i], items[j] = items[j], items[i]
  end
  local body = '{"items":[' .. table.concat(items, ",") .. ']}'
  return wrk.format("POST", "/sessions/s" .. math.random(0, sessions - 1) .. "/update", headers, body)
end
