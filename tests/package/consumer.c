/* Uses the installed library through its public API only: parses a frame
 * and prints the library's version and the headers' version, which
 * tests/check_package.sh compares with the project version. */
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
    int same = strcmp(mcp_version(), MCP_VERSION_STRING) == 0;
    printf("libmcp %s headers %s: %s\n", mcp_version(), MCP_VERSION_STRING,
           !ok ? "wrong parse" : !same ? "versions differ" : "ok");
    return ok && same ? 0 : 1;
}
