/*
 * The smallest useful MCP server: one tool, served over stdio.
 * Build it, then add it to an MCP client as the command to run, or serve
 * it over Streamable HTTP with --http [HOST:]PORT, optionally behind OAuth
 * bearer tokens (--auth-issuer, --auth-jwks, ...: see docs/auth.md).
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
    mcp_auth_opts auth_opts = {0};
    char host[64];
    int use_http = 0, use_auth = 0;
    for (int i = 1; i < argc; i++) {
        int used = 0;
        mcp_status st = mcp_auth_parse_arg(&auth_opts, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &used);
        if (st == MCP_OK) {
            use_auth = 1;
            i += used - 1;
        } else if (st == MCP_ERR_NOT_FOUND && !strcmp(argv[i], "--http") && i + 1 < argc &&
                   mcp_http_parse_listen(argv[i + 1], &http, host, sizeof host) == MCP_OK) {
            use_http = 1; /* --http [HOST:]PORT */
            i++;
        } else if (st == MCP_ERR_NOT_FOUND && !strcmp(argv[i], "--stateless")) {
            http.sessionless = 1;
        } else if (st == MCP_ERR_NOT_FOUND && !strcmp(argv[i], "--transcript") && i + 1 < argc) {
            opts.transcript_path = argv[++i]; /* every frame in and out, as JSON lines */
        } else {
            fprintf(stderr, "usage: hello [--http [HOST:]PORT [--stateless]] [--transcript FILE]\n"
                            "             [auth options, with --http]\n" MCP_AUTH_ARGS_HELP);
            return 2;
        }
    }
    mcp_server *srv;
    mcp_error err;
    mcp_auth *auth = NULL;
    if (use_auth && mcp_auth_new(&auth, &auth_opts, &err) != MCP_OK) {
        fprintf(stderr, "hello: authorization: %s\n", err.message);
        return 2;
    }
    http.auth = auth;
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
    mcp_auth_free(auth);
    return st == MCP_OK ? 0 : 1;
}
