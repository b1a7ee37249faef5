/*
 * Streamable HTTP under load and faults, against an in-process server (so
 * sanitizers and valgrind see both sides):
 *   1. N connections x M keep-alive tools/call each (2026-07-28 requests),
 *      every answer matched to its own request, none lost;
 *   2. clients that disconnect mid-call: the call is cancelled;
 *   3. an idle connection and a slow body are timed out while others are
 *      served;
 *   4. malformed HTTP is answered with 4xx or closed, and serving goes on;
 *   5. a legacy session: initialize, call, DELETE (which ends its GET
 *      stream at once), then 404.
 *
 * usage: http_load [CONNECTIONS [CALLS]]   (default 200 x 500; the
 * environment variable MCP_HTTP_LOAD_SCALE=k divides both, for valgrind)
 */
#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "http_testlib.h"


static unsigned g_port;
static atomic_int g_cancelled; /* calls of `wait` that saw cancellation */
static atomic_int g_waiting;   /* calls of `wait` running now */

/* ---- the server's tools ---------------------------------------------------- */

static mcp_status echo_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    return mcp_call_textf(call, "n=%lld", (long long)mcp_json_int(mcp_json_get(args, "n")));
}

/* Waits up to 10 s, noting cancellation. */
static mcp_status wait_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    atomic_fetch_add(&g_waiting, 1);
    for (int i = 0; i < 2000 && !mcp_call_is_cancelled(call); i++)
        sleep_ms(5);
    if (mcp_call_is_cancelled(call))
        atomic_fetch_add(&g_cancelled, 1);
    atomic_fetch_sub(&g_waiting, 1);
    return mcp_call_text(call, "waited", NULL);
}

/* ---- a tiny HTTP/1.1 client -------------------------------------------------- */

static int connect_local(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
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
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char META[] = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                           "\"io.modelcontextprotocol/clientCapabilities\":{}}";

/* A 2026-07-28 tools/call request with its headers. */
static int format_call(char *out, size_t cap, const char *tool, long id, long n)
{
    char body[512];
    int bl = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                      "\"arguments\":{\"n\":%ld},%s}}",
                      id, tool, n, META);
    return snprintf(out, cap,
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                    "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                    "Mcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\n\r\n%s",
                    g_port, tool, bl, body);
}

/* Parses one complete HTTP response in buf[0..len); returns its length or 0. */
static size_t parse_response(const char *buf, size_t len, int *status, const char **body, size_t *body_len)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end)
        return 0;
    size_t hl = (size_t)(end - buf) + 4;
    *status = atoi(buf + 9);
    const char *cl = memmem(buf, hl, "Content-Length: ", 16);
    if (!cl)
        cl = memmem(buf, hl, "content-length: ", 16);
    if (cl) {
        size_t n = (size_t)strtoul(cl + 16, NULL, 10);
        if (len < hl + n)
            return 0;
        *body = buf + hl;
        *body_len = n;
        return hl + n;
    }
    /* Chunked (SSE): complete when the zero-length chunk arrived. */
    const char *z = memmem(buf + hl, len - hl, "\r\n0\r\n\r\n", 7);
    if (!z && !(len - hl >= 5 && memcmp(buf + hl, "0\r\n\r\n", 5) == 0))
        return 0;
    *body = buf + hl;
    *body_len = (size_t)(z ? z - (buf + hl) : 0);
    return z ? (size_t)(z - buf) + 7 : hl + 5;
}

/* ---- 1. load -------------------------------------------------------------- */

typedef struct client {
    int fd;          /* socket */
    long sent;       /* calls sent */
    long done;       /* calls answered correctly */
    long waiting_id; /* id of the call in flight */
    char buf[65536]; /* response bytes */
    size_t len;      /* in buf */
} client;

