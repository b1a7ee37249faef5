/*
 * Streamable HTTP under attack, against an in-process server. The attacker's
 * sockets come from other loopback addresses (127.0.0.2, 127.0.0.3, ...)
 * while a well-behaved client on 127.0.0.1 keeps calling a tool:
 *   a. session flood: one address sends initialize after initialize; it gets
 *      429 after its quota, and the good client still opens a session and
 *      calls;
 *   b. slowloris: 2,000 connections that send half a request line and stop;
 *      the good client's calls all succeed, its p99 latency stays under 10x
 *      its unloaded p99, and the head deadline closes the half-open ones;
 *   c. the server stops cleanly afterwards;
 *   d. a head trickling in a byte at a time is closed at the deadline too;
 *   e. readers that never read the SSE stream of a chatty tool (from
 *      127.0.0.20 and up), a slow body (headers, then a byte a second, from
 *      127.0.0.40 and up) and a request flood (127.0.0.60 and up) in turn:
 *      the good client's calls all succeed within 10x its unloaded p99, and
 *      the process's resident memory stays under 64 MiB more than before;
 *      40 non-readers from one address (127.0.0.30): past its 32 requests
 *      in flight they get 429 with Retry-After;
 *   f. one address (127.0.0.50) opening GET streams gets 429 past its 16;
 *   g. junk bearer tokens (127.0.0.70 and up) on a server that introspects
 *      tokens at an authorization server taking 2 s per answer: the good
 *      client (its token cached) keeps its p99, and the server stops within
 *      a grace;
 *   h. behind a trusted proxy (127.0.0.90) clients are counted by the last
 *      X-Forwarded-For hop; from other peers the header is ignored;
 *   i. on the same server (before g), a second principal (127.0.0.80, its own token)
 *      replays the requestState the good client's principal got from an
 *      elicitation round: refused each time with -32602 "requestState
 *      integrity check failed", while the good client keeps calling; the
 *      good client's own retry with that state then completes the round.
 */
#include <mcp/mcp.h>

#include "test_as.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#define TESTLIB_SMALL_QUARANTINE /* its memory checks */
#include "http_testlib.h"



static unsigned g_port;
static char g_auth_header[256]; /* "Authorization: Bearer ...\r\n" for the good client, or "" */
static int g_quota_logged; /* log lines naming the session quota */
static char g_good_sid[64]; /* the good client's session */

static mcp_status echo_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    return mcp_call_textf(call, "n=%lld", (long long)mcp_json_int(mcp_json_get(args, "n")));
}

/* The 4 KiB message of every progress notification (filled by main, before any thread). */
static char g_chatter_msg[4097];

/* Progress notifications of 4 KiB until cancelled (at most 96 MiB). */
static mcp_status chatter_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    (void)args;
    const char *msg = g_chatter_msg;
    for (long i = 1; i <= 24576; i++)
        if (mcp_call_progress(call, (double)i, -1, msg) == MCP_ERR_CANCELLED || mcp_call_is_cancelled(call))
            break;
    return mcp_call_textf(call, "done");
}

/* Resident memory of this process (server and clients), in KiB. */
/* A TCP connection to the server from 127.0.0.`host` (non-blocking connect
 * when `nonblock`); -1 on failure. */
static int connect_from(int host, int nonblock)
{
    int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
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
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && !(nonblock && errno == EINPROGRESS)) {
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
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += (size_t)w;
        n -= (size_t)w;
    }
    return 0;
}

/* One request on a fresh connection from 127.0.0.`host`; the HTTP status
 * (0 on failure or after `timeout_ms`), the response in out. */
static int request(int host, const char *req, char *out, size_t cap, int timeout_ms)
{
    out[0] = '\0';
    int fd = connect_from(host, 0);
    if (fd < 0)
        return 0;
    if (send_all(fd, req, strlen(req))) {
        close(fd);
        return 0;
    }
    size_t len = 0;
    int status = 0;
    uint64_t t0 = now_us();
    for (;;) {
        int left = timeout_ms - (int)((now_us() - t0) / 1000u);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t r = recv(fd, out + len, cap - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        out[len] = '\0';
        const char *end = strstr(out, "\r\n\r\n");
        const char *cl = strstr(out, "Content-Length: ");
        if (end && cl && cl < end && len >= (size_t)(end + 4 - out) + strtoul(cl + 16, NULL, 10)) {
            status = atoi(out + 9);
            break;
        }
    }
    close(fd);
    return status;
}

static const char INIT[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                           "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

static int initialize(int host, char *sid, char *resp, size_t cap)
{
    char req[2048];
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
             g_port, strlen(INIT), INIT);
    int st = request(host, req, resp, cap, 5000);
    sid[0] = '\0';
    const char *h = strstr(resp, "Mcp-Session-Id: ");
    if (h)
        sscanf(h + 16, "%63[0-9a-f]", sid);
    return st;
}

static int session_call(int host, const char *sid, long n)
{
    char req[2048], resp[8192], body[256], want[32];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
             "{\"n\":%ld}}}",
             n);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: "
             "%zu\r\n\r\n%s",
             g_port, sid, strlen(body), body);
    snprintf(want, sizeof want, "n=%ld", n);
    return request(host, req, resp, sizeof resp, 5000) == 200 && strstr(resp, want);
}

