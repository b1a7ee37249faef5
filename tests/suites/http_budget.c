/*
 * Byte budgets of the Streamable HTTP server (docs/http.md, "Limits") and
 * the resumption of legacy streams, through raw sockets:
 *   a. a client that stops reading a chatty tool's SSE stream: its stream
 *      is closed past max_queue_bytes (logged), the call is cancelled, and
 *      the process's memory stays bounded;
 *   b. several such clients, each under the per-request cap, together over
 *      max_buffer_bytes: the server closes them (logged) and stays bounded;
 *   c. a legacy stream's replay holds at most max_replay_bytes (the answer
 *      stays), and a stream whose client left is released after
 *      stream_linger_ms (then Last-Event-ID is 404);
 *   d. the standalone GET stream resumes with Last-Event-ID after its
 *      connection ended, and session notifications follow a stream taken
 *      over from a connection that still holds it;
 *   e. ending a session whose handler ignores cancellation does not hold
 *      the network thread (a one-thread server keeps answering);
 *   f. stop takes one grace for all sessions and 2026-07-28 calls;
 *   g. on a kept-alive connection the next request head, and any body,
 *      must be complete within connection_timeout_s however they trickle;
 *   h. a server over its whole byte budget answers new requests 503 with
 *      Retry-After (logged) until it is back under it.
 */
#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#define TESTLIB_SMALL_QUARANTINE /* its memory checks */
#include "http_testlib.h"



static unsigned g_port;
#define LOAD(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
static int g_log_request_cap, g_log_budget; /* log lines of each kind */
static int g_log_503; /* log lines about refusing new requests over the budget */
static int g_chatter_running, g_chatter_cancelled;

/* Resident memory of this process (server and clients), in KiB. */
/* The 4 KiB message of every progress notification (filled by main, before any thread). */
static char g_chatter_msg[4097];

/* Progress notifications of 4 KiB each until cancelled (at most `n`, 96 MiB
 * by default), `ms` apart. */
static mcp_status chatter_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    __atomic_fetch_add(&g_chatter_running, 1, __ATOMIC_RELAXED);
    const char *msg = g_chatter_msg;
    long n = (long)mcp_json_int(mcp_json_get(args, "n"));
    if (n <= 0)
        n = 24576;
    long ms = (long)mcp_json_int(mcp_json_get(args, "ms"));
    int cancelled = 0;
    for (long i = 1; i <= n; i++) {
        if (ms)
            sleep_ms(ms);
        if (mcp_call_progress(call, (double)i, -1, msg) == MCP_ERR_CANCELLED || mcp_call_is_cancelled(call)) {
            cancelled = 1;
            break;
        }
    }
    if (cancelled)
        __atomic_fetch_add(&g_chatter_cancelled, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&g_chatter_running, 1, __ATOMIC_RELAXED);
    return mcp_call_textf(call, "sent %ld", n);
}

/* Sleeps args.ms, ignoring cancellation (a handler that does not check);
 * first a progress notification, when asked, so its answer streams. */
static mcp_status stubborn_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    mcp_call_progress(call, 1, -1, NULL);
    sleep_ms((long)mcp_json_int(mcp_json_get(args, "ms")));
    return mcp_call_textf(call, "slept");
}

static mcp_status echo_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    return mcp_call_textf(call, "n=%lld", (long long)mcp_json_int(mcp_json_get(args, "n")));
}

static void log_cb(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)ud;
    if (strstr(message, "closed the event stream") && strstr(message, "per-request limit"))
        __atomic_fetch_add(&g_log_request_cap, 1, __ATOMIC_RELAXED);
    if (strstr(message, "server's budget"))
        __atomic_fetch_add(&g_log_budget, 1, __ATOMIC_RELAXED);
    if (strstr(message, "new requests get 503"))
        __atomic_fetch_add(&g_log_503, 1, __ATOMIC_RELAXED);
}

