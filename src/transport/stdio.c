/*
 * stdio server transport: reads newline-delimited frames from a file
 * descriptor and feeds them to a connection; writes answers, one per line.
 *
 * Output is coalesced. The connection's send callback only appends the
 * frame and its newline to a pending buffer; the bytes leave through a
 * flush that runs right after (outside the connection's send lock). One
 * thread at a time flushes: it writes everything pending, then whatever
 * others appended meanwhile, until nothing is left, while they return at
 * once. Answers therefore leave as soon as a writer is free, several per
 * write() under load, and a worker never waits for another's write.
 *
 * While the I/O thread hands the frames of one read() to the connection it
 * "corks" its own output: the answers it produces meanwhile (cheap requests
 * and inline tools answer right there) are written together when the chunk
 * is done, before the next read() can block. Workers never wait for the
 * cork: their flush writes whatever is pending. It also holds the worker
 * pool meanwhile (mcp__pool_hold): the chunk's tool calls wake one worker
 * at its end, not one each. A pending buffer that
 * reaches FLUSH_AT is written at once even while corked, and a sender that
 * finds PENDING_MAX bytes waiting while the writer is stuck on a slow
 * reader waits too, so memory stays bounded and a client that does not
 * read still pushes back on the server.
 */
#include "util/abi.h"
#include "util/util.h"
#include "server/server_internal.h"
#include "mcp/transport.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_GRACE_MS 5000u
#define READ_CHUNK 65536
#define FLUSH_AT 65536u          /* pending bytes written at once, even while corked */
#define PENDING_MAX (1u << 20)   /* pending bytes at which senders wait for the writer */
#define KEEP_CAP (1u << 20)      /* an idle buffer larger than this is released */