/* A 2026-07-28 tools/call from 127.0.0.1 on a fresh connection: 1 when answered right. */
static int modern_call(long n)
{
    char req[2048], resp[8192], body[512], want[32];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                      "\"arguments\":{\"n\":%ld},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                      "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
                      n, n);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
             "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n%sContent-Length: %d\r\n\r\n%s",
             g_port, g_auth_header, bl, body);
    snprintf(want, sizeof want, "n=%ld", n);
    return request(1, req, resp, sizeof resp, 3000) == 200 && strstr(resp, want);
}

/* ---- a. session flood --------------------------------------------------------- */

static void session_flood_test(unsigned quota)
{
    char sid[64], resp[8192];
    int ok = 0, limited = 0, other = 0, retry_after = 0, names_limit = 0;
    int first_limited = -1;
    int tries = (int)quota + 40;
    for (int i = 0; i < tries; i++) {
        int st = initialize(2, sid, resp, sizeof resp);
        if (st == 200 && strlen(sid) == 32) {
            ok++;
        } else if (st == 429) {
            if (first_limited < 0)
                first_limited = i;
            limited++;
            retry_after += strstr(resp, "Retry-After: ") != NULL;
            names_limit += strstr(resp, "\"jsonrpc\":\"2.0\"") && strstr(resp, "sessions per client") != NULL;
        } else {
            other++;
        }
    }
    printf("session flood: the attacker (127.0.0.2) sent %d initialize: %d sessions, %d x 429, %d other\n", tries,
           ok, limited, other);
    CHECK(ok == (int)quota, "the attacker got its quota of sessions (%d of %u)", ok, quota);
    CHECK(limited == tries - (int)quota && first_limited == (int)quota, "then 429 (%d, first at %d)", limited,
          first_limited);
    CHECK(limited && retry_after == limited, "every 429 carries Retry-After (%d of %d)", retry_after, limited);
    CHECK(limited && names_limit == limited, "every 429 is a JSON-RPC error naming the limit (%d of %d)",
          names_limit, limited);
    CHECK(g_quota_logged > 0, "the refusal is logged (%d lines)", g_quota_logged);
    int st = initialize(1, sid, resp, sizeof resp);
    CHECK(st == 200 && strlen(sid) == 32, "the good client still opens a session (%d)", st);
    int calls = 0;
    snprintf(g_good_sid, sizeof g_good_sid, "%s", sid);
    for (int i = 0; i < 5 && st == 200; i++)
        calls += session_call(1, sid, 100 + i);
    CHECK(calls == 5, "the good client's calls in its session succeed (%d of 5)", calls);
    /* Another attacker address still gets its own quota. */
    st = initialize(3, sid, resp, sizeof resp);
    CHECK(st == 200, "another address is not held back by the first (%d)", st);
    /* Fill the server-wide cap (100) from a third address, under its quota:
     * 64 + 1 + 1 + 34. A new client then takes the place of the least
     * recently used idle session of the address holding the most. */
    int filled = 0;
    for (int i = 0; i < 34; i++)
        filled += initialize(4, sid, resp, sizeof resp) == 200;
    st = initialize(5, sid, resp, sizeof resp);
    printf("session flood: at the server's cap (%d more from 127.0.0.4), a new client from 127.0.0.5 got %d\n",
           filled, st);
    CHECK(filled == 34 && st == 200, "at the cap, a new client is served by evicting the biggest holder's LRU (%d)",
          st);
    CHECK(calls == 5 && session_call(1, g_good_sid, 200), "the good client's session survived the eviction");
}

/* ---- f. streams per address --------------------------------------------------------- */

/* One address opens a session and its GET stream, again and again: past
 * the quota of open streams (16 by default) the GET gets 429 with
 * Retry-After; another address still opens its stream. */
