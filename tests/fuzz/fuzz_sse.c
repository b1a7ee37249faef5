/*
 * Fuzz target: the Server-Sent Events parser (src/transport/sse.c) on
 * peer-controlled bytes. The first input byte picks small bounds and a
 * chunk size; the rest is the stream. The same stream is parsed twice,
 * all at once and in chunks, and the two must agree exactly (events,
 * status, last id, retry): a chunk boundary can never change the result.
 */
#include "transport/sse.h"

#include <mcp/mcp.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct trace {
    uint64_t hash;      /* over every event's type and data */
    unsigned events;    /* how many */
    size_t max_data;    /* the bound in force */
} trace;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static mcp_status on_event(void *ud, const char *type, const char *d, size_t len)
{
    trace *t = ud;
    if (!type || !d || d[len] != '\0' || len > t->max_data || strlen(type) >= MCP__SSE_TYPE_MAX + 16)
        abort();
    t->events++;
    t->hash = mix(t->hash, type, strlen(type) + 1);
    t->hash = mix(t->hash, d, len);
    t->hash = mix(t->hash, "|", 1);
    return MCP_OK;
}

static mcp_status run(const uint8_t *s, size_t n, size_t step, size_t max_line, size_t max_data, trace *t,
                      mcp__sse *p)
{
    memset(t, 0, sizeof *t);
    t->hash = 0xcbf29ce484222325ull;
    t->max_data = max_data ? max_data : SIZE_MAX;
    mcp__sse_init(p, max_line, max_data, on_event, t);
    mcp_status st = MCP_OK;
    if (!step) {
        st = mcp__sse_feed(p, (const char *)s, n);
    } else {
        for (size_t i = 0; i < n && !st; i += step)
            st = mcp__sse_feed(p, (const char *)s + i, n - i < step ? n - i : step);
    }
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t cfg = data[0];
    const uint8_t *s = data + 1;
    size_t n = size - 1;
    static const size_t lines[] = {0, 8, 64, 4096};
    static const size_t datas[] = {0, 4, 100, 4096};
    size_t max_line = lines[cfg & 3], max_data = datas[(cfg >> 2) & 3];
    size_t step = 1 + (cfg >> 4);
    trace a, b;
    mcp__sse pa, pb;
    mcp_status sa = run(s, n, 0, max_line, max_data, &a, &pa);
    mcp_status sb = run(s, n, step, max_line, max_data, &b, &pb);
    if (sa != sb || a.events != b.events || a.hash != b.hash)
        abort();
    if (sa == MCP_OK && (pa.has_id != pb.has_id || strcmp(pa.last_id, pb.last_id) != 0 ||
                         pa.retry_ms != pb.retry_ms || pa.ids != pb.ids))
        abort();
    if (strlen(pa.last_id) > MCP__SSE_ID_MAX || pa.retry_ms > (long)MCP__SSE_RETRY_MAX)
        abort();
    /* A reconnection keeps parsing sanely from a clean line. */
    mcp__sse_reset(&pa);
    (void)mcp__sse_feed(&pa, "data: again\n\n", 13);
    mcp__sse_cleanup(&pa);
    mcp__sse_cleanup(&pb);
    return 0;
}
