/*
 * Fuzz target: a server connection fed arbitrary frame sequences (the
 * input split at newlines). Everything the server sends back must be a
 * valid JSON-RPC message, every tools/call report (on_call_end) well
 * formed, and the connection must close cleanly. The fixture's slow tools
 * are removed so an input cannot stall the run.
 */
#include "../fixture/fixture.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp_status check_frame(const char *frame, size_t len, void *ud)
{
    (void)ud;
    mcp_rpc_msg m;
    if (mcp_rpc_decode(&m, frame, len, NULL, NULL) != MCP_OK)
        abort(); /* the server wrote something that is not JSON-RPC */
    if (m.kind == MCP_RPC_REQUEST)
        abort(); /* the server core sends no requests */
    mcp_rpc_msg_cleanup(&m);
    return MCP_OK;
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/* Every call's report must be well formed (it is read in full). */
static void check_report(const mcp_call_report *r, void *ud)
{
    (void)ud;
    if ((int)r->outcome < MCP_CALL_OK || r->outcome > MCP_CALL_FAILED || !r->tool || !r->id)
        abort();
    volatile size_t n = strlen(r->tool) + (r->message ? strlen(r->message) : 0) +
                        (r->protocol_version ? strlen(r->protocol_version) : 0);
    (void)n;
    if (r->arguments && mcp_json_typeof(r->arguments) != MCP_JSON_OBJECT)
        abort();
}

static mcp_server *server(void)
{
    static mcp_server *srv;
    if (!srv) {
        mcp_server_opts o;
        fixture_opts(&o);
        o.workers = 1;
        o.log = quiet;
        o.max_message = 1 << 16;
        o.page_size = 3;
        o.on_call_end = check_report;
        if (mcp_server_new(&srv, &o, NULL) || fixture_register(srv, NULL))
            abort();
        mcp_server_remove_tool(srv, "slow");
        mcp_server_remove_tool(srv, "limited");
    }
    return srv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcp_conn *c;
    if (mcp_conn_new(&c, server(), check_frame, NULL))
        return 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        mcp_conn_recv(c, p, len);
        if (!nl)
            break;
        p = nl + 1;
    }
    mcp_conn_close(c, 2000);
    mcp_conn_free(c);
    return 0;
}