/* A TCP connection from 127.0.0.`host`, with a small receive buffer when `small_rcvbuf`. */
static int connect_from(int host, int small_rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (small_rcvbuf) {
        int sz = 4096;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
    if (host != 1 && bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    a.sin_port = htons((uint16_t)g_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += (size_t)w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads into out (keeping the first cap-1 bytes, counting all in *total)
 * until `until` appears, the peer closes, or timeout_ms pass. Returns 1
 * when `until` was seen, 0 on close, -1 on timeout. */
static int read_until(int fd, char *out, size_t cap, size_t *total, const char *until, int timeout_ms)
{
    size_t len = strlen(out);
    uint64_t t0 = now_us();
    for (;;) {
        if (until && strstr(out, until))
            return 1;
        int left = timeout_ms - (int)((now_us() - t0) / 1000u);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        char buf[16384];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        if (total)
            *total += (size_t)r;
        size_t k = (size_t)r < cap - 1 - len ? (size_t)r : cap - 1 - len;
        memcpy(out + len, buf, k);
        len += k;
        out[len] = '\0';
    }
}

/* 1 when the server closes `fd` within timeout_ms (what it had queued is read and dropped). */
static int closed_by_server(int fd, int timeout_ms)
{
    char small[64] = "";
    size_t total = 0;
    uint64_t t0 = now_us();
    for (;;) {
        small[0] = '\0';
        int left = timeout_ms - (int)((now_us() - t0) / 1000u);
        if (left <= 0)
            return 0;
        int st = read_until(fd, small, sizeof small, &total, NULL, left);
        if (st == 0)
            return 1;
        if (st < 0)
            return 0;
    }
}

/* Sends a 2026-07-28 call of the chatter tool from 127.0.0.`host` and reads nothing. */
static int chatter_nonreader(int host)
{
    int fd = connect_from(host, 1);
    if (fd < 0)
        return -1;
    char body[512], req[2048];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"chatter\","
                      "\"arguments\":{},\"_meta\":{\"progressToken\":1,\"io.modelcontextprotocol/protocolVersion\":"
                      "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                     "Mcp-Method: tools/call\r\nMcp-Name: chatter\r\nContent-Length: %d\r\n\r\n%s",
                     g_port, bl, body);
    if (send_all(fd, req, (size_t)n)) {
        close(fd);
        return -1;
    }
    return fd;
}

static mcp_server *new_server(unsigned workers)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-budget";
    o.version = "1.0.0";
    o.log = log_cb;
    o.workers = workers;
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL))
        return NULL;
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "chatter";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"},\"ms\":{\"type\":"
                     "\"integer\"}}}";
    d.handler = chatter_tool;
    mcp_server_add_tool(srv, &d, NULL);
    d.name = "stubborn";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"}}}";
    d.handler = stubborn_tool;
    mcp_server_add_tool(srv, &d, NULL);
    d.name = "echo";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    d.handler = echo_tool;
    mcp_server_add_tool(srv, &d, NULL);
    return srv;
}

static mcp_http_server *start(mcp_server *srv, const mcp_http_opts *ho)
{
    mcp_http_server *hs;
    mcp_error err;
    if (mcp_http_server_start(&hs, srv, ho, &err)) {
        printf("cannot start: %s\n", err.message);
        return NULL;
    }
    g_port = mcp_http_server_port(hs);
    return hs;
}

/* Waits until no chatter handler runs (at most timeout_ms); 1 when none does. */
static int chatters_done(int timeout_ms)
{
    uint64_t until = now_us() + (uint64_t)timeout_ms * 1000u;
    while (__atomic_load_n(&g_chatter_running, __ATOMIC_RELAXED) && now_us() < until)
        sleep_ms(20);
    return __atomic_load_n(&g_chatter_running, __ATOMIC_RELAXED) == 0;
}

/* ---- a. one client stops reading ------------------------------------------------- */

