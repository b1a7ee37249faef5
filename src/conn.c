/*
 * A connection: the sans-I/O protocol engine for one client. Frames come
 * in through mcp_conn_recv(), answers leave through the transport's send
 * callback. Cheap requests are answered on the caller's thread; tools/call
 * goes to call.c and the worker pool.
 *
 * Routing is two-level: the method name is looked up in a sorted table
 * (level 1), the tool name in the registry's hash index (level 2).
 *
 * The era is decided per request: a request whose params._meta carries
 * `io.modelcontextprotocol/protocolVersion` is served statelessly as
 * 2026-07-28; anything else belongs to the legacy session that
 * `initialize` opens on this connection.
 */
#include "internal.h"
#include "server_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every version this server speaks, newest first; the legacy ones start at index 1. */
static const char *const g_versions[] = {MCP_PROTOCOL_2026_07_28, MCP_PROTOCOL_2025_11_25,
                                         MCP_PROTOCOL_2025_06_18, MCP_PROTOCOL_2025_03_26,
                                         MCP_PROTOCOL_2024_11_05};
#define N_VERSIONS (sizeof g_versions / sizeof g_versions[0])
/*
 * The versions a request with per-request _meta may name: what
 * server/discover lists and what -32022 offers. Legacy versions are reached
 * through initialize instead, so listing them here would invite a client to
 * retry a modern request with a version that cannot work that way.
 */
static const char *const g_modern_versions[] = {MCP_PROTOCOL_2026_07_28};
#define N_MODERN (sizeof g_modern_versions / sizeof g_modern_versions[0])
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */

mcp_status mcp__conn_send(mcp_conn *c, const mcp_buf *frame)
{
    mcp_status st = MCP_ERR_CLOSED;
    pthread_mutex_lock(&c->send_mu);
    if (!c->send_closed) {
        mcp__server_transcript(c->srv, "out", frame->data, frame->len);
        st = c->send(frame->data, frame->len, c->send_ud);
        if (st)
            c->send_closed = 1;
    }
    pthread_mutex_unlock(&c->send_mu);
    return st;
}

/* Finishes a frame in `b` and sends it; a writer error is a bug, logged. */
static void send_frame(mcp_conn *c, mcp_jw *w, mcp_buf *b)
{
    mcp_status st = mcp_jw_finish(w);
    if (st)
        mcp__server_diag(c->srv, MCP_LOG_ERROR, "could not encode a message: %s", mcp_status_str(st));
    else
        mcp__conn_send(c, b);
}

static void send_error(mcp_conn *c, const mcp_rpc_id *id, int code, const char *message)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, id, code, message, NULL);
    send_frame(c, &w, &b);
    mcp_buf_cleanup(&b);
}

void mcp__write_modern_result_fields(mcp_jw *w, mcp_server *srv)
{
    mcp_jw_key(w, "resultType");
    mcp_jw_string(w, "complete");
    mcp_jw_key(w, "_meta");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, META_SERVERINFO);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, srv->name);
    mcp_jw_key(w, "version");
    mcp_jw_string(w, srv->version);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

/* A request being answered on the I/O thread. */
typedef struct req {
    mcp_conn *c;          /* the connection */
    mcp_rpc_msg *msg;     /* the request */
    const char *version;  /* its protocol version (static), NULL before initialize */
    int modern;           /* 2026-07-28 request */
    int log_threshold;    /* modern: logLevel, or -1 */
    mcp_buf buf;          /* the response being written */
    mcp_jw w;             /* writer over buf */
} req;

/* `{"jsonrpc":"2.0","id":ID,"result":{` */
static void result_begin(req *r)
{
    mcp_buf_init(&r->buf, 0);
    mcp_jw_init(&r->w, &r->buf);
    mcp_rpc_begin_result(&r->w, &r->msg->id);
    mcp_jw_object_begin(&r->w);
}

/* Closes the result (with the modern fields when due) and sends it. */
static void result_end(req *r)
{
    if (r->modern)
        mcp__write_modern_result_fields(&r->w, r->c->srv);
    mcp_jw_object_end(&r->w);
    mcp_rpc_end(&r->w);
    send_frame(r->c, &r->w, &r->buf);
    mcp_buf_cleanup(&r->buf);
}

static void reply_error(req *r, int code, const char *message)
{
    send_error(r->c, &r->msg->id, code, message);
}

/* ------------------------------------------------------------------------ */
/* Methods                                                                   */

