/*
 * The libmcp side of bench/http: one tool, `echo`, that returns its `text`
 * argument as a text block, served over Streamable HTTP (both protocol eras
 * on one endpoint, /mcp). The TypeScript peer (bench/http/ts_server.mjs)
 * exposes the same tool with the same input schema, so both servers parse,
 * validate, run and encode the same work.
 *
 * It binds 127.0.0.1 on a free port, prints "port N" on stdout, and serves
 * until SIGTERM or SIGINT.
 *
 * usage: bench_http_server [--pool] [--threads N] [--workers N]
 *   --pool       registers the tool plainly, so every call hops to the
 *                worker pool; without it the tool is MCP_TOOL_NONBLOCKING
 *                and runs on the HTTP thread that received the request
 *   --threads N  libmicrohttpd threads (default: the number of cores)
 *   --workers N  tool worker threads (default: the number of cores)
 */
#include <mcp/mcp.h>

#include <pthread.h>
#include <signal.h>
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
    int pool = 0;
    unsigned threads = 0, workers = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pool") == 0) {
            pool = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            workers = (unsigned)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_http_server [--pool] [--threads N] [--workers N]\n");
            return 2;
        }
    }

    /* Block the stop signals before any thread starts, so they all inherit
     * the mask and sigwait() below is the only taker. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    mcp_server_opts opts = {0};
    opts.name = "libmcp-bench";
    opts.version = "1.0.0";
    opts.workers = workers;
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &opts, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        return 1;
    }
    mcp_tool_def tool = {0};
    tool.name = "echo";
    tool.description = "Returns its text argument.";
    tool.input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                        "\"required\":[\"text\"]}";
    tool.flags = pool ? 0 : MCP_TOOL_NONBLOCKING;
    tool.handler = echo;
    if (mcp_server_add_tool(srv, &tool, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }

    mcp_http_opts ho = {0};
    ho.host = "127.0.0.1";
    ho.port = 0; /* any free port; printed below */
    ho.threads = threads;
    mcp_http_server *hs;
    if (mcp_http_server_start(&hs, srv, &ho, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }
    printf("port %u\n", mcp_http_server_port(hs));
    fflush(stdout);

    int sig;
    sigwait(&stop, &sig);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
    return 0;
}
