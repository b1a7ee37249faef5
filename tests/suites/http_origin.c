/*
 * DNS-rebinding protection of the Streamable HTTP server through the public
 * options: configured allowed_origins (short ones such as "null", ports,
 * default ports) and allowed_hosts (case, trailing dot, ports), and the
 * defaults (http://[::1] on any port). A request is sent with a Host and an
 * Origin header; only the status line is read: 403 means refused. Also the
 * health check (health_path), which skips those checks and the rate limit.
 */
#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int g_passed, g_failed;
static unsigned g_port;

/* The status code of METHOD PATH with these headers (NULL = header left out); -1 on failure. */
static int status_req(const char *method, const char *path, const char *host, const char *origin)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)g_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[1024];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\n%s%s%s%s%s%sConnection: close\r\n\r\n", method, path,
                     host ? "Host: " : "", host ? host : "", host ? "\r\n" : "", origin ? "Origin: " : "",
                     origin ? origin : "", origin ? "\r\n" : "");
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -1;
    }
    char buf[64];
    size_t got = 0;
    while (got < 12) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    if (got < 12 || strncmp(buf, "HTTP/1.", 7) != 0)
        return -1;
    return atoi(buf + 9);
}

static int status_of(const char *host, const char *origin)
{
    return status_req("GET", "/mcp", host, origin);
}

static void expect(const char *host, const char *origin, int allowed, int line)
{
    int st = status_of(host, origin);
    int ok = st > 0 && (allowed ? st != 403 : st == 403);
    if (ok) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL line %d: Host %s Origin %s: status %d, expected %s\n", line, host ? host : "(none)",
               origin ? origin : "(none)", st, allowed ? "not 403" : "403");
    }
}
/* METHOD PATH answers `want`. */
static void expect_status(const char *method, const char *path, const char *host, int want, int line)
{
    int st = status_req(method, path, host, NULL);
    if (st == want) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL line %d: %s %s (Host %s): status %d, expected %d\n", line, method, path, host ? host : "(none)",
               st, want);
    }
}
#define STATUS(m, p, h, want) expect_status((m), (p), (h), (want), __LINE__)
#define ALLOWED(h, o) expect((h), (o), 1, __LINE__)
#define REFUSED(h, o) expect((h), (o), 0, __LINE__)

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static int start(mcp_http_server **hs, mcp_server *srv, const mcp_http_opts *ho)
{
    mcp_error err;
    if (mcp_http_server_start(hs, srv, ho, &err)) {
        printf("cannot start: %s\n", err.message);
        return -1;
    }
    g_port = mcp_http_server_port(*hs);
    return 0;
}