static int level_from_json(const mcp_json *v)
{
    for (int i = MCP_LOG_DEBUG; i <= MCP_LOG_EMERGENCY; i++)
        if (mcp_json_str_eq(v, mcp_log_level_name((mcp_log_level)i)))
            return i;
    return -1;
}

static void write_server_info(mcp_jw *w, mcp_server *srv)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, srv->name);
    mcp_jw_key(w, "version");
    mcp_jw_string(w, srv->version);
    if (srv->title) {
        mcp_jw_key(w, "title");
        mcp_jw_string(w, srv->title);
    }
    mcp_jw_object_end(w);
}

static void m_initialize(req *r)
{
    mcp_conn *c = r->c;
    const mcp_json *p = r->msg->params;
    const mcp_json *pv = mcp_json_get(p, "protocolVersion");
    if (mcp_json_typeof(pv) != MCP_JSON_STRING) {
        reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: initialize needs a string \"protocolVersion\"");
        return;
    }
    /* Echo a legacy version we speak, else offer the latest legacy one. */
    const char *version = MCP_PROTOCOL_LATEST_LEGACY;
    for (size_t i = 1; i < N_VERSIONS; i++)
        if (mcp_json_str_eq(pv, g_versions[i]))
            version = g_versions[i];
    pthread_mutex_lock(&c->mu);
    int again = c->initialized;
    if (!again) {
        c->initialized = 1;
        c->version = version;
    }
    pthread_mutex_unlock(&c->mu);
    if (again) {
        reply_error(r, MCP_RPC_INVALID_REQUEST, "Invalid Request: initialize was already called on this connection");
        return;
    }
    result_begin(r);
    mcp_jw *w = &r->w;
    mcp_jw_key(w, "protocolVersion");
    mcp_jw_string(w, version);
    mcp_jw_key(w, "capabilities");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "tools");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "listChanged");
    mcp_jw_bool(w, 1);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "logging");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "serverInfo");
    write_server_info(w, c->srv);
    if (c->srv->instructions) {
        mcp_jw_key(w, "instructions");
        mcp_jw_string(w, c->srv->instructions);
    }
    result_end(r);
}

static void m_ping(req *r)
{
    result_begin(r);
    result_end(r);
}

static void m_set_level(req *r)
{
    int level = level_from_json(mcp_json_get(r->msg->params, "level"));
    if (level < 0) {
        reply_error(r, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
                    "alert, emergency");
        return;
    }
    atomic_store(&r->c->log_level, level);
    result_begin(r);
    result_end(r);
}

static void write_caching(req *r)
{
    mcp_jw_key(&r->w, "ttlMs");
    mcp_jw_int(&r->w, r->c->srv->opts.list_ttl_ms);
    mcp_jw_key(&r->w, "cacheScope");
    mcp_jw_string(&r->w, "public");
}

static void m_discover(req *r)
{
    mcp_server *srv = r->c->srv;
    result_begin(r);
    mcp_jw *w = &r->w;
    mcp_jw_key(w, "supportedVersions");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < N_MODERN; i++)
        mcp_jw_string(w, g_modern_versions[i]);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "capabilities");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "tools");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "logging");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    if (srv->instructions) {
        mcp_jw_key(w, "instructions");
        mcp_jw_string(w, srv->instructions);
    }
    write_caching(r);
    result_end(r);
}

static void m_tools_list(req *r)
{
    const mcp_json *cursor = mcp_json_get(r->msg->params, "cursor");
    size_t clen = 0;
    const char *cs = NULL;
    if (cursor && !(cs = mcp_json_str(cursor, &clen))) {
        reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"cursor\" must be a string");
        return;
    }
    result_begin(r);
    mcp_status st = mcp__server_write_tools(r->c->srv, &r->w, cs, clen, r->version);
    if (st == MCP_ERR_INVALID_ARG) {
        mcp_buf_cleanup(&r->buf);
        reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown or expired cursor");
        return;
    }
    if (r->modern)
        write_caching(r);
    result_end(r);
}

static void m_tools_call(req *r)
{
    /* call.c takes the message (and its document) from here. */
    mcp__call_start(r->c, r->msg, r->version, r->modern, r->log_threshold);
}

/* Level-1 routing table, sorted by name for binary search. */
#define ERA_LEGACY 0x1u
#define ERA_MODERN 0x2u
#define NEEDS_INIT 0x4u /* legacy: only after initialize */

typedef struct method {
    const char *name;      /* JSON-RPC method */
    void (*fn)(req *r);    /* handler */
    unsigned flags;        /* ERA_* and NEEDS_INIT */
} method;