static void load_test(int nconn, int calls)
{
    client *cl = calloc((size_t)nconn, sizeof *cl);
    struct pollfd *pfd = calloc((size_t)nconn, sizeof *pfd);
    char req[1024];
    long wrong = 0, errors = 0;
    for (int i = 0; i < nconn; i++) {
        cl[i].fd = connect_local();
        if (cl[i].fd < 0) {
            errors++;
            continue;
        }
        long id = (long)i * 1000000 + 1;
        int n = format_call(req, sizeof req, "echo", id, id);
        send_all(cl[i].fd, req, (size_t)n);
        cl[i].sent = 1;
        cl[i].waiting_id = id;
    }
    uint64_t t0 = now_ms();
    long total = 0, want = (long)nconn * calls;
    while (total < want && now_ms() - t0 < 300000) {
        int np = 0;
        for (int i = 0; i < nconn; i++) {
            pfd[i].fd = cl[i].fd >= 0 && cl[i].done < calls ? cl[i].fd : -1;
            pfd[i].events = POLLIN;
            np += pfd[i].fd >= 0;
        }
        if (!np)
            break;
        if (poll(pfd, (nfds_t)nconn, 30000) <= 0) {
            /* 30 s without a byte on any connection: report who waits for what. */
            for (int i = 0; i < nconn; i++)
                if (cl[i].fd >= 0 && cl[i].done < calls)
                    printf("stalled: connection %d waits for id %ld (%ld done, %zu bytes buffered)\n", i,
                           cl[i].waiting_id, cl[i].done, cl[i].len);
            fflush(stdout);
            break;
        }
        for (int i = 0; i < nconn; i++) {
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            client *c = &cl[i];
            ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
            if (r <= 0) {
                errors++;
                close(c->fd);
                c->fd = -1;
                continue;
            }
            c->len += (size_t)r;
            int status;
            const char *body;
            size_t bl;
            size_t used = parse_response(c->buf, c->len, &status, &body, &bl);
            if (!used)
                continue;
            char want_text[64];
            snprintf(want_text, sizeof want_text, "\"id\":%ld,", c->waiting_id);
            char want_n[64];
            snprintf(want_n, sizeof want_n, "\"text\":\"n=%ld\"", c->waiting_id);
            if (status != 200 || !memmem(body, bl, want_text, strlen(want_text)) ||
                !memmem(body, bl, want_n, strlen(want_n)))
                wrong++;
            else
                c->done++;
            total++;
            memmove(c->buf, c->buf + used, c->len - used);
            c->len -= used;
            if (c->sent < calls) {
                long id = (long)i * 1000000 + c->sent + 1;
                int n = format_call(req, sizeof req, "echo", id, id);
                send_all(c->fd, req, (size_t)n);
                c->sent++;
                c->waiting_id = id;
            }
        }
    }
    uint64_t took = now_ms() - t0;
    long ok = 0;
    for (int i = 0; i < nconn; i++) {
        ok += cl[i].done;
        if (cl[i].fd >= 0)
            close(cl[i].fd);
    }
    printf("load: %d connections x %d calls: %ld answered correctly, %ld wrong, %ld connection errors, %.1f s "
           "(%.0f calls/s)\n",
           nconn, calls, ok, wrong, errors, took / 1000.0, took ? ok * 1000.0 / (double)took : 0.0);
    CHECK(ok == want && wrong == 0 && errors == 0, "every call answered with its own id");
    free(cl);
    free(pfd);
}

/* ---- 2. disconnect mid-call ---------------------------------------------------- */