static void streams_quota_test(unsigned quota)
{
    int fds[40];
    int open_ok = 0, refused = 0, other = 0, n = (int)quota + 4;
    char sid[64], resp[8192], req[1024];
    for (int i = 0; i < n; i++) {
        fds[i] = -1;
        if (initialize(50, sid, resp, sizeof resp) != 200) {
            other++;
            continue;
        }
        snprintf(req, sizeof req,
                 "GET /mcp HTTP/1.1\r\nHost: localhost:%u\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
                 "MCP-Protocol-Version: 2025-11-25\r\n\r\n",
                 g_port, sid);
        int fd = connect_from(50, 0);
        char head[512];
        head[0] = '\0';
        if (fd >= 0 && send_all(fd, req, strlen(req)) == 0) {
            struct pollfd p = {fd, POLLIN, 0};
            ssize_t r = poll(&p, 1, 3000) > 0 ? recv(fd, head, sizeof head - 1, 0) : -1;
            head[r > 0 ? r : 0] = '\0';
        }
        if (!strncmp(head, "HTTP/1.1 200", 12)) {
            open_ok++;
            fds[i] = fd;
            continue;
        }
        if (!strncmp(head, "HTTP/1.1 429", 12) && strstr(head, "Retry-After: "))
            refused++;
        else
            other++;
        if (fd >= 0)
            close(fd);
    }
    printf("streams: one address asked for %d GET streams: %d open, %d x 429, %d other\n", n, open_ok, refused,
           other);
    CHECK(open_ok == (int)quota && refused == n - (int)quota, "streams per address: %d open, then 429 (%d)", open_ok,
          refused);
    CHECK(initialize(51, sid, resp, sizeof resp) == 200, "another address opens a session");
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* ---- b. slowloris ----------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int g_calls_done; /* calls the last good_calls() made */

/* `n` calls from the good client (fewer when the deadline comes first);
 * returns how many succeeded (g_calls_done: how many were made), *p99 in µs. */
static int good_calls(int n, long base, uint64_t *p99, uint64_t deadline_us)
{
    uint64_t *lat = calloc((size_t)n, sizeof *lat);
    int ok = 0, done = 0;
    for (int i = 0; i < n && now_us() < deadline_us; i++) {
        uint64_t t0 = now_us();
        int good = modern_call(base + i);
        lat[done++] = now_us() - t0;
        ok += good;
        if (!good && done - ok >= 3)
            break; /* the server is not answering: do not wait out every call */
    }
    g_calls_done = done;
    qsort(lat, (size_t)done, sizeof *lat, cmp_u64);
    *p99 = done ? lat[(size_t)(done * 99 / 100 < done ? done * 99 / 100 : done - 1)] : 0;
    free(lat);
    return ok;
}

#define ATTACK_CONNS 2000
#define ATTACK_HOSTS 10 /* 127.0.0.2 .. 127.0.0.11 */

static uint64_t g_p99_base; /* the good client's unloaded p99 */

static void slowloris_test(unsigned head_timeout_s)
{
    const int calls = 200;
    uint64_t p99_base, p99_attack;
    int ok = good_calls(calls, 1000, &p99_base, now_us() + 20000000u);
    CHECK(ok == calls, "unloaded: the good client's calls succeed (%d of %d)", ok, calls);
    g_p99_base = p99_base;

    static int fds[ATTACK_CONNS];
    int opened = 0;
    const char half[] = "POST /mcp HT";
    uint64_t t_attack = now_us();
    for (int i = 0; i < ATTACK_CONNS; i++) {
        fds[i] = connect_from(2 + i % ATTACK_HOSTS, 1);
        opened += fds[i] >= 0;
    }
    /* Once connected, each sends half a request line and stops. */
    int sent = 0;
    for (int round = 0; round < 50 && sent < opened; round++) {
        for (int i = 0; i < ATTACK_CONNS; i++) {
            if (fds[i] < 0)
                continue;
            struct pollfd p = {fds[i], POLLOUT, 0};
            if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &e, &el);
                if (!e && send(fds[i], half, sizeof half - 1, MSG_NOSIGNAL) > 0)
                    sent++;
                else {
                    close(fds[i]);
                    fds[i] = -1;
                }
            }
        }
        if (sent < opened)
            sleep_ms(20);
    }
    sleep_ms(300); /* let the server accept (or refuse) them all */
    /* Connections the server already closed were refused (per-address cap). */
    int held = 0;
    for (int i = 0; i < ATTACK_CONNS; i++) {
        if (fds[i] < 0)
            continue;
        char c;
        ssize_t r = recv(fds[i], &c, 1, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            held++;
    }
    printf("slowloris: %d connections from %d addresses (%d connected and sent half a line), %d held open by the "
           "server after 300 ms\n",
           ATTACK_CONNS, ATTACK_HOSTS, sent, held);
    uint64_t attack_end = t_attack + (uint64_t)head_timeout_s * 1000000u;
    ok = good_calls(calls, 5000, &p99_attack, attack_end > now_us() + 1000000u ? attack_end : now_us() + 1000000u);
    printf("slowloris: the good client's p99: %.2f ms unloaded, %.2f ms under attack (%d of %d calls ok)\n",
           p99_base / 1000.0, p99_attack / 1000.0, ok, calls);
    CHECK(ok == calls, "under attack: the good client's calls succeed (%d of %d)", ok, calls);
    uint64_t bound = 10 * p99_base;
    if (bound < 20000)
        bound = 20000; /* 20 ms floor: a p99 of a few hundred µs times 10 is scheduler noise */
    CHECK(p99_attack <= bound, "under attack: p99 %.2f ms within 10x the unloaded %.2f ms", p99_attack / 1000.0,
          p99_base / 1000.0);
    /* The head deadline closes every half-open connection. */
    uint64_t wait_until = t_attack + ((uint64_t)head_timeout_s + 4) * 1000000u;
    int closed = 0, open_left = 0;
    for (int i = 0; i < ATTACK_CONNS; i++) {
        if (fds[i] < 0)
            continue;
        int left = (int)((wait_until > now_us() ? wait_until - now_us() : 0) / 1000u);
        struct pollfd p = {fds[i], POLLIN, 0};
        char buf[512];
        /* Closed with the half line unread, the server's socket may send a
         * reset rather than an end of stream: both mean closed. */
        ssize_t got = poll(&p, 1, left) == 1 ? recv(fds[i], buf, sizeof buf, 0) : -2;
        if (got >= 0 || (got == -1 && errno == ECONNRESET))
            closed++;
        else
            open_left++;
        close(fds[i]);
    }
    printf("slowloris: %.1f s after the attack began: %d attacker connections closed by the server, %d still open\n",
           (now_us() - t_attack) / 1e6, closed, open_left);
    CHECK(open_left == 0, "the head deadline closed the half-open connections (%d left)", open_left);
    ok = good_calls(20, 9000, &p99_attack, now_us() + 10000000u);
    CHECK(ok == 20, "after the attack the good client is served (%d of 20)", ok);
}

