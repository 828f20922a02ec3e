-- wrk script: POST the bodies in $BODY_A and $BODY_B in turn, so that every update changes 1%.
local function read(name)
  local file = assert(io.open(os.getenv(name), "rb"))
  local text = file:read("*a")
  file:close()
  return text
end
local bodies = { read("BODY_A"), read("BODY_B") }
local turn = 0
request = function()
  turn = turn + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, bodies[turn % 2 + 1])
end
