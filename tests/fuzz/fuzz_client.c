/*
 * Fuzz target: a client core fed arbitrary messages from its server.
 *
 * The first byte picks the setup: bit 0 the era (a legacy 2025-11-25
 * session after a scripted initialize, or 2026-07-28 after a scripted
 * server/discover), bit 1 lenient mode. Eight requests are then started
 * asynchronously (ids 2 to 9) and every later line of the input goes to
 * the client as one frame from the server: answers in any order,
 * duplicates, errors, input_required results, progress, notifications,
 * server-to-client requests, garbage. Afterwards the client is closed.
 * Every request must complete exactly once (answered, refused, or failed
 * by the close); anything else aborts. The transport is a stub that
 * swallows what the client sends (its answers, retries, cancellations).
 */
#include "client/client_internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NREQ 8

typedef struct stub {
    mcp__ctransport base;
    int modern;
} stub;

static mcp_status stub_send(mcp__ctransport *t, const mcp__out *o)
{
    stub *s = (stub *)t;
    if (o->kind != MCP_RPC_REQUEST)
        return MCP_OK;
    /* Only the handshake is answered here; everything else comes from the input. */
    char frame[512];
    if (o->method && !strcmp(o->method, "initialize") && !s->modern)
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"protocolVersion\":\"2025-11-25\","
                 "\"capabilities\":{\"tools\":{},\"logging\":{}},\"serverInfo\":{\"name\":\"f\",\"version\":\"1\"}}}",
                 (unsigned long long)o->id);
    else if (o->method && !strcmp(o->method, "server/discover") && s->modern)
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
                 "\"capabilities\":{\"tools\":{}},\"resultType\":\"complete\"}}",
                 (unsigned long long)o->id);
    else
        return MCP_OK;
    mcp__client_on_frame(t->client, frame, strlen(frame));
    return MCP_OK;
}

static int stub_cancel(mcp__ctransport *t, uint64_t id, int modern)
{
    (void)t;
    (void)id;
    (void)modern;
    return 0;
}

static void stub_ready(mcp__ctransport *t, const char *version, int modern)
{
    (void)t;
    (void)version;
    (void)modern;
}

static void stub_close(mcp__ctransport *t)
{
    (void)t;
}

static const mcp__ctransport_ops g_stub_ops = {stub_send, stub_cancel, stub_ready, stub_close};

static atomic_int g_done[NREQ];

static void done(mcp_client *c, mcp_status st, mcp_response *resp, const mcp_error *err, void *ud)
{
    (void)c;
    (void)st;
    (void)err;
    int i = (int)(intptr_t)ud;
    if (atomic_fetch_add(&g_done[i], 1) != 0)
        abort(); /* completed twice */
    if (resp) {
        /* Whatever arrived must be readable through the accessors. */
        (void)mcp_response_result(resp);
        (void)mcp_response_error_code(resp);
        (void)mcp_response_error_message(resp);
        (void)mcp_response_is_tool_error(resp);
        mcp_response_free(resp);
    }
}

static mcp_status answer(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *result, char *message,
                         size_t cap, void *ud)
{
    (void)c;
    (void)params;
    (void)message;
    (void)cap;
    (void)ud;
    if (!strcmp(method, "elicitation/create")) {
        mcp_jw_key(result, "action");
        mcp_jw_string(result, "decline");
        return MCP_OK;
    }
    return MCP_ERR_UNSUPPORTED;
}

static void notified(mcp_client *c, const char *method, const mcp_json *params, void *ud)
{
    (void)c;
    (void)method;
    (void)params;
    (void)ud;
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static void progress(double p, double total, const char *message, void *ud)
{
    (void)p;
    (void)total;
    (void)message;
    (void)ud;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    stub s;
    memset(&s, 0, sizeof s);
    s.base.ops = &g_stub_ops;
    s.modern = data[0] & 1;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.protocol_version = s.modern ? "2026-07-28" : "2025-11-25";
    o.capabilities = "{\"elicitation\":{},\"roots\":{}}";
    o.lenient = (data[0] & 2) != 0;
    o.on_input = answer;
    o.on_notify = notified;
    o.log = quiet;
    o.timeout_ms = 60000;
    o.max_message = 1 << 16;
    o.max_input_rounds = 3;
    o.workers = 1;
    mcp_client *c;
    if (mcp__client_new(&c, &o, NULL) != MCP_OK)
        return 0;
    mcp__client_attach(c, &s.base);
    if (mcp__client_handshake(c, NULL) != MCP_OK) {
        mcp_client_close(c);
        return 0;
    }
    static const char *const methods[NREQ] = {"tools/call", "tools/list",     "tools/call", "resources/read",
                                               "tools/call", "prompts/get",    "ping",       "completion/complete"};
    static const char *const params[NREQ] = {"{\"name\":\"a\",\"arguments\":{}}", NULL,
                                              "{\"name\":\"b\",\"arguments\":{\"x\":1}}", "{\"uri\":\"f://x\"}",
                                              "{\"name\":\"c\"}", "{\"name\":\"p\"}", NULL, NULL};
    int started[NREQ];
    for (int i = 0; i < NREQ; i++) {
        atomic_store(&g_done[i], 0);
        mcp_request_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.on_progress = progress;
        started[i] = mcp_client_request_async(c, methods[i], params[i], &ro, done, (void *)(intptr_t)i, NULL) ==
                     MCP_OK;
    }
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        mcp__client_on_frame(c, p, len);
        p += len + 1;
    }
    mcp_client_close(c);
    for (int i = 0; i < NREQ; i++)
        if (started[i] && atomic_load(&g_done[i]) != 1)
            abort(); /* a request never completed */
    return 0;
}
