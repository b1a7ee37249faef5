-- Shared by stateful.lua and stateless.lua (bench/http): wrk POSTs one
-- tools/call of the `echo` tool per request to /mcp, keep-alive.
--
-- Every request carries a fresh numeric id (10 digits, so the length and
-- the Content-Length never change): thread t sends 1t00000001, 1t00000002,
-- ... The request bytes are built once per thread; request() only splices
-- the id in, so wrk spends little per call.
--
-- With MCP_CHECK=1 in the environment (run.sh's warm-up) every answer is
-- checked: HTTP 200, Content-Type application/json, the echoed text, no
-- JSON-RPC "error". done() prints one line for run.sh:
--   result REQUESTS DURATION_US P50_US P99_US ERRORS [CHECKED BAD]
-- ERRORS counts connect/read/write/timeout errors and non-2xx/3xx statuses.

local text = "hello from the libmcp http bench"
local check = os.getenv("MCP_CHECK") == "1"
local threads = {}

function mcp_bench(opts)
  wrk.method = "POST"
  wrk.path = "/mcp"
  wrk.headers["Content-Type"] = "application/json"
  -- What the MCP spec asks clients to send; both servers then answer JSON.
  wrk.headers["Accept"] = "application/json, text/event-stream"
  for k, v in pairs(opts.headers) do
    wrk.headers[k] = v
  end
  -- run.sh's authorized rows: the server printed a token for itself.
  local token = os.getenv("MCP_TOKEN")
  if token and token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
  local meta = ""
  if opts.meta then
    meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
      .. '"io.modelcontextprotocol/clientCapabilities":{}}'
  end
  body_head = '{"jsonrpc":"2.0","id":'
  body_tail = ',"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
    .. text .. '"}' .. meta .. '}}'
end

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  local body = body_head .. "1000000000" .. body_tail
  local req = wrk.format(nil, nil, nil, body)
  req_head = req:sub(1, #req - #body) .. body_head
  next_id = 1000000000 + (tid or 1) * 100000000
  ok, bad = 0, 0
end

function request()
  next_id = next_id + 1
  return req_head .. next_id .. body_tail
end

if check then
  function response(status, headers, body)
    local ctype = ""
    for k, v in pairs(headers) do
      if k:lower() == "content-type" then ctype = v end
    end
    if status == 200 and ctype:find("application/json", 1, true) == 1
        and body:find(text, 1, true) and not body:find('"error"', 1, true) then
      ok = ok + 1
    else
      bad = bad + 1
      if bad == 1 then
        io.stderr:write("unexpected answer: " .. status .. " " .. ctype .. " " .. body:sub(1, 300) .. "\n")
      end
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("result %d %d %.1f %.1f %d", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))
  if check then
    local n_ok, n_bad = 0, 0
    for _, t in ipairs(threads) do
      n_ok = n_ok + (t:get("ok") or 0)
      n_bad = n_bad + (t:get("bad") or 0)
    end
    io.write(string.format(" %d %d", n_ok + n_bad, n_bad))
  end
  io.write("\n")
end