static void disconnect_test(void)
{
    int before = atomic_load(&g_cancelled);
    char req[1024];
    for (int k = 0; k < 3; k++) {
        int fd = connect_local();
        int n = format_call(req, sizeof req, "wait", 7 + k, 0);
        send_all(fd, req, (size_t)n);
        sleep_ms(150);
        close(fd); /* the client goes away before the answer */
    }
    /* Noticed at the next keep-alive (500 ms here), then cancelled. */
    uint64_t t0 = now_ms();
    while (atomic_load(&g_cancelled) - before < 3 && now_ms() - t0 < 8000)
        sleep_ms(20);
    CHECK(atomic_load(&g_cancelled) - before == 3, "calls whose client left were cancelled (%d of 3)",
          atomic_load(&g_cancelled) - before);
    t0 = now_ms();
    while (atomic_load(&g_waiting) > 0 && now_ms() - t0 < 3000)
        sleep_ms(20);
    CHECK(atomic_load(&g_waiting) == 0, "no handler left running");
}

/* ---- 3. idle and slow connections ------------------------------------------------- */

/* One normal call on a fresh connection; 1 when answered 200. */
static int one_call(long id)
{
    int fd = connect_local();
    if (fd < 0)
        return 0;
    char req[1024], buf[8192];
    int n = format_call(req, sizeof req, "echo", id, id);
    send_all(fd, req, (size_t)n);
    size_t len = 0;
    int status = 0;
    const char *body;
    size_t bl;
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 5000) > 0) {
        ssize_t r = recv(fd, buf + len, sizeof buf - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        if (parse_response(buf, len, &status, &body, &bl))
            break;
    }
    close(fd);
    return status == 200;
}

/* 1 when the server closes the connection within `ms`. */
static int closed_within(int fd, long ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    uint64_t t0 = now_ms();
    char b[4096];
    while ((long)(now_ms() - t0) < ms) {
        if (poll(&p, 1, 200) > 0) {
            ssize_t r = recv(fd, b, sizeof b, 0);
            if (r <= 0)
                return 1;
        }
    }
    return 0;
}

static void timeout_test(void)
{
    int idle = connect_local(); /* says nothing at all */
    int slow = connect_local(); /* headers, then a body that never finishes */
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000\r\n\r\n{\"jsonrpc\":",
                     g_port);
    send_all(slow, head, (size_t)n);
    /* Others are served meanwhile. */
    int served = 0;
    for (int i = 0; i < 20; i++)
        served += one_call(900000 + i);
    CHECK(served == 20, "calls served while idle/slow connections hang (%d of 20)", served);
    CHECK(closed_within(idle, 6000), "the idle connection was closed");
    CHECK(closed_within(slow, 6000), "the stalled body was timed out");
    close(idle);
    close(slow);
}

/* ---- 4. malformed HTTP -------------------------------------------------------------- */

static void malformed_test(void)
{
    static const char *bad[] = {
        "GARBAGE\r\n\r\n",
        "POST /mcp HTTP/9.9\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost 127.0.0.1\r\nNoColonHeader\r\n\r\n",
        "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", /* a TLS hello on a plain port */
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: image/png\r\n"
        "Content-Length: 2\r\n\r\n{}",
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\nnot json",
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    };
    int ok = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int fd = connect_local();
        send_all(fd, bad[i], strlen(bad[i]));
        shutdown(fd, SHUT_WR);
        char buf[4096];
        size_t len = 0;
        struct pollfd p = {fd, POLLIN, 0};
        while (poll(&p, 1, 3000) > 0) {
            ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
        buf[len] = '\0';
        int status = len > 12 && !strncmp(buf, "HTTP/1.", 7) ? atoi(buf + 9) : 0;
        /* Answered with an error status, or simply closed. */
        if (status == 0 || status >= 400) /* 505 for an unknown HTTP version is fine */
            ok++;
        else
            printf("  malformed request %zu got %d\n", i, status);
        close(fd);
    }
    CHECK(ok == (int)(sizeof bad / sizeof bad[0]), "malformed requests answered with an error status or closed (%d)", ok);
    CHECK(one_call(990000), "still serving after malformed input");
}

/* ---- 5. legacy session lifecycle ----------------------------------------------------- */