/* ---- d. a head trickling in --------------------------------------------------------- */

/* One byte of the request head every 700 ms: never idle for long, but the
 * head deadline still closes it. */
static void trickle_test(unsigned head_timeout_s)
{
    int fd = connect_from(12, 0);
    CHECK(fd >= 0, "the trickler connects");
    if (fd < 0)
        return;
    const char head[] = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    uint64_t t0 = now_us(), limit = t0 + ((uint64_t)head_timeout_s + 3) * 1000000u;
    int closed = 0;
    for (size_t i = 0; i < sizeof head - 1 && now_us() < limit && !closed; i++) {
        if (send(fd, head + i, 1, MSG_NOSIGNAL) != 1) {
            closed = 1;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        char buf[256];
        if (poll(&p, 1, 700) == 1 && recv(fd, buf, sizeof buf, 0) >= 0)
            closed = 1;
    }
    double took = (now_us() - t0) / 1e6;
    close(fd);
    printf("trickle: a head sent one byte per 700 ms was closed after %.1f s\n", took);
    CHECK(closed && took < head_timeout_s + 2.5, "the head deadline holds for a trickling head (%s after %.1f s)",
          closed ? "closed" : "still open", took);
}

/* ---- e. attacks while the good client calls --------------------------------------- */

static volatile int g_attack_on; /* attackers run while set */
static volatile long g_peak_rss; /* KiB, sampled while attacks run */
static int g_attack_count;        /* what the attacker did (per attack) */
static int g_attack_closed;       /* ... and how often the server ended it */

static void *rss_sampler(void *arg)
{
    (void)arg;
    while (__atomic_load_n(&g_attack_on, __ATOMIC_RELAXED)) {
        long r = rss_kib();
        if (r > g_peak_rss)
            g_peak_rss = r;
        sleep_ms(10);
    }
    return NULL;
}

static int g_attack_refused;      /* ... and how often it was refused with 429 and Retry-After */
static int g_stream_closes[256];  /* "closed the event stream of 127.0.0.X" log lines, by X */

/* Drains what `fd` has without blocking: 1 when the peer closed it. The
 * first bytes the server sent on it go to head (NUL-terminated). */
static int drained_closed(int fd, char *head, size_t cap)
{
    char buf[16384];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r > 0) {
            size_t have = strlen(head);
            if (have + 1 < cap) {
                size_t n = (size_t)r < cap - 1 - have ? (size_t)r : cap - 1 - have;
                memcpy(head + have, buf, n);
                head[have + n] = '\0';
            }
            continue;
        }
        return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
}

/* The non-readers: 8 clients on 8 addresses (127.0.0.20..27), or, with
 * g_nonreaders_one_address, 40 from 127.0.0.30 alone (over the default
 * quota of 32 requests in flight per address). */
static int g_nonreaders_one_address;

/* The head of the answer on `fd` (NUL-terminated in head), peeked at:
 * nothing is consumed, so a stream's window stays as full as it was. */
static void peek_head(int fd, char *head, size_t cap)
{
    ssize_t r = recv(fd, head, cap - 1, MSG_PEEK | MSG_DONTWAIT);
    head[r > 0 ? r : 0] = '\0';
}

/* Clients that call the chatty tool and never read; each one the server
 * closes comes back a second later. Small receive buffers, so the server's
 * queue grows. A refusal (429 with Retry-After) is counted. A stream is
 * only read (to see its end) for 300 ms after the server logged closing a
 * stream of its address: reading at other times would make it a slow reader, which, when
 * the tool is slow to produce (the sanitizers' builds), keeps its queue
 * short and its worker busy for the tool's whole run. */
