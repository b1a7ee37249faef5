/*
 * The client core: the pending table, the handshake and its era rules,
 * per-request `_meta`, input_required rounds, server-to-client requests,
 * notifications and time limits. No I/O: frames leave through the
 * transport's ops (client_internal.h) and arrive through
 * mcp__client_on_frame().
 *
 * Threads: any number of callers; the transport's reader (frames in); a
 * timer thread (time limits); a small pool for input callbacks and
 * input_required rounds and authorizations. One mutex (c->mu) guards the
 * pending table and the tool cache; it is never held while calling a user
 * callback or sending, so the transport may deliver frames while a caller
 * sends (the one transport call made under it, set_token, takes only the
 * transport's own lock).
 *
 * Authorization (HTTP with an OAuth session): a request refused with 401
 * or 403 insufficient_scope is parked (P_PARKED) and one authorization runs
 * on the pool at a time (oauth.c); requests refused meanwhile wait for it.
 * When it ends, the new token goes to the transport and every parked
 * request is sent again with a new id, or fails with MCP_ERR_AUTH. Each
 * request may be sent again this way only max_attempts times.
 *
 * Legacy HTTP sessions: a request the server refuses with 404 because it
 * no longer knows the session (it expired, or the server restarted) is
 * parked the same way and one job starts a new session (initialize without
 * the old id, at the negotiated version, then notifications/initialized);
 * the parked requests then go again with new ids, at most twice each.
 *
 * Retries (HTTP): a tools/call that failed without any answer (the
 * connection broke, the stream ended first, a proxy answered 502, 503 or
 * 504) waits in the table (P_BACKOFF) and the timer thread sends it again
 * with a new id, but only when the tool was listed with readOnlyHint true:
 * a call that may have changed something is never sent twice.
 *
 * Request ids are numbers from one counter and never reused, so a late
 * response can never reach another caller; ids that timed out or were
 * cancelled are kept as tombstones so their late responses are told apart
 * from responses to ids never sent (a protocol violation).
 */
#include "client/client_internal.h"
#include "util/abi.h"
#include "util/util.h"
#include "client/oauth.h"
#include "util/pool.h"
#include "json/json_internal.h"
#include "mcp/schema.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DEFAULT_TIMEOUT_MS 60000u
#define DEFAULT_CONNECT_TIMEOUT_MS 30000u
#define DEFAULT_DISCOVER_TIMEOUT_MS 5000u
#define DEFAULT_WORKERS 2u
#define DEFAULT_MAX_ROUNDS 16u
#define DEFAULT_MAX_MESSAGE (64u << 20)
#define DEFAULT_READ_ONLY_RETRIES 2
#define DEFAULT_RETRY_BACKOFF_MS 100u
#define MAX_RETRY_BACKOFF_MS 5000u
#define BUCKETS 256u             /* pending table chains (ids are sequential: id % BUCKETS) */
#define TOMBSTONES 4096u         /* remembered timed-out or cancelled ids */
#define MAX_LIST_PAGES 10000u    /* a server whose cursors never end */
#define MAX_PARAM_HEADERS 32u    /* x-mcp-header parameters per tool */
#define MAX_SESSION_RESENDS 2u   /* a request sent again after 404s for a forgotten session */

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_INFO "io.modelcontextprotocol/clientInfo"

/* ------------------------------------------------------------------------ */
/* Types                                                                     */

struct mcp_response {
    mcp_json_doc *doc;          /* owns everything below */
    const mcp_json *msg;        /* the whole message */
    const mcp_json *result;     /* NULL for an error */
    int code;                   /* error.code, 0 for a result */
    const char *message;        /* error.message ("" if absent); NULL for a result */
    const mcp_json *data;       /* error.data or NULL */
};

enum { P_WAITING = 0, P_INPUT, P_PARKED, P_BACKOFF, P_DONE };

/* One request the caller is waiting for, possibly over several rounds. */
typedef struct pending {
    struct pending *next;       /* bucket chain */
    uint64_t id;                /* current wire id */
    uint64_t handle;            /* the first wire id: the caller's handle, the progressToken */
    int refs;                   /* table + running input round or authorization wait (under c->mu) */
    int state;                  /* P_WAITING, P_INPUT (input callbacks running), P_PARKED
                                   (waiting for an authorization or a new session), P_BACKOFF
                                   (unanswered, sent again at deadline_ns), P_DONE */
    int modern;                 /* sent in the 2026-07-28 way */
    int internal;               /* a handshake probe: quiet about its failures */
    uint64_t deadline_ns;       /* when it times out (P_WAITING), is sent again (P_BACKOFF) */
    uint64_t limit_ns;          /* when its time limit ends, counted from the first send */
    unsigned retries;           /* times sent again after failing unanswered (read-only tools) */
    unsigned timeout_ms;        /* its time limit */
    unsigned rounds;            /* input_required rounds so far */
    int version_retried;        /* resent once after -32022 */
    unsigned auth_rounds;       /* times sent again after 401/403 */
    uint64_t auth_gen;          /* the token generation it was last sent with */
    unsigned sess_rounds;       /* times sent again after a 404 for a forgotten session */
    uint64_t sess_gen;          /* the session generation it was last sent with */
    struct pending *park_next;  /* the list it is parked on (P_PARKED) */
    char *method;               /* owned */
    mcp_json_doc *params;       /* the caller's params (owned), NULL for none */
    char *name_header;          /* Mcp-Name value, owned, or NULL */
    char **param_headers;       /* "Mcp-Param-X: v" lines, owned, NULL-terminated, or NULL */
    char *input_responses;      /* next round's inputResponses object as JSON text, or NULL */
    char *request_state;        /* next round's requestState (exact bytes), or NULL */
    size_t request_state_len;
    mcp_response *input;        /* the input_required result being answered */
    mcp_response_fn done;       /* completion */
    void *done_ud;
    void (*on_progress)(double, double, const char *, void *);
    void *progress_ud;
    int progress_resets;        /* progress restarts the time limit */
    int as_task;                /* tools/call declaring the tasks extension (2026-07-28 _meta) */
    int no_replay;              /* a tools/call: the transport never repeats it (mcp__out) */
    char *traceparent;          /* W3C trace context for _meta (owned), or NULL */
    char *tracestate;           /* owned, or NULL */
    mcp__job job;               /* an input round on the pool */
    mcp_client *c;
} pending;

/* A server-to-client request (legacy era) waiting for the input callback. */
typedef struct server_req {
    mcp__job job;               /* first: the pool hands this back */
    mcp_client *c;
    mcp_json_doc *doc;          /* the request (owned) */
    mcp_rpc_id id;              /* its id (a string id points into doc) */
    char method[64];            /* its method */
    const mcp_json *params;     /* in doc */
} server_req;

/* What the client knows about a listed tool. */
typedef struct tool_info {
    struct tool_info *next;
    char *name;
    mcp_schema *output;         /* compiled outputSchema, or NULL */
    int read_only;              /* annotations.readOnlyHint is true: may be sent again */
    unsigned nheaders;          /* x-mcp-header parameters */
    char *hprop[MAX_PARAM_HEADERS];   /* argument names */
    char *hname[MAX_PARAM_HEADERS];   /* header suffixes (Mcp-Param-<hname>) */
} tool_info;

/* Requests parked while one job (an authorization, a new session) runs on the pool. */
typedef struct park_list {
    pending *head;              /* FIFO, linked by park_next; each holds a reference */
    pending **tail;             /* its end */
    int busy;                   /* the job is queued or running */
} park_list;

struct mcp_client {
    mcp_client_opts opts;       /* copy; strings below are owned copies */
    char *name, *version, *forced_version, *caps_text;
    mcp_json_doc *caps_doc;     /* parsed capabilities */
    mcp_json_parse_opts popts;  /* limits for frames from the server */
    mcp__ctransport *t;         /* the transport (NULL once closed) */
    mcp__pool *pool;            /* input callbacks */
    FILE *transcript;
    pthread_mutex_t transcript_mu;

    pthread_mutex_t mu;         /* everything below */
    pthread_cond_t timer_cv;    /* wakes the timer thread */
    pthread_t timer;
    int timer_started;
    int stopping;               /* mcp_client_close running */
    mcp_status dead;            /* nonzero once the connection is gone */
    char dead_msg[MCP_ERROR_MESSAGE_MAX];
    uint64_t next_id;           /* last id sent */
    pending *buckets[BUCKETS];
    unsigned npending;
    uint64_t tomb[TOMBSTONES];  /* ring of timed-out/cancelled ids */
    unsigned tomb_next;
    uint64_t timer_target;      /* the deadline the timer thread sleeps towards (0 = none) */
    tool_info *tools;           /* from the last mcp_client_list_tools */
    mcp__oauth *oauth;          /* OAuth session (HTTP), or NULL */
    mcp__set_token_fn set_token; /* installs its tokens in the transport */
    uint64_t auth_gen;          /* bumped each time a new token is installed */
    park_list auth_wait;        /* requests waiting for the authorization */
    uint64_t sess_gen;          /* bumped each time a new legacy session was started */
    park_list sess_wait;        /* requests waiting for the new session */
    unsigned sending;           /* pool threads inside the transport's send */
    pthread_cond_t send_cv;     /* close waits for sending to reach 0 */
    struct task_wait *task_waits; /* calls waiting for their task (mcp_client_cancel finds them) */

    /* After the handshake; read-only from then on. */
    atomic_int modern;          /* atomics: written once by the handshake, read by */
    _Atomic(const char *) proto; /* every thread (static string) */
    mcp_json_doc *hs_doc;       /* handshake result message */
    const mcp_json *hs_result;
    const mcp_json *server_caps;
    const mcp_json *server_info;
    const char *instructions;
    mcp_json_doc *empty_doc;    /* "{}" for missing capabilities */
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static void set_deadline(pending *p, unsigned ms)
{
    p->deadline_ns = mcp__mono_ns() + (uint64_t)ms * 1000000ull;
}

static void ts_at(struct timespec *ts, uint64_t ns)
{
    ts->tv_sec = (time_t)(ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
}

void mcp__client_log(mcp_client *c, mcp_log_level level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->opts.log) {
        c->opts.log(level, msg, c->opts.user_data);
        return;
    }
    if (level >= MCP_LOG_WARNING)
        fprintf(stderr, "%s: %s: %s\n", c->name, mcp_log_level_name(level), msg);
}

size_t mcp__client_max_message(const mcp_client *c)
{
    return c->popts.max_bytes;
}

static void transcript(mcp_client *c, const char *dir, const char *frame, size_t len)
{
    if (c->transcript)
        mcp__transcript_line(c->transcript, &c->transcript_mu, dir, frame, len, &c->popts);
}

/* Sends through the transport (never with c->mu held). */
static mcp_status send_out(mcp_client *c, const mcp__out *o)
{
    transcript(c, "out", o->frame, o->len);
    return c->t->ops->send(c->t, o);
}

/* ------------------------------------------------------------------------ */
/* Responses                                                                 */

/* Wraps a decoded response message; takes `doc`. */
static mcp_response *response_new(mcp_json_doc *doc, const mcp_json *msg)
{
    mcp_response *r = mcp__calloc(1, sizeof *r);
    if (!r) {
        mcp_json_doc_free(doc);
        return NULL;
    }
    r->doc = doc;
    r->msg = msg;
    const mcp_json *e = mcp_json_get(msg, "error");
    if (e) {
        r->code = (int)mcp_json_int(mcp_json_get(e, "code"));
        r->message = mcp_json_str(mcp_json_get(e, "message"), NULL);
        if (!r->message)
            r->message = "";
        r->data = mcp_json_get(e, "data");
    } else {
        r->result = mcp_json_get(msg, "result");
    }
    return r;
}

const mcp_json *mcp_response_result(const mcp_response *r)
{
    return r ? r->result : NULL;
}

int mcp_response_error_code(const mcp_response *r)
{
    return r ? r->code : 0;
}

const char *mcp_response_error_message(const mcp_response *r)
{
    return r ? r->message : NULL;
}

const mcp_json *mcp_response_error_data(const mcp_response *r)
{
    return r ? r->data : NULL;
}

const mcp_json *mcp_response_message(const mcp_response *r)
{
    return r ? r->msg : NULL;
}

int mcp_response_is_tool_error(const mcp_response *r)
{
    return r && r->result && mcp_json_typeof(mcp_json_get(r->result, "isError")) == MCP_JSON_BOOL &&
           mcp_json_bool(mcp_json_get(r->result, "isError"));
}

void mcp_response_free(mcp_response *r)
{
    if (!r)
        return;
    mcp_json_doc_free(r->doc);
    mcp_free(r);
}

/* ------------------------------------------------------------------------ */
/* The pending table (c->mu held)                                            */

static pending *find_locked(mcp_client *c, uint64_t id)
{
    for (pending *p = c->buckets[id % BUCKETS]; p; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

static pending *find_handle_locked(mcp_client *c, uint64_t handle)
{
    pending *p = find_locked(c, handle);
    if (p && p->handle == handle)
        return p;
    for (unsigned b = 0; b < BUCKETS; b++)
        for (p = c->buckets[b]; p; p = p->next)
            if (p->handle == handle)
                return p;
    return NULL;
}

static void insert_locked(mcp_client *c, pending *p)
{
    pending **b = &c->buckets[p->id % BUCKETS];
    p->next = *b;
    *b = p;
    c->npending++;
}

static void unlink_locked(mcp_client *c, pending *p)
{
    for (pending **pp = &c->buckets[p->id % BUCKETS]; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            p->next = NULL;
            c->npending--;
            return;
        }
}

static void tomb_add_locked(mcp_client *c, uint64_t id)
{
    c->tomb[c->tomb_next++ % TOMBSTONES] = id;
}

static int tomb_has_locked(const mcp_client *c, uint64_t id)
{
    for (unsigned i = 0; i < TOMBSTONES; i++)
        if (c->tomb[i] == id)
            return 1;
    return 0;
}

static void pending_free(pending *p)
{
    mcp_free(p->method);
    mcp_json_doc_free(p->params);
    mcp_free(p->name_header);
    if (p->param_headers) {
        for (char **h = p->param_headers; *h; h++)
            mcp_free(*h);
        mcp_free(p->param_headers);
    }
    mcp_free(p->input_responses);
    mcp_free(p->request_state);
    mcp_free(p->traceparent);
    mcp_free(p->tracestate);
    mcp_response_free(p->input);
    mcp_free(p);
}

static void unref_locked(pending *p)
{
    if (--p->refs == 0)
        pending_free(p);
}

static void unref(mcp_client *c, pending *p)
{
    pthread_mutex_lock(&c->mu);
    unref_locked(p);
    pthread_mutex_unlock(&c->mu);
}

/*
 * Takes `p` out of the table for completion (c->mu held): 1 when the
 * caller now owns the completion, 0 when someone else completed it.
 */
static int claim_locked(mcp_client *c, pending *p)
{
    if (p->state == P_DONE)
        return 0;
    p->state = P_DONE;
    unlink_locked(c, p);
    return 1;
}

/*
 * Completes a claimed request: calls its callback (without the lock) and
 * drops the table's reference. `resp` is handed over.
 */
static void finish(mcp_client *c, pending *p, mcp_status st, mcp_response *resp, const char *fmt, ...)
    MCP__PRINTF(5, 6);
static void finish(mcp_client *c, pending *p, mcp_status st, mcp_response *resp, const char *fmt, ...)
{
    mcp_error err;
    mcp_error_clear(&err);
    if (st != MCP_OK) {
        va_list ap;
        va_start(ap, fmt);
        mcp__vfail(&err, st, resp ? resp->code : 0, 0, fmt, ap);
        va_end(ap);
    }
    p->done(c, st, resp, st == MCP_OK ? NULL : &err, p->done_ud);
    unref(c, p);
}

/* ------------------------------------------------------------------------ */
/* Building frames                                                           */

/* Writes the client capabilities object. */
static void write_caps(mcp_client *c, mcp_jw *w)
{
    mcp_jw_value(w, mcp_json_doc_root(c->caps_doc));
}

#define TASKS_EXT "io.modelcontextprotocol/tasks"

/* The capabilities with the tasks extension declared as well. */
static void write_caps_task(mcp_client *c, mcp_jw *w)
{
    const mcp_json *caps = mcp_json_doc_root(c->caps_doc);
    const mcp_json *ext = mcp_json_get(caps, "extensions");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(caps); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(caps, i, &kl);
        if (kl == 10 && !memcmp(k, "extensions", 10))
            continue;
        mcp_jw_keyn(w, k, kl);
        mcp_jw_value(w, mcp_json_value_at(caps, i));
    }
    mcp_jw_key(w, "extensions");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(ext); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(ext, i, &kl);
        if (kl == sizeof TASKS_EXT - 1 && !memcmp(k, TASKS_EXT, kl))
            continue;
        mcp_jw_keyn(w, k, kl);
        mcp_jw_value(w, mcp_json_value_at(ext, i));
    }
    mcp_jw_key(w, TASKS_EXT);
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

static void write_client_info(mcp_client *c, mcp_jw *w)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, c->name);
    mcp_jw_key(w, "version");
    mcp_jw_string(w, c->version);
    mcp_jw_object_end(w);
}

