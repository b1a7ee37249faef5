/*
 * stdio server transport: reads newline-delimited frames from a file
 * descriptor and feeds them to a connection; writes answers, one per line,
 * under the connection's send lock.
 */
#include "../internal.h"
#include "../server_internal.h"
#include "mcp/transport.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_GRACE_MS 5000u
#define READ_CHUNK 65536

typedef struct stdio_out {
    int fd; /* where frames go */
} stdio_out;

static mcp_status write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return MCP_ERR_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return MCP_OK;
}

/* Called under the connection's send lock: one frame, then its newline. */
static mcp_status send_line(const char *frame, size_t len, void *user_data)
{
    stdio_out *o = user_data;
    /* One write for frame + newline keeps lines whole even if another
     * process shares the descriptor; small frames go through a stack copy. */
    char small[4096];
    if (len < sizeof small) {
        memcpy(small, frame, len);
        small[len] = '\n';
        return write_all(o->fd, small, len + 1);
    }
    mcp_status st = write_all(o->fd, frame, len);
    return st ? st : write_all(o->fd, "\n", 1);
}

static void ignore_sigpipe(void)
{
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGPIPE, &sa, NULL);
    }
}

static void too_long(mcp_conn *c, size_t max)
{
    char msg[160];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: "
             "frame exceeds the limit of %zu bytes\"}}",
             max);
    mcp_buf b = {msg, strlen(msg), 0, 0};
    mcp__conn_send(c, &b);
    mcp__server_diag(c->srv, MCP_LOG_WARNING, "skipped a frame longer than %zu bytes", max);
}

mcp_status mcp_stdio_serve(mcp_server *srv, const mcp_stdio_opts *opts)
{
    if (!srv)
        return MCP_ERR_INVALID_ARG;
    int in_fd = opts && opts->in_fd ? opts->in_fd : 0;
    stdio_out out = {opts && opts->out_fd ? opts->out_fd : 1};
    unsigned grace = opts && opts->grace_ms ? opts->grace_ms : DEFAULT_GRACE_MS;
    size_t max = srv->opts.max_message;
    ignore_sigpipe();

    mcp_conn *c;
    mcp_status st = mcp_conn_new(&c, srv, send_line, &out);
    if (st)
        return st;
    mcp_buf line;
    mcp_buf_init(&line, 0);
    char *chunk = mcp_malloc(READ_CHUNK);
    if (!chunk) {
        mcp_conn_free(c);
        return MCP_ERR_NOMEM;
    }
    int skipping = 0; /* inside an over-long frame: drop bytes up to the newline */
    st = MCP_OK;
    for (;;) {
        ssize_t n = read(in_fd, chunk, READ_CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            st = MCP_ERR_IO;
            break;
        }
        if (n == 0)
            break;
        const char *p = chunk, *end = chunk + n;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t take = (size_t)((nl ? nl : end) - p);
            if (!skipping) {
                if (line.len + take > max) {
                    too_long(c, max);
                    mcp_buf_reset(&line);
                    skipping = 1;
                } else if (take && (st = mcp_buf_append(&line, p, take))) {
                    goto done;
                }
            }
            if (!nl)
                break;
            p = nl + 1;
            if (skipping) {
                skipping = 0;
                continue;
            }
            size_t len = line.len;
            if (len && line.data[len - 1] == '\r')
                len--;
            if (len)
                mcp_conn_recv(c, line.data, len);
            mcp_buf_reset(&line);
        }
    }
    /* A last frame without its newline still counts. */
    if (!skipping && line.len)
        mcp_conn_recv(c, line.data, line.len);
done:
    mcp_free(chunk);
    mcp_buf_cleanup(&line);
    mcp_conn_close(c, grace);
    mcp_conn_free(c);
    return st;
}