static void *nonreader_attacker(void *arg)
{
    (void)arg;
    enum { MAXN = 40 };
    int n = g_nonreaders_one_address ? MAXN : 8;
    int fds[MAXN];
    uint64_t back_at[MAXN];
    char heads[MAXN][256];
    char body[512], req[2048];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"chatter\","
                      "\"arguments\":{},\"_meta\":{\"progressToken\":1,\"io.modelcontextprotocol/protocolVersion\":"
                      "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    int rl = snprintf(req, sizeof req,
                      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                      "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                      "Mcp-Method: tools/call\r\nMcp-Name: chatter\r\nContent-Length: %d\r\n\r\n%s",
                      g_port, bl, body);
    int seen[MAXN];            /* g_stream_closes of its address when last looked at */
    uint64_t drain_until[MAXN]; /* read until then: the server closed a stream of its address */
    for (int i = 0; i < n; i++) {
        fds[i] = -1;
        back_at[i] = drain_until[i] = 0;
        seen[i] = __atomic_load_n(&g_stream_closes[g_nonreaders_one_address ? 30 : 20 + i], __ATOMIC_RELAXED);
    }
    while (__atomic_load_n(&g_attack_on, __ATOMIC_RELAXED)) {
        for (int i = 0; i < n; i++) {
            int host = g_nonreaders_one_address ? 30 : 20 + i;
            if (fds[i] >= 0) {
                int logged = __atomic_load_n(&g_stream_closes[host], __ATOMIC_RELAXED), closed = 0;
                if (!heads[i][0])
                    peek_head(fds[i], heads[i], sizeof heads[i]);
                int refused = !strncmp(heads[i], "HTTP/1.1 429", 12) && strstr(heads[i], "Retry-After: ");
                if (logged != seen[i]) {
                    seen[i] = logged;
                    drain_until[i] = now_us() + 300000u; /* long enough for the bytes ahead of the end */
                }
                if (!refused && now_us() < drain_until[i])
                    closed = drained_closed(fds[i], heads[i], sizeof heads[i]);
                if (closed || refused) {
                    close(fds[i]);
                    fds[i] = -1;
                    back_at[i] = now_us() + 1000000u;
                    if (refused)
                        g_attack_refused++;
                    else
                        g_attack_closed++;
                }
            }
            if (fds[i] < 0 && now_us() >= back_at[i]) {
                int fd = socket(AF_INET, SOCK_STREAM, 0);
                int sz = 4096;
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
                struct sockaddr_in a;
                memset(&a, 0, sizeof a);
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
                bind(fd, (struct sockaddr *)&a, sizeof a);
                a.sin_port = htons((uint16_t)g_port);
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                heads[i][0] = '\0';
                if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && send_all(fd, req, (size_t)rl) == 0) {
                    fds[i] = fd;
                    g_attack_count++;
                } else {
                    close(fd);
                }
            }
        }
        sleep_ms(20);
    }
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return NULL;
}

/* 400 connections (10 addresses) that send their headers and then a body
 * byte a second. */
static void *slow_body_attacker(void *arg)
{
    (void)arg;
    enum { N = 400 };
    static int fds[N];
    char head[512];
    int hl = snprintf(head, sizeof head,
                      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                      "Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{",
                      g_port);
    for (int i = 0; i < N; i++) {
        fds[i] = connect_from(40 + i % 10, 0);
        if (fds[i] >= 0 && send_all(fds[i], head, (size_t)hl) == 0)
            g_attack_count++;
    }
    while (__atomic_load_n(&g_attack_on, __ATOMIC_RELAXED)) {
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && send(fds[i], " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
                close(fds[i]);
                fds[i] = -1;
                g_attack_closed++;
            }
        for (int t = 0; t < 50 && __atomic_load_n(&g_attack_on, __ATOMIC_RELAXED); t++)
            sleep_ms(20);
    }
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return NULL;
}

/* Calls back to back on fresh connections, as fast as the server answers. */
static void *flood_attacker(void *arg)
{
    int host = 60 + (int)(intptr_t)arg;
    char body[512], req[2048], resp[4096];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                      "\"arguments\":{\"n\":1},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
             "Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s",
             g_port, bl, body);
    while (__atomic_load_n(&g_attack_on, __ATOMIC_RELAXED))
        if (request(host, req, resp, sizeof resp, 3000) == 200)
            __atomic_fetch_add(&g_attack_count, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* Runs `attacker` (on `threads` threads) while the good client calls for
 * 2.5 s (at most 1,000 calls); checks they all succeed within 10x the
 * unloaded p99 (20 ms floor) and that resident memory grows by less than
 * 64 MiB. */
static void attack_test(const char *name, void *(*attacker)(void *), int threads, uint64_t p99_base)
{
    pthread_t t[4], sampler;
    long rss0 = rss_kib();
    g_peak_rss = rss0;
    g_attack_count = g_attack_closed = g_attack_refused = 0;
    __atomic_store_n(&g_attack_on, 1, __ATOMIC_RELAXED);
    pthread_create(&sampler, NULL, rss_sampler, NULL);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, attacker, (void *)(intptr_t)i);
    sleep_ms(300); /* the attack is under way */
    uint64_t p99;
    int ok = good_calls(1000, 20000, &p99, now_us() + 2500000u), calls = g_calls_done;
    __atomic_store_n(&g_attack_on, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    pthread_join(sampler, NULL);
    uint64_t bound = 10 * p99_base < 20000 ? 20000 : 10 * p99_base;
    printf("%s: attacker %d (ended by the server: %d, refused with 429: %d); good client %d of %d ok, p99 %.2f ms "
           "(unloaded %.2f ms); resident %ld -> peak %ld KiB\n",
           name, g_attack_count, g_attack_closed, g_attack_refused, ok, calls, p99 / 1000.0, p99_base / 1000.0, rss0, g_peak_rss);
    CHECK(calls >= 100 && ok == calls, "%s: the good client's calls succeed (%d of %d)", name, ok, calls);
    CHECK(p99 <= bound, "%s: p99 %.2f ms within 10x the unloaded %.2f ms", name, p99 / 1000.0, p99_base / 1000.0);
    CHECK(g_peak_rss - rss0 < 64 * 1024, "%s: resident memory +%ld KiB, under 64 MiB", name, g_peak_rss - rss0);
}

static void log_cb(mcp_log_level level, const char *message, void *ud);

/* ---- i. requestState replayed under another principal ------------------------ */

/* Asks the client for a name (2026-07-28: an input_required round). */
static mcp_status ask_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    const mcp_json *answer = NULL;
    mcp_status st = mcp_call_elicit(call, "name", "Name?",
                                    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", &answer);
    if (st)
        return st;
    return mcp_call_textf(call, "hello %s", mcp_json_str(mcp_json_get(mcp_json_get(answer, "content"), "name"), NULL));
}

/* A 2026-07-28 call of "ask" from 127.0.0.`host` with bearer `token`: the
 * first round when state is NULL, else the retry answering "Ada" with
 * requestState `state`. The HTTP status; the response in out. */
static int ask_call(int host, const char *token, const char *state, char *out, size_t cap)
{
    char body[2048], req[4096], retry[1500] = "";
    if (state)
        snprintf(retry, sizeof retry,
                 "\"inputResponses\":{\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}},"
                 "\"requestState\":\"%s\",",
                 state);
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"ask\","
                      "\"arguments\":{},%s\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}}}",
                      retry);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
             "Mcp-Method: tools/call\r\nMcp-Name: ask\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
             g_port, token, bl, body);
    return request(host, req, out, cap, 5000);
}