static int raw_request(const char *req, char *out, size_t cap)
{
    int fd = connect_local();
    send_all(fd, req, strlen(req));
    size_t len = 0;
    int status = 0;
    const char *body;
    size_t bl;
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 5000) > 0) {
        ssize_t r = recv(fd, out + len, cap - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        out[len] = '\0';
        if (parse_response(out, len, &status, &body, &bl))
            break;
    }
    close(fd);
    return status;
}

static void session_test(void)
{
    char req[2048], resp[8192];
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
             g_port, strlen(init), init);
    int st = raw_request(req, resp, sizeof resp);
    const char *h = strstr(resp, "Mcp-Session-Id: ");
    char sid[64] = "";
    if (h)
        sscanf(h + 16, "%63[0-9a-f]", sid);
    CHECK(st == 200 && strlen(sid) == 32, "initialize opens a session (%d, '%s')", st, sid);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"n\":5}}}";
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %zu\r\n\r\n%s",
             g_port, sid, strlen(call), call);
    st = raw_request(req, resp, sizeof resp);
    CHECK(st == 200 && strstr(resp, "n=5"), "a call in the session (%d)", st);
    snprintf(req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\n"
                              "Accept: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             g_port, strlen(call), call);
    CHECK(raw_request(req, resp, sizeof resp) == 400, "no session id: 400");
    /* The session's GET stream, open when the DELETE comes. */
    snprintf(req, sizeof req,
             "GET /mcp HTTP/1.1\r\nHost: localhost:%u\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
             "MCP-Protocol-Version: 2025-11-25\r\n\r\n",
             g_port, sid);
    int get = connect_local();
    send_all(get, req, strlen(req));
    char sse[8192];
    size_t sl = 0;
    struct pollfd gp = {get, POLLIN, 0};
    while (!memmem(sse, sl, "\r\n\r\n", 4) && sl < sizeof sse - 1 && poll(&gp, 1, 5000) > 0) {
        ssize_t r = recv(get, sse + sl, sizeof sse - 1 - sl, 0);
        if (r <= 0)
            break;
        sl += (size_t)r;
    }
    CHECK(sl > 12 && !memcmp(sse, "HTTP/1.1 200", 12), "the session's GET stream opens");
    snprintf(req, sizeof req, "DELETE /mcp HTTP/1.1\r\nHost: localhost:%u\r\nMcp-Session-Id: %s\r\n\r\n", g_port, sid);
    CHECK(raw_request(req, resp, sizeof resp) == 200, "DELETE ends the session");
    /* ... and its GET stream at once (the zero-length chunk, or the
     * connection closed), not at its next keep-alive or never. Valgrind
     * (MCP_HTTP_LOAD_SCALE) runs everything tens of times slower. */
    uint64_t t0 = now_ms(), limit = getenv("MCP_HTTP_LOAD_SCALE") ? 3000 : 200;
    int ended = 0;
    while (!ended && now_ms() - t0 < 5000 && poll(&gp, 1, 100) >= 0) {
        if (!(gp.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t r = recv(get, sse + sl, sizeof sse - 1 - sl, 0);
        if (r > 0)
            sl += (size_t)r;
        ended = r <= 0 || memmem(sse, sl, "\r\n0\r\n\r\n", 7) != NULL;
        if (sl > sizeof sse / 2) { /* keep-alives: only the tail matters */
            memmove(sse, sse + sl - 16, 16);
            sl = 16;
        }
    }
    uint64_t took = now_ms() - t0;
    printf("DELETE: the session's GET stream %s after %llu ms\n", ended ? "ended" : "still open",
           (unsigned long long)took);
    CHECK(ended && took <= limit, "DELETE ends the session's GET stream within %llu ms (%s after %llu ms)",
          (unsigned long long)limit, ended ? "ended" : "still open", (unsigned long long)took);
    close(get);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %zu\r\n\r\n%s",
             g_port, sid, strlen(call), call);
    CHECK(raw_request(req, resp, sizeof resp) == 404, "a deleted session is 404");
}

/* ---- 6. legacy clients without sessions (sessionless) --------------------------------- */

static int post(const char *extra_headers, const char *body, char *resp, size_t cap)
{
    char req[2048];
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: localhost:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
             g_port, extra_headers, strlen(body), body);
    return raw_request(req, resp, cap);
}

