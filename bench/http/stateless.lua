-- bench/http, 2026-07-28 era: stateless tools/call, no initialize, no
-- session. Every request carries _meta io.modelcontextprotocol/protocolVersion
-- "2026-07-28" and clientCapabilities {}, and the headers
-- MCP-Protocol-Version, Mcp-Method: tools/call, Mcp-Name: echo.
-- MCP_PROTOCOL overrides the MCP-Protocol-Version header (run.sh sends the
-- TypeScript SDK its newest version, 2025-11-25: it rejects 2026-07-28).
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")
mcp_bench {
  headers = {
    ["MCP-Protocol-Version"] = os.getenv("MCP_PROTOCOL") or "2026-07-28",
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = "echo",
  },
  meta = true,
}