static char g_replay_state[1200]; /* the good principal's requestState (set before the attack) */
static int g_replay_refused;       /* replays refused with -32602 */
static int g_replay_accepted;      /* replays that got past the check (must stay 0) */

/* The other principal replays the good one's requestState, back to back. */
static void *replay_attacker(void *arg)
{
    (void)arg;
    char resp[8192];
    while (__atomic_load_n(&g_attack_on, __ATOMIC_RELAXED)) {
        int st = ask_call(80, "mallory-token", g_replay_state, resp, sizeof resp);
        g_attack_count++;
        if (st == 200 && strstr(resp, "-32602") && strstr(resp, "requestState integrity check failed"))
            g_replay_refused++;
        else if (strstr(resp, "hello"))
            g_replay_accepted++;
        else if (g_attack_count == 1)
            printf("replay: unexpected answer (HTTP %d): %.300s\n", st, resp);
        sleep_ms(5);
    }
    return NULL;
}

/* Alice's round begins; mallory replays its state while alice calls; then
 * alice completes the round with it. */
static void replay_state_test(uint64_t p99_base)
{
    char resp[8192];
    int st = ask_call(1, "good-client-token", NULL, resp, sizeof resp);
    const char *rs = strstr(resp, "\"requestState\":\"");
    g_replay_state[0] = '\0';
    if (rs)
        sscanf(rs + 16, "%1199[^\"]", g_replay_state);
    CHECK(st == 200 && strstr(resp, "input_required") && g_replay_state[0],
          "the good principal's call asks for input and carries a requestState");
    g_replay_accepted = g_replay_refused = 0;
    attack_test("requestState replayed by another principal", replay_attacker, 1, p99_base);
    printf("replay: %d replays, %d refused with -32602, %d accepted\n", g_attack_count, g_replay_refused,
           g_replay_accepted);
    CHECK(g_attack_count > 0 && g_replay_refused == g_attack_count && g_replay_accepted == 0,
          "every replay under another principal is refused with -32602 (%d of %d)", g_replay_refused, g_attack_count);
    st = ask_call(1, "good-client-token", g_replay_state, resp, sizeof resp);
    CHECK(st == 200 && strstr(resp, "hello Ada"), "the good principal's own retry with its state completes");
}

/* ---- g. junk bearer tokens against a slow authorization server -------------------- */

static int g_junk_503; /* junk requests refused at once with 503 (the token checks' queue is full) */

/* Fresh junk tokens back to back from 127.0.0.70+: each one would be
 * introspected (2 s at the slow server); the attacker does not wait. */