static int is_ours(const char *k, size_t kl, int modern)
{
#define IS(s) (kl == sizeof(s) - 1 && memcmp(k, s, kl) == 0)
    if (IS("progressToken"))
        return 1;
    return modern && (IS(META_VERSION) || IS(META_CAPS) || IS(META_INFO));
#undef IS
}

/*
 * Writes a request: the caller's params with our `_meta` members merged in
 * (their own `_meta` members kept), and for input_required retries the
 * inputResponses and requestState of the round.
 */
static mcp_status write_request(mcp_client *c, mcp_buf *b, const pending *p)
{
    mcp_jw w;
    mcp_jw_init(&w, b);
    mcp_rpc_id id = {MCP_RPC_ID_INT, (int64_t)p->id, NULL, 0};
    mcp_rpc_begin_request(&w, &id, p->method);
    const mcp_json *params = p->params ? mcp_json_doc_root(p->params) : NULL;
    int want_meta = p->modern || p->on_progress || p->traceparent || mcp_json_get(params, "_meta");
    {
        /* mcp_rpc_begin_request() wrote the "params" key: always an object here. */
        mcp_jw_object_begin(&w);
        for (size_t i = 0; i < mcp_json_len(params); i++) {
            size_t kl;
            const char *k = mcp_json_key_at(params, i, &kl);
            if ((kl == 5 && !memcmp(k, "_meta", 5)) ||
                (p->rounds && ((kl == 14 && !memcmp(k, "inputResponses", 14)) ||
                               (kl == 12 && !memcmp(k, "requestState", 12)))))
                continue;
            mcp_jw_keyn(&w, k, kl);
            mcp_jw_value(&w, mcp_json_value_at(params, i));
        }
        if (p->input_responses) {
            mcp_jw_key(&w, "inputResponses");
            mcp_jw_raw(&w, p->input_responses, strlen(p->input_responses));
        }
        if (p->request_state) {
            mcp_jw_key(&w, "requestState");
            mcp_jw_stringn(&w, p->request_state, p->request_state_len);
        }
        if (want_meta) {
            mcp_jw_key(&w, "_meta");
            mcp_jw_object_begin(&w);
            const mcp_json *um = mcp_json_get(params, "_meta");
            for (size_t i = 0; i < mcp_json_len(um); i++) {
                size_t kl;
                const char *k = mcp_json_key_at(um, i, &kl);
                if (is_ours(k, kl, p->modern) ||
                    (p->traceparent && ((kl == 11 && !memcmp(k, "traceparent", 11)) ||
                                        (kl == 10 && !memcmp(k, "tracestate", 10)))))
                    continue;
                mcp_jw_keyn(&w, k, kl);
                mcp_jw_value(&w, mcp_json_value_at(um, i));
            }
            if (p->on_progress) {
                mcp_jw_key(&w, "progressToken");
                mcp_jw_int(&w, (int64_t)p->handle);
            }
            if (p->traceparent) {
                mcp_jw_key(&w, "traceparent");
                mcp_jw_string(&w, p->traceparent);
                if (p->tracestate) {
                    mcp_jw_key(&w, "tracestate");
                    mcp_jw_string(&w, p->tracestate);
                }
            }
            if (p->modern) {
                mcp_jw_key(&w, META_VERSION);
                mcp_jw_string(&w, mcp__version_newest());
                mcp_jw_key(&w, META_CAPS);
                if (p->as_task)
                    write_caps_task(c, &w);
                else
                    write_caps(c, &w);
                mcp_jw_key(&w, META_INFO);
                write_client_info(c, &w);
            }
            mcp_jw_object_end(&w);
        }
        mcp_jw_object_end(&w);
    }
    mcp_rpc_end(&w);
    return mcp_jw_finish(&w);
}

/* Sends the current round of `p` (not locked). */
/*
 * Sends a round of `p` whose frame was built (with write_request, under
 * c->mu) into `b` for wire id `id`. Not locked: only fields that never
 * change after creation are read here.
 */
static mcp_status send_request(mcp_client *c, const pending *p, mcp_buf *b, uint64_t id)
{
    mcp__out o;
    memset(&o, 0, sizeof o);
    o.frame = b->data;
    o.len = b->len;
    o.kind = MCP_RPC_REQUEST;
    o.id = id;
    o.method = p->method;
    o.modern = p->modern;
    o.version = p->modern ? mcp__version_newest() : atomic_load(&c->proto);
    o.is_initialize = !strcmp(p->method, "initialize");
    o.no_replay = p->no_replay;
    if (p->modern) {
        o.name = p->name_header;
        o.param_headers = (const char *const *)p->param_headers;
    }
    mcp_status st = send_out(c, &o);
    mcp_buf_cleanup(b);
    return st;
}