static void nonreader_test(void)
{
    mcp_server *srv = new_server(2);
    mcp_http_server *hs = srv ? start(srv, NULL) : NULL; /* every limit at its default */
    CHECK(hs != NULL, "server starts");
    if (!hs)
        return;
    long rss0 = rss_kib(), peak = rss0;
    __atomic_store_n(&g_chatter_cancelled, 0, __ATOMIC_RELAXED);
    int fd = chatter_nonreader(2);
    CHECK(fd >= 0, "the non-reader connects");
    uint64_t t0 = now_us();
    int closed = 0;
    while (!closed && now_us() - t0 < 10000000u) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 50);
        long r = rss_kib();
        peak = r > peak ? r : peak;
        closed = __atomic_load_n(&g_log_request_cap, __ATOMIC_RELAXED) > 0;
    }
    int eof = closed_by_server(fd, 5000);
    double took = (now_us() - t0) / 1e6;
    close(fd);
    int done = chatters_done(5000);
    printf("non-reader: stream closed after %.2f s (logged: %d); resident memory %ld -> peak %ld KiB\n", took,
           LOAD(g_log_request_cap), rss0, peak);
    CHECK(closed, "the stream of a client that stops reading is closed, with a log line");
    CHECK(eof, "the server ends the connection");
    CHECK(done && LOAD(g_chatter_cancelled) == 1, "the chatty call is cancelled (%d)", LOAD(g_chatter_cancelled));
    CHECK(peak - rss0 < 64 * 1024, "memory stays bounded (+%ld KiB, cap 64 MiB)", peak - rss0);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
}

/* ---- b. many stop reading: the server's budget ---------------------------------- */

#define BUDGET_READERS 6

static void budget_test(void)
{
    mcp_server *srv = new_server(BUDGET_READERS);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_queue_bytes = 2u << 20;  /* each one alone is within its cap ... */
    ho.max_buffer_bytes = 3u << 20; /* ... together they pass the server's */
    mcp_http_server *hs = srv ? start(srv, &ho) : NULL;
    CHECK(hs != NULL, "server starts");
    if (!hs)
        return;
    long rss0 = rss_kib(), peak = rss0;
    __atomic_store_n(&g_chatter_cancelled, 0, __ATOMIC_RELAXED);
    int fds[BUDGET_READERS];
    int logged0 = LOAD(g_log_budget) + LOAD(g_log_request_cap);
    for (int i = 0; i < BUDGET_READERS; i++)
        fds[i] = chatter_nonreader(30 + i);
    uint64_t t0 = now_us();
    /* Nothing is read until the server has logged closing every stream:
     * reading one early would make it a (slow) reader, whose queue stays
     * short while the instrumented builds' chatter is slow. */
    while (LOAD(g_log_budget) + LOAD(g_log_request_cap) - logged0 < BUDGET_READERS && now_us() - t0 < 30000000u) {
        long r = rss_kib();
        peak = r > peak ? r : peak;
        sleep_ms(20);
    }
    int eofs = 0;
    for (int i = 0; i < BUDGET_READERS; i++) {
        eofs += fds[i] >= 0 && closed_by_server(fds[i], 10000);
        close(fds[i]);
    }
    int done = chatters_done(5000);
    printf("budget: %d non-readers closed in %.2f s (budget log lines: %d); resident memory %ld -> peak %ld KiB\n",
           eofs, (now_us() - t0) / 1e6, LOAD(g_log_budget), rss0, peak);
    CHECK(eofs == BUDGET_READERS, "every non-reader's stream is closed (%d of %d)", eofs, BUDGET_READERS);
    CHECK(LOAD(g_log_budget) > 0, "the server's budget is named in the log");
    CHECK(done && LOAD(g_chatter_cancelled) == BUDGET_READERS, "their calls are cancelled (%d)", LOAD(g_chatter_cancelled));
    CHECK(peak - rss0 < 64 * 1024, "memory stays bounded (+%ld KiB)", peak - rss0);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
}

/* ---- c, d. legacy streams: replay bytes, linger, GET resumption ----------------- */

