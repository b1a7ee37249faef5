/*
 * The smallest useful MCP client: start a server (stdio) or reach one
 * (Streamable HTTP), list its tools, call one, and tell MCP's three
 * outcomes apart: a result, a tool failure (isError), a protocol error.
 *
 *   hello_client TOOL ARGS_JSON -- COMMAND [ARG...]     a stdio server
 *   hello_client TOOL ARGS_JSON --url URL               a Streamable HTTP server
 *
 * e.g. hello_client greet '{"name":"Ada"}' -- ./mcp-example-hello
 * Exit status: 0 result, 1 tool failure, 2 protocol error, 3 no answer.
 */
#include <mcp/mcp.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[3], "--") != 0 && strcmp(argv[3], "--url") != 0)) {
        fprintf(stderr, "usage: hello_client TOOL ARGS_JSON (-- COMMAND [ARG...] | --url URL)\n");
        return 3;
    }
    mcp_client_opts opts = {0};
    opts.name = "hello-client";
    opts.version = "1.0.0";
    mcp_client *c;
    mcp_error err;
    mcp_status st;
    if (!strcmp(argv[3], "--url")) {
        mcp_http_client_opts http = {0};
        http.url = argv[4];
        st = mcp_client_connect_http(&c, &opts, &http, &err);
    } else {
        mcp_stdio_client_opts stdio = {0};
        stdio.argv = (const char *const *)&argv[4]; /* NULL-terminated, like argv itself */
        st = mcp_client_connect_stdio(&c, &opts, &stdio, &err);
    }
    if (st != MCP_OK) {
        fprintf(stderr, "hello_client: cannot connect: %s\n", err.message);
        return 3;
    }
    printf("connected, protocol %s\n", mcp_client_protocol_version(c));

    /* tools/list (every page), then the names. */
    mcp_response *r;
    if (mcp_client_list_tools(c, &r, &err) == MCP_OK) {
        const mcp_json *tools = mcp_json_get(mcp_response_result(r), "tools");
        for (size_t i = 0; i < mcp_json_len(tools); i++)
            printf("tool: %s\n", mcp_json_str(mcp_json_get(mcp_json_at(tools, i), "name"), NULL));
        mcp_response_free(r);
    }

    /* tools/call: the three outcomes. */
    int rc;
    st = mcp_client_call_tool(c, argv[1], argv[2], NULL, &r, &err);
    if (st == MCP_OK) {
        const mcp_json *content = mcp_json_get(mcp_response_result(r), "content");
        rc = mcp_response_is_tool_error(r) ? 1 : 0;
        printf("%s:", rc ? "tool failure" : "result");
        for (size_t i = 0; i < mcp_json_len(content); i++) {
            const mcp_json *block = mcp_json_at(content, i);
            if (mcp_json_str_eq(mcp_json_get(block, "type"), "text"))
                printf(" %s", mcp_json_str(mcp_json_get(block, "text"), NULL));
            else
                printf(" [%s block]", mcp_json_str(mcp_json_get(block, "type"), NULL));
        }
        printf("\n");
    } else if (st == MCP_ERR_PROTOCOL) {
        printf("protocol error %d: %s\n", err.rpc_code, err.message);
        rc = 2;
    } else {
        printf("no answer: %s (%s)\n", err.message, mcp_status_name(st));
        rc = 3;
    }
    mcp_response_free(r);
    mcp_client_close(c);
    return rc;
}
