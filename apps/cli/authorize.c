/*
 * The browser part of mcp-cli's OAuth authorization code flow.
 *
 * libmcp does the protocol (discovery, registration, PKCE, the token
 * exchange); it hands over an authorization URL and wants back the URL
 * the browser was redirected to. mcp-cli prints the URL on stderr for a
 * person to open, then waits for the browser to come back: on a loopback
 * listener at the redirect URI (http://127.0.0.1:PORT/callback, a port the
 * system picks unless --redirect-uri names one), or for the address pasted
 * on stdin when the browser runs elsewhere. The first of the two wins.
 */
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQUEST_MAX 8192 /* the browser's request line and headers */
#define READ_MS 5000     /* a connected browser sends its request within this */

static const char PAGE[] = "<!doctype html><title>mcp-cli</title><p>mcp-cli received the authorization. "
                           "You can close this window.</p>\n";

/* Splits "http://HOST[:PORT]/PATH..." into its host, port and path; 0 on success. */
static int split_loopback(const char *uri, char *host, size_t hcap, unsigned *port, const char **path)
{
    if (strncasecmp(uri, "http://", 7) != 0)
        return -1;
    const char *h = uri + 7;
    const char *end = h + strcspn(h, "/?#");
    const char *colon = NULL;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        if (!rb)
            return -1;
        colon = rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
    }
    const char *hend = colon ? colon : end;
    if (hend == h || (size_t)(hend - h) >= hcap)
        return -1;
    memcpy(host, h, (size_t)(hend - h));
    host[hend - h] = '\0';
    *port = 80;
    if (colon) {
        char *e;
        unsigned long p = strtoul(colon + 1, &e, 10);
        if (e != end || p > 65535)
            return -1;
        *port = (unsigned)p;
    }
    *path = *end == '/' ? end : "/";
    return 0;
}

int cli_redirect_init(cli_redirect *r, const char *uri, char *msg, size_t cap)
{
    unsigned wait_s = r->wait_s;
    memset(r, 0, sizeof *r);
    r->wait_s = wait_s;
    r->fd = -1;
    char host[64];
    unsigned port = 0;
    const char *path;
    if (!uri) {
        strcpy(host, "127.0.0.1");
    } else if (split_loopback(uri, host, sizeof host, &port, &path) != 0 ||
               (strcmp(host, "127.0.0.1") != 0 && strcasecmp(host, "localhost") != 0)) {
        /* https or another host: the browser cannot reach mcp-cli; the address is pasted. */
        snprintf(r->uri, sizeof r->uri, "%s", uri);
        if (strlen(uri) >= sizeof r->uri) {
            snprintf(msg, cap, "--redirect-uri is too long");
            return -1;
        }
        return 0;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    socklen_t al = sizeof a;
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (!uri) {
            snprintf(msg, cap, "cannot listen on 127.0.0.1 for the browser's redirect: %s", strerror(e));
            return -1;
        }
        /* The port is taken: the address can still be pasted. */
        snprintf(r->uri, sizeof r->uri, "%s", uri);
        return 0;
    }
    r->fd = fd;
    if (uri)
        snprintf(r->uri, sizeof r->uri, "%s", uri);
    else
        snprintf(r->uri, sizeof r->uri, "http://127.0.0.1:%u/callback", ntohs(a.sin_port));
    if (uri && strlen(uri) >= sizeof r->uri) {
        close(fd);
        r->fd = -1;
        snprintf(msg, cap, "--redirect-uri is too long");
        return -1;
    }
    return 0;
}