static const char INIT[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                           "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

/* A POST in session `sid` ("" for none); returns the connected socket after sending. */
static int post(const char *sid, const char *body)
{
    int fd = connect_from(1, 0);
    if (fd < 0)
        return -1;
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: "
                     "application/json, text/event-stream\r\n%s%s%sMCP-Protocol-Version: 2025-11-25\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     g_port, sid[0] ? "Mcp-Session-Id: " : "", sid, sid[0] ? "\r\n" : "", strlen(body), body);
    if (send_all(fd, req, (size_t)n)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A GET of the session's stream (with Last-Event-ID when `last`); the socket. */
static int get_stream(const char *sid, const char *last)
{
    int fd = connect_from(1, 0);
    if (fd < 0)
        return -1;
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET /mcp HTTP/1.1\r\nHost: localhost:%u\r\nAccept: text/event-stream\r\nMcp-Session-Id: "
                     "%s\r\nMCP-Protocol-Version: 2025-11-25\r\n%s%s%s\r\n",
                     g_port, sid, last ? "Last-Event-ID: " : "", last ? last : "", last ? "\r\n" : "");
    if (send_all(fd, req, (size_t)n)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int open_session(char *sid)
{
    char resp[8192] = "";
    int fd = post("", INIT);
    sid[0] = '\0';
    if (fd < 0)
        return 0;
    read_until(fd, resp, sizeof resp, NULL, "\"result\"", 5000);
    close(fd);
    const char *h = strstr(resp, "Mcp-Session-Id: ");
    if (h)
        sscanf(h + 16, "%63[0-9a-f]", sid);
    fd = post(sid, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    resp[0] = '\0';
    if (fd >= 0) {
        read_until(fd, resp, sizeof resp, NULL, "\r\n\r\n", 5000);
        close(fd);
    }
    return strlen(sid) == 32;
}

/* A server whose legacy streams linger `linger_ms` (keep-alives every
 * 200 ms), with a session open in `sid`; NULL when either fails. */
static mcp_http_server *legacy_server(mcp_server **srv, unsigned linger_ms, char *sid)
{
    *srv = new_server(2);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_replay_bytes = 64u << 10;
    ho.stream_linger_ms = linger_ms;
    ho.keepalive_ms = 200;
    mcp_http_server *hs = *srv ? start(*srv, &ho) : NULL;
    CHECK(hs && open_session(sid), "a legacy session opens");
    return hs;
}

/* A chatter call `id` with `args` whose client reads the priming event
 * only and leaves: its stream's id into stream_id (64 bytes); 1 when primed. */
static int call_and_leave(const char *sid, int id, const char *args, char *stream_id)
{
    char body[512], resp[4096] = "";
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"chatter\","
             "\"arguments\":%s,\"_meta\":{\"progressToken\":%d}}}",
             id, args, id);
    int fd = post(sid, body);
    int primed = read_until(fd, resp, sizeof resp, NULL, "retry:", 5000) == 1;
    const char *idp = strstr(resp, "id: ");
    stream_id[0] = '\0';
    if (idp)
        sscanf(idp + 4, "%63[0-9_]", stream_id);
    close(fd);
    return primed && stream_id[0];
}

/* A call whose client leaves: after stream_linger_ms its stream is gone. */
static void linger_test(void)
{
    mcp_server *srv;
    char sid[64], stream_id[64], resp[4096] = "";
    mcp_http_server *hs = legacy_server(&srv, 500, sid);
    if (!hs)
        return;
    call_and_leave(sid, 6, "{\"n\":3}", stream_id);
    sleep_ms(500 + 1000);
    int fd = get_stream(sid, stream_id);
    read_until(fd, resp, sizeof resp, NULL, "\r\n\r\n", 5000);
    close(fd);
    CHECK(stream_id[0] && strncmp(resp, "HTTP/1.1 404", 12) == 0,
          "a stream whose client left is released after stream_linger_ms (%.12s)", resp);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
}

static void replay_test(void)
{
    /* The resumption below waits for the call's 100 events first: a loaded
     * machine stretches their 10 ms sleeps past seconds, and the stream
     * must outlive that (the release is linger_test's). */
    mcp_server *srv;
    char sid[64], stream_id[64], resp[4096] = "";
    mcp_http_server *hs = legacy_server(&srv, 60000, sid);
    if (!hs)
        return;
    /* 100 events of 4 KiB, 10 ms apart (so the answer is not all written
     * before the client leaves), then the answer. */
    int primed = call_and_leave(sid, 5, "{\"n\":100,\"ms\":10}", stream_id);
    uint64_t left = now_us();
    CHECK(primed, "the call's stream is primed (%s)", stream_id);
    chatters_done(60000);
    sleep_ms(300);
    /* Resume from the priming event: only what the replay kept comes back. */
    int fd = get_stream(sid, stream_id);
    static char big[1u << 20];
    big[0] = '\0';
    size_t total = 0;
    int got = read_until(fd, big, sizeof big, &total, "sent 100", 5000) == 1;
    close(fd);
    int events = 0;
    for (const char *p = big; (p = strstr(p, "notifications/progress")); p++)
        events++;
    printf("replay: resumed %.2f s after the client left: %zu bytes, %d progress events, answer %s\n",
           (double)(now_us() - left) / 1e6, total, events, got ? "included" : "missing");
    CHECK(got, "the answer is replayed");
    CHECK(total < (64u << 10) + 8192 && events < 100, "the replay keeps at most max_replay_bytes (%zu bytes)",
          total);

    /* d. The GET stream: primed, left, resumed with Last-Event-ID. */
    fd = get_stream(sid, NULL);
    resp[0] = '\0';
    read_until(fd, resp, sizeof resp, NULL, "retry:", 5000);
    char get_id[64] = "";
    const char *idp = strstr(resp, "id: ");
    if (idp)
        sscanf(idp + 4, "%63[0-9_]", get_id);
    close(fd);
    sleep_ms(600); /* keep-alives (200 ms) find the connection gone */
    mcp_server_list_changed(srv, "tools");
    fd = get_stream(sid, get_id);
    resp[0] = '\0';
    int resumed = read_until(fd, resp, sizeof resp, NULL, "tools/list_changed", 3000) == 1;
    const char *why = strstr(resp, "Not Found");
    CHECK(get_id[0] && resumed, "the GET stream resumes with Last-Event-ID after its connection ended (%s: %.12s %.40s)",
          get_id, resp, why ? why : "");
    /* Taken over while that connection still holds it: later notifications
     * follow the new connection. */
    int fd2 = get_stream(sid, get_id);
    char resp2[8192] = "";
    read_until(fd2, resp2, sizeof resp2, NULL, "tools/list_changed", 3000);
    resp2[0] = '\0';
    mcp_server_list_changed(srv, "tools");
    int followed = read_until(fd2, resp2, sizeof resp2, NULL, "tools/list_changed", 3000) == 1;
    CHECK(followed, "session notifications follow the stream's new connection");
    close(fd);
    close(fd2);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
}

/* ---- e, f. teardown and stop ---------------------------------------------------- */

/* A session call of `tool` with `args` from 127.0.0.1; the socket (answer unread). */
static int session_call(const char *sid, int id, const char *tool, const char *args)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":"
             "%s}}",
             id, tool, args);
    return post(sid, body);
}

/* A 2026-07-28 call of `tool`; the socket (answer unread). */
static int modern_call(int id, const char *tool, const char *args)
{
    int fd = connect_from(1, 0);
    if (fd < 0)
        return -1;
    char body[512], req[2048];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                      "\"arguments\":%s,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
                      id, tool, args);
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                     "Mcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\n\r\n%s",
                     g_port, tool, bl, body);
    if (send_all(fd, req, (size_t)n)) {
        close(fd);
        return -1;
    }
    return fd;
}

