-- bench/http, legacy era: tools/call inside an existing session. run.sh
-- sends initialize (2025-11-25) and notifications/initialized first, with
-- curl, and passes the session in MCP_SESSION_ID; every connection then
-- POSTs with Mcp-Session-Id and MCP-Protocol-Version 2025-11-25.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")
local sid = os.getenv("MCP_SESSION_ID")
if not sid or sid == "" then
  error("stateful.lua: set MCP_SESSION_ID to the session initialize returned")
end
mcp_bench {
  headers = {
    ["Mcp-Session-Id"] = sid,
    ["MCP-Protocol-Version"] = os.getenv("MCP_PROTOCOL") or "2025-11-25",
  },
  meta = false,
}