/* A pool or timer thread may use the transport (close waits for it): 0 once the client is closing. */
static int pool_send_begin(mcp_client *c)
{
    pthread_mutex_lock(&c->mu);
    int ok = !c->stopping;
    if (ok)
        c->sending++;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static void pool_send_end(mcp_client *c)
{
    pthread_mutex_lock(&c->mu);
    if (--c->sending == 0 && c->stopping)
        pthread_cond_broadcast(&c->send_cv);
    pthread_mutex_unlock(&c->mu);
}

/*
 * send_request() from a pool thread. mcp_client_close() may be running at
 * the same time, so the transport is used only while close waits for it:
 * MCP_ERR_CLOSED (nothing sent) once the client is closing; the request,
 * still in the table, is then failed by the close.
 */
static mcp_status send_from_pool(mcp_client *c, const pending *p, mcp_buf *b, uint64_t id)
{
    if (!pool_send_begin(c)) {
        mcp_buf_cleanup(b);
        return MCP_ERR_CLOSED;
    }
    mcp_status st = send_request(c, p, b, id);
    pool_send_end(c);
    return st;
}

static mcp_status send_simple(mcp_client *c, mcp_rpc_kind kind, const char *method, mcp_buf *b)
{
    mcp__out o;
    memset(&o, 0, sizeof o);
    o.frame = b->data;
    o.len = b->len;
    o.kind = kind;
    o.method = method;
    o.modern = atomic_load(&c->modern);
    o.version = atomic_load(&c->modern) ? mcp__version_newest() : atomic_load(&c->proto);
    return send_out(c, &o);
}

/*
 * Tells the server a request is abandoned: the transport's way, else
 * notifications/cancelled. The timer thread calls it too, so it uses the
 * transport only while mcp_client_close() waits (nothing once closing).
 */
static void tell_cancelled(mcp_client *c, uint64_t id, int modern, const char *reason)
{
    if (!pool_send_begin(c))
        return;
    if (!c->t || c->t->ops->cancel(c->t, id, modern)) {
        pool_send_end(c);
        return;
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_notification(&w, "notifications/cancelled");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "requestId");
    mcp_jw_int(&w, (int64_t)id);
    if (reason) {
        mcp_jw_key(&w, "reason");
        mcp_jw_string(&w, reason);
    }
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        send_simple(c, MCP_RPC_NOTIFICATION, "notifications/cancelled", &b);
    mcp_buf_cleanup(&b);
    pool_send_end(c);
}

/* ------------------------------------------------------------------------ */
/* Starting requests                                                         */

/* Wakes the timer when `p` is due before what it sleeps towards (c->mu held). */
static void timer_note_locked(mcp_client *c, const pending *p)
{
    if (c->timer_target == 0 || p->deadline_ns < c->timer_target)
        pthread_cond_signal(&c->timer_cv);
}

/*
 * Queues and sends a request. `params_doc` and the header strings are
 * taken (freed on failure too). On failure `done` is not called.
 */
static mcp_status start_request(mcp_client *c, const char *method, mcp_json_doc *params_doc, int modern,
                                const mcp_request_opts *ro, char *name_header, char **param_headers,
                                int internal, mcp_response_fn done, void *ud, uint64_t *handle_out,
                                mcp_error *err)
{
    pending *p = mcp__calloc(1, sizeof *p);
    char *m = mcp__strdup(method);
    if (!p || !m) {
        mcp_free(p);
        mcp_free(m);
        mcp_json_doc_free(params_doc);
        mcp_free(name_header);
        if (param_headers) {
            for (char **h = param_headers; *h; h++)
                mcp_free(*h);
            mcp_free(param_headers);
        }
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    p->c = c;
    p->method = m;
    p->params = params_doc;
    p->name_header = name_header;
    p->param_headers = param_headers;
    p->modern = modern;
    p->internal = internal;
    p->done = done;
    p->done_ud = ud;
    p->timeout_ms = ro && ro->timeout_ms ? ro->timeout_ms : c->opts.timeout_ms;
    if (ro) {
        p->on_progress = ro->on_progress;
        p->progress_ud = ro->user_data;
        p->progress_resets = ro->progress_resets_timeout;
        p->as_task = ro->as_task && (strcmp(method, "tools/call") == 0 || strncmp(method, "tasks/", 6) == 0);
        const char *why = NULL;
        if (ro->traceparent && !mcp__traceparent_valid(ro->traceparent, strlen(ro->traceparent)))
            why = "traceparent is not a W3C traceparent";
        else if (ro->tracestate && (!ro->traceparent || !mcp__tracestate_valid(ro->tracestate, strlen(ro->tracestate))))
            why = "tracestate is not a W3C tracestate beside a traceparent";
        if (!why && ro->traceparent &&
            (!(p->traceparent = mcp__strdup(ro->traceparent)) ||
             (ro->tracestate && !(p->tracestate = mcp__strdup(ro->tracestate)))))
            why = "out of memory";
        if (why) {
            pending_free(p);
            return mcp__fail(err, why[0] == 'o' ? MCP_ERR_NOMEM : MCP_ERR_INVALID_ARG, 0, 0, "%s", why);
        }
    }
    pthread_mutex_lock(&c->mu);
    if (c->dead || c->stopping) {
        mcp_status st = c->dead ? c->dead : MCP_ERR_CLOSED;
        char msg[MCP_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", c->dead ? c->dead_msg : "the client is closing");
        pthread_mutex_unlock(&c->mu);
        pending_free(p);
        return mcp__fail(err, st, 0, 0, "%s", msg);
    }
    p->id = p->handle = ++c->next_id;
    p->auth_gen = c->auth_gen;
    p->sess_gen = c->sess_gen;
    /* Whether a lost tools/call goes again is decided here (retry_plan_locked), never by the transport. */
    p->no_replay = !strcmp(method, "tools/call");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = write_request(c, &b, p);
    if (st != MCP_OK) {
        pthread_mutex_unlock(&c->mu);
        mcp_buf_cleanup(&b);
        pending_free(p);
        return mcp__fail(err, st, 0, 0, "cannot write the request: %s", mcp_status_str(st));
    }
    p->refs = 2; /* the table's, and ours while sending: the answer may come first */
    set_deadline(p, p->timeout_ms);
    p->limit_ns = p->deadline_ns;
    insert_locked(c, p);
    timer_note_locked(c, p);
    uint64_t id = p->id;
    pthread_mutex_unlock(&c->mu);
    if (handle_out)
        *handle_out = p->handle;
    if (ro && ro->handle_out)
        *ro->handle_out = p->handle;
    st = send_request(c, p, &b, id);
    if (st != MCP_OK && st != MCP_ERR_CLOSED) {
        /* Not sent (out of memory): fail it here. A closed connection is
         * failed by mcp__client_on_closed(), which the transport reports
         * with the reason (an exit status, an HTTP error). */
        pthread_mutex_lock(&c->mu);
        int mine = claim_locked(c, p);
        pthread_mutex_unlock(&c->mu);
        if (mine)
            finish(c, p, st, NULL, "cannot send %s: %s", p->method, mcp_status_str(st));
    }
    unref(c, p);
    return MCP_OK;
}

/* Parses caller params (a JSON object as text, or NULL). */
static mcp_status parse_params(mcp_client *c, const char *params, mcp_json_doc **out, mcp_error *err)
{
    *out = NULL;
    if (!params)
        return MCP_OK;
    mcp_status st = mcp_json_parse(out, params, strlen(params), NULL, err);
    if (st != MCP_OK)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, err ? err->offset : 0, "params is not JSON: %s",
                         err ? err->message : mcp_status_str(st));
    if (mcp_json_typeof(mcp_json_doc_root(*out)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(*out);
        *out = NULL;
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "params must be a JSON object");
    }
    (void)c;
    return MCP_OK;
}

/*
 * A header value for an x-mcp-header argument: numbers and booleans as
 * their JSON text, strings as they are when they are plain visible ASCII
 * without edge whitespace, else "=?base64?...?=". NULL for values that
 * have no header form (null, objects, arrays).
 */
static char *param_header_value(const mcp_json *v)
{
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_BOOL:
        return mcp__strdup(mcp_json_bool(v) ? "true" : "false");
    case MCP_JSON_INT:
    case MCP_JSON_REAL: {
        size_t n;
        const char *t = mcp_json_num_text(v, &n);
        return t ? mcp__strndup(t, n) : NULL;
    }
    case MCP_JSON_STRING: {
        size_t n;
        const char *s = mcp_json_str(v, &n);
        /* Plain when printable ASCII without edge whitespace ("" is plain: a present, empty header). */
        int plain = n == 0 || (s[0] != ' ' && s[n - 1] != ' ');
        for (size_t i = 0; i < n && plain; i++)
            if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
                plain = 0;
        if (plain && !(n >= 2 && s[0] == '=' && s[1] == '?'))
            return mcp__strndup(s, n);
        return mcp__client_header_b64(s, n);
    }
    default:
        return NULL;
    }
}

char *mcp__client_header_b64(const char *s, size_t n)
{
    if (n / 3 > (SIZE_MAX - 16) / 4)
        return NULL;
    char *out = mcp_malloc(MCP__BASE64_LEN(n) + 12);
    if (!out)
        return NULL;
    memcpy(out, "=?base64?", 9);
    size_t k = 9 + mcp__base64_encode(out + 9, s, n);
    memcpy(out + k, "?=", 3);
    return out;
}

/* Mcp-Name: the name or uri a 2026-07-28 HTTP request names. */
static char *name_header_for(const char *method, const mcp_json *params)
{
    const char *key = NULL;
    if (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get"))
        key = "name";
    else if (!strcmp(method, "resources/read"))
        key = "uri";
    else if (!strncmp(method, "tasks/", 6))
        key = "taskId"; /* the tasks extension routes on the task id */
    const mcp_json *v = key ? mcp_json_get(params, key) : NULL;
    return mcp_json_typeof(v) == MCP_JSON_STRING ? param_header_value(v) : NULL;
}

/* The Mcp-Param-* lines for a tools/call of a listed tool, or NULL. */
static char **param_headers_for(mcp_client *c, const mcp_json *params)
{
    size_t nl;
    const char *name = mcp_json_str(mcp_json_get(params, "name"), &nl);
    const mcp_json *args = mcp_json_get(params, "arguments");
    if (!name || !args)
        return NULL;
    char **out = NULL;
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (tool_info *ti = c->tools; ti; ti = ti->next) {
        if (strlen(ti->name) != nl || memcmp(ti->name, name, nl) != 0)
            continue;
        if (!ti->nheaders)
            break;
        out = mcp__calloc(ti->nheaders + 1, sizeof *out);
        for (unsigned i = 0; out && i < ti->nheaders; i++) {
            char *v = param_header_value(mcp_json_get(args, ti->hprop[i]));
            if (!v)
                continue;
            size_t len = strlen(ti->hname[i]) + strlen(v) + 16;
            char *line = mcp_malloc(len);
            if (line) {
                snprintf(line, len, "Mcp-Param-%s: %s", ti->hname[i], v);
                out[n++] = line;
            }
            mcp_free(v);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
    if (out && n == 0) {
        mcp_free(out);
        out = NULL;
    }
    return out;
}

mcp_status mcp_client_request_async_sized(mcp_client *c, const char *method, const char *params,
                                          const mcp_request_opts *ro, size_t ro_size, mcp_response_fn done,
                                          void *user_data, uint64_t *handle_out)
{
    mcp_request_opts ro_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_request_opts, &ro_copy, ro, ro_size, NULL);
    if (ost)
        return ost;
    if (ro)
        ro = &ro_copy;
    if (!c || !method || !method[0] || !done)
        return MCP_ERR_INVALID_ARG;
    mcp_json_doc *doc;
    mcp_status st = parse_params(c, params, &doc, NULL);
    if (st != MCP_OK)
        return st;
    char *name = NULL;
    char **hdrs = NULL;
    if (atomic_load(&c->modern)) {
        name = name_header_for(method, mcp_json_doc_root(doc));
        if (!strcmp(method, "tools/call"))
            hdrs = param_headers_for(c, mcp_json_doc_root(doc));
    }
    return start_request(c, method, doc, atomic_load(&c->modern), ro, name, hdrs, 0, done, user_data, handle_out, NULL);
}

/* ---- blocking on top of async ---- */

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    mcp_status st;
    mcp_response *resp;
    mcp_error err;
} waiter;

static void waiter_done(mcp_client *c, mcp_status st, mcp_response *resp, const mcp_error *err, void *ud)
{
    (void)c;
    waiter *w = ud;
    pthread_mutex_lock(&w->mu);
    w->st = st;
    w->resp = resp;
    if (err)
        w->err = *err;
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void waiter_init(waiter *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

/* Waits for the outcome and hands it to the caller. */
static mcp_status waiter_wait(waiter *w, mcp_response **out, mcp_error *err)
{
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    if (w->st != MCP_OK && err)
        *err = w->err;
    if (out)
        *out = w->resp;
    else
        mcp_response_free(w->resp);
    return w->st;
}

static mcp_status request_doc(mcp_client *c, const char *method, mcp_json_doc *doc, int modern,
                              const mcp_request_opts *ro, int internal, mcp_response **out, mcp_error *err)
{
    if (out)
        *out = NULL;
    char *name = NULL;
    char **hdrs = NULL;
    if (modern) {
        name = name_header_for(method, mcp_json_doc_root(doc));
        if (!strcmp(method, "tools/call"))
            hdrs = param_headers_for(c, mcp_json_doc_root(doc));
    }
    waiter w;
    waiter_init(&w);
    mcp_status st = start_request(c, method, doc, modern, ro, name, hdrs, internal, waiter_done, &w, NULL, err);
    if (st != MCP_OK) {
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
        return st;
    }
    return waiter_wait(&w, out, err);
}

mcp_status mcp_client_request_sized(mcp_client *c, const char *method, const char *params, const mcp_request_opts *ro,
                                    size_t ro_size, mcp_response **out, mcp_error *err)
{
    if (out)
        *out = NULL;
    mcp_request_opts ro_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_request_opts, &ro_copy, ro, ro_size, err);
    if (ost)
        return ost;
    if (ro)
        ro = &ro_copy;
    if (!c || !method || !method[0])
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and a method are required");
    mcp_json_doc *doc;
    mcp_status st = parse_params(c, params, &doc, err);
    if (st != MCP_OK)
        return st;
    return request_doc(c, method, doc, atomic_load(&c->modern), ro, 0, out, err);
}

mcp_status mcp_client_notify(mcp_client *c, const char *method, const char *params)
{
    if (!c || !method || !method[0])
        return MCP_ERR_INVALID_ARG;
    mcp_json_doc *doc;
    mcp_status st = parse_params(c, params, &doc, NULL);
    if (st != MCP_OK)
        return st;
    pthread_mutex_lock(&c->mu);
    st = c->dead ? c->dead : c->stopping ? MCP_ERR_CLOSED : MCP_OK;
    pthread_mutex_unlock(&c->mu);
    if (st == MCP_OK) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_notification(&w, method); /* wrote the "params" key */
        if (doc) {
            mcp_jw_value(&w, mcp_json_doc_root(doc));
        } else {
            mcp_jw_object_begin(&w);
            mcp_jw_object_end(&w);
        }
        mcp_rpc_end(&w);
        st = mcp_jw_finish(&w);
        if (st == MCP_OK)
            st = send_simple(c, MCP_RPC_NOTIFICATION, method, &b);
        mcp_buf_cleanup(&b);
    }
    mcp_json_doc_free(doc);
    return st;
}

static mcp_status cancel_task_wait(mcp_client *c, uint64_t handle);

mcp_status mcp_client_cancel(mcp_client *c, uint64_t handle, const char *reason)
{
    if (!c)
        return MCP_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->mu);
    pending *p = find_handle_locked(c, handle);
    /* A parked request (authorization, new session) or one waiting to be
     * sent again is not on the wire: nothing to tell. */
    int waiting = p && p->state != P_PARKED && p->state != P_BACKOFF;
    int mine = p && claim_locked(c, p);
    uint64_t id = 0;
    int modern = 0;
    if (mine) {
        id = p->id;
        modern = p->modern;
        tomb_add_locked(c, id);
    }
    pthread_mutex_unlock(&c->mu);
    if (!mine)
        return cancel_task_wait(c, handle);
    if (waiting)
        tell_cancelled(c, id, modern, reason);
    finish(c, p, MCP_ERR_CANCELLED, NULL, "cancelled%s%s", reason ? ": " : "", reason ? reason : "");
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Time limits                                                               */

static void retry_send_due(mcp_client *c, pending *list);

static void *timer_main(void *arg)
{
    mcp_client *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        uint64_t now = mcp__mono_ns(), next = 0;
        pending *expired = NULL, *resend = NULL;
        for (unsigned b = 0; b < BUCKETS; b++) {
            for (pending *p = c->buckets[b], *n; p; p = n) {
                n = p->next;
                if (p->state == P_BACKOFF && p->deadline_ns <= now) {
                    p->park_next = resend; /* stays in the table: a cancel still finds it */
                    p->refs++;             /* the list's */
                    resend = p;
                    continue;
                }
                if (p->state != P_WAITING && p->state != P_BACKOFF)
                    continue;
                if (p->state == P_BACKOFF) {
                    if (!next || p->deadline_ns < next)
                        next = p->deadline_ns;
                } else if (p->deadline_ns <= now) {
                    claim_locked(c, p);
                    tomb_add_locked(c, p->id);
                    p->next = expired; /* unlinked: reuse the link */
                    expired = p;
                } else if (!next || p->deadline_ns < next) {
                    next = p->deadline_ns;
                }
            }
        }
        if (resend && !expired) {
            retry_send_due(c, resend); /* unlocks and locks c->mu */
            continue;
        }
        if (expired) {
            if (resend)
                retry_send_due(c, resend);
            pthread_mutex_unlock(&c->mu);
            while (expired) {
                pending *n = expired->next;
                expired->next = NULL;
                tell_cancelled(c, expired->id, expired->modern, "timed out");
                if (!expired->internal)
                    mcp__client_log(c, MCP_LOG_DEBUG, "request %llu (%s) timed out after %u ms",
                                    (unsigned long long)expired->id, expired->method, expired->timeout_ms);
                finish(c, expired, MCP_ERR_TIMEOUT, NULL, "%s: no response within %u ms", expired->method,
                       expired->timeout_ms);
                expired = n;
            }
            pthread_mutex_lock(&c->mu);
            continue;
        }
        c->timer_target = next;
        if (next) {
            struct timespec ts;
            ts_at(&ts, next);
            pthread_cond_timedwait(&c->timer_cv, &c->mu, &ts);
        } else {
            pthread_cond_wait(&c->timer_cv, &c->mu);
        }
        c->timer_target = 0;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* input_required rounds (2026-07-28)                                        */

/*
 * Answers one input request through the callback into `w` (an open
 * inputResponses object, key already written). MCP_OK or why not.
 */
static mcp_status answer_input(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w,
                               char *msg, size_t cap)
{
    if (!c->opts.on_input) {
        snprintf(msg, cap, "the server asked for %s input and this client has no input handler", method);
        return MCP_ERR_UNSUPPORTED;
    }
    mcp_jw_object_begin(w);
    msg[0] = '\0';
    mcp_status st = c->opts.on_input(c, method, params, w, msg, cap, c->opts.user_data);
    mcp_jw_object_end(w);
    if (st != MCP_OK && !msg[0])
        snprintf(msg, cap, "the input handler declined %s (%s)", method, mcp_status_str(st));
    return st;
}

/* Runs on a pool worker: answers p->input and sends the retry. */
/* The inputResponses object answering every entry of `reqs` (each with
 * the client's callbacks), written to `b`; `msg` says what went wrong. */
static mcp_status answer_input_requests(mcp_client *c, const mcp_json *reqs, mcp_buf *b, char *msg, size_t cap)
{
    mcp_jw w;
    mcp_jw_init(&w, b);
    mcp_status st = MCP_OK;
    mcp_jw_object_begin(&w);
    for (size_t i = 0; i < mcp_json_len(reqs) && st == MCP_OK; i++) {
        size_t kl;
        const char *k = mcp_json_key_at(reqs, i, &kl);
        const mcp_json *r = mcp_json_value_at(reqs, i);
        const char *m = mcp_json_str(mcp_json_get(r, "method"), NULL);
        if (!m) {
            st = MCP_ERR_INVALID_MSG;
            snprintf(msg, cap, "inputRequests entry without a method");
            break;
        }
        mcp_jw_keyn(&w, k, kl);
        st = answer_input(c, m, mcp_json_get(r, "params"), &w, msg, cap);
    }
    mcp_jw_object_end(&w);
    if (st == MCP_OK)
        st = mcp_jw_finish(&w);
    return st;
}

static void input_round(mcp__job *job)
{
    pending *p = (pending *)((char *)job - offsetof(pending, job));
    mcp_client *c = p->c;
    /* An error here is -32022 naming 2026-07-28 as supported: resend as is. */
    int resend_only = p->input->message != NULL;
    const mcp_json *res = p->input->result;
    const mcp_json *reqs = mcp_json_get(res, "inputRequests");
    const mcp_json *state = mcp_json_get(res, "requestState");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    char msg[MCP_ERROR_MESSAGE_MAX] = "";
    mcp_status st = MCP_OK;
    uint64_t retry_id = 0;
    if (reqs && mcp_json_typeof(reqs) != MCP_JSON_OBJECT) {
        st = MCP_ERR_INVALID_MSG;
        snprintf(msg, sizeof msg, "input_required result with a non-object inputRequests");
    } else if (state && mcp_json_typeof(state) != MCP_JSON_STRING) {
        st = MCP_ERR_INVALID_MSG;
        snprintf(msg, sizeof msg, "input_required result with a non-string requestState");
    } else if (reqs) {
        st = answer_input_requests(c, reqs, &b, msg, sizeof msg);
    }
    pthread_mutex_lock(&c->mu);
    int alive = p->state == P_INPUT;
    if (alive && st == MCP_OK) {
        if (!resend_only) {
            mcp_free(p->input_responses);
            p->input_responses = reqs ? mcp_buf_take(&b, NULL) : NULL;
            mcp_free(p->request_state);
            p->request_state = NULL;
            size_t sl;
            const char *s = mcp_json_str(state, &sl);
            if (s) {
                p->request_state = mcp__strndup(s, sl);
                p->request_state_len = sl;
            }
        }
        /* The retry is a new request with a new id (the spec says so). */
        unlink_locked(c, p);
        p->id = ++c->next_id;
        p->auth_gen = c->auth_gen;
        p->sess_gen = c->sess_gen;
        p->state = P_WAITING;
        mcp_buf_reset(&b);
        st = write_request(c, &b, p);
        if (st == MCP_OK) {
            set_deadline(p, p->timeout_ms);
            insert_locked(c, p);
            timer_note_locked(c, p);
            retry_id = p->id;
        } else {
            p->state = P_DONE; /* claimed: not in the table any more */
            snprintf(msg, sizeof msg, "cannot write the retry: %s", mcp_status_str(st));
        }
    } else if (alive) {
        claim_locked(c, p);
    }
    pthread_mutex_unlock(&c->mu);
    mcp_response_free(p->input);
    p->input = NULL;
    if (!alive) {
        mcp_buf_cleanup(&b);
        unref(c, p); /* completed meanwhile (cancelled, closed) */
        return;
    }
    if (st != MCP_OK) {
        mcp_buf_cleanup(&b);
        finish(c, p, st, NULL, "%s", msg);
        unref(c, p);
        return;
    }
    st = send_from_pool(c, p, &b, retry_id);
    if (st != MCP_OK && st != MCP_ERR_CLOSED) {
        pthread_mutex_lock(&c->mu);
        int mine = claim_locked(c, p);
        pthread_mutex_unlock(&c->mu);
        if (mine)
            finish(c, p, st, NULL, "cannot send the retry of %s: %s", p->method, mcp_status_str(st));
    }
    unref(c, p);
}

/* ------------------------------------------------------------------------ */
/* Authorization (HTTP with an OAuth session)                                */

/* One authorization on the pool, for the requests in c->auth_wait. */
typedef struct auth_job {
    mcp__job job;    /* first: the pool hands this back */
    mcp_client *c;
    int status;      /* the refusal that started it: 401 or 403 */
    char *challenge; /* its WWW-Authenticate value(s), or NULL */
    uint64_t gen;    /* the token generation the refused request carried */
} auth_job;

/* Sends a parked request again with a new id (pool thread); drops the parking reference. */
static void park_resend(mcp_client *c, pending *p)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    pthread_mutex_lock(&c->mu);
    if (p->state != P_PARKED) {
        unref_locked(p); /* completed meanwhile (cancelled, closed) */
        pthread_mutex_unlock(&c->mu);
        return;
    }
    unlink_locked(c, p);
    p->id = ++c->next_id;
    p->auth_gen = c->auth_gen;
    p->sess_gen = c->sess_gen;
    mcp_status st = write_request(c, &b, p);
    if (st != MCP_OK) {
        p->state = P_DONE; /* unlinked: claimed */
        pthread_mutex_unlock(&c->mu);
        mcp_buf_cleanup(&b);
        finish(c, p, st, NULL, "cannot write %s again: %s", p->method, mcp_status_str(st));
        unref(c, p);
        return;
    }
    p->state = P_WAITING;
    set_deadline(p, p->timeout_ms);
    insert_locked(c, p);
    timer_note_locked(c, p);
    uint64_t id = p->id;
    pthread_mutex_unlock(&c->mu);
    st = send_from_pool(c, p, &b, id);
    if (st != MCP_OK && st != MCP_ERR_CLOSED) {
        pthread_mutex_lock(&c->mu);
        int mine = claim_locked(c, p);
        pthread_mutex_unlock(&c->mu);
        if (mine)
            finish(c, p, st, NULL, "cannot send %s again: %s", p->method, mcp_status_str(st));
    }
    unref(c, p);
}

/* Fails a parked request (unless it completed meanwhile); drops the parking reference. */
static void park_fail(mcp_client *c, pending *p, mcp_status st, const char *msg)
{
    pthread_mutex_lock(&c->mu);
    int mine = p->state == P_PARKED && claim_locked(c, p);
    pthread_mutex_unlock(&c->mu);
    if (mine)
        finish(c, p, st, NULL, "%s", msg);
    unref(c, p);
}

/* Parks p on l (c->mu held); the list holds a reference until its job ends. */
static void park_locked(park_list *l, pending *p)
{
    p->state = P_PARKED;
    p->refs++;
    p->park_next = NULL;
    *l->tail = p;
    l->tail = &p->park_next;
}

/* Takes every request parked on l and ends its job (c->mu held). */
static pending *park_take_locked(park_list *l)
{
    pending *list = l->head;
    l->head = NULL;
    l->tail = &l->head;
    l->busy = 0;
    return list;
}

/* Ends l's job: each parked request goes again (resend) or fails with st and msg. */
static void park_settle(mcp_client *c, park_list *l, int resend, mcp_status st, const char *msg)
{
    pthread_mutex_lock(&c->mu);
    pending *list = park_take_locked(l);
    pthread_mutex_unlock(&c->mu);
    while (list) {
        pending *p = list;
        list = p->park_next;
        p->park_next = NULL;
        if (resend)
            park_resend(c, p);
        else
            park_fail(c, p, st, msg);
    }
}

/* Runs on a pool worker: one authorization, then every parked request goes again or fails. */
static void auth_job_run(mcp__job *job)
{
    auth_job *aj = (auth_job *)job;
    mcp_client *c = aj->c;
    pthread_mutex_lock(&c->mu);
    int renewed = aj->gen != c->auth_gen;
    int stopping = c->stopping;
    pthread_mutex_unlock(&c->mu);
    mcp_error e;
    mcp_error_clear(&e);
    mcp_status st = MCP_OK;
    char *token = NULL;
    if (stopping)
        st = mcp__fail(&e, MCP_ERR_CLOSED, 0, 0, "the client was closed");
    else if (!renewed)
        /* A request that carried the current token was refused: authorize.
         * One that carried an older token just goes again with the new one. */
        st = mcp__oauth_run(c->oauth, c, aj->status, aj->challenge, &token, &e);
    pthread_mutex_lock(&c->mu);
    if (st == MCP_OK && token) {
        /* Under c->mu: close (which sets stopping under it) cannot free the
         * transport in between. set_token takes only the transport's lock. */
        if (!c->stopping && c->t && c->set_token)
            c->set_token(c->t, token);
        c->auth_gen++;
    }
    pthread_mutex_unlock(&c->mu);
    mcp__oauth_wipe_free(token);
    char msg[MCP_ERROR_MESSAGE_MAX];
    mcp_status fst = MCP_ERR_AUTH;
    if (st == MCP_ERR_CANCELLED || st == MCP_ERR_CLOSED)
        fst = MCP_ERR_CLOSED;
    else if (st == MCP_ERR_NOMEM)
        fst = MCP_ERR_NOMEM;
    if (st) {
        snprintf(msg, sizeof msg, "authorization failed: %.200s", e.message);
        if (fst == MCP_ERR_AUTH)
            mcp__client_log(c, MCP_LOG_WARNING, "%s", msg);
    }
    park_settle(c, &c->auth_wait, st == MCP_OK, fst, msg);
    mcp_free(aj->challenge);
    mcp_free(aj);
}

void mcp__client_on_auth_failed(mcp_client *c, uint64_t id, int http_status, const char *challenge,
                                const char *message)
{
    const char *m = message ? message : "";
    int step_up = 0;
    if (c->oauth && http_status == 403) {
        /* Only insufficient_scope is worth another authorization (RFC 6750 section 3.1). */
        mcp__challenge ch;
        if (mcp__oauth_parse_challenge(challenge, challenge ? strlen(challenge) : 0, &ch) == MCP_OK)
            step_up = ch.error && strcmp(ch.error, "insufficient_scope") == 0;
        mcp__challenge_cleanup(&ch);
    }
    int retry = c->oauth && (http_status == 401 || step_up);
    pthread_mutex_lock(&c->mu);
    pending *p = find_locked(c, id);
    if (!p || p->state != P_WAITING) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    unsigned rounds = p->auth_rounds;
    if (!retry || c->stopping || rounds >= mcp__oauth_max_attempts(c->oauth)) {
        claim_locked(c, p);
        pthread_mutex_unlock(&c->mu);
        if (retry && rounds)
            finish(c, p, MCP_ERR_AUTH, NULL, "HTTP %d, still refused after %u authorization%s: %s", http_status,
                   rounds, rounds == 1 ? "" : "s", m);
        else
            finish(c, p, MCP_ERR_AUTH, NULL, "HTTP %d: %s", http_status, m);
        return;
    }
    auth_job *aj = NULL;
    if (!c->auth_wait.busy) {
        aj = mcp__calloc(1, sizeof *aj);
        char *ch = challenge ? mcp__strdup(challenge) : NULL;
        if (!aj || (challenge && !ch)) {
            mcp_free(aj);
            mcp_free(ch);
            claim_locked(c, p);
            pthread_mutex_unlock(&c->mu);
            finish(c, p, MCP_ERR_NOMEM, NULL, "HTTP %d: cannot start an authorization (out of memory)", http_status);
            return;
        }
        aj->c = c;
        aj->status = http_status;
        aj->challenge = ch;
        aj->gen = p->auth_gen;
        aj->job.run = auth_job_run;
        c->auth_wait.busy = 1;
    }
    p->auth_rounds++;
    park_locked(&c->auth_wait, p);
    pthread_mutex_unlock(&c->mu);
    if (aj && mcp__pool_submit(c->pool, &aj->job) != MCP_OK) {
        park_settle(c, &c->auth_wait, 0, MCP_ERR_AUTH, "cannot start an authorization: the client is busy or closing");
        mcp_free(aj->challenge);
        mcp_free(aj);
    }
}

void mcp__client_set_oauth(mcp_client *c, struct mcp__oauth *o, mcp__set_token_fn set_token)
{
    c->oauth = o;
    c->set_token = set_token;
}

/* ------------------------------------------------------------------------ */
/* Incoming frames                                                           */

/* A response (reader thread): complete the request, or start its next round. */
/*
 * Hands the answer `m` to request p's next round on the pool (input_round
 * sends the request again): the retry after -32022 (`retry`) or the round
 * after an input_required result. Called with c->mu held; unlocks it.
 */
static void start_round(mcp_client *c, pending *p, mcp_rpc_msg *m, int retry)
{
    p->state = P_INPUT;
    p->refs++; /* the round's */
    pthread_mutex_unlock(&c->mu);
    p->input = response_new(m->doc, m->root);
    m->doc = NULL;
    p->job.run = input_round;
    if (!p->input || mcp__pool_submit(c->pool, &p->job) != MCP_OK) {
        pthread_mutex_lock(&c->mu);
        int mine = claim_locked(c, p);
        unref_locked(p);
        pthread_mutex_unlock(&c->mu);
        if (mine && retry)
            finish(c, p, MCP_ERR_NOMEM, NULL, "cannot retry %s", p->method);
        else if (mine)
            finish(c, p, MCP_ERR_NOMEM, NULL, "cannot start an input round");
    }
}

static void on_response(mcp_client *c, mcp_rpc_msg *m)
{
    if (m->id.type != MCP_RPC_ID_INT || m->id.num <= 0) {
        if (m->kind == MCP_RPC_ERROR && m->id.type == MCP_RPC_ID_NULL) {
            /* The server could not read something we sent. */
            mcp__client_log(c, MCP_LOG_WARNING, "the server reported an error for an unreadable message: %s",
                            m->error_message ? m->error_message : "");
            return;
        }
        if (c->opts.lenient) {
            mcp__client_log(c, MCP_LOG_WARNING, "dropped a response with an id this client never uses");
            return;
        }
        mcp__client_on_closed(c, MCP_ERR_INVALID_MSG, "the server answered an id this client never sent");
        return;
    }
    uint64_t id = (uint64_t)m->id.num;
    pthread_mutex_lock(&c->mu);
    pending *p = find_locked(c, id);
    if (!p || p->state != P_WAITING) {
        int late = p || tomb_has_locked(c, id);
        int never = id > c->next_id;
        pthread_mutex_unlock(&c->mu);
        if (never && !c->opts.lenient) {
            char why[96];
            snprintf(why, sizeof why, "the server answered id %llu, which this client never sent",
                     (unsigned long long)id);
            mcp__client_on_closed(c, MCP_ERR_INVALID_MSG, why);
            return;
        }
        mcp__client_log(c, late ? MCP_LOG_DEBUG : MCP_LOG_WARNING, "dropped a %s response to request %llu",
                        late ? "late" : "duplicate", (unsigned long long)id);
        return;
    }
    /*
     * 2026-07-28: -32022 whose data.supported lists 2026-07-28 (what we
     * sent) is answered by sending the request again, once, with a new id:
     * the spec's "select a mutually supported version and retry".
     */
    if (p->modern && m->kind == MCP_RPC_ERROR && m->error_code == MCP_RPC_UNSUPPORTED_VERSION && !p->version_retried) {
        const mcp_json *sup = mcp_json_get(m->error_data, "supported");
        int ours = 0;
        for (size_t i = 0; i < mcp_json_len(sup); i++)
            ours |= mcp_json_str_eq(mcp_json_at(sup, i), mcp__version_newest());
        if (ours) {
            p->version_retried = 1;
            start_round(c, p, m, 1);
            return;
        }
    }
    /* 2026-07-28: an input_required result starts another round. */
    int input = 0;
    if (p->modern && m->kind == MCP_RPC_RESULT &&
        mcp_json_str_eq(mcp_json_get(m->result, "resultType"), "input_required") &&
        (!strcmp(p->method, "tools/call") || !strcmp(p->method, "prompts/get") ||
         !strcmp(p->method, "resources/read")))
        input = 1;
    if (input) {
        unsigned max = c->opts.max_input_rounds;
        if (++p->rounds > max) {
            claim_locked(c, p);
            pthread_mutex_unlock(&c->mu);
            finish(c, p, MCP_ERR_LIMIT, NULL, "%s: the server asked for input more than %u times", p->method, max);
            return;
        }
        start_round(c, p, m, 0);
        return;
    }
    claim_locked(c, p);
    pthread_mutex_unlock(&c->mu);
    mcp_response *r = response_new(m->doc, m->root);
    m->doc = NULL;
    if (!r) {
        finish(c, p, MCP_ERR_NOMEM, NULL, "out of memory");
        return;
    }
    if (r->message)
        finish(c, p, MCP_ERR_PROTOCOL, r, "%s", r->message);
    else
        finish(c, p, MCP_OK, r, "%s", "");
}

/*
 * Finishes and sends a response to a server-to-client request (reader or
 * pool thread; from the pool, mcp_client_close() may be running: nothing
 * is sent then).
 */
static void send_answer(mcp_client *c, mcp_jw *w, mcp_buf *b)
{
    if (mcp_jw_finish(w) != MCP_OK)
        return;
    mcp__out o;
    memset(&o, 0, sizeof o);
    o.frame = b->data;
    o.len = b->len;
    o.kind = MCP_RPC_RESULT;
    o.version = atomic_load(&c->proto);
    if (!pool_send_begin(c))
        return;
    send_out(c, &o);
    pool_send_end(c);
}

static void send_error_answer(mcp_client *c, const mcp_rpc_id *id, int code, const char *message)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, id, code, message, NULL);
    send_answer(c, &w, &b);
    mcp_buf_cleanup(&b);
}

