/* Uses the installed library through its public API only. */
#include <mcp/mcp.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    mcp_json_doc *doc;
    const char *text = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    if (mcp_json_parse(&doc, text, strlen(text), NULL, NULL) != MCP_OK)
        return 1;
    int ok = mcp_json_str_eq(mcp_json_get(mcp_json_doc_root(doc), "method"), "ping");
    mcp_json_doc_free(doc);
    printf("libmcp %s: %s\n", mcp_version(), ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
