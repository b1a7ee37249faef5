/*
 * The libmcp side of bench/stdio: one tool, `echo`, that returns its `text`
 * argument as a text block, served over stdio. The TypeScript peer
 * (bench/peers/ts-server/server.mjs) exposes the same tool with the same
 * input schema, so both servers parse, validate, run and encode the same
 * work.
 *
 * usage: bench_server [--inline] [--workers N]
 *   --inline     registers the tool with MCP_TOOL_NONBLOCKING: the handler
 *                runs on the stdio I/O thread instead of the worker pool
 *   --workers N  worker threads (default: the number of cores)
 */
#include <mcp/mcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mcp_status echo(mcp_call *call, const mcp_json *args, void *user_data)
{
    (void)user_data;
    /* The input schema guarantees a string. */
    return mcp_call_text(call, mcp_json_str(mcp_json_get(args, "text"), NULL), NULL);
}

int main(int argc, char **argv)
{
    int inline_tool = 0;
    unsigned workers = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--inline") == 0) {
            inline_tool = 1;
        } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            workers = (unsigned)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_server [--inline] [--workers N]\n");
            return 2;
        }
    }

    mcp_server_opts opts = {0};
    opts.name = "libmcp-bench";
    opts.version = "1.0.0";
    opts.workers = workers;
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &opts, &err) != MCP_OK) {
        fprintf(stderr, "bench_server: %s\n", err.message);
        return 1;
    }
    mcp_tool_def tool = {0};
    tool.name = "echo";
    tool.description = "Returns its text argument.";
    tool.input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                        "\"required\":[\"text\"]}";
    tool.flags = inline_tool ? MCP_TOOL_NONBLOCKING : 0;
    tool.handler = echo;
    if (mcp_server_add_tool(srv, &tool, &err) != MCP_OK) {
        fprintf(stderr, "bench_server: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }
    mcp_status st = mcp_stdio_serve(srv, NULL);
    mcp_server_free(srv);
    return st == MCP_OK ? 0 : 1;
}