static const method g_methods[] = {
    {"initialize", m_initialize, ERA_LEGACY},
    {"logging/setLevel", m_set_level, ERA_LEGACY | NEEDS_INIT},
    {"ping", m_ping, ERA_LEGACY},
    {"server/discover", m_discover, ERA_MODERN},
    {"tools/call", m_tools_call, ERA_LEGACY | ERA_MODERN | NEEDS_INIT},
    {"tools/list", m_tools_list, ERA_LEGACY | ERA_MODERN | NEEDS_INIT},
};

static int method_cmp(const void *key, const void *elem)
{
    const mcp_rpc_msg *m = key;
    const method *e = elem;
    size_t n = strlen(e->name);
    int c = memcmp(m->method, e->name, m->method_len < n ? m->method_len : n);
    if (c)
        return c;
    return m->method_len < n ? -1 : m->method_len > n;
}

static const method *find_method(const mcp_rpc_msg *m)
{
    return bsearch(m, g_methods, sizeof g_methods / sizeof g_methods[0], sizeof g_methods[0], method_cmp);
}

static void method_not_found(mcp_conn *c, const mcp_rpc_msg *m)
{
    char text[200];
    snprintf(text, sizeof text, "Method not found: %.120s", m->method);
    send_error(c, &m->id, MCP_RPC_METHOD_NOT_FOUND, text);
}

/*
 * A 2026-07-28 request. The checks run in the order the spec's examples
 * and the conformance suite assume: required _meta fields (-32602), the
 * version (-32022), the method (-32601), then the params (-32602).
 */
static void modern_request(mcp_conn *c, mcp_rpc_msg *m, const mcp_json *meta, const mcp_json *pv)
{
    if (mcp_json_typeof(pv) != MCP_JSON_STRING) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: _meta \"" META_VERSION "\" must be a string");
        return;
    }
    if (mcp_json_typeof(mcp_json_get(meta, META_CAPS)) != MCP_JSON_OBJECT) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: missing required _meta field \"" META_CAPS "\" (an object)");
        return;
    }
    if (!mcp_json_str_eq(pv, MCP_PROTOCOL_2026_07_28)) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_error(&w, &m->id, MCP_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version");
        mcp_jw_key(&w, "data");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "supported");
        mcp_jw_array_begin(&w);
        for (size_t i = 0; i < N_MODERN; i++)
            mcp_jw_string(&w, g_modern_versions[i]);
        mcp_jw_array_end(&w);
        mcp_jw_key(&w, "requested");
        mcp_jw_value(&w, pv);
        mcp_jw_object_end(&w);
        mcp_rpc_end_error(&w);
        send_frame(c, &w, &b);
        mcp_buf_cleanup(&b);
        return;
    }
    const method *e = find_method(m);
    if (!e || !(e->flags & ERA_MODERN)) {
        method_not_found(c, m);
        return;
    }
    int threshold = -1;
    const mcp_json *ll = mcp_json_get(meta, META_LOGLEVEL);
    if (ll && (threshold = level_from_json(ll)) < 0) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: _meta \"" META_LOGLEVEL "\" is not a log level");
        return;
    }
    req r;
    r.c = c;
    r.msg = m;
    r.version = MCP_PROTOCOL_2026_07_28;
    r.modern = 1;
    r.log_threshold = threshold;
    e->fn(&r);
}

static void legacy_request(mcp_conn *c, mcp_rpc_msg *m)
{
    const method *e = find_method(m);
    if (!e || !(e->flags & ERA_LEGACY)) {
        if (e && (e->flags & ERA_MODERN)) {
            /* A modern-only method without the modern _meta. */
            send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                       "Invalid params: missing required _meta field \"" META_VERSION "\"");
            return;
        }
        method_not_found(c, m);
        return;
    }
    pthread_mutex_lock(&c->mu);
    const char *version = c->initialized ? c->version : NULL;
    pthread_mutex_unlock(&c->mu);
    if ((e->flags & NEEDS_INIT) && !version) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: missing required _meta field \"" META_VERSION
                   "\" (2026-07-28), or send initialize first (earlier versions)");
        return;
    }
    req r;
    r.c = c;
    r.msg = m;
    r.version = version;
    r.modern = 0;
    r.log_threshold = -1;
    e->fn(&r);
}