/* Runs on a pool worker: one legacy server-to-client request. */
static void server_request_job(mcp__job *job)
{
    server_req *sr = (server_req *)job;
    mcp_client *c = sr->c;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_result(&w, &sr->id);
    char msg[MCP_ERROR_MESSAGE_MAX] = "";
    mcp_status st = answer_input(c, sr->method, sr->params, &w, msg, sizeof msg);
    mcp_rpc_end(&w);
    if (st == MCP_OK)
        send_answer(c, &w, &b);
    else if (st == MCP_ERR_UNSUPPORTED)
        send_error_answer(c, &sr->id, MCP_RPC_METHOD_NOT_FOUND, msg);
    else
        send_error_answer(c, &sr->id, MCP_RPC_INTERNAL_ERROR, msg[0] ? msg : "the client could not answer");
    mcp_buf_cleanup(&b);
    mcp_json_doc_free(sr->doc);
    mcp_free(sr);
}

static void on_server_request(mcp_client *c, mcp_rpc_msg *m)
{
    const mcp_rpc_id *id = &m->id;
    if (mcp_rpc_method_is(m, "ping")) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_result(&w, id);
        mcp_jw_object_begin(&w);
        mcp_jw_object_end(&w);
        mcp_rpc_end(&w);
        send_answer(c, &w, &b);
        mcp_buf_cleanup(&b);
        return;
    }
    if (!mcp_rpc_method_is(m, "elicitation/create") && !mcp_rpc_method_is(m, "sampling/createMessage") &&
        !mcp_rpc_method_is(m, "roots/list")) {
        char msg[160];
        snprintf(msg, sizeof msg, "Method not found: %.100s", m->method);
        send_error_answer(c, id, MCP_RPC_METHOD_NOT_FOUND, msg);
        return;
    }
    server_req *sr = mcp__calloc(1, sizeof *sr);
    if (!sr) {
        send_error_answer(c, id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    sr->c = c;
    sr->doc = m->doc;
    m->doc = NULL;
    sr->id = m->id;
    snprintf(sr->method, sizeof sr->method, "%s", m->method);
    sr->params = m->params;
    sr->job.run = server_request_job;
    if (mcp__pool_submit(c->pool, &sr->job) != MCP_OK) {
        send_error_answer(c, id, MCP_RPC_INTERNAL_ERROR, "Internal error: the client is busy");
        mcp_json_doc_free(sr->doc);
        mcp_free(sr);
    }
}

static void on_notification(mcp_client *c, mcp_rpc_msg *m)
{
    if (mcp_rpc_method_is(m, "notifications/progress")) {
        const mcp_json *tok = mcp_json_get(m->params, "progressToken");
        if (mcp_json_typeof(tok) != MCP_JSON_INT)
            return;
        int64_t h = mcp_json_int(tok);
        pthread_mutex_lock(&c->mu);
        pending *p = h > 0 ? find_handle_locked(c, (uint64_t)h) : NULL;
        if (!p || p->state == P_DONE || !p->on_progress) {
            pthread_mutex_unlock(&c->mu);
            return;
        }
        if (p->progress_resets && p->state == P_WAITING)
            set_deadline(p, p->timeout_ms);
        p->refs++;
        pthread_mutex_unlock(&c->mu);
        const mcp_json *total = mcp_json_get(m->params, "total");
        p->on_progress(mcp_json_number(mcp_json_get(m->params, "progress")), total ? mcp_json_number(total) : -1.0,
                       mcp_json_str(mcp_json_get(m->params, "message"), NULL), p->progress_ud);
        unref(c, p);
        return;
    }
    if (c->opts.on_notify)
        c->opts.on_notify(c, m->method, m->params, c->opts.user_data);
}

static void on_message(mcp_client *c, const char *data, size_t len);

void mcp__client_on_frame(mcp_client *c, const char *data, size_t len)
{
    transcript(c, "in", data, len);
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i < len && data[i] == '[') {
        /* A batch (2025-03-26 allowed them): each element on its own. */
        mcp_json_doc *doc;
        if (mcp_json_parse(&doc, data, len, &c->popts, NULL) == MCP_OK) {
            const mcp_json *arr = mcp_json_doc_root(doc);
            for (size_t k = 0; k < mcp_json_len(arr); k++) {
                mcp_buf b;
                mcp_buf_init(&b, 0);
                mcp_jw w;
                mcp_jw_init(&w, &b);
                mcp_jw_value(&w, mcp_json_at(arr, k));
                if (mcp_jw_finish(&w) == MCP_OK)
                    on_message(c, b.data, b.len);
                mcp_buf_cleanup(&b);
            }
            mcp_json_doc_free(doc);
            return;
        }
    }
    on_message(c, data, len);
}