static void teardown_test(void)
{
    mcp_server *srv = new_server(4);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.threads = 1; /* one network thread: anything waiting on it stalls every client */
    ho.keepalive_ms = 100;
    mcp_http_server *hs = srv ? start(srv, &ho) : NULL;
    char sid[64];
    CHECK(hs && open_session(sid), "a legacy session opens");
    if (!hs)
        return;
    /* A call that ignores cancellation for 2 s; its client leaves, then the
     * session is deleted: the session's last reference goes on the network
     * thread when the keep-alive finds that connection gone. */
    int fd = post(sid, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"stubborn\","
                       "\"arguments\":{\"ms\":2000},\"_meta\":{\"progressToken\":3}}}");
    sleep_ms(200);
    close(fd);
    sleep_ms(300); /* the keep-alives (100 ms) find that connection gone */
    fd = connect_from(1, 0);
    char req[512], resp[4096] = "";
    int n = snprintf(req, sizeof req,
                     "DELETE /mcp HTTP/1.1\r\nHost: localhost:%u\r\nMcp-Session-Id: %s\r\nContent-Length: 0\r\n\r\n",
                     g_port, sid);
    uint64_t t_del = now_us();
    send_all(fd, req, (size_t)n);
    read_until(fd, resp, sizeof resp, NULL, "\r\n\r\n", 5000);
    t_del = now_us() - t_del;
    close(fd);
    printf("teardown: DELETE of the session answered in %.0f ms\n", t_del / 1000.0);
    CHECK(!strncmp(resp, "HTTP/1.1 200", 12) && t_del < 400000u,
          "DELETE answers at once: the teardown does not wait on the network thread (%.12s, %.0f ms)", resp,
          t_del / 1000.0);
    /* Meanwhile a good client calls every 20 ms. */
    uint64_t worst = 0, t_end = now_us() + 1500000u;
    int ok = 0, calls = 0;
    while (now_us() < t_end) {
        uint64_t t0 = now_us();
        fd = modern_call(100 + calls, "echo", "{\"n\":1}");
        resp[0] = '\0';
        ok += read_until(fd, resp, sizeof resp, NULL, "n=1", 5000) == 1;
        close(fd);
        calls++;
        uint64_t took = now_us() - t0;
        worst = took > worst ? took : worst;
        sleep_ms(20);
    }
    printf("teardown: %d of %d calls answered while a deleted session's handler ignored cancellation; slowest "
           "%.0f ms\n",
           ok, calls, worst / 1000.0);
    CHECK(ok == calls, "every call is answered (%d of %d)", ok, calls);
    CHECK(worst < 400000u, "no call waits for the session's teardown (slowest %.0f ms)", worst / 1000.0);
    mcp_http_server_stop(hs, 0);
    mcp_server_free(srv);
}