static void handle_request(mcp_conn *c, mcp_rpc_msg *m)
{
    const mcp_json *meta = mcp_json_get(m->params, "_meta");
    const mcp_json *pv = mcp_json_get(meta, META_VERSION);
    if (m->params && mcp_json_typeof(m->params) != MCP_JSON_OBJECT) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS, "Invalid params: MCP params must be an object");
        return;
    }
    if (meta && mcp_json_typeof(meta) != MCP_JSON_OBJECT) {
        send_error(c, &m->id, MCP_RPC_INVALID_PARAMS, "Invalid params: \"_meta\" must be an object");
        return;
    }
    if (pv)
        modern_request(c, m, meta, pv);
    else
        legacy_request(c, m);
}

static void handle_notification(mcp_conn *c, mcp_rpc_msg *m)
{
    if (mcp_rpc_method_is(m, "notifications/cancelled")) {
        const mcp_json *rid = mcp_json_get(m->params, "requestId");
        mcp_rpc_id id;
        memset(&id, 0, sizeof id);
        if (mcp_json_typeof(rid) == MCP_JSON_INT) {
            id.type = MCP_RPC_ID_INT;
            id.num = mcp_json_int(rid);
        } else if (mcp_json_typeof(rid) == MCP_JSON_STRING) {
            id.type = MCP_RPC_ID_STRING;
            id.str = mcp_json_str(rid, &id.len);
        } else {
            return; /* notifications get no answer, even when malformed */
        }
        pthread_mutex_lock(&c->mu);
        mcp_call *call = mcp__conn_take_call_locked(c, &id);
        int owned = 0;
        if (call) {
            atomic_store(&call->cancelled, 1);
            atomic_store(&call->finished, 1); /* a cancelled request gets no response */
            if (call->state == MCP__CALL_QUEUED)
                owned = mcp__pool_withdraw(c->srv->pool, &call->job);
        }
        pthread_mutex_unlock(&c->mu);
        if (owned)
            mcp__call_release(call);
        return;
    }
    /* notifications/initialized and anything else: nothing to do. */
}

/* ------------------------------------------------------------------------ */
/* In-flight table                                                           */

static unsigned id_bucket(const mcp_rpc_id *id)
{
    uint64_t h;
    if (id->type == MCP_RPC_ID_INT) {
        h = (uint64_t)id->num * 0x9E3779B97F4A7C15ull;
    } else {
        h = 1469598103934665603ull;
        for (size_t i = 0; i < id->len; i++)
            h = (h ^ (unsigned char)id->str[i]) * 1099511628211ull;
    }
    return (unsigned)(h >> 32) & (MCP__CONN_BUCKETS - 1);
}

mcp_call *mcp__conn_find_call_locked(mcp_conn *c, const mcp_rpc_id *id)
{
    for (mcp_call *call = c->buckets[id_bucket(id)]; call; call = call->bucket_next)
        if (mcp_rpc_id_equal(&call->msg.id, id))
            return call;
    return NULL;
}

void mcp__conn_insert_call_locked(mcp_conn *c, mcp_call *call)
{
    unsigned b = id_bucket(&call->msg.id);
    call->bucket_next = c->buckets[b];
    c->buckets[b] = call;
    c->in_flight++;
}

void mcp__conn_unlink_call_locked(mcp_conn *c, mcp_call *call)
{
    for (mcp_call **pp = &c->buckets[id_bucket(&call->msg.id)]; *pp; pp = &(*pp)->bucket_next) {
        if (*pp == call) {
            *pp = call->bucket_next;
            call->bucket_next = NULL;
            c->in_flight--;
            pthread_cond_broadcast(&c->cv);
            return;
        }
    }
}