static void *junk_token_attacker(void *arg)
{
    int host = 70 + (int)(intptr_t)arg;
    char body[512], req[2048], resp[1024];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                      "\"arguments\":{\"n\":1},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    for (unsigned k = 0; __atomic_load_n(&g_attack_on, __ATOMIC_RELAXED); k++) {
        snprintf(req, sizeof req,
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                 "Mcp-Method: tools/call\r\nMcp-Name: echo\r\nAuthorization: Bearer junk-%d-%u\r\n"
                 "Content-Length: %d\r\n\r\n%s",
                 g_port, host, k, bl, body);
        int st = request(host, req, resp, sizeof resp, 50);
        __atomic_fetch_add(&g_attack_count, 1, __ATOMIC_RELAXED);
        if (st == 503)
            __atomic_fetch_add(&g_junk_503, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/*
 * A server with token introspection against an authorization server that
 * takes 2 s per answer: junk tokens from four attacker addresses must not
 * hold the network threads, so the good client (its token checked once
 * and cached) keeps its latency; the server still stops within a grace.
 */
static void junk_token_test(void)
{
    tas *as;
    if (tas_start(&as, 1) != 0) {
        CHECK(0, "the test authorization server starts");
        return;
    }
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-attack-auth";
    o.version = "1.0.0";
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL)) {
        tas_stop(as);
        return;
    }
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "echo";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    d.handler = echo_tool;
    mcp_server_add_tool(srv, &d, NULL);
    d.name = "ask";
    d.input_schema = NULL;
    d.handler = ask_tool;
    mcp_server_add_tool(srv, &d, NULL);
    char url[200];
    snprintf(url, sizeof url, "%s/introspect", tas_issuer(as));
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.resource = "http://127.0.0.1/mcp";
    ao.issuers = tas_issuer(as);
    ao.introspection_url = url;
    ao.client_id = TAS_CLIENT_ID;
    ao.client_secret = TAS_CLIENT_SECRET;
    mcp_auth *auth;
    mcp_error err;
    if (mcp_auth_new(&auth, &ao, &err)) {
        printf("mcp_auth_new: %s\n", err.message);
        CHECK(0, "the verifier starts");
        mcp_server_free(srv);
        tas_stop(as);
        return;
    }
    char *claims = tas_claims(as, ao.resource, "good", "mcp:tools", 600, 0, NULL);
    tas_add_opaque(as, "good-client-token", claims);
    free(claims);
    claims = tas_claims(as, ao.resource, "mallory", "mcp:tools", 600, 0, NULL);
    tas_add_opaque(as, "mallory-token", claims);
    free(claims);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.threads = 2;
    ho.auth = auth;
    mcp_http_server *hs;
    if (mcp_http_server_start(&hs, srv, &ho, &err)) {
        printf("cannot start: %s\n", err.message);
        CHECK(0, "the server with authorization starts");
        mcp_auth_free(auth);
        mcp_server_free(srv);
        tas_stop(as);
        return;
    }
    unsigned port0 = g_port;
    g_port = mcp_http_server_port(hs);
    snprintf(g_auth_header, sizeof g_auth_header, "Authorization: Bearer good-client-token\r\n");
    uint64_t p99_base;
    int warm = modern_call(1); /* introspected once, then cached */
    int ok = good_calls(200, 1000, &p99_base, now_us() + 20000000u);
    CHECK(warm && ok == 200, "the good client's token works (%d of 200)", ok);
    replay_state_test(p99_base);
    tas_delay(as, 2000);
    g_junk_503 = 0;
    attack_test("junk tokens, slow authorization server", junk_token_attacker, 4, p99_base);
    printf("junk tokens: %d sent, %d refused at once with 503 (queue of token checks full), %u introspections\n",
           g_attack_count, g_junk_503, tas_introspections(as));
    uint64_t t1 = now_us();
    mcp_http_server_stop(hs, 1000);
    double stop_s = (now_us() - t1) / 1e6;
    printf("junk tokens: stop %.2f s\n", stop_s);
    CHECK(stop_s < 5.0, "the server with token checks outstanding stops within 5 s (%.2f s)", stop_s);
    g_auth_header[0] = '\0';
    g_port = port0;
    mcp_server_free(srv);
    mcp_auth_free(auth);
    tas_stop(as);
}

/* ---- h. behind a trusted proxy ---------------------------------------------------- */

/* initialize from 127.0.0.`host` with the X-Forwarded-For headers `xff`
 * ("" for none; each "X-Forwarded-For: ...\r\n"); the HTTP status. */
static int initialize_xff(int host, const char *xff)
{
    char req[4096], resp[8192];
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
             g_port, xff, strlen(INIT), INIT);
    return request(host, req, resp, sizeof resp, 5000);
}

/*
 * With 127.0.0.90 as a trusted proxy and 2 sessions per address: clients
 * behind it are told apart by the last X-Forwarded-For hop (the last
 * header: the one the proxy appended); a hop that is no address counts
 * as the proxy; from an untrusted peer the header is ignored.
 */