void cli_redirect_close(cli_redirect *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/*
 * Serves one browser connection: 1 with `out` set when it was the
 * redirect (GET on the redirect URI's path), 0 otherwise (answered 404).
 */
static int serve(const cli_redirect *r, int fd, char *out, size_t cap)
{
    char buf[REQUEST_MAX];
    size_t len = 0;
    long long until = now_ms() + READ_MS;
    while (len + 1 < sizeof buf && !memmem(buf, len, "\r\n", 2)) {
        struct pollfd p = {fd, POLLIN, 0};
        long long left = until - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return 0;
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            return 0;
        len += (size_t)n;
    }
    buf[len] = '\0';
    char method[8], target[REQUEST_MAX];
    /* The redirect URI's origin ("http://127.0.0.1:PORT") and path ("/" when it has none). */
    size_t ol = 7 + strcspn(r->uri + 7, "/?#");
    const char *path = r->uri[ol] == '/' ? r->uri + ol : "/";
    size_t pl = strcspn(path, "?#");
    int ok = sscanf(buf, "%7s %8191s", method, target) == 2 && strcmp(method, "GET") == 0 &&
             strncmp(target, path, pl) == 0 && (target[pl] == '?' || target[pl] == '\0');
    /* The address the browser landed on: that origin and the request target. */
    if (ok && ol + strlen(target) < cap) {
        memcpy(out, r->uri, ol);
        memcpy(out + ol, target, strlen(target) + 1);
    } else {
        ok = 0;
    }
    char head[160];
    snprintf(head, sizeof head,
             "HTTP/1.1 %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
             ok ? "200 OK" : "404 Not Found", ok ? sizeof PAGE - 1 : (size_t)0);
    send_all(fd, head, strlen(head));
    if (ok)
        send_all(fd, PAGE, sizeof PAGE - 1);
    return ok;
}

mcp_status cli_authorize(mcp_client *c, const char *url, const char *redirect_uri, char *out, size_t cap, void *ud)
{
    (void)c;
    cli_redirect *r = ud;
    size_t base = strcspn(redirect_uri, "?#");
    fprintf(stderr, "mcp-cli: the server wants authorization. Open this address in a browser:\n\n  %s\n\n", url);
    if (r->fd >= 0)
        fprintf(stderr, "mcp-cli: waiting for the browser to come back to %.*s (or paste the address it shows "
                        "and press Enter)\n",
                (int)base, redirect_uri);
    else
        fprintf(stderr, "mcp-cli: after signing in, paste the address the browser shows (%.*s?...) and press Enter\n",
                (int)base, redirect_uri);
    fflush(stderr);
    int use_stdin = 1;
    long long until = now_ms() + (long long)r->wait_s * 1000;
    char line[8192];
    size_t ll = 0;
    for (;;) {
        struct pollfd p[2];
        int n = 0;
        if (r->fd >= 0)
            p[n++] = (struct pollfd){r->fd, POLLIN, 0};
        if (use_stdin)
            p[n++] = (struct pollfd){0, POLLIN, 0};
        long long left = until - now_ms();
        if (n == 0) {
            fprintf(stderr, "mcp-cli: the input ended before an address was pasted\n");
            return MCP_ERR_CLOSED;
        }
        if (left <= 0) {
            fprintf(stderr, "mcp-cli: no authorization within %u s\n", r->wait_s);
            return MCP_ERR_TIMEOUT;
        }
        int pr = poll(p, (nfds_t)n, left > 1000 ? 1000 : (int)left);
        if (pr < 0 && errno != EINTR)
            return MCP_ERR_IO;
        for (int i = 0; i < n && pr > 0; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (p[i].fd == r->fd) {
                int cfd = accept(r->fd, NULL, NULL);
                if (cfd < 0)
                    continue;
                int got = serve(r, cfd, out, cap);
                close(cfd);
                if (got)
                    return MCP_OK;
                continue;
            }
            ssize_t k = read(0, line + ll, sizeof line - 1 - ll);
            if (k <= 0) {
                use_stdin = 0; /* end of input: only the browser can answer now */
                continue;
            }
            ll += (size_t)k;
            line[ll] = '\0';
            /* Every complete line (a too long one counts as complete). */
            for (;;) {
                char *nl = strchr(line, '\n');
                if (!nl && ll + 1 < sizeof line)
                    break;
                size_t used = nl ? (size_t)(nl - line) + 1 : ll;
                if (nl)
                    *nl = '\0';
                char *w = line;
                while (*w == ' ' || *w == '\t')
                    w++;
                size_t wl = strlen(w);
                while (wl && (w[wl - 1] == '\r' || w[wl - 1] == ' ' || w[wl - 1] == '\t'))
                    w[--wl] = '\0';
                if (strncmp(w, redirect_uri, base) == 0 && wl < cap) {
                    memcpy(out, w, wl + 1);
                    return MCP_OK;
                }
                if (wl)
                    fprintf(stderr, "mcp-cli: that is not an address starting with %.*s; try again\n", (int)base,
                            redirect_uri);
                memmove(line, line + used, ll - used + 1);
                ll -= used;
            }
        }
    }
}