static void on_message(mcp_client *c, const char *data, size_t len)
{
    mcp_rpc_msg m;
    mcp_error err;
    if (mcp_rpc_decode(&m, data, len, &c->popts, &err) != MCP_OK) {
        char why[MCP_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "the server sent something that is not a JSON-RPC message (%.80s): %.*s",
                 err.message, (int)(len < 60 ? len : 60), data);
        for (char *q = why; *q; q++)
            if ((unsigned char)*q < 0x20)
                *q = ' ';
        if (c->opts.lenient) {
            mcp__client_log(c, MCP_LOG_WARNING, "%s", why);
            return;
        }
        mcp__client_on_closed(c, MCP_ERR_INVALID_MSG, why);
        return;
    }
    switch (m.kind) {
    case MCP_RPC_RESULT:
    case MCP_RPC_ERROR:
        on_response(c, &m);
        break;
    case MCP_RPC_REQUEST:
        on_server_request(c, &m);
        break;
    case MCP_RPC_NOTIFICATION:
        on_notification(c, &m);
        break;
    }
    mcp_rpc_msg_cleanup(&m);
}

/* ---- retries of unanswered read-only tool calls ---- */

/* Did request `p` fail without any answer from the server (it may or may not have run)? */
static int unanswered(const pending *p, mcp_status st, int http_status)
{
    if (strcmp(p->method, "tools/call") != 0 || p->internal)
        return 0;
    return st == MCP_ERR_IO || (st == MCP_ERR_CLOSED && !http_status) ||
           (st == MCP_ERR_PROTOCOL && (http_status == 502 || http_status == 503 || http_status == 504));
}

/* The listed tool `p` calls is read-only (c->mu held); its name into `name`. */
static int read_only_locked(mcp_client *c, const pending *p, char *name, size_t cap)
{
    size_t nl = 0;
    const char *n = p->params ? mcp_json_str(mcp_json_get(mcp_json_doc_root(p->params), "name"), &nl) : NULL;
    snprintf(name, cap, "%.*s", n ? (int)(nl < 80 ? nl : 80) : 1, n ? n : "?");
    for (tool_info *ti = n ? c->tools : NULL; ti; ti = ti->next)
        if (strlen(ti->name) == nl && memcmp(ti->name, n, nl) == 0)
            return ti->read_only;
    return 0;
}

/*
 * Puts an unanswered request in backoff when it may go again (c->mu held):
 * returns the wait in ms, or 0 with why not in `why` ("" when the failure
 * is not of that kind).
 */
static unsigned retry_plan_locked(mcp_client *c, pending *p, mcp_status st, int http_status, char *why, size_t cap)
{
    why[0] = '\0';
    if (!unanswered(p, st, http_status))
        return 0;
    char name[96];
    int max = c->opts.read_only_retries < 0 ? 0 : c->opts.read_only_retries;
    if (!read_only_locked(c, p, name, sizeof name)) {
        snprintf(why, cap, "; not sent again: tool %s is not listed as read-only, so it may have run", name);
        return 0;
    }
    if (p->retries >= (unsigned)max || c->dead || c->stopping) {
        snprintf(why, cap, "; read-only tool %s sent %u time%s", name, p->retries + 1, p->retries ? "s" : "");
        return 0;
    }
    uint64_t base = (uint64_t)c->opts.retry_backoff_ms << (p->retries < 16 ? p->retries : 16);
    unsigned ms = (unsigned)(base < MAX_RETRY_BACKOFF_MS ? base : MAX_RETRY_BACKOFF_MS);
    ms += (unsigned)((mcp__mono_ns() / 1000u) % (ms / 2u + 1u)); /* jitter: clients that lost one server spread out */
    uint64_t at = mcp__mono_ns() + (uint64_t)ms * 1000000ull;
    if (at >= p->limit_ns) {
        snprintf(why, cap, "; read-only tool %s not sent again: its time limit ends first", name);
        return 0;
    }
    snprintf(why, cap, "%s", name); /* for the log line */
    p->retries++;
    p->state = P_BACKOFF;
    p->deadline_ns = at;
    tomb_add_locked(c, p->id);
    timer_note_locked(c, p);
    return ms;
}

/*
 * Sends again the requests whose backoff ended (timer thread, c->mu held
 * on entry and on return; released while sending). Each gets a new id and
 * what is left of its time limit.
 */
static void retry_send_due(mcp_client *c, pending *list)
{
    while (list) {
        pending *p = list;
        list = p->park_next;
        p->park_next = NULL;
        if (p->state != P_BACKOFF) {
            unref_locked(p); /* completed meanwhile (cancelled, closed) */
            continue;
        }
        mcp_buf b;
        mcp_buf_init(&b, 0);
        unlink_locked(c, p);
        p->id = ++c->next_id;
        p->auth_gen = c->auth_gen; /* it goes with today's token and session */
        p->sess_gen = c->sess_gen;
        mcp_status st = write_request(c, &b, p);
        if (st != MCP_OK) {
            p->state = P_DONE; /* unlinked: claimed */
            pthread_mutex_unlock(&c->mu);
            mcp_buf_cleanup(&b);
            finish(c, p, st, NULL, "cannot write %s again: %s", p->method, mcp_status_str(st));
            pthread_mutex_lock(&c->mu);
            unref_locked(p);
            continue;
        }
        p->state = P_WAITING;
        p->deadline_ns = p->limit_ns;
        insert_locked(c, p);
        uint64_t id = p->id; /* the list's reference covers the send: the answer may come first */
        pthread_mutex_unlock(&c->mu);
        st = send_from_pool(c, p, &b, id);
        pthread_mutex_lock(&c->mu);
        if (st != MCP_OK && st != MCP_ERR_CLOSED && claim_locked(c, p)) {
            pthread_mutex_unlock(&c->mu);
            finish(c, p, st, NULL, "cannot send %s again: %s", p->method, mcp_status_str(st));
            pthread_mutex_lock(&c->mu);
        }
        unref_locked(p);
    }
}

void mcp__client_on_request_failed(mcp_client *c, uint64_t id, mcp_status st, int http_status, const char *message)
{
    char why[200];
    pthread_mutex_lock(&c->mu);
    pending *p = find_locked(c, id);
    unsigned wait = p && p->state == P_WAITING ? retry_plan_locked(c, p, st, http_status, why, sizeof why) : 0;
    int mine = !wait && p && p->state == P_WAITING && claim_locked(c, p);
    pthread_mutex_unlock(&c->mu);
    if (wait) {
        char status[16] = "";
        if (http_status)
            snprintf(status, sizeof status, "HTTP %d: ", http_status);
        mcp__client_log(c, MCP_LOG_WARNING, "tools/call %s: no answer (%s%.200s); read-only, sent again in %u ms", why,
                        status, message ? message : mcp_status_str(st), wait);
        return;
    }
    if (!mine)
        return;
    if (http_status)
        finish(c, p, st, NULL, "HTTP %d: %s%s", http_status, message ? message : "", why);
    else
        finish(c, p, st, NULL, "%s%s", message ? message : mcp_status_str(st), why);
}

void mcp__client_on_closed(mcp_client *c, mcp_status st, const char *message)
{
    pending *all = NULL;
    pthread_mutex_lock(&c->mu);
    if (!c->dead) {
        c->dead = st ? st : MCP_ERR_CLOSED;
        snprintf(c->dead_msg, sizeof c->dead_msg, "%s", message ? message : "the connection closed");
    }
    for (unsigned b = 0; b < BUCKETS; b++) {
        while (c->buckets[b]) {
            pending *p = c->buckets[b];
            claim_locked(c, p);
            p->next = all;
            all = p;
        }
    }
    char msg[MCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", c->dead_msg);
    mcp_status dead = c->dead;
    pthread_mutex_unlock(&c->mu);
    if (all && !c->stopping)
        mcp__client_log(c, MCP_LOG_WARNING, "%s", msg);
    while (all) {
        pending *n = all->next;
        all->next = NULL;
        finish(c, all, dead, NULL, "%s", msg);
        all = n;
    }
}

/* ------------------------------------------------------------------------ */
/* Creating, the handshake, closing                                          */

mcp_status mcp__client_new(mcp_client **out, const mcp_client_opts *opts, mcp_error *err)
{
    mcp_client_opts o;
    if (opts)
        o = *opts;
    else
        memset(&o, 0, sizeof o);
    if (o.protocol_version) {
        if (!mcp__version_known(o.protocol_version, strlen(o.protocol_version)))
            return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0,
                             "protocol version %.40s is not one libmcp speaks (2024-11-05 .. 2026-07-28)",
                             o.protocol_version);
    }
    mcp_client *c = mcp__calloc(1, sizeof *c);
    if (!c)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->transcript_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&c->send_cv, NULL);
    c->auth_wait.tail = &c->auth_wait.head;
    c->sess_wait.tail = &c->sess_wait.head;
    c->name = mcp__strdup(o.name ? o.name : "libmcp-client");
    c->version = mcp__strdup(o.version ? o.version : mcp_version());
    c->forced_version = mcp__strdup(o.protocol_version);
    c->caps_text = mcp__strdup(o.capabilities ? o.capabilities : "{}");
    if (!c->name || !c->version || !c->caps_text || (o.protocol_version && !c->forced_version)) {
        mcp_client_close(c);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    o.name = c->name;
    o.version = c->version;
    o.protocol_version = c->forced_version;
    o.capabilities = c->caps_text;
    if (!o.timeout_ms)
        o.timeout_ms = DEFAULT_TIMEOUT_MS;
    if (!o.connect_timeout_ms)
        o.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    if (!o.discover_timeout_ms)
        o.discover_timeout_ms = DEFAULT_DISCOVER_TIMEOUT_MS;
    if (!o.workers)
        o.workers = DEFAULT_WORKERS;
    if (!o.max_input_rounds)
        o.max_input_rounds = DEFAULT_MAX_ROUNDS;
    if (!o.max_message)
        o.max_message = DEFAULT_MAX_MESSAGE;
    if (!o.read_only_retries)
        o.read_only_retries = DEFAULT_READ_ONLY_RETRIES;
    if (!o.retry_backoff_ms)
        o.retry_backoff_ms = DEFAULT_RETRY_BACKOFF_MS;
    o.transcript_path = NULL; /* opened below; not kept */
    c->opts = o;
    c->popts.max_bytes = o.max_message;
    mcp_status pst = mcp_json_parse(&c->caps_doc, c->caps_text, strlen(c->caps_text), NULL, NULL);
    if (pst != MCP_OK || mcp_json_typeof(mcp_json_doc_root(c->caps_doc)) != MCP_JSON_OBJECT) {
        mcp_client_close(c);
        if (pst == MCP_ERR_NOMEM)
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "capabilities must be a JSON object");
    }
    if (mcp_json_parse(&c->empty_doc, "{}", 2, NULL, NULL) != MCP_OK ||
        mcp__pool_new(&c->pool, o.workers, 1024, NULL) != MCP_OK) {
        mcp_client_close(c);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    if (opts && opts->transcript_path) {
        c->transcript = mcp__transcript_open(opts->transcript_path);
        if (!c->transcript) {
            mcp_status st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot open the transcript %.150s: %s",
                                      opts->transcript_path, strerror(errno));
            mcp_client_close(c);
            return st;
        }
    }
    if (pthread_create(&c->timer, NULL, timer_main, c) != 0) {
        mcp_client_close(c);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "cannot start the timer thread");
    }
    c->timer_started = 1;
    atomic_store(&c->proto, NULL);
    c->server_caps = mcp_json_doc_root(c->empty_doc);
    *out = c;
    return MCP_OK;
}