int main(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "http-origin";
    o.version = "1.0.0";
    o.log = quiet;
    mcp_server *srv;
    if (mcp_server_new(&srv, &o, NULL))
        return 2;
    mcp_http_server *hs;
    mcp_http_opts ho;

    /* The defaults: the loopback names, http and https, any port. */
    memset(&ho, 0, sizeof ho);
    if (start(&hs, srv, &ho))
        return 1;
    char h[64];
    snprintf(h, sizeof h, "127.0.0.1:%u", g_port);
    ALLOWED(h, NULL);
    ALLOWED(h, "http://[::1]");
    ALLOWED(h, "http://[::1]:1234");
    ALLOWED(h, "https://[::1]:443");
    ALLOWED(h, "http://localhost:99");
    ALLOWED(h, "http://LocalHost.:99");
    ALLOWED(h, "http://127.0.0.1:8080");
    ALLOWED("[::1]:1", NULL);
    ALLOWED("LOCALHOST.", NULL);
    REFUSED(h, "http://localhost.evil.example");
    REFUSED(h, "http://localhost.evil.example:1");
    REFUSED(h, "http://[::1]x");
    REFUSED(h, "http://[::1]:");
    REFUSED(h, "http://[::1]:99999");
    REFUSED(h, "http://localhost:1/path");
    REFUSED(h, "ftp://localhost");
    REFUSED(h, "null");
    REFUSED("evil.example", NULL);
    mcp_http_server_stop(hs, 2000);

    /* Configured lists: a short origin ("null"), ports, default ports;
     * hosts in any case, with a trailing dot or a port. */
    static const char *const origins[] = {"null", "http://a.example:8080", "http://d.example:80",
                                          "HTTPS://E.Example.", "http://[::1]", NULL};
    static const char *const hosts[] = {"Example.COM.", "b.example:443", "[::1]", NULL};
    memset(&ho, 0, sizeof ho);
    ho.allowed_origins = origins;
    ho.allowed_hosts = hosts;
    if (start(&hs, srv, &ho))
        return 1;
    ALLOWED("example.com", NULL);
    ALLOWED("EXAMPLE.com.:80", NULL);
    ALLOWED("example.com:8080", NULL);
    ALLOWED("b.example", NULL);
    ALLOWED("b.example:443", NULL);
    ALLOWED("[::1]:8080", NULL);
    REFUSED("c.example", NULL);
    REFUSED("example.com.evil", NULL);
    REFUSED("127.0.0.1", NULL);
    ALLOWED("[::1]", "null");
    ALLOWED("[::1]", "NULL");
    REFUSED("[::1]", "null:1");   /* read past "null" before */
    REFUSED("[::1]", "nullx");
    REFUSED("[::1]", "nul");
    ALLOWED("[::1]", "http://a.example:8080");
    REFUSED("[::1]", "http://a.example:8081");
    REFUSED("[::1]", "http://a.example");
    ALLOWED("[::1]", "http://d.example");      /* 80 is http's default port */
    ALLOWED("[::1]", "http://d.example:80");
    REFUSED("[::1]", "http://d.example:81");
    REFUSED("[::1]", "https://d.example");
    ALLOWED("[::1]", "https://e.example");
    ALLOWED("[::1]", "https://e.example:8443"); /* no port configured: any port */
    REFUSED("[::1]", "http://e.example");
    ALLOWED("[::1]", "http://[::1]:1234");
    REFUSED("[::1]", "http://[::2]:1234");
    mcp_http_server_stop(hs, 2000);

    /* The health check: any Host, no rate limit, GET and HEAD only; the
     * endpoint keeps its checks. Without health_path the path is unknown. */
    memset(&ho, 0, sizeof ho);
    ho.health_path = "/healthz";
    ho.rate_per_address = 0.001;
    ho.burst_per_address = 1;
    if (start(&hs, srv, &ho))
        return 1;
    for (int i = 0; i < 3; i++)
        STATUS("GET", "/healthz", "evil.example", 200);
    STATUS("HEAD", "/healthz", NULL, 200);
    STATUS("POST", "/healthz", NULL, 405);
    STATUS("GET", "/healthz/x", NULL, 404); /* elsewhere the rate limit applies: this took the one token */
    STATUS("GET", "/healthz/x", NULL, 429);
    STATUS("GET", "/healthz", NULL, 200);
    mcp_http_server_stop(hs, 2000);
    memset(&ho, 0, sizeof ho);
    if (start(&hs, srv, &ho))
        return 1;
    STATUS("GET", "/healthz", NULL, 404);
    mcp_http_server_stop(hs, 2000);
    static const char *const bad_health[] = {"/mcp", "healthz"};
    for (size_t i = 0; i < 2; i++) {
        memset(&ho, 0, sizeof ho);
        ho.health_path = bad_health[i];
        mcp_error err;
        mcp_status st = mcp_http_server_start(&hs, srv, &ho, &err);
        if (st == MCP_ERR_INVALID_ARG) {
            g_passed++;
        } else {
            g_failed++;
            printf("FAIL: health_path %s: status %d, expected MCP_ERR_INVALID_ARG\n", bad_health[i], st);
            if (st == MCP_OK)
                mcp_http_server_stop(hs, 0);
        }
    }

    mcp_server_free(srv);
    printf("http_origin: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
