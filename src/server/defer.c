/*
 * Requests whose handler may block, run on the worker pool: a
 * resources/read of a dynamic resource, a prompts/get and a
 * completion/complete with a callback, unless their author flagged the
 * resource or prompt non-blocking. The transport's thread (an
 * HTTP network thread, the stdio reader) only checks the request and
 * queues it, as it does a tools/call.
 *
 * A queued request holds a reference to its connection and counts in
 * `running`, so mcp_conn_close() gives it the grace it gives a tool
 * handler; one that starts after the close began is dropped unanswered.
 */
#include "util/util.h"
#include "server/server_internal.h"

#include <string.h>

typedef struct deferred {
    mcp__job job;             /* pool linkage; must stay first */
    mcp_conn *c;              /* holds a reference */
    mcp_rpc_msg msg;          /* the request; owns its document */
    const char *version;      /* as in mcp__req */
    int modern;
    int log_threshold;
    const mcp_json *caps;     /* in msg's document or the connection's */
    mcp_principal *principal; /* a reference, or NULL */
    mcp__entry *e;            /* the resource or prompt (a reference) */
    mcp__deferred_fn fn;      /* what to run */
} deferred;

/* Frees the request, then lets go of the connection (last, as call.c's
 * run_job does). */
static void deferred_end(deferred *d)
{
    mcp_conn *c = d->c;
    mcp_rpc_msg_cleanup(&d->msg);
    mcp_principal_free(d->principal);
    mcp__entry_release(d->e);
    mcp_free(d);
    mcp__conn_work_done(c);
}

static void deferred_run(mcp__job *job)
{
    deferred *d = (deferred *)job;
    mcp_conn *c = d->c;
    mcp__conn_flush_owed(); /* answers this worker still owes go before a handler that may be slow */
    pthread_mutex_lock(&c->mu);
    int closing = c->closing;
    pthread_mutex_unlock(&c->mu);
    if (!closing) {
        mcp__req r;
        memset(&r, 0, sizeof r);
        r.c = c;
        r.msg = &d->msg;
        r.version = d->version;
        r.modern = d->modern;
        r.log_threshold = d->log_threshold;
        r.caps = d->caps;
        r.principal = d->principal;
        d->fn(&r, d->e);
    }
    deferred_end(d);
}

static void answer_busy(mcp_conn *c, const mcp_rpc_id *id)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_error(&w, id, MCP_RPC_INTERNAL_ERROR, "Server busy: the worker queue is full; retry later");
    mcp_jw_key(&w, "data");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "retryable");
    mcp_jw_bool(&w, 1);
    mcp_jw_object_end(&w);
    mcp_rpc_end_error(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(c, &b, id, 1);
    mcp_buf_cleanup(&b);
}

void mcp__req_defer(mcp__req *r, mcp__deferred_fn fn, mcp__entry *e)
{
    mcp_conn *c = r->c;
    deferred *d = mcp__calloc(1, sizeof *d);
    if (!d) {
        mcp__entry_release(e);
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    d->job.run = deferred_run;
    d->job.flow = c->flow;
    d->c = c;
    d->version = r->version;
    d->modern = r->modern;
    d->log_threshold = r->log_threshold;
    d->caps = r->caps;
    d->principal = r->principal ? mcp__principal_ref(r->principal) : NULL;
    d->e = e;
    d->fn = fn;
    /* The request takes the message and its document (caps and params point into it). */
    d->msg = *r->msg;
    memset(r->msg, 0, sizeof *r->msg);
    pthread_mutex_lock(&c->mu);
    c->running++;
    atomic_fetch_add(&c->refs, 1);
    int closing = c->closing;
    pthread_mutex_unlock(&c->mu);
    if (closing) {
        deferred_end(d);
        return;
    }
    if (mcp__pool_submit(c->srv->pool, &d->job) != MCP_OK) {
        answer_busy(c, &d->msg.id);
        deferred_end(d);
    }
}