void mcp__client_attach(mcp_client *c, mcp__ctransport *t)
{
    t->client = c;
    c->t = t;
}

/* Keeps the handshake result: capabilities, serverInfo, instructions. */
static void keep_handshake(mcp_client *c, mcp_response *r)
{
    c->hs_doc = r->doc;
    r->doc = NULL;
    c->hs_result = r->result;
    const mcp_json *caps = mcp_json_get(r->result, "capabilities");
    if (mcp_json_typeof(caps) == MCP_JSON_OBJECT)
        c->server_caps = caps;
    c->server_info = mcp_json_get(r->result, "serverInfo");
    if (!c->server_info) /* 2026-07-28 puts it in _meta */
        c->server_info = mcp_json_get(mcp_json_get(r->result, "_meta"), "io.modelcontextprotocol/serverInfo");
    c->instructions = mcp_json_str(mcp_json_get(r->result, "instructions"), NULL);
    mcp_response_free(r);
}

static const char *legacy_version(const mcp_json *v)
{
    size_t n;
    const char *s = mcp_json_str(v, &n);
    return mcp__version_legacy(s, n);
}

/* initialize's params for `version`; NULL when out of memory. */
static mcp_json_doc *initialize_params(mcp_client *c, const char *version)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "protocolVersion");
    mcp_jw_string(&w, version);
    mcp_jw_key(&w, "capabilities");
    write_caps(c, &w);
    mcp_jw_key(&w, "clientInfo");
    write_client_info(c, &w);
    mcp_jw_object_end(&w);
    mcp_json_doc *doc = NULL;
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK)
        st = mcp_json_parse(&doc, b.data, b.len, NULL, NULL);
    mcp_buf_cleanup(&b);
    return st == MCP_OK ? doc : NULL;
}

static mcp_status do_initialize(mcp_client *c, const char *version, mcp_error *err)
{
    mcp_json_doc *doc = initialize_params(c, version);
    if (!doc)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    mcp_status st;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = c->opts.connect_timeout_ms;
    mcp_response *r;
    st = request_doc(c, "initialize", doc, 0, &ro, 0, &r, err);
    if (st != MCP_OK) {
        mcp_response_free(r);
        if (st == MCP_ERR_PROTOCOL && err) {
            char m[MCP_ERROR_MESSAGE_MAX];
            snprintf(m, sizeof m, "%s", err->message);
            mcp__fail(err, st, err->rpc_code, 0, "the server refused initialize: %s", m);
        }
        return st;
    }
    const char *got = legacy_version(mcp_json_get(r->result, "protocolVersion"));
    if (!got) {
        const char *v = mcp_json_str(mcp_json_get(r->result, "protocolVersion"), NULL);
        mcp_response_free(r);
        return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0,
                         "the server answered initialize with protocol version %.40s, which libmcp does not speak",
                         v ? v : "(none)");
    }
    if (strcmp(got, version) != 0)
        mcp__client_log(c, MCP_LOG_INFO, "asked for protocol %s, the server chose %s", version, got);
    atomic_store(&c->proto, got);
    atomic_store(&c->modern, 0);
    keep_handshake(c, r);
    return mcp_client_notify(c, "notifications/initialized", NULL) == MCP_OK
               ? MCP_OK
               : mcp__fail(err, MCP_ERR_CLOSED, 0, 0, "the connection closed after initialize");
}

/* ------------------------------------------------------------------------ */
/* A new legacy session after a 404                                          */

/*
 * Starts a new session at the negotiated version (pool thread): initialize
 * (the transport sends it without the old session id and keeps the new
 * one), then notifications/initialized. What the first handshake learned
 * (capabilities, serverInfo) stays: pointers the caller holds stay valid.
 */
static mcp_status reinitialize(mcp_client *c, mcp_error *err)
{
    const char *version = atomic_load(&c->proto);
    mcp_json_doc *doc = initialize_params(c, version);
    if (!doc)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = c->opts.connect_timeout_ms;
    waiter w;
    waiter_init(&w);
    if (!pool_send_begin(c)) {
        mcp_json_doc_free(doc);
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
        return mcp__fail(err, MCP_ERR_CLOSED, 0, 0, "the client was closed");
    }
    mcp_status st = start_request(c, "initialize", doc, 0, &ro, NULL, NULL, 1, waiter_done, &w, NULL, err);
    pool_send_end(c);
    if (st != MCP_OK) {
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
        return st;
    }
    mcp_response *r = NULL;
    st = waiter_wait(&w, &r, err);
    if (st != MCP_OK) {
        mcp_response_free(r);
        return st;
    }
    const mcp_json *got = mcp_json_get(r->result, "protocolVersion");
    if (!mcp_json_str_eq(got, version)) {
        const char *v = mcp_json_str(got, NULL);
        mcp_response_free(r);
        return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0, "the new session's protocol version is %.40s, not %s",
                         v ? v : "(none)", version);
    }
    mcp_response_free(r);
    if (!pool_send_begin(c))
        return mcp__fail(err, MCP_ERR_CLOSED, 0, 0, "the client was closed");
    st = mcp_client_notify(c, "notifications/initialized", NULL);
    pool_send_end(c);
    return st == MCP_OK ? MCP_OK : mcp__fail(err, st, 0, 0, "notifications/initialized: %s", mcp_status_str(st));
}

/* One new session on the pool, for the requests in c->sess_wait. */
typedef struct sess_job {
    mcp__job job; /* first: the pool hands this back */
    mcp_client *c;
    uint64_t gen; /* the session generation the refused request was sent with */
} sess_job;

static void sess_job_run(mcp__job *job)
{
    sess_job *sj = (sess_job *)job;
    mcp_client *c = sj->c;
    pthread_mutex_lock(&c->mu);
    int renewed = sj->gen != c->sess_gen;
    int stopping = c->stopping;
    pthread_mutex_unlock(&c->mu);
    mcp_error e;
    mcp_error_clear(&e);
    mcp_status st = MCP_OK;
    if (stopping)
        st = mcp__fail(&e, MCP_ERR_CLOSED, 0, 0, "the client was closed");
    else if (!renewed)
        /* Sent on the current session: start a new one. Sent on an older
         * one: the new session exists already, just send it again. */
        st = reinitialize(c, &e);
    pthread_mutex_lock(&c->mu);
    if (st == MCP_OK && !renewed) {
        c->sess_gen++;
        /* Under c->mu: close cannot free the transport in between (ready
         * takes only the transport's lock). It reopens the GET stream. */
        if (!c->stopping && c->t && c->t->ops->ready)
            c->t->ops->ready(c->t, atomic_load(&c->proto), 0);
    }
    pthread_mutex_unlock(&c->mu);
    if (st == MCP_OK && !renewed)
        mcp__client_log(c, MCP_LOG_WARNING,
                        "HTTP 404: the server no longer knew the session; started a new one (what the old one "
                        "had set up on the server, such as resource subscriptions or the log level, is not "
                        "restored)");
    char msg[MCP_ERROR_MESSAGE_MAX];
    mcp_status fst = st == MCP_ERR_NOMEM ? MCP_ERR_NOMEM : MCP_ERR_CLOSED;
    if (st) {
        snprintf(msg, sizeof msg, "HTTP 404: session unknown to the server; a new one failed: %.150s", e.message);
        if (st != MCP_ERR_CLOSED)
            mcp__client_log(c, MCP_LOG_WARNING, "%s", msg);
    }
    park_settle(c, &c->sess_wait, st == MCP_OK, fst, msg);
    mcp_free(sj);
}

void mcp__client_on_session_gone(mcp_client *c, uint64_t id, const char *message)
{
    const char *m = message ? message : "HTTP 404";
    pthread_mutex_lock(&c->mu);
    pending *p = find_locked(c, id);
    if (!p || p->state != P_WAITING) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    if (c->stopping || p->sess_rounds >= MAX_SESSION_RESENDS || !strcmp(p->method, "initialize")) {
        unsigned rounds = p->sess_rounds;
        claim_locked(c, p);
        pthread_mutex_unlock(&c->mu);
        if (rounds)
            finish(c, p, MCP_ERR_CLOSED, NULL, "%s (again, after %u new session%s)", m, rounds,
                   rounds == 1 ? "" : "s");
        else
            finish(c, p, MCP_ERR_CLOSED, NULL, "%s", m);
        return;
    }
    sess_job *sj = NULL;
    if (!c->sess_wait.busy) {
        sj = mcp__calloc(1, sizeof *sj);
        if (!sj) {
            claim_locked(c, p);
            pthread_mutex_unlock(&c->mu);
            finish(c, p, MCP_ERR_NOMEM, NULL, "%s; cannot start a new session (out of memory)", m);
            return;
        }
        sj->c = c;
        sj->gen = p->sess_gen;
        sj->job.run = sess_job_run;
        c->sess_wait.busy = 1;
    }
    p->sess_rounds++;
    park_locked(&c->sess_wait, p);
    pthread_mutex_unlock(&c->mu);
    if (sj && mcp__pool_submit(c->pool, &sj->job) != MCP_OK) {
        park_settle(c, &c->sess_wait, 0, MCP_ERR_CLOSED,
                    "HTTP 404: the server no longer knows the session; cannot start a new one: the client is busy "
                    "or closing");
        mcp_free(sj);
    }
}

/* 2026-07-28 errors that prove the server modern (do not fall back). */
static int modern_error(int code)
{
    return code == MCP_RPC_UNSUPPORTED_VERSION || code == MCP_RPC_HEADER_MISMATCH ||
           code == MCP_RPC_MISSING_CAPABILITY;
}

static mcp_status do_discover(mcp_client *c, unsigned timeout_ms, int *legacy, mcp_error *err)
{
    *legacy = 0;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = timeout_ms;
    mcp_response *r;
    mcp_error e;
    mcp_error_clear(&e);
    mcp_status st = request_doc(c, "server/discover", NULL, 1, &ro, 1, &r, &e);
    if (st == MCP_OK) {
        const mcp_json *sv = mcp_json_get(r->result, "supportedVersions");
        int ok = 0;
        for (size_t i = 0; i < mcp_json_len(sv); i++)
            ok |= mcp_json_str_eq(mcp_json_at(sv, i), mcp__version_newest());
        if (!ok && sv) {
            mcp_response_free(r);
            return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0,
                             "the server is modern but does not list 2026-07-28 in supportedVersions");
        }
        atomic_store(&c->modern, 1);
        atomic_store(&c->proto, mcp__version_newest());
        keep_handshake(c, r);
        return MCP_OK;
    }
    int code = r ? r->code : 0;
    if (st == MCP_ERR_PROTOCOL && modern_error(code)) {
        if (code == MCP_RPC_UNSUPPORTED_VERSION) {
            char list[160] = "";
            const mcp_json *sup = mcp_json_get(r->data, "supported");
            for (size_t i = 0; i < mcp_json_len(sup); i++) {
                const char *v = mcp_json_str(mcp_json_at(sup, i), NULL);
                if (v && strlen(list) + strlen(v) + 3 < sizeof list) {
                    strcat(list, i ? ", " : "");
                    strcat(list, v);
                }
            }
            mcp_response_free(r);
            return mcp__fail(err, MCP_ERR_UNSUPPORTED, code, 0,
                             "the server does not speak 2026-07-28 (it supports: %s)", list[0] ? list : "?");
        }
        mcp_response_free(r);
        return mcp__fail(err, st, code, 0, "server/discover failed: %s", e.message);
    }
    mcp_response_free(r);
    /* Any other error, a silence, or an HTTP 4xx: a legacy server. */
    if (st == MCP_ERR_PROTOCOL || st == MCP_ERR_TIMEOUT) {
        *legacy = 1;
        return MCP_OK;
    }
    if (err)
        *err = e;
    return st;
}

mcp_status mcp__client_handshake(mcp_client *c, mcp_error *err)
{
    const char *want = c->forced_version;
    mcp_status st;
    if (want && mcp__version_legacy(want, strlen(want))) {
        st = do_initialize(c, want, err);
    } else {
        int legacy = 0;
        st = do_discover(c, want ? c->opts.connect_timeout_ms : c->opts.discover_timeout_ms, &legacy, err);
        if (st == MCP_OK && legacy) {
            if (want)
                st = mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0,
                               "the server does not speak 2026-07-28 (server/discover failed)");
            else
                st = do_initialize(c, mcp__version_newest_legacy(), err);
        }
    }
    if (st == MCP_OK && c->t->ops->ready)
        c->t->ops->ready(c->t, atomic_load(&c->proto), atomic_load(&c->modern));
    return st;
}

mcp_status mcp__client_start(mcp_client **out, const mcp_client_opts *opts, mcp__ctransport *t, mcp_error *err)
{
    mcp_client *c;
    mcp_status st = mcp__client_new(&c, opts, err);
    if (st != MCP_OK) {
        t->ops->close(t);
        return st;
    }
    mcp__client_attach(c, t);
    st = mcp__client_handshake(c, err);
    if (st != MCP_OK) {
        mcp_client_close(c);
        return st;
    }
    *out = c;
    return MCP_OK;
}

static void tools_free(tool_info *t)
{
    while (t) {
        tool_info *n = t->next;
        mcp_free(t->name);
        mcp_schema_free(t->output);
        for (unsigned i = 0; i < t->nheaders; i++) {
            mcp_free(t->hprop[i]);
            mcp_free(t->hname[i]);
        }
        mcp_free(t);
        t = n;
    }
}

