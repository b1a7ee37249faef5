/*
 * The Server-Sent Events parser (src/transport/sse.c): fields, line ends,
 * chunk boundaries anywhere, ids and retry, bounds, allocation failures.
 */
#include "testlib.h"

#include "transport/sse.h"

#include <mcp/mcp.h>

/* Events collected as "type|data" lines (data NULs shown as \0). */
typedef struct got {
    char text[4096];
    size_t len;
    int n;
    int stop_at; /* return MCP_ERR_CANCELLED at this event (1-based); 0 = never */
} got;

static mcp_status collect(void *ud, const char *type, const char *data, size_t len)
{
    got *g = ud;
    g->n++;
    if (g->len + 200 > sizeof g->text)
        return g->stop_at && g->n == g->stop_at ? MCP_ERR_CANCELLED : MCP_OK; /* full: count only */
    int w = snprintf(g->text + g->len, sizeof g->text - g->len, "%.100s|", type);
    g->len += (size_t)w;
    for (size_t i = 0; i < len && g->len + 8 < sizeof g->text; i++) {
        if (data[i] == '\0') {
            memcpy(g->text + g->len, "\\0", 2);
            g->len += 2;
        } else {
            g->text[g->len++] = data[i];
        }
    }
    if (data[len] != '\0')
        g->text[g->len++] = '!'; /* the terminator is missing */
    g->text[g->len++] = '\n';
    g->text[g->len] = '\0';
    return g->stop_at && g->n == g->stop_at ? MCP_ERR_CANCELLED : MCP_OK;
}

/* Feeds `s` in pieces of `step` bytes (0 = all at once). */
static mcp_status feed(mcp__sse *p, const char *s, size_t n, size_t step)
{
    if (!step)
        return mcp__sse_feed(p, s, n);
    for (size_t i = 0; i < n; i += step) {
        mcp_status st = mcp__sse_feed(p, s + i, n - i < step ? n - i : step);
        if (st)
            return st;
    }
    return MCP_OK;
}

/* Parses a whole stream fed in every chunk size; all must agree with `want`. */
static void expect(const char *stream, size_t n, const char *want)
{
    for (size_t step = 0; step <= n && step < 24; step++) {
        got g;
        memset(&g, 0, sizeof g);
        mcp__sse p;
        mcp__sse_init(&p, 0, 0, collect, &g);
        T_OK(feed(&p, stream, n, step));
        if (strcmp(g.text, want) != 0)
            T_FAIL_("chunks of %zu: got\n%s\nwant\n%s", step, g.text, want);
        mcp__sse_cleanup(&p);
    }
}

#define EXPECT(lit, want) expect(lit, sizeof lit - 1, want)

static void test_fields(void)
{
    EXPECT("data: hello\n\n", "message|hello\n");
    EXPECT("data:hello\n\n", "message|hello\n");
    EXPECT("data:  two spaces\n\n", "message| two spaces\n");
    EXPECT("data: a\ndata: b\ndata\ndata: c\n\n", "message|a\nb\n\nc\n");
    EXPECT("event: endpoint\ndata: /messages?x=1\n\ndata: {}\n\n", "endpoint|/messages?x=1\nmessage|{}\n");
    EXPECT(": a comment\n:\ndata: x\nfoo: bar\nDATA: no\n\n", "message|x\n");
    EXPECT("event: x\n\ndata: y\n\n", "message|y\n"); /* a type without data does not linger */
    EXPECT("data: a\0b\n\n", "message|a\\0b\n");
    EXPECT("data: unfinished\n", "");                /* the stream ended mid-event */
    EXPECT("data:\n\n", "message|\n");               /* empty data is an event (the priming one) */
    EXPECT("id: 7\n\n", "");                         /* no data line: nothing */
}

static void test_line_ends(void)
{
    EXPECT("data: a\r\ndata: b\r\n\r\n", "message|a\nb\n");
    EXPECT("data: a\rdata: b\r\r", "message|a\nb\n");
    EXPECT("data: a\r\n\rdata: b\n\r\n", "message|a\nmessage|b\n");
    EXPECT("\xEF\xBB\xBF" "data: bom\n\n", "message|bom\n");
    EXPECT("\xEF\xBB" "data: x\n\ndata: y\n\n", "message|y\n"); /* half a BOM is a field name */
    EXPECT("data: x\n\n\xEF\xBB\xBF" "data: y\n\n", "message|x\n"); /* a BOM later is not skipped */
}

static void test_ids_and_retry(void)
{
    got g;
    memset(&g, 0, sizeof g);
    mcp__sse p;
    mcp__sse_init(&p, 0, 0, collect, &g);
    const char s1[] = "id: 1_0\nretry: 250\ndata:\n\n";
    T_OK(mcp__sse_feed(&p, s1, sizeof s1 - 1));
    T_TRUE(p.has_id);
    T_EQ_STR(p.last_id, "1_0");
    T_EQ_INT(p.retry_ms, 250);
    /* An id is committed only when its event ends. */
    const char s2[] = "id: 1_1\ndata: x\n";
    T_OK(mcp__sse_feed(&p, s2, sizeof s2 - 1));
    T_EQ_STR(p.last_id, "1_0");
    T_OK(mcp__sse_feed(&p, "\n", 1));
    T_EQ_STR(p.last_id, "1_1");
    T_EQ_INT(p.ids, 2);
    /* Ignored: an id with a NUL, a retry that is not all digits. */
    const char s3[] = "id: a\0b\nretry: 12x\nretry:\ndata: y\n\n";
    T_OK(mcp__sse_feed(&p, s3, sizeof s3 - 1));
    T_EQ_STR(p.last_id, "1_1");
    T_EQ_INT(p.retry_ms, 250);
    /* An empty id resets the last id (it stays "set"). */
    T_OK(mcp__sse_feed(&p, "id\ndata: z\n\n", 12));
    T_TRUE(p.has_id);
    T_EQ_STR(p.last_id, "");
    const char s4[] = "retry: 99999999999999999999\n\n";
    T_OK(mcp__sse_feed(&p, s4, sizeof s4 - 1));
    T_EQ_INT(p.retry_ms, (long)MCP__SSE_RETRY_MAX);
    /* A reconnection drops the partial event but keeps id and retry. */
    T_OK(mcp__sse_feed(&p, "id: 9\ndata: half", 16));
    mcp__sse_reset(&p);
    T_OK(mcp__sse_feed(&p, "data: new\n\n", 11));
    T_EQ_STR(p.last_id, "");
    T_EQ_INT(p.retry_ms, (long)MCP__SSE_RETRY_MAX);
    T_EQ_STR(g.text, "message|\nmessage|x\nmessage|y\nmessage|z\nmessage|new\n");
    mcp__sse_cleanup(&p);
}

