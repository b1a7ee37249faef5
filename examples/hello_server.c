/*
 * The smallest useful MCP server: one tool, served over stdio.
 * Build it, then add it to an MCP client as the command to run, or serve
 * it over Streamable HTTP with --http [HOST:]PORT.
 */
#include <mcp/mcp.h>

#include <stdio.h>
#include <string.h>

/* The handler gets validated arguments: "name" is a string, guaranteed. */
static mcp_status greet(mcp_call *call, const mcp_json *args, void *user_data)
{
    (void)user_data;
    const char *name = mcp_json_str(mcp_json_get(args, "name"), NULL);
    if (name[0] == '\0')
        return mcp_call_error(call, "name must not be empty; pass the person's name");
    return mcp_call_textf(call, "Hello, %s!", name);
}

int main(int argc, char **argv)
{
    mcp_server_opts opts = {0};
    opts.name = "hello";
    opts.version = "1.0.0";
    mcp_http_opts http = {0};
    char host[64];
    int use_http = argc >= 3 && strcmp(argv[1], "--http") == 0; /* --http [HOST:]PORT [--stateless] */
    if (use_http && mcp_http_parse_listen(argv[2], &http, host, sizeof host) != MCP_OK)
        return 2;
    http.sessionless = argc == 4 && strcmp(argv[3], "--stateless") == 0;
    if (argc == 3 && strcmp(argv[1], "--transcript") == 0)
        opts.transcript_path = argv[2]; /* every frame in and out, as JSON lines */
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &opts, &err) != MCP_OK) {
        fprintf(stderr, "hello: %s\n", err.message);
        return 1;
    }

    mcp_tool_def tool = {0};
    tool.name = "greet";
    tool.title = "Greet someone";
    tool.description = "Says hello to a person by name.";
    tool.input_schema = "{\"type\":\"object\","
                        "\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Who to greet\"}},"
                        "\"required\":[\"name\"],\"additionalProperties\":false}";
    tool.read_only_hint = MCP_HINT_TRUE;
    tool.handler = greet;
    if (mcp_server_add_tool(srv, &tool, &err) != MCP_OK) {
        fprintf(stderr, "hello: %s\n", err.message);
        return 1;
    }

    /* stdio until stdin closes, or HTTP until SIGINT/SIGTERM */
    mcp_status st = use_http ? mcp_http_serve(srv, &http, &err) : mcp_stdio_serve(srv, NULL);
    mcp_server_free(srv);
    return st == MCP_OK ? 0 : 1;
}