void mcp_client_close(mcp_client *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    pthread_cond_signal(&c->timer_cv);
    /* Pool threads inside the transport's send finish first (send_from_pool). */
    while (c->sending)
        pthread_cond_wait(&c->send_cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    /* An authorization in progress stops its HTTP exchanges (an authorize
     * callback still runs to its end: the pool waits for it below). */
    mcp__oauth_abort(c->oauth);
    if (c->t) {
        /* After this no transport thread calls in any more. */
        c->t->ops->close(c->t);
        c->t = NULL;
    }
    mcp__client_on_closed(c, MCP_ERR_CLOSED, "the client was closed");
    if (c->timer_started)
        pthread_join(c->timer, NULL);
    /* Input rounds still queued finish against a closed client (they see P_DONE). */
    mcp__pool_free(c->pool);
    mcp__oauth_free(c->oauth);
    tools_free(c->tools);
    if (c->transcript)
        fclose(c->transcript);
    mcp_json_doc_free(c->hs_doc);
    mcp_json_doc_free(c->caps_doc);
    mcp_json_doc_free(c->empty_doc);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->transcript_mu);
    pthread_cond_destroy(&c->timer_cv);
    pthread_cond_destroy(&c->send_cv);
    mcp_free(c->name);
    mcp_free(c->version);
    mcp_free(c->forced_version);
    mcp_free(c->caps_text);
    mcp_free(c);
}

/* ------------------------------------------------------------------------ */
/* What was negotiated                                                       */

const char *mcp_client_protocol_version(const mcp_client *c)
{
    return c ? atomic_load(&c->proto) : NULL;
}

int mcp_client_is_modern(const mcp_client *c)
{
    return c ? atomic_load(&c->modern) : 0;
}

const mcp_json *mcp_client_server_capabilities(const mcp_client *c)
{
    return c ? c->server_caps : NULL;
}

const mcp_json *mcp_client_server_info(const mcp_client *c)
{
    return c ? c->server_info : NULL;
}

const char *mcp_client_instructions(const mcp_client *c)
{
    return c ? c->instructions : NULL;
}

const mcp_json *mcp_client_handshake_result(const mcp_client *c)
{
    return c ? c->hs_result : NULL;
}

/* ------------------------------------------------------------------------ */
/* Typed helpers                                                             */

/* Writes {"key": value} params as text into a doc; NULL value skips the key. */
static mcp_status params_doc(mcp_json_doc **out, const char *const *kv, const char *raw_key, const char *raw,
                             mcp_error *err)
{
    *out = NULL;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    for (; kv && kv[0]; kv += 2) {
        if (!kv[1])
            continue;
        mcp_jw_key(&w, kv[0]);
        mcp_jw_string(&w, kv[1]);
    }
    mcp_status st = MCP_OK;
    if (raw_key && raw) {
        mcp_json_doc *d;
        st = mcp_json_parse(&d, raw, strlen(raw), NULL, err);
        if (st == MCP_OK && mcp_json_typeof(mcp_json_doc_root(d)) != MCP_JSON_OBJECT)
            st = MCP_ERR_TYPE;
        if (st == MCP_OK) {
            mcp_jw_key(&w, raw_key);
            mcp_jw_value(&w, mcp_json_doc_root(d));
        }
        mcp_json_doc_free(d);
        if (st != MCP_OK) {
            mcp_buf_cleanup(&b);
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "%s must be a JSON object", raw_key);
        }
    }
    mcp_jw_object_end(&w);
    st = mcp_jw_finish(&w);
    if (st == MCP_OK)
        st = mcp_json_parse(out, b.data, b.len, NULL, NULL);
    mcp_buf_cleanup(&b);
    return st == MCP_OK ? MCP_OK : mcp__fail(err, st, 0, 0, "cannot build the request: %s", mcp_status_str(st));
}

/* An x-mcp-header name must be an HTTP token (RFC 9110) to become a header. */
static int header_token(const char *s)
{
    if (!s || !*s || strlen(s) > 100)
        return 0;
    for (; *s; s++)
        if (!(((*s | 32) >= 'a' && (*s | 32) <= 'z') || (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s)))
            return 0;
    return 1;
}

/*
 * Why a tool's x-mcp-header annotations are unusable (SEP-2243), or NULL
 * when they are fine: each must be a non-empty HTTP token, unique within
 * the tool ignoring case, on a string, integer or boolean property. A
 * 2026-07-28 client must not call such a tool.
 */
static const char *tool_headers_why(const mcp_json *tool, char *buf, size_t cap)
{
    const mcp_json *props = mcp_json_get(mcp_json_get(tool, "inputSchema"), "properties");
    for (size_t k = 0; k < mcp_json_len(props); k++) {
        const mcp_json *prop = mcp_json_value_at(props, k);
        const mcp_json *hv = mcp_json_get(prop, "x-mcp-header");
        if (!hv)
            continue;
        const char *h = mcp_json_str(hv, NULL);
        size_t kl;
        const char *key = mcp_json_key_at(props, k, &kl);
        if (!h || !header_token(h)) {
            snprintf(buf, cap, "property %.*s: x-mcp-header is not a valid header name", (int)(kl > 60 ? 60 : kl), key);
            return buf;
        }
        const mcp_json *type = mcp_json_get(prop, "type");
        if (!mcp_json_str_eq(type, "string") && !mcp_json_str_eq(type, "integer") && !mcp_json_str_eq(type, "boolean")) {
            snprintf(buf, cap, "property %.*s: x-mcp-header needs a string, integer or boolean type",
                     (int)(kl > 60 ? 60 : kl), key);
            return buf;
        }
        for (size_t j = 0; j < k; j++) {
            const char *o = mcp_json_str(mcp_json_get(mcp_json_value_at(props, j), "x-mcp-header"), NULL);
            if (o && !strcasecmp(o, h)) {
                snprintf(buf, cap, "x-mcp-header %.60s is used twice", h);
                return buf;
            }
        }
    }
    return NULL;
}

/*
 * Lists every page of a list method into one response `{"<key>":[...]}`;
 * `each` sees every item (for the tool cache).
 */
static mcp_status list_all(mcp_client *c, const char *method, const char *key, mcp_response **out,
                           mcp_error *err)
{
    *out = NULL;
    mcp_buf all;
    mcp_buf_init(&all, 0);
    mcp_jw w;
    mcp_jw_init(&w, &all);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, key);
    mcp_jw_array_begin(&w);
    char *cursor = NULL;
    mcp_status st = MCP_OK;
    for (unsigned page = 0;; page++) {
        if (page == MAX_LIST_PAGES) {
            st = mcp__fail(err, MCP_ERR_LIMIT, 0, 0, "%s: more than %u pages", method, MAX_LIST_PAGES);
            break;
        }
        const char *kv[] = {"cursor", cursor, NULL, NULL};
        mcp_json_doc *doc;
        st = params_doc(&doc, cursor ? kv : NULL, NULL, NULL, err);
        if (st != MCP_OK)
            break;
        mcp_response *r;
        st = request_doc(c, method, doc, atomic_load(&c->modern), NULL, 0, &r, err);
        mcp_free(cursor);
        cursor = NULL;
        if (st != MCP_OK) {
            if (r && page == 0) {
                *out = r; /* the error response */
                r = NULL;
            }
            mcp_response_free(r);
            break;
        }
        const mcp_json *items = mcp_json_get(r->result, key);
        if (mcp_json_typeof(items) != MCP_JSON_ARRAY) {
            mcp_response_free(r);
            st = mcp__fail(err, MCP_ERR_INVALID_MSG, 0, 0, "%s: the result has no \"%s\" array", method, key);
            break;
        }
        for (size_t i = 0; i < mcp_json_len(items); i++) {
            const mcp_json *item = mcp_json_at(items, i);
            char why[160];
            if (atomic_load(&c->modern) && !strcmp(key, "tools") && tool_headers_why(item, why, sizeof why)) {
                const char *tn = mcp_json_str(mcp_json_get(item, "name"), NULL);
                mcp__client_log(c, MCP_LOG_WARNING, "ignoring tool %.80s: %s", tn ? tn : "?", why);
                continue;
            }
            mcp_jw_value(&w, item);
        }
        size_t cl;
        const char *next = mcp_json_str(mcp_json_get(r->result, "nextCursor"), &cl);
        if (next && cl)
            cursor = mcp__strndup(next, cl);
        mcp_response_free(r);
        if (!cursor)
            break;
    }
    mcp_free(cursor);
    if (st != MCP_OK) {
        mcp_buf_cleanup(&all);
        return st;
    }
    mcp_jw_array_end(&w);
    mcp_jw_object_end(&w);
    st = mcp_jw_finish(&w);
    /* Wrap as a response message so the accessors work alike. */
    mcp_buf msg;
    mcp_buf_init(&msg, 0);
    if (st == MCP_OK) {
        mcp_buf_append(&msg, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":", 33);
        mcp_buf_append(&msg, all.data, all.len);
        st = mcp_buf_append(&msg, "}", 1);
    }
    mcp_buf_cleanup(&all);
    mcp_json_doc *doc = NULL;
    if (st == MCP_OK)
        st = mcp_json_parse(&doc, msg.data, msg.len, NULL, NULL);
    mcp_buf_cleanup(&msg);
    if (st != MCP_OK)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    *out = response_new(doc, mcp_json_doc_root(doc));
    return *out ? MCP_OK : mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
}

/* Rebuilds the tool cache from a full tools list. */
static void cache_tools(mcp_client *c, const mcp_json *tools)
{
    tool_info *list = NULL;
    for (size_t i = 0; i < mcp_json_len(tools); i++) {
        const mcp_json *t = mcp_json_at(tools, i);
        size_t nl;
        const char *name = mcp_json_str(mcp_json_get(t, "name"), &nl);
        if (!name)
            continue;
        tool_info *ti = mcp__calloc(1, sizeof *ti);
        if (!ti)
            break;
        ti->name = mcp__strndup(name, nl);
        const mcp_json *ro = mcp_json_get(mcp_json_get(t, "annotations"), "readOnlyHint");
        ti->read_only = mcp_json_typeof(ro) == MCP_JSON_BOOL && mcp_json_bool(ro);
        const mcp_json *os = mcp_json_get(t, "outputSchema");
        mcp_error e;
        if (os && mcp_schema_new(&ti->output, os, NULL, &e) != MCP_OK) {
            ti->output = NULL;
            mcp__client_log(c, MCP_LOG_WARNING, "tool %s: outputSchema does not compile (%s); results unchecked",
                            ti->name ? ti->name : "?", e.message);
        }
        const mcp_json *props = mcp_json_get(mcp_json_get(t, "inputSchema"), "properties");
        for (size_t k = 0; k < mcp_json_len(props) && ti->nheaders < MAX_PARAM_HEADERS; k++) {
            const char *h = mcp_json_str(mcp_json_get(mcp_json_value_at(props, k), "x-mcp-header"), NULL);
            if (!h)
                continue;
            if (!header_token(h))
                continue; /* legacy era: listed, but never sent as a header */
            size_t kl;
            const char *k2 = mcp_json_key_at(props, k, &kl);
            ti->hprop[ti->nheaders] = mcp__strndup(k2, kl);
            ti->hname[ti->nheaders] = mcp__strdup(h);
            ti->nheaders++;
        }
        ti->next = list;
        list = ti;
    }
    pthread_mutex_lock(&c->mu);
    tool_info *old = c->tools;
    c->tools = list;
    pthread_mutex_unlock(&c->mu);
    tools_free(old);
}