static void trusted_proxy_test(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-proxy";
    o.log = log_cb;
    o.version = "1.0.0";
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL))
        return;
    const char *proxies[] = {"127.0.0.90", "::1", NULL};
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.threads = 2;
    ho.max_sessions_per_address = 2;
    ho.trusted_proxies = proxies;
    mcp_http_server *hs;
    mcp_error err;
    const char *bad[] = {"10.0.0.300", NULL};
    ho.trusted_proxies = bad;
    CHECK(mcp_http_server_start(&hs, srv, &ho, &err) == MCP_ERR_INVALID_ARG, "a trusted proxy must be an address");
    ho.trusted_proxies = proxies;
    if (mcp_http_server_start(&hs, srv, &ho, &err)) {
        CHECK(0, "the server behind a proxy starts: %s", err.message);
        mcp_server_free(srv);
        return;
    }
    unsigned port0 = g_port;
    g_port = mcp_http_server_port(hs);
    const char *a = "X-Forwarded-For: 10.0.0.1\r\n";
    int s1 = initialize_xff(90, a), s2 = initialize_xff(90, a), s3 = initialize_xff(90, a);
    CHECK(s1 == 200 && s2 == 200 && s3 == 429, "one client behind the proxy has its own quota (%d %d %d)", s1, s2,
          s3);
    int other = initialize_xff(90, "X-Forwarded-For: 203.0.113.9, 10.0.0.2\r\n");
    CHECK(other == 200, "another client behind the proxy is not held back (%d)", other);
    int spoof = initialize_xff(90, "X-Forwarded-For: 10.0.0.7\r\nX-Forwarded-For: 10.0.0.1\r\n");
    CHECK(spoof == 429, "the last header counts: what the client sent first is not its address (%d)", spoof);
    int m1 = initialize_xff(90, "X-Forwarded-For: 10.0.0.3:8080\r\n");
    int m2 = initialize_xff(90, "X-Forwarded-For: unknown\r\n");
    int m3 = initialize_xff(90, "");
    CHECK(m1 == 200 && m2 == 200 && m3 == 429, "a malformed or missing hop counts as the proxy itself (%d %d %d)", m1,
          m2, m3);
    int u1 = initialize_xff(91, "X-Forwarded-For: 10.0.0.4\r\n");
    int u2 = initialize_xff(91, "X-Forwarded-For: 10.0.0.5\r\n");
    int u3 = initialize_xff(91, "X-Forwarded-For: 10.0.0.6\r\n");
    CHECK(u1 == 200 && u2 == 200 && u3 == 429, "from an untrusted peer X-Forwarded-For is ignored (%d %d %d)", u1, u2,
          u3);
    printf("trusted proxy: client 10.0.0.1 %d %d %d; 10.0.0.2 %d; spoofed %d; malformed %d %d %d; untrusted %d %d %d\n",
           s1, s2, s3, other, spoof, m1, m2, m3, u1, u2, u3);
    mcp_http_server_stop(hs, 0);
    mcp_server_free(srv);
    g_port = port0;
}

static void log_cb(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)ud;
    if (strstr(message, "session quota"))
        __atomic_fetch_add(&g_quota_logged, 1, __ATOMIC_RELAXED);
    const char *closed = strstr(message, "closed the event stream of 127.0.0.");
    if (closed) {
        long host = strtol(closed + 35, NULL, 10);
        if (host > 0 && host < 256)
            __atomic_fetch_add(&g_stream_closes[host], 1, __ATOMIC_RELAXED);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(g_chatter_msg, 'x', sizeof g_chatter_msg - 1);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rlim_t want = 3 * ATTACK_CONNS + 512;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < want) {
        printf("SKIP: RLIMIT_NOFILE hard limit %llu is below the %llu descriptors the attack needs\n",
               (unsigned long long)rl.rlim_max, (unsigned long long)want);
        printf("http_attack: 0 passed, 0 failed\n");
        return 0;
    }
    /* Other loopback addresses must be usable as sources. */
    g_port = 9; /* discard: only bind() matters here */
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(0x7f000002u);
    if (bind(probe, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("SKIP: cannot bind 127.0.0.2 (%s): no other loopback addresses here\n", strerror(errno));
        printf("http_attack: 0 passed, 0 failed\n");
        close(probe);
        return 0;
    }
    close(probe);

    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-attack";
    o.version = "1.0.0";
    o.log = log_cb;
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL))
        return 2;
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "echo";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    d.handler = echo_tool;
    mcp_server_add_tool(srv, &d, NULL);
    d.name = "chatter";
    d.handler = chatter_tool;
    mcp_server_add_tool(srv, &d, NULL);

    /* Every limit at its default, except a server-wide session cap that a
     * flood from one address could reach. */
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_sessions = 100;
    ho.threads = 2;
    unsigned head_timeout_s = 5; /* the default deadline for a request head */
    mcp_http_server *hs;
    mcp_error err;
    if (mcp_http_server_start(&hs, srv, &ho, &err)) {
        printf("cannot start: %s\nhttp_attack: 0 passed, 1 failed\n", err.message);
        return 1;
    }
    g_port = mcp_http_server_port(hs);
    uint64_t t0 = now_us();
    session_flood_test(64);
    streams_quota_test(16);
    slowloris_test(head_timeout_s);
    trickle_test(head_timeout_s);
    attack_test("never-read SSE", nonreader_attacker, 1, g_p99_base);
    /* 40 non-readers from one address: past its quota of requests in
     * flight (32), the rest are refused (429), and the pool stays free for
     * others. */
    g_nonreaders_one_address = 1;
    attack_test("never-read SSE, one address", nonreader_attacker, 1, g_p99_base);
    CHECK(g_attack_refused > 0, "one address over its requests-in-flight quota gets 429 with Retry-After (%d)",
          g_attack_refused);
    g_nonreaders_one_address = 0;
    attack_test("slow body", slow_body_attacker, 1, g_p99_base);
    attack_test("request flood", flood_attacker, 2, g_p99_base);
    junk_token_test();
    trusted_proxy_test();
    uint64_t t1 = now_us();
    mcp_http_server_stop(hs, 2000);
    printf("stop: %.2f s\n", (now_us() - t1) / 1e6);
    CHECK(now_us() - t1 < 5000000u, "the server stops cleanly and promptly");
    mcp_server_free(srv);
    printf("total: %.1f s\n", (now_us() - t0) / 1e6);
    return check_summary("http_attack");
}