mcp_call *mcp__conn_take_call_locked(mcp_conn *c, const mcp_rpc_id *id)
{
    mcp_call **pp = &c->buckets[id_bucket(id)];
    for (mcp_call *call; (call = *pp); pp = &call->bucket_next) {
        if (mcp_rpc_id_equal(&call->msg.id, id)) {
            *pp = call->bucket_next;
            call->bucket_next = NULL;
            c->in_flight--;
            pthread_cond_broadcast(&c->cv);
            return call;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */

mcp_status mcp_conn_new(mcp_conn **out, mcp_server *srv, mcp_send_fn send, void *user_data)
{
    if (!out || !srv || !send)
        return MCP_ERR_INVALID_ARG;
    mcp_conn *c = mcp__calloc(1, sizeof *c);
    if (!c)
        return MCP_ERR_NOMEM;
    c->srv = srv;
    c->send = send;
    c->send_ud = user_data;
    atomic_init(&c->refs, 1);
    atomic_init(&c->log_level, -1);
    pthread_mutex_init(&c->send_mu, NULL);
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    mcp__server_add_conn(srv, c);
    *out = c;
    return MCP_OK;
}

void mcp__conn_release(mcp_conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&c->send_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    mcp_free(c);
}

mcp_status mcp_conn_recv(mcp_conn *c, const char *frame, size_t len)
{
    if (!c || (!frame && len))
        return MCP_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->mu);
    int closing = c->closing;
    pthread_mutex_unlock(&c->mu);
    if (closing)
        return MCP_ERR_CLOSED;
    mcp__server_transcript(c->srv, "in", frame, len);
    mcp_rpc_msg m;
    mcp_error err;
    if (mcp_rpc_decode(&m, frame, len, &c->srv->popts, &err) != MCP_OK) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_write_decode_error(&w, &err);
        send_frame(c, &w, &b);
        mcp_buf_cleanup(&b);
        return MCP_OK;
    }
    switch (m.kind) {
    case MCP_RPC_REQUEST:
        handle_request(c, &m);
        break;
    case MCP_RPC_NOTIFICATION:
        handle_notification(c, &m);
        break;
    default:
        /* The server sends no requests yet, so no response can match. */
        mcp__server_diag(c->srv, MCP_LOG_DEBUG, "ignored a response to an unknown request");
        break;
    }
    mcp_rpc_msg_cleanup(&m); /* a no-op when call.c took the message */
    return MCP_OK;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
    uint64_t t = mcp__now_ns() + (uint64_t)ms * 1000000ull;
    ts->tv_sec = (time_t)(t / 1000000000ull);
    ts->tv_nsec = (long)(t % 1000000000ull);
}

static int before(const struct timespec *ts)
{
    uint64_t t = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
    return mcp__now_ns() < t;
}

mcp_status mcp_conn_close(mcp_conn *c, unsigned grace_ms)
{
    if (!c)
        return MCP_ERR_INVALID_ARG;
    struct timespec until;
    deadline_in(&until, grace_ms);
    pthread_mutex_lock(&c->mu);
    c->closing = 1;
    while (c->in_flight > 0 && before(&until))
        pthread_cond_timedwait(&c->cv, &c->mu, &until);
    /* Cancel what is left: queued calls are withdrawn, running ones flagged. */
    mcp_call *owned = NULL;
    for (unsigned b = 0; b < MCP__CONN_BUCKETS; b++) {
        while (c->buckets[b]) {
            mcp_call *call = mcp__conn_take_call_locked(c, &c->buckets[b]->msg.id);
            atomic_store(&call->cancelled, 1);
            atomic_store(&call->finished, 1);
            if (call->state == MCP__CALL_QUEUED && mcp__pool_withdraw(c->srv->pool, &call->job)) {
                call->bucket_next = owned;
                owned = call;
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
    while (owned) {
        mcp_call *n = owned->bucket_next;
        owned->bucket_next = NULL;
        mcp__call_release(owned);
        owned = n;
    }
    deadline_in(&until, grace_ms);
    pthread_mutex_lock(&c->mu);
    while (c->running > 0 && before(&until))
        pthread_cond_timedwait(&c->cv, &c->mu, &until);
    unsigned still = c->running;
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_lock(&c->send_mu);
    c->send_closed = 1;
    pthread_mutex_unlock(&c->send_mu);
    if (still)
        mcp__server_diag(c->srv, MCP_LOG_WARNING, "%u tool handler(s) ignored cancellation; abandoned", still);
    return still ? MCP_ERR_TIMEOUT : MCP_OK;
}

void mcp_conn_free(mcp_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    int closing = c->closing;
    pthread_mutex_unlock(&c->mu);
    if (!closing)
        mcp_conn_close(c, 0);
    mcp__server_remove_conn(c->srv, c);
    mcp__conn_release(c);
}

const char *mcp_conn_version(const mcp_conn *c)
{
    if (!c)
        return NULL;
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    const char *v = c->initialized ? c->version : NULL;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
    return v;
}

void mcp__conn_notify_tools_changed(mcp_conn *c)
{
    pthread_mutex_lock(&c->mu);
    int ok = c->initialized && !c->closing;
    pthread_mutex_unlock(&c->mu);
    if (!ok)
        return;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "jsonrpc");
    mcp_jw_string(&w, "2.0");
    mcp_jw_key(&w, "method");
    mcp_jw_string(&w, "notifications/tools/list_changed");
    mcp_jw_object_end(&w);
    send_frame(c, &w, &b);
    mcp_buf_cleanup(&b);
}