static void test_limits(void)
{
    got g;
    memset(&g, 0, sizeof g);
    mcp__sse p;
    /* A line: in one chunk, and assembled across chunks. */
    for (size_t step = 0; step < 3; step++) {
        mcp__sse_init(&p, 16, 64, collect, &g);
        const char s[] = "data: 0123456789abcdef\n\n";
        T_STATUS(feed(&p, s, sizeof s - 1, step), MCP_ERR_LIMIT);
        T_TRUE(strstr(p.error, "line longer than 16") != NULL);
        mcp__sse_cleanup(&p);
        /* Exactly at the bound is fine. */
        mcp__sse_init(&p, 16, 64, collect, &g);
        const char ok[] = "data: 0123456789\n\n";
        T_OK(feed(&p, ok, sizeof ok - 1, step));
        mcp__sse_cleanup(&p);
    }
    /* Data joined across lines. */
    mcp__sse_init(&p, 0, 10, collect, &g);
    const char d[] = "data: 12345\ndata: 6789\n\n"; /* 10 bytes joined: fits */
    T_OK(mcp__sse_feed(&p, d, sizeof d - 1));
    const char d2[] = "data: 12345\ndata: 67890\n\n";
    T_STATUS(mcp__sse_feed(&p, d2, sizeof d2 - 1), MCP_ERR_LIMIT);
    T_TRUE(strstr(p.error, "event data longer than 10") != NULL);
    mcp__sse_cleanup(&p);
    /* An id longer than the bound. */
    mcp__sse_init(&p, 0, 0, collect, &g);
    char id[MCP__SSE_ID_MAX + 16];
    memcpy(id, "id: ", 4);
    memset(id + 4, 'i', MCP__SSE_ID_MAX + 1);
    id[MCP__SSE_ID_MAX + 5] = '\n';
    T_STATUS(mcp__sse_feed(&p, id, MCP__SSE_ID_MAX + 6), MCP_ERR_LIMIT);
    mcp__sse_cleanup(&p);
    /* A type too long to keep matches nothing, but the event still arrives. */
    memset(&g, 0, sizeof g);
    mcp__sse_init(&p, 0, 0, collect, &g);
    char ty[200];
    int n = snprintf(ty, sizeof ty, "event: %0100d\ndata: x\n\n", 1);
    T_OK(mcp__sse_feed(&p, ty, (size_t)n));
    T_EQ_INT(g.n, 1);
    T_TRUE(strncmp(g.text, "message|", 8) != 0);
    mcp__sse_cleanup(&p);
}

static void test_callback_stops(void)
{
    got g;
    memset(&g, 0, sizeof g);
    g.stop_at = 2;
    mcp__sse p;
    mcp__sse_init(&p, 0, 0, collect, &g);
    const char s[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    T_STATUS(mcp__sse_feed(&p, s, sizeof s - 1), MCP_ERR_CANCELLED);
    T_EQ_INT(g.n, 2);
    mcp__sse_cleanup(&p);
}

static void test_nomem(void)
{
    mcp_status st = MCP_OK;
    got g;
    mcp__sse p;
    const char s[] = "data: a long enough line to need the heap\ndata: and another\n\n";
    T_NOMEM_LOOP(st, {
        memset(&g, 0, sizeof g);
        mcp__sse_init(&p, 0, 0, collect, &g);
        st = feed(&p, s, sizeof s - 1, 7);
        if (st)
            mcp__sse_cleanup(&p);
    }, {
        T_EQ_INT(g.n, 1);
        mcp__sse_cleanup(&p);
    });
}

/* Large events cut at random places: O(n) and intact. */
static void test_big_event(void)
{
    size_t n = 1u << 20;
    char *s = malloc(n + 16);
    memcpy(s, "data: ", 6);
    for (size_t i = 0; i < n; i++)
        s[6 + i] = (char)('a' + i % 26);
    memcpy(s + 6 + n, "\n\n", 2);
    size_t total = n + 8;
    got g;
    memset(&g, 0, sizeof g);
    mcp__sse p;
    mcp__sse_init(&p, n + 16, n, collect, &g);
    unsigned seed = 1;
    for (size_t off = 0; off < total;) {
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 8) % 70000;
        if (k > total - off)
            k = total - off;
        T_OK(mcp__sse_feed(&p, s + off, k));
        off += k;
    }
    T_EQ_INT(p.events, 1);
    mcp__sse_cleanup(&p);
    free(s);
}

TEST_MAIN(TEST(test_fields), TEST(test_line_ends), TEST(test_ids_and_retry), TEST(test_limits),
          TEST(test_callback_stops), TEST(test_nomem), TEST(test_big_event))