mcp_status mcp_client_list_tools(mcp_client *c, mcp_response **out, mcp_error *err)
{
    if (!c || !out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and out are required");
    mcp_status st = list_all(c, "tools/list", "tools", out, err);
    if (st == MCP_OK)
        cache_tools(c, mcp_json_get((*out)->result, "tools"));
    return st;
}

mcp_status mcp_client_list_resources(mcp_client *c, mcp_response **out, mcp_error *err)
{
    if (!c || !out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and out are required");
    return list_all(c, "resources/list", "resources", out, err);
}

mcp_status mcp_client_list_resource_templates(mcp_client *c, mcp_response **out, mcp_error *err)
{
    if (!c || !out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and out are required");
    return list_all(c, "resources/templates/list", "resourceTemplates", out, err);
}

mcp_status mcp_client_list_prompts(mcp_client *c, mcp_response **out, mcp_error *err)
{
    if (!c || !out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and out are required");
    return list_all(c, "prompts/list", "prompts", out, err);
}

/* Validates structuredContent against the listed tool's outputSchema. */
static mcp_status check_output(mcp_client *c, const char *name, const mcp_response *r, mcp_error *err)
{
    const mcp_json *sc = mcp_json_get(r->result, "structuredContent");
    if (mcp_response_is_tool_error(r))
        return MCP_OK;
    mcp_status st = MCP_OK;
    pthread_mutex_lock(&c->mu);
    for (tool_info *ti = c->tools; ti; ti = ti->next) {
        if (strcmp(ti->name, name) != 0 || !ti->output)
            continue;
        if (!sc) {
            st = mcp__fail(err, MCP_ERR_INVALID, 0, 0,
                           "tool %s declares an outputSchema but its result has no structuredContent", name);
        } else {
            mcp_error e;
            st = mcp_schema_validate(ti->output, sc, MCP_SCHEMA_FIRST_ERROR, NULL, &e);
            if (st == MCP_ERR_INVALID)
                mcp__fail(err, st, 0, 0, "tool %s: structuredContent does not match its outputSchema: %s%s%s", name,
                          e.pointer, e.pointer[0] ? ": " : "", e.message);
            else if (st != MCP_OK)
                mcp__fail(err, st, 0, 0, "tool %s: cannot check structuredContent: %s", name, e.message);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Tasks (the io.modelcontextprotocol/tasks extension)                       */

#define TASK_POLL_DEFAULT_MS 500u
#define TASK_POLL_MIN_MS 10u
#define TASK_POLL_MAX_MS 10000u
#define TASK_ID_MAX 256u
#define TASK_KEYS_MAX 65536u /* bytes of answered input keys remembered */

/* A tools/call waiting for its task: mcp_client_cancel() finds it by handle. */
typedef struct task_wait {
    struct task_wait *next;
    uint64_t handle;            /* the caller's handle for it */
    int cancelled;              /* mcp_client_cancel() was called (under c->mu) */
    pthread_cond_t cv;          /* monotonic; signalled on cancel */
} task_wait;

static mcp_status cancel_task_wait(mcp_client *c, uint64_t handle)
{
    pthread_mutex_lock(&c->mu);
    task_wait *t = c->task_waits;
    while (t && t->handle != handle)
        t = t->next;
    if (t) {
        t->cancelled = 1;
        pthread_cond_signal(&t->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return t ? MCP_OK : MCP_ERR_NOT_FOUND;
}

/* tasks/<method> for task `id`, with one more member (`key`: raw JSON) when given. */
static mcp_status task_request(mcp_client *c, const char *method, const char *id, const char *key,
                               const char *raw, unsigned timeout_ms, mcp_response **out, mcp_error *err)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "taskId");
    mcp_jw_string(&w, id);
    if (key) {
        mcp_jw_key(&w, key);
        mcp_jw_raw(&w, raw, strlen(raw));
    }
    mcp_jw_object_end(&w);
    mcp_json_doc *doc = NULL;
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK)
        st = mcp_json_parse(&doc, b.data, b.len, NULL, NULL);
    mcp_buf_cleanup(&b);
    if (st != MCP_OK)
        return mcp__fail(err, st, 0, 0, "cannot write %s", method);
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = timeout_ms;
    ro.as_task = 1;
    return request_doc(c, method, doc, atomic_load(&c->modern), &ro, 0, out, err);
}

/* A response made of `member` ("result" or "error") of a finished task. */
static mcp_response *task_outcome(const char *member, const mcp_json *v)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "jsonrpc");
    mcp_jw_string(&w, "2.0");
    mcp_jw_key(&w, member);
    mcp_jw_value(&w, v);
    mcp_jw_object_end(&w);
    mcp_json_doc *doc = NULL;
    if (mcp_jw_finish(&w) != MCP_OK || mcp_json_parse(&doc, b.data, b.len, NULL, NULL) != MCP_OK)
        doc = NULL;
    mcp_buf_cleanup(&b);
    return doc ? response_new(doc, mcp_json_doc_root(doc)) : NULL;
}

/* Tells on_task when the status or its message changed since `seen`. */
static void task_note(const mcp_request_opts *ro, const char *id, const mcp_json *t, char *seen, size_t cap)
{
    const char *status = mcp_json_str(mcp_json_get(t, "status"), NULL);
    const char *msg = mcp_json_str(mcp_json_get(t, "statusMessage"), NULL);
    char now[300];
    snprintf(now, sizeof now, "%.31s\n%.260s", status ? status : "", msg ? msg : "");
    if (!ro->on_task || strcmp(now, seen) == 0)
        return;
    snprintf(seen, cap, "%s", now);
    ro->on_task(id, status ? status : "", msg, ro->user_data);
}

/*
 * Answers the input requests of an input_required task that were not
 * answered before (`keys`: the answered ones, one per line) through
 * on_input, and sends them with tasks/update.
 */
static mcp_status task_answer(mcp_client *c, const char *id, const mcp_json *reqs, mcp_buf *keys, mcp_error *err)
{
    mcp_buf fresh;
    mcp_buf_init(&fresh, 0);
    mcp_jw w;
    mcp_jw_init(&w, &fresh);
    mcp_jw_object_begin(&w);
    size_t n = 0;
    for (size_t i = 0; i < mcp_json_len(reqs); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(reqs, i, &kl);
        char line[300];
        int ll = snprintf(line, sizeof line, "\n%.*s\n", (int)(kl > 280 ? 280 : kl), k);
        if (keys->data && memmem(keys->data, keys->len, line, (size_t)ll))
            continue;
        if (keys->len < TASK_KEYS_MAX)
            mcp_buf_append(keys, line, (size_t)ll - 1); /* "\nkey": the next line's "\n" closes it */
        mcp_jw_keyn(&w, k, kl);
        mcp_jw_value(&w, mcp_json_value_at(reqs, i));
        n++;
    }
    mcp_jw_object_end(&w);
    if (keys->len < TASK_KEYS_MAX)
        mcp_buf_append(keys, "\n", 1);
    mcp_json_doc *todo = NULL;
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK && n)
        st = mcp_json_parse(&todo, fresh.data, fresh.len, NULL, NULL);
    mcp_buf_cleanup(&fresh);
    if (st != MCP_OK || !n)
        return st;
    mcp_buf answers;
    mcp_buf_init(&answers, 0);
    char msg[MCP_ERROR_MESSAGE_MAX];
    msg[0] = '\0';
    st = answer_input_requests(c, mcp_json_doc_root(todo), &answers, msg, sizeof msg);
    mcp_json_doc_free(todo);
    if (st != MCP_OK) {
        mcp_buf_cleanup(&answers);
        return mcp__fail(err, st, 0, 0, "task %s: %s", id, msg[0] ? msg : mcp_status_str(st));
    }
    mcp_response *r = NULL;
    st = task_request(c, "tasks/update", id, "inputResponses", answers.data, 0, &r, err);
    mcp_buf_cleanup(&answers);
    mcp_response_free(r);
    return st;
}

/* Sleeps one poll interval; 1 when cancelled or past the deadline (a reason in *why). */
static int task_sleep(mcp_client *c, task_wait *tw, unsigned poll_ms, uint64_t deadline, mcp_status *why)
{
    uint64_t until = mcp__mono_ns() + (uint64_t)poll_ms * 1000000ull;
    if (deadline && until > deadline)
        until = deadline;
    struct timespec ts;
    ts_at(&ts, until);
    pthread_mutex_lock(&c->mu);
    while (!tw->cancelled && mcp__mono_ns() < until)
        pthread_cond_timedwait(&tw->cv, &c->mu, &ts);
    int cancelled = tw->cancelled;
    pthread_mutex_unlock(&c->mu);
    if (cancelled)
        *why = MCP_ERR_CANCELLED;
    else if (deadline && mcp__mono_ns() >= deadline)
        *why = MCP_ERR_TIMEOUT;
    else
        return 0;
    return 1;
}

/* What a task that reached `status` gives the caller: its result, its error, or why not. */
static mcp_status task_end(const char *id, const char *status, const mcp_json *t, mcp_response **io, mcp_error *err)
{
    if (!strcmp(status, "cancelled"))
        return mcp__fail(err, MCP_ERR_CANCELLED, 0, 0, "task %s was cancelled by the server", id);
    int done = !strcmp(status, "completed");
    const mcp_json *v = mcp_json_get(t, done ? "result" : "error");
    if (mcp_json_typeof(v) != MCP_JSON_OBJECT)
        return mcp__fail(err, MCP_ERR_INVALID_MSG, 0, 0, "task %s is %s without its %s", id, status,
                         done ? "result" : "error");
    *io = task_outcome(done ? "result" : "error", v);
    if (!*io)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    if (done)
        return MCP_OK;
    return mcp__fail(err, MCP_ERR_PROTOCOL, mcp_response_error_code(*io), 0, "task %s failed: %s", id,
                     mcp_response_error_message(*io));
}

/*
 * Waits for the task that `*io` (a CreateTaskResult) announced: polls
 * tasks/get, answers input through tasks/update, and leaves the task's
 * outcome in *io. The time limit counts from `t0` (the call's start).
 */
static mcp_status await_task(mcp_client *c, const mcp_request_opts *ro, uint64_t t0, mcp_response **io,
                             mcp_error *err)
{
    mcp_response *last = *io;
    *io = NULL;
    size_t idl;
    const char *tid = mcp_json_str(mcp_json_get(mcp_response_result(last), "taskId"), &idl);
    if (!tid || !idl || idl > TASK_ID_MAX) {
        *io = last;
        return mcp__fail(err, MCP_ERR_INVALID_MSG, 0, 0, "the server answered with a task without a usable taskId");
    }
    char id[TASK_ID_MAX + 1];
    snprintf(id, sizeof id, "%.*s", (int)idl, tid);
    unsigned limit = ro->timeout_ms ? ro->timeout_ms : c->opts.timeout_ms;
    uint64_t deadline = limit ? t0 + (uint64_t)limit * 1000000ull : 0;
    task_wait tw;
    memset(&tw, 0, sizeof tw);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&tw.cv, &ca);
    pthread_condattr_destroy(&ca);
    /* The handle the caller already holds (written before the request was
     * sent, on this thread) names the task too: it is never rewritten, so
     * another thread may read it without racing this one. */
    pthread_mutex_lock(&c->mu);
    tw.handle = ro->handle_out ? *ro->handle_out : ++c->next_id;
    tw.next = c->task_waits;
    c->task_waits = &tw;
    pthread_mutex_unlock(&c->mu);
    char seen[300] = "";
    mcp_buf keys;
    mcp_buf_init(&keys, 0);
    mcp_status st = MCP_OK;
    for (;;) {
        const mcp_json *t = mcp_response_result(last);
        task_note(ro, id, t, seen, sizeof seen);
        const char *status = mcp_json_str(mcp_json_get(t, "status"), NULL);
        if (!status) {
            st = mcp__fail(err, MCP_ERR_INVALID_MSG, 0, 0, "task %s: an answer without a status", id);
            break;
        }
        if (!strcmp(status, "completed") || !strcmp(status, "failed") || !strcmp(status, "cancelled")) {
            st = task_end(id, status, t, io, err);
            break;
        }
        if (!strcmp(status, "input_required") &&
            (st = task_answer(c, id, mcp_json_get(t, "inputRequests"), &keys, err)) != MCP_OK)
            break;
        int64_t poll = mcp_json_int(mcp_json_get(t, "pollIntervalMs"));
        unsigned poll_ms = poll <= 0 ? TASK_POLL_DEFAULT_MS
                           : poll < TASK_POLL_MIN_MS ? TASK_POLL_MIN_MS
                           : poll > TASK_POLL_MAX_MS ? TASK_POLL_MAX_MS : (unsigned)poll;
        mcp_status why;
        if (task_sleep(c, &tw, poll_ms, deadline, &why)) {
            mcp_response *ack = NULL;
            task_request(c, "tasks/cancel", id, NULL, NULL, 5000, &ack, NULL);
            mcp_response_free(ack);
            st = why == MCP_ERR_CANCELLED ? mcp__fail(err, why, 0, 0, "cancelled (task %s cancelled)", id)
                                          : mcp__fail(err, why, 0, 0, "task %s did not finish within %u ms", id, limit);
            break;
        }
        mcp_response_free(last);
        last = NULL;
        uint64_t now = mcp__mono_ns();
        unsigned left = !deadline ? 0 : deadline > now ? (unsigned)((deadline - now) / 1000000ull) + 1 : 1;
        if ((st = task_request(c, "tasks/get", id, NULL, NULL, left, &last, err)) != MCP_OK)
            break;
    }
    if (st != MCP_OK && !*io && mcp_response_error_code(last)) {
        *io = last; /* the error response of tasks/get, when that failed */
        last = NULL;
    }
    mcp_response_free(last);
    mcp_buf_cleanup(&keys);
    pthread_mutex_lock(&c->mu);
    for (task_wait **pp = &c->task_waits; *pp; pp = &(*pp)->next)
        if (*pp == &tw) {
            *pp = tw.next;
            break;
        }
    pthread_mutex_unlock(&c->mu);
    pthread_cond_destroy(&tw.cv);
    return st;
}

mcp_status mcp_client_call_tool_sized(mcp_client *c, const char *name, const char *arguments,
                                      const mcp_request_opts *ro, size_t ro_size, mcp_response **out, mcp_error *err)
{
    if (out)
        *out = NULL;
    mcp_request_opts ro_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_request_opts, &ro_copy, ro, ro_size, err);
    if (ost)
        return ost;
    if (ro)
        ro = &ro_copy;
    if (!c || !name)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and a tool name are required");
    const char *kv[] = {"name", name, NULL, NULL};
    mcp_json_doc *doc;
    mcp_status st = params_doc(&doc, kv, "arguments", arguments ? arguments : "{}", err);
    if (st != MCP_OK)
        return st;
    mcp_response *r;
    uint64_t t0 = mcp__mono_ns();
    st = request_doc(c, "tools/call", doc, atomic_load(&c->modern), ro, 0, &r, err);
    if (st == MCP_OK && ro && ro->as_task &&
        mcp_json_str_eq(mcp_json_get(mcp_response_result(r), "resultType"), "task"))
        st = await_task(c, ro, t0, &r, err);
    if (st == MCP_OK)
        st = check_output(c, name, r, err);
    if (out)
        *out = r;
    else
        mcp_response_free(r);
    return st;
}

mcp_status mcp_client_read_resource(mcp_client *c, const char *uri, mcp_response **out, mcp_error *err)
{
    if (!c || !uri)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and a uri are required");
    const char *kv[] = {"uri", uri, NULL, NULL};
    mcp_json_doc *doc;
    mcp_status st = params_doc(&doc, kv, NULL, NULL, err);
    return st != MCP_OK ? st : request_doc(c, "resources/read", doc, atomic_load(&c->modern), NULL, 0, out, err);
}

mcp_status mcp_client_get_prompt(mcp_client *c, const char *name, const char *arguments, mcp_response **out,
                                 mcp_error *err)
{
    if (!c || !name)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client and a prompt name are required");
    const char *kv[] = {"name", name, NULL, NULL};
    mcp_json_doc *doc;
    mcp_status st = params_doc(&doc, kv, "arguments", arguments, err);
    return st != MCP_OK ? st : request_doc(c, "prompts/get", doc, atomic_load(&c->modern), NULL, 0, out, err);
}

mcp_status mcp_client_complete(mcp_client *c, const char *ref, const char *arg_name, const char *arg_value,
                               const char *context_args, mcp_response **out, mcp_error *err)
{
    if (!c || !ref || !arg_name || !arg_value)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client, ref, argument name and value are required");
    mcp_json_doc *ref_doc = NULL, *ctx_doc = NULL;
    mcp_status st = mcp_json_parse(&ref_doc, ref, strlen(ref), NULL, NULL);
    if (st != MCP_OK || mcp_json_typeof(mcp_json_doc_root(ref_doc)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(ref_doc);
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "ref must be a JSON object");
    }
    if (context_args &&
        (mcp_json_parse(&ctx_doc, context_args, strlen(context_args), NULL, NULL) != MCP_OK ||
         mcp_json_typeof(mcp_json_doc_root(ctx_doc)) != MCP_JSON_OBJECT)) {
        mcp_json_doc_free(ref_doc);
        mcp_json_doc_free(ctx_doc);
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "context arguments must be a JSON object");
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "ref");
    mcp_jw_value(&w, mcp_json_doc_root(ref_doc));
    mcp_jw_key(&w, "argument");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "name");
    mcp_jw_string(&w, arg_name);
    mcp_jw_key(&w, "value");
    mcp_jw_string(&w, arg_value);
    mcp_jw_object_end(&w);
    if (ctx_doc) {
        mcp_jw_key(&w, "context");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "arguments");
        mcp_jw_value(&w, mcp_json_doc_root(ctx_doc));
        mcp_jw_object_end(&w);
    }
    mcp_jw_object_end(&w);
    mcp_json_doc_free(ref_doc);
    mcp_json_doc_free(ctx_doc);
    mcp_json_doc *doc = NULL;
    st = mcp_jw_finish(&w);
    if (st == MCP_OK)
        st = mcp_json_parse(&doc, b.data, b.len, NULL, NULL);
    mcp_buf_cleanup(&b);
    if (st != MCP_OK)
        return mcp__fail(err, st, 0, 0, "cannot build the request (is every string valid UTF-8?)");
    return request_doc(c, "completion/complete", doc, atomic_load(&c->modern), NULL, 0, out, err);
}

mcp_status mcp_client_ping(mcp_client *c, mcp_error *err)
{
    if (!c)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a client is required");
    return request_doc(c, "ping", NULL, atomic_load(&c->modern), NULL, 0, NULL, err);
}