typedef struct stdio_out {
    int fd;                 /* where frames go */
    pthread_mutex_t mu;     /* guards the fields below */
    pthread_cond_t room;    /* signalled when a flush drained the pending bytes */
    mcp_buf pend;           /* frames waiting to be written, each with its newline */
    mcp_buf spare;          /* the buffer being written by the flusher */
    int flushing;           /* a thread is writing */
    int corked;             /* the I/O thread is feeding a chunk: it holds its own output */
    int failed;             /* a write failed: every later send fails */
    pthread_t io_thread;    /* the thread running mcp_stdio_serve */
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

/*
 * Writes the pending bytes until none are left, unless another thread is
 * already doing it (it will write ours too). Called with o->mu held;
 * returns with it held.
 */
static void flush_locked(stdio_out *o)
{
    if (o->flushing)
        return;
    o->flushing = 1;
    while (o->pend.len && !o->failed) {
        mcp_buf t = o->pend; /* swap: senders append to the other buffer meanwhile */
        o->pend = o->spare;
        o->spare = t;
        pthread_mutex_unlock(&o->mu);
        mcp_status st = write_all(o->fd, o->spare.data, o->spare.len);
        pthread_mutex_lock(&o->mu);
        mcp_buf_reset(&o->spare);
        if (o->spare.cap > KEEP_CAP)
            mcp_buf_cleanup(&o->spare);
        if (st) {
            o->failed = 1;
            mcp_buf_reset(&o->pend);
        }
        pthread_cond_broadcast(&o->room);
    }
    o->flushing = 0;
}

/*
 * The connection's flush hook: runs after each frame sent, outside its send
 * lock. The I/O thread skips it while corked (set_cork() flushes later).
 */
static void flush_hook(void *user_data)
{
    stdio_out *o = user_data;
    /* Only the I/O thread changes `corked`, so it may read it unlocked. */
    if (pthread_equal(pthread_self(), o->io_thread) && o->corked)
        return;
    pthread_mutex_lock(&o->mu);
    flush_locked(o);
    pthread_mutex_unlock(&o->mu);
}

/* The connection's send callback (under its send lock): one frame and its newline, queued. */
static mcp_status send_line(const char *frame, size_t len, void *user_data)
{
    stdio_out *o = user_data;
    pthread_mutex_lock(&o->mu);
    while (!o->failed && o->flushing && o->pend.len >= PENDING_MAX)
        pthread_cond_wait(&o->room, &o->mu);
    mcp_status st = MCP_ERR_IO;
    if (!o->failed && (st = mcp_buf_reserve(&o->pend, len + 1)) == MCP_OK) {
        memcpy(o->pend.data + o->pend.len, frame, len);
        o->pend.len += len;
        o->pend.data[o->pend.len++] = '\n';
        o->pend.data[o->pend.len] = '\0';
        if (o->pend.len >= FLUSH_AT)
            flush_locked(o); /* much output held by the cork: do not wait for the chunk's end */
        if (o->failed)
            st = MCP_ERR_IO;
    }
    pthread_mutex_unlock(&o->mu);
    return st;
}

static void set_cork(stdio_out *o, int on)
{
    pthread_mutex_lock(&o->mu);
    o->corked = on;
    if (!on)
        flush_locked(o);
    pthread_mutex_unlock(&o->mu);
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

mcp_status mcp_stdio_serve_sized(mcp_server *srv, const mcp_stdio_opts *opts, size_t opts_size)
{
    mcp_stdio_opts opts_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_stdio_opts, &opts_copy, opts, opts_size, NULL);
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    if (!srv)
        return MCP_ERR_INVALID_ARG;
    int in_fd = opts && opts->in_fd ? opts->in_fd : 0;
    stdio_out out;
    memset(&out, 0, sizeof out);
    out.fd = opts && opts->out_fd ? opts->out_fd : 1;
    unsigned grace = opts && opts->grace_ms ? opts->grace_ms : DEFAULT_GRACE_MS;
    size_t max = srv->opts.max_message;
    mcp__ignore_sigpipe();

    out.io_thread = pthread_self();
    mcp_buf_init(&out.pend, 0);
    mcp_buf_init(&out.spare, 0);
    mcp__mutex_init_hot(&out.mu);
    pthread_cond_init(&out.room, NULL);

    mcp_conn *c;
    mcp_status st = mcp_conn_new(&c, srv, send_line, &out);
    if (st) {
        pthread_mutex_destroy(&out.mu);
        pthread_cond_destroy(&out.room);
        return st;
    }
    mcp__conn_set_flush(c, flush_hook);
    mcp_buf line;
    mcp_buf_init(&line, 0);
    char *chunk = mcp_malloc(READ_CHUNK);
    if (!chunk) {
        st = MCP_ERR_NOMEM;
        goto done;
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
        set_cork(&out, 1);
        mcp__pool_hold(srv->pool); /* the chunk's calls wake one worker, at its end */
        const char *p = chunk, *end = chunk + n;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t take = (size_t)((nl ? nl : end) - p);
            if (nl && !skipping && line.len == 0 && take <= max) {
                /* A whole frame inside the chunk: no copy into `line`. */
                size_t len = take;
                if (len && p[len - 1] == '\r')
                    len--;
                if (len)
                    mcp_conn_recv(c, p, len);
                p = nl + 1;
                continue;
            }
            if (!skipping) {
                if (line.len + take > max) {
                    too_long(c, max);
                    mcp_buf_reset(&line);
                    skipping = 1;
                } else if (take && (st = mcp_buf_append(&line, p, take))) {
                    mcp__pool_unhold(srv->pool);
                    set_cork(&out, 0);
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
        mcp__pool_unhold(srv->pool);
        set_cork(&out, 0); /* before read() may block */
    }
    /* A last frame without its newline still counts. */
    if (!skipping && line.len)
        mcp_conn_recv(c, line.data, line.len);
done:
    mcp_free(chunk);
    mcp_buf_cleanup(&line);
    mcp_conn_close(c, grace);
    /* No frame can be queued any more; wait for the flushes in progress,
     * then write anything left, before `out` goes away. */
    mcp__conn_wait_flush(c);
    set_cork(&out, 0);
    mcp_conn_free(c);
    mcp_buf_cleanup(&out.pend);
    mcp_buf_cleanup(&out.spare);
    pthread_mutex_destroy(&out.mu);
    pthread_cond_destroy(&out.room);
    return st;
}