static void sessionless_test(void)
{
    char resp[8192], req[512];
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    int st = post("", init, resp, sizeof resp);
    CHECK(st == 200 && strstr(resp, "\"protocolVersion\":\"2025-06-18\"") && !strstr(resp, "Mcp-Session-Id:"),
          "sessionless: initialize answers without a session id (%d)", st);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"n\":7}}}";
    st = post("MCP-Protocol-Version: 2025-06-18\r\n", call, resp, sizeof resp);
    CHECK(st == 200 && strstr(resp, "n=7"), "sessionless: a call stands alone (%d)", st);
    st = post("", call, resp, sizeof resp);
    CHECK(st == 200 && strstr(resp, "n=7"), "sessionless: no version header assumes 2025-03-26 (%d)", st);
    st = post("MCP-Protocol-Version: 1999-01-01\r\n", call, resp, sizeof resp);
    CHECK(st == 400 && strstr(resp, "unsupported MCP-Protocol-Version"), "sessionless: a bad version header is 400 (%d)", st);
    st = post("", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", resp, sizeof resp);
    CHECK(st == 202, "sessionless: a notification is 202 (%d)", st);
    snprintf(req, sizeof req, "GET /mcp HTTP/1.1\r\nHost: localhost:%u\r\nAccept: text/event-stream\r\n\r\n", g_port);
    CHECK(raw_request(req, resp, sizeof resp) == 405, "sessionless: GET is 405");
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

int main(int argc, char **argv)
{
    int nconn = argc > 1 ? atoi(argv[1]) : 200;
    int calls = argc > 2 ? atoi(argv[2]) : 500;
    const char *scale = getenv("MCP_HTTP_LOAD_SCALE");
    if (scale && atoi(scale) > 1) {
        nconn = nconn / atoi(scale) > 0 ? nconn / atoi(scale) : 1;
        calls = calls / atoi(scale) > 0 ? calls / atoi(scale) : 1;
    }
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-load";
    o.version = "1.0.0";
    o.log = quiet;
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL))
        return 2;
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "echo";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    d.handler = echo_tool;
    mcp_server_add_tool(srv, &d, NULL);
    d.name = "wait";
    d.handler = wait_tool;
    mcp_server_add_tool(srv, &d, NULL);
    /* Server A: generous timeouts, so the load phase measures serving and
     * not the scheduler of a busy machine. Server B: 2 s timeouts, no
     * legacy sessions. */
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.connection_timeout_s = 60;
    ho.keepalive_ms = 500;
    ho.max_connections = 512;
    ho.max_connections_per_address = 512; /* every load connection comes from 127.0.0.1 */
    ho.max_requests_per_address = 512;
    mcp_http_server *hs;
    mcp_error err;
    if (mcp_http_server_start(&hs, srv, &ho, &err)) {
        printf("cannot start: %s\nhttp_load: 0 passed, 1 failed\n", err.message);
        return 1;
    }
    g_port = mcp_http_server_port(hs);
    load_test(nconn, calls);
    disconnect_test();
    malformed_test();
    session_test();
    mcp_http_server_stop(hs, 2000);
    ho.connection_timeout_s = 2;
    ho.sessionless = 1;
    if (mcp_http_server_start(&hs, srv, &ho, &err)) {
        printf("cannot start: %s\nhttp_load: 0 passed, 1 failed\n", err.message);
        return 1;
    }
    g_port = mcp_http_server_port(hs);
    sessionless_test();
    timeout_test();
    mcp_http_server_stop(hs, 2000);
    mcp_server_free(srv);
    return check_summary("http_load");
}