#define STOP_SESSIONS 4

static void stop_test(void)
{
    mcp_server *srv = new_server(STOP_SESSIONS + 2);
    mcp_http_server *hs = srv ? start(srv, NULL) : NULL;
    if (!hs)
        return;
    int fds[STOP_SESSIONS + 1];
    char sid[64];
    for (int i = 0; i < STOP_SESSIONS; i++) {
        fds[i] = -1;
        if (open_session(sid))
            fds[i] = session_call(sid, 3, "stubborn", "{\"ms\":3000}");
    }
    fds[STOP_SESSIONS] = modern_call(9, "stubborn", "{\"ms\":3000}");
    sleep_ms(300);
    const unsigned grace = 500;
    uint64_t t0 = now_us();
    mcp_http_server_stop(hs, grace);
    double took = (now_us() - t0) / 1e6;
    printf("stop: %d sessions and a 2026-07-28 call with handlers ignoring cancellation: stopped in %.2f s (grace "
           "%.1f s)\n",
           STOP_SESSIONS, took, grace / 1000.0);
    CHECK(took < grace / 1000.0 + 0.6, "stop takes one grace for everything (%.2f s)", took);
    for (int i = 0; i <= STOP_SESSIONS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    mcp_server_free(srv);
}

/* ---- g. deadlines on kept-alive connections -------------------------------------- */

/* Sends `lead` at once, then `trickle` a byte every 300 ms; the seconds
 * until the server closed the connection, or -1 after 8 s. */
static double trickle_after(int fd, const char *lead, const char *trickle)
{
    char resp[4096] = "";
    send_all(fd, lead, strlen(lead));
    uint64_t t0 = now_us();
    for (size_t i = 0; now_us() - t0 < 8000000u; i = (i + 1) % strlen(trickle)) {
        if (send(fd, trickle + i, 1, MSG_NOSIGNAL) != 1)
            return (now_us() - t0) / 1e6;
        resp[0] = '\0';
        if (read_until(fd, resp, sizeof resp, NULL, NULL, 300) == 0)
            return (now_us() - t0) / 1e6;
    }
    return -1;
}

static void keepalive_test(void)
{
    mcp_server *srv = new_server(2);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.connection_timeout_s = 2;
    mcp_http_server *hs = srv ? start(srv, &ho) : NULL;
    if (!hs)
        return;
    /* One whole request, answered; then the next head trickles in. */
    int fd = connect_from(1, 0);
    char req[256], resp[4096] = "";
    snprintf(req, sizeof req, "GET /mcp HTTP/1.1\r\nHost: localhost:%u\r\n\r\n", g_port);
    send_all(fd, req, strlen(req));
    int answered = read_until(fd, resp, sizeof resp, NULL, "Method Not Allowed", 5000) == 1;
    double head = trickle_after(fd, "", "GET /mcp HTTP/1.1\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    close(fd);
    /* A body that trickles. */
    fd = connect_from(1, 0);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: "
             "application/json\r\nContent-Length: 1000\r\n\r\n{",
             g_port);
    double body = trickle_after(fd, req, "                ");
    close(fd);
    printf("kept-alive: the next head trickling in was closed after %.1f s, a trickling body after %.1f s "
           "(connection_timeout_s 2)\n",
           head, body);
    CHECK(answered && head > 0 && head < 4.0, "a trickling next head on a kept-alive connection is closed (%.1f s)",
          head);
    CHECK(body > 0 && body < 4.0, "a trickling body is closed (%.1f s)", body);
    mcp_http_server_stop(hs, 0);
    mcp_server_free(srv);
}

/* ---- h. over the whole budget: 503 ------------------------------------------------ */

/*
 * A budget of one byte, held by the priming event of a GET stream that
 * reads: the server stays over it while that stream lives, so a new call
 * gets 503 with Retry-After (logged); once the stream is gone and released,
 * calls are served again.
 */
static void over_budget_test(void)
{
    mcp_server *srv = new_server(2);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_buffer_bytes = 1;
    ho.stream_linger_ms = 200;
    mcp_http_server *hs = srv ? start(srv, &ho) : NULL;
    if (!hs)
        return;
    char sid[64], resp[8192] = "";
    CHECK(open_session(sid), "a session opens under the budget");
    int gfd = get_stream(sid, NULL);
    read_until(gfd, resp, sizeof resp, NULL, "retry:", 5000);
    int fd = modern_call(1, "echo", "{\"n\":1}");
    resp[0] = '\0';
    read_until(fd, resp, sizeof resp, NULL, "\r\n\r\n", 5000);
    close(fd);
    printf("over budget: a call got %.12s (Retry-After %s)\n", resp, strstr(resp, "Retry-After: ") ? "sent" : "missing");
    CHECK(!strncmp(resp, "HTTP/1.1 503", 12) && strstr(resp, "Retry-After: "),
          "over its whole byte budget the server answers 503 with Retry-After (%.12s)", resp);
    CHECK(g_log_503 > 0, "the refusal is logged (%d)", g_log_503);
    close(gfd);
    int served = 0;
    for (int i = 0; i < 50 && !served; i++) {
        sleep_ms(100);
        fd = modern_call(2 + i, "echo", "{\"n\":2}");
        resp[0] = '\0';
        read_until(fd, resp, sizeof resp, NULL, "n=2", 3000);
        close(fd);
        served = !strncmp(resp, "HTTP/1.1 200", 12);
    }
    CHECK(served, "back under the budget, calls are served again");
    mcp_http_server_stop(hs, 0);
    mcp_server_free(srv);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(g_chatter_msg, 'x', sizeof g_chatter_msg - 1);
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(0x7f000002u);
    if (bind(probe, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("SKIP: cannot bind 127.0.0.2 (%s): no other loopback addresses here\n", strerror(errno));
        printf("http_budget: 0 passed, 0 failed\n");
        close(probe);
        return 0;
    }
    close(probe);
    uint64_t t0 = now_us();
    nonreader_test();
    budget_test();
    replay_test();
    linger_test();
    teardown_test();
    stop_test();
    keepalive_test();
    over_budget_test();
    printf("total: %.1f s\n", (now_us() - t0) / 1e6);
    return check_summary("http_budget");
}
