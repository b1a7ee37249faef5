/*
 * A connection: the sans-I/O protocol engine for one client. Frames come
 * in through mcp_conn_recv(), answers leave through the transport's send
 * callback. Cheap requests are answered on the caller's thread; tools/call
 * goes to call.c and the worker pool, resources/read and prompts/get
 * handlers to the pool through defer.c.
 *
 * Routing is two-level: the method name is looked up in a sorted table
 * (level 1), the tool name in the registry's hash index (level 2).
 *
 * The era is decided per request: a request whose params._meta carries
 * `io.modelcontextprotocol/protocolVersion` is served statelessly as
 * 2026-07-28; anything else belongs to the legacy session that
 * `initialize` opens on this connection.
 */
#include "util/util.h"
#include "server/server_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */

/*
 * Deferred flushes. A worker that sends the final answer of a call while
 * other calls wait in the pool's queue does not write it at once: the
 * connection's flush is owed, and paid when the worker finds the queue
 * empty (the pool's idle hook), before it runs a call that is not known to
 * be quick (call.c), when it sends to another connection, or after
 * OWED_MAX answers. A burst of calls then leaves in a few write()s instead
 * of one per call, and the wake-ups of the reader with them. Anyone's flush
 * writes every pending frame, so an owed answer often leaves earlier.
 * While owed, the connection's `flushing` count stays raised: its transport
 * (which waits for that count before it goes away) outlives the debt.
 * Only frames ending a call wait: progress, log and requests to the client
 * go out at once.
 */
#define OWED_MAX 32u
static _Thread_local mcp_conn *owed;
static _Thread_local unsigned owed_n;

void mcp__conn_flush_owed(void)
{
    mcp_conn *c = owed;
    if (!c)
        return;
    owed = NULL;
    owed_n = 0;
    c->flush(c->send_ud);
    atomic_fetch_sub(&c->flushing, 1);
}

/* After a final frame sent to c with `flushing` raised: 1 when its flush is
 * now owed (or was paid here), 0 when the caller flushes at once. */
static int defer_flush(mcp_conn *c)
{
    if (!mcp__pool_worker_more())
        return 0;
    if (owed == c) {
        atomic_fetch_sub(&c->flushing, 1); /* the debt already counted covers this frame */
        if (++owed_n >= OWED_MAX)
            mcp__conn_flush_owed();
        return 1;
    }
    mcp__conn_flush_owed(); /* another connection's */
    owed = c;
    owed_n = 1;
    return 1;
}

mcp_status mcp__conn_send_to(mcp_conn *c, const mcp_buf *frame, const mcp_rpc_id *related, int final)
{
    mcp_status st = MCP_ERR_CLOSED;
    int flush = 0;
    pthread_mutex_lock(&c->send_mu);
    if (!c->send_closed) {
        mcp__server_transcript(c->srv, "out", frame->data, frame->len);
        if (c->route)
            st = c->route(frame->data, frame->len, related, final ? MCP__ROUTE_FINAL : MCP__ROUTE_MORE, c->route_ud);
        else
            st = c->send(frame->data, frame->len, c->send_ud);
        /* A router refusing one frame (its stream is gone) does not close the connection. */
        if (st && !c->route) {
            c->send_closed = 1;
        } else if (!st && !c->route && c->flush) {
            /* Counted under send_mu: once sending is closed no new flush
             * can start, so mcp__conn_wait_flush() can wait for the last. */
            atomic_fetch_add(&c->flushing, 1);
            flush = 1;
        }
    }
    pthread_mutex_unlock(&c->send_mu);
    if (flush && !(final && defer_flush(c))) {
        c->flush(c->send_ud);
        atomic_fetch_sub(&c->flushing, 1);
    }
    return st;
}

void mcp__conn_set_flush(mcp_conn *c, void (*flush)(void *user_data))
{
    c->flush = flush;
}

void mcp__conn_wait_flush(mcp_conn *c)
{
    while (atomic_load(&c->flushing) > 0) {
        struct timespec ts = {0, 100000}; /* 0.1 ms: a flush is a few write() calls */
        nanosleep(&ts, NULL);
    }
}

void mcp__conn_close_stream(mcp_conn *c, const mcp_rpc_id *related)
{
    pthread_mutex_lock(&c->send_mu);
    if (!c->send_closed && c->route)
        c->route(NULL, 0, related, MCP__ROUTE_CLOSE, c->route_ud);
    pthread_mutex_unlock(&c->send_mu);
}

mcp_status mcp__conn_send(mcp_conn *c, const mcp_buf *frame)
{
    return mcp__conn_send_to(c, frame, NULL, 0);
}

void mcp__send_reply(mcp__req *r)
{
    mcp_status st = mcp_jw_finish(&r->w);
    if (st)
        mcp__server_diag(r->c->srv, MCP_LOG_ERROR, "could not encode a response: %s", mcp_status_str(st));
    else
        mcp__conn_send_to(r->c, &r->buf, &r->msg->id, 1);
    mcp_buf_cleanup(&r->buf);
}

/* Finishes a frame in `b` and sends it (`related` as for mcp__conn_send_to); a writer error is a bug, logged. */
static void send_frame(mcp_conn *c, mcp_jw *w, mcp_buf *b, const mcp_rpc_id *related)
{
    mcp_status st = mcp_jw_finish(w);
    if (st)
        mcp__server_diag(c->srv, MCP_LOG_ERROR, "could not encode a message: %s", mcp_status_str(st));
    else
        mcp__conn_send_to(c, b, related, 0);
}

void mcp__conn_send_error(mcp_conn *c, const mcp_rpc_id *id, int code, const char *message)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, id, code, message, NULL);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(c, &b, id, 1);
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

/* `{"jsonrpc":"2.0","id":ID,"result":{` */
void mcp__result_begin(mcp__req *r)
{
    mcp_buf_init(&r->buf, 0);
    mcp_jw_init(&r->w, &r->buf);
    mcp_rpc_begin_result(&r->w, &r->msg->id);
    mcp_jw_object_begin(&r->w);
}

/* Closes the result (with the modern fields when due) and sends it. */
void mcp__result_end(mcp__req *r)
{
    if (r->modern)
        mcp__write_modern_result_fields(&r->w, r->c->srv);
    mcp_jw_object_end(&r->w);
    mcp_rpc_end(&r->w);
    mcp__send_reply(r);
}

void mcp__reply_error(mcp__req *r, int code, const char *message)
{
    mcp__conn_send_error(r->c, &r->msg->id, code, message);
}

/*
 * A principal without the scopes an item needs. Over HTTP the transport
 * answers 403 before dispatch; this is the answer on other transports (and
 * if the registry changed in between), so the handler never runs either way.
 */
void mcp__reply_forbidden(mcp__req *r, const char *scopes)
{
    char text[300];
    snprintf(text, sizeof text, "Forbidden: insufficient scope (needs \"%.200s\")", scopes ? scopes : "");
    mcp__conn_send_error(r->c, &r->msg->id, MCP_RPC_INVALID_REQUEST, text);
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

/* The server's capabilities: what is registered decides what is declared,
 * and methods of an undeclared capability answer -32601. */
static void write_capabilities(mcp_jw *w, mcp_server *srv, const char *version)
{
    pthread_rwlock_rdlock(&srv->reg_lock);
    int res = srv->has_resources, prompts = srv->has_prompts, completions = srv->has_completions;
    int tasks = srv->has_tasks;
    pthread_rwlock_unlock(&srv->reg_lock);
    mcp_jw_key(w, "capabilities");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "tools");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "listChanged");
    mcp_jw_bool(w, 1);
    mcp_jw_object_end(w);
    if (res) {
        mcp_jw_key(w, "resources");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "subscribe");
        mcp_jw_bool(w, 1);
        mcp_jw_key(w, "listChanged");
        mcp_jw_bool(w, 1);
        mcp_jw_object_end(w);
    }
    if (prompts) {
        mcp_jw_key(w, "prompts");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "listChanged");
        mcp_jw_bool(w, 1);
        mcp_jw_object_end(w);
    }
    if (completions && mcp__version_at_least(version, MCP_PROTOCOL_2025_03_26)) {
        mcp_jw_key(w, "completions");
        mcp_jw_object_begin(w);
        mcp_jw_object_end(w);
    }
    mcp_jw_key(w, "logging");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    /* 2025-11-25 had tasks in the core, experimental: its own capability shape. */
    if (tasks && version && strcmp(version, MCP_PROTOCOL_2025_11_25) == 0)
        mcp__tasks_write_legacy_capability(w);
    /* Extensions: tasks (once a tool supports them), then those the server declares (opts.extensions). */
    const mcp_json *exts = mcp_json_doc_root(srv->extensions_doc);
    if (!tasks && mcp_json_len(exts) == 0) {
        mcp_jw_object_end(w);
        return;
    }
    mcp_jw_key(w, "extensions");
    mcp_jw_object_begin(w);
    if (tasks) {
        mcp_jw_key(w, MCP__TASKS_EXT);
        mcp_jw_object_begin(w);
        mcp_jw_object_end(w);
    }
    for (size_t i = 0; i < mcp_json_len(exts); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(exts, i, &kl);
        if (kl == sizeof MCP__TASKS_EXT - 1 && !memcmp(k, MCP__TASKS_EXT, kl))
            continue;
        mcp_jw_keyn(w, k, kl);
        mcp_jw_value(w, mcp_json_value_at(exts, i));
    }
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

static void m_initialize(mcp__req *r)
{
    mcp_conn *c = r->c;
    const mcp_json *p = r->msg->params;
    const mcp_json *pv = mcp_json_get(p, "protocolVersion");
    if (mcp_json_typeof(pv) != MCP_JSON_STRING) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: initialize needs a string \"protocolVersion\"");
        return;
    }
    /* Echo a legacy version we speak, else offer the latest legacy one. */
    size_t pl;
    const char *ps = mcp_json_str(pv, &pl);
    const char *version = mcp__version_legacy(ps, pl);
    if (!version)
        version = mcp__version_newest_legacy();
    /* Keep the client's capabilities: they decide what the server may ask it. */
    mcp_json_doc *caps = NULL;
    const mcp_json *cv = mcp_json_get(p, "capabilities");
    if (mcp_json_typeof(cv) == MCP_JSON_OBJECT) {
        mcp_buf cb;
        mcp_buf_init(&cb, 0);
        mcp_jw cw;
        mcp_jw_init(&cw, &cb);
        mcp_jw_value(&cw, cv);
        if (mcp_jw_finish(&cw) == MCP_OK)
            mcp_json_parse(&caps, cb.data, cb.len, NULL, NULL);
        mcp_buf_cleanup(&cb);
    }
    pthread_mutex_lock(&c->mu);
    int again = c->initialized;
    if (!again) {
        c->initialized = 1;
        c->version = version;
        c->client_caps = caps;
        caps = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    mcp_json_doc_free(caps);
    if (again) {
        mcp__reply_error(r, MCP_RPC_INVALID_REQUEST, "Invalid Request: initialize was already called on this connection");
        return;
    }
    mcp__result_begin(r);
    mcp_jw *w = &r->w;
    mcp_jw_key(w, "protocolVersion");
    mcp_jw_string(w, version);
    write_capabilities(w, c->srv, version);
    mcp_jw_key(w, "serverInfo");
    write_server_info(w, c->srv);
    if (c->srv->instructions) {
        mcp_jw_key(w, "instructions");
        mcp_jw_string(w, c->srv->instructions);
    }
    mcp__result_end(r);
}

static void m_ping(mcp__req *r)
{
    mcp__result_begin(r);
    mcp__result_end(r);
}

static void m_set_level(mcp__req *r)
{
    int level = level_from_json(mcp_json_get(r->msg->params, "level"));
    if (level < 0) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS,
                    "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
                    "alert, emergency");
        return;
    }
    atomic_store(&r->c->log_level, level);
    mcp__result_begin(r);
    mcp__result_end(r);
}

void mcp__write_caching(mcp__req *r)
{
    mcp_jw_key(&r->w, "ttlMs");
    mcp_jw_int(&r->w, r->c->srv->opts.list_ttl_ms);
    mcp_jw_key(&r->w, "cacheScope");
    mcp_jw_string(&r->w, "public");
}

/*
 * The versions a request with per-request _meta may name, as an array:
 * what server/discover lists and what -32022 offers. Legacy versions are
 * reached through initialize instead, so listing them here would invite a
 * client to retry a modern request with a version that cannot work that way.
 */
static void write_modern_versions(mcp_jw *w)
{
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < MCP__N_MODERN; i++)
        mcp_jw_string(w, mcp__versions[i]);
    mcp_jw_array_end(w);
}

static void m_discover(mcp__req *r)
{
    mcp_server *srv = r->c->srv;
    mcp__result_begin(r);
    mcp_jw *w = &r->w;
    mcp_jw_key(w, "supportedVersions");
    write_modern_versions(w);
    write_capabilities(w, srv, mcp__version_newest());
    if (srv->instructions) {
        mcp_jw_key(w, "instructions");
        mcp_jw_string(w, srv->instructions);
    }
    mcp__write_caching(r);
    mcp__result_end(r);
}

static void m_tools_list(mcp__req *r)
{
    const mcp_json *cursor = mcp_json_get(r->msg->params, "cursor");
    size_t clen = 0;
    const char *cs = NULL;
    if (cursor && !(cs = mcp_json_str(cursor, &clen))) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"cursor\" must be a string");
        return;
    }
    mcp__result_begin(r);
    mcp_status st = mcp__server_write_tools(r->c->srv, &r->w, cs, clen, r->version, r->caps);
    if (st == MCP_ERR_INVALID_ARG) {
        mcp_buf_cleanup(&r->buf);
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown or expired cursor");
        return;
    }
    if (r->modern)
        mcp__write_caching(r);
    mcp__result_end(r);
}

static void m_tools_call(mcp__req *r)
{
    /* call.c takes the message (and its document) from here. */
    mcp__call_start(r);
}

/* Level-1 routing table, sorted by name for binary search. */
#define ERA_LEGACY 0x1u
#define ERA_MODERN 0x2u
#define NEEDS_INIT 0x4u        /* legacy: only after initialize */
#define NEEDS_RESOURCES 0x8u   /* only when the resources capability is declared */
#define NEEDS_PROMPTS 0x10u    /* ... prompts */
#define NEEDS_COMPLETIONS 0x20u /* ... completions */
#define BOTH (ERA_LEGACY | ERA_MODERN | NEEDS_INIT)

typedef struct method {
    const char *name;          /* JSON-RPC method */
    void (*fn)(mcp__req *r);   /* handler */
    unsigned flags;            /* ERA_*, NEEDS_* */
} method;

static void m_listen(mcp__req *r);
static int listen_remove(mcp_conn *c, const mcp_rpc_id *id);

static const method g_methods[] = {
    {"completion/complete", mcp__m_complete, BOTH | NEEDS_COMPLETIONS},
    {"initialize", m_initialize, ERA_LEGACY},
    {"logging/setLevel", m_set_level, ERA_LEGACY | NEEDS_INIT},
    {"ping", m_ping, ERA_LEGACY},
    {"prompts/get", mcp__m_prompts_get, BOTH | NEEDS_PROMPTS},
    {"prompts/list", mcp__m_prompts_list, BOTH | NEEDS_PROMPTS},
    {"resources/list", mcp__m_resources_list, BOTH | NEEDS_RESOURCES},
    {"resources/read", mcp__m_resources_read, BOTH | NEEDS_RESOURCES},
    {"resources/subscribe", mcp__m_resources_subscribe, ERA_LEGACY | NEEDS_INIT | NEEDS_RESOURCES},
    {"resources/templates/list", mcp__m_templates_list, BOTH | NEEDS_RESOURCES},
    {"resources/unsubscribe", mcp__m_resources_unsubscribe, ERA_LEGACY | NEEDS_INIT | NEEDS_RESOURCES},
    {"server/discover", m_discover, ERA_MODERN},
    {"subscriptions/listen", m_listen, ERA_MODERN},
    {"tasks/cancel", mcp__m_tasks_cancel, BOTH},
    {"tasks/get", mcp__m_tasks_get, BOTH},
    {"tasks/list", mcp__m_tasks_list, BOTH},
    {"tasks/result", mcp__m_tasks_result, BOTH},
    {"tasks/update", mcp__m_tasks_update, BOTH},
    {"tools/call", m_tools_call, BOTH},
    {"tools/list", m_tools_list, BOTH},
};

/* 1 when the method's capability is declared by this server. */
static int available(mcp_server *srv, const method *e)
{
    if (!(e->flags & (NEEDS_RESOURCES | NEEDS_PROMPTS | NEEDS_COMPLETIONS)))
        return 1;
    pthread_rwlock_rdlock(&srv->reg_lock);
    int ok = ((e->flags & NEEDS_RESOURCES) && srv->has_resources) || ((e->flags & NEEDS_PROMPTS) && srv->has_prompts) ||
             ((e->flags & NEEDS_COMPLETIONS) && srv->has_completions);
    pthread_rwlock_unlock(&srv->reg_lock);
    return ok;
}

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
    mcp__conn_send_error(c, &m->id, MCP_RPC_METHOD_NOT_FOUND, text);
}

/*
 * A 2026-07-28 request. The checks run in the order the spec's examples
 * and the conformance suite assume: required _meta fields (-32602), the
 * version (-32022), the method (-32601), then the params (-32602).
 */
static void modern_request(mcp_conn *c, mcp_rpc_msg *m, const mcp_json *meta, const mcp_json *pv,
                           const mcp_principal *principal)
{
    if (mcp_json_typeof(pv) != MCP_JSON_STRING) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: _meta \"" META_VERSION "\" must be a string");
        return;
    }
    if (mcp_json_typeof(mcp_json_get(meta, META_CAPS)) != MCP_JSON_OBJECT) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: missing required _meta field \"" META_CAPS "\" (an object)");
        return;
    }
    size_t pl;
    const char *ps = mcp_json_str(pv, &pl);
    const char *version = mcp__version_known(ps, pl);
    if (!version || !mcp__version_modern(version)) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_error(&w, &m->id, MCP_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version");
        mcp_jw_key(&w, "data");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "supported");
        write_modern_versions(&w);
        mcp_jw_key(&w, "requested");
        mcp_jw_value(&w, pv);
        mcp_jw_object_end(&w);
        mcp_rpc_end_error(&w);
        if (mcp_jw_finish(&w) == MCP_OK)
            mcp__conn_send_to(c, &b, &m->id, 1);
        mcp_buf_cleanup(&b);
        return;
    }
    const method *e = find_method(m);
    if (!e || !(e->flags & ERA_MODERN) || !available(c->srv, e)) {
        method_not_found(c, m);
        return;
    }
    int threshold = -1;
    const mcp_json *ll = mcp_json_get(meta, META_LOGLEVEL);
    if (ll && (threshold = level_from_json(ll)) < 0) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: _meta \"" META_LOGLEVEL "\" is not a log level");
        return;
    }
    mcp__req r;
    r.c = c;
    r.msg = m;
    r.version = version;
    r.modern = 1;
    r.log_threshold = threshold;
    r.caps = mcp_json_get(meta, META_CAPS);
    r.principal = principal;
    e->fn(&r);
}

static void legacy_request(mcp_conn *c, mcp_rpc_msg *m, const mcp_principal *principal)
{
    const method *e = find_method(m);
    if (e && !available(c->srv, e))
        e = NULL;
    if (!e || !(e->flags & ERA_LEGACY)) {
        if (e && (e->flags & ERA_MODERN)) {
            /* A modern-only method without the modern _meta. */
            mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                       "Invalid params: missing required _meta field \"" META_VERSION "\"");
            return;
        }
        method_not_found(c, m);
        return;
    }
    pthread_mutex_lock(&c->mu); /* one lock for both: this runs for every request */
    const char *version = c->initialized ? c->version : NULL;
    const mcp_json *caps = mcp_json_doc_root(c->client_caps); /* freed only with the connection */
    pthread_mutex_unlock(&c->mu);
    if ((e->flags & NEEDS_INIT) && !version) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS,
                   "Invalid params: missing required _meta field \"" META_VERSION
                   "\" (2026-07-28), or send initialize first (earlier versions)");
        return;
    }
    mcp__req r;
    r.c = c;
    r.msg = m;
    r.version = version;
    r.modern = 0;
    r.log_threshold = -1;
    r.caps = caps;
    r.principal = principal;
    e->fn(&r);
}

static void handle_request(mcp_conn *c, mcp_rpc_msg *m, const mcp_principal *principal)
{
    const mcp_json *meta = mcp_json_get(m->params, "_meta");
    const mcp_json *pv = mcp_json_get(meta, META_VERSION);
    if (m->params && mcp_json_typeof(m->params) != MCP_JSON_OBJECT) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS, "Invalid params: MCP params must be an object");
        return;
    }
    if (meta && mcp_json_typeof(meta) != MCP_JSON_OBJECT) {
        mcp__conn_send_error(c, &m->id, MCP_RPC_INVALID_PARAMS, "Invalid params: \"_meta\" must be an object");
        return;
    }
    if (pv)
        modern_request(c, m, meta, pv, principal);
    else
        legacy_request(c, m, principal);
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
        if (listen_remove(c, &id))
            return; /* a listen stream ends without a response */
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
/* Subscriptions                                                             */

#define MAX_SUBSCRIPTIONS 1024 /* per connection: legacy URIs, listen streams, URIs per stream */
#define MAX_LISTEN_TASKS 64    /* taskIds one listen stream may follow */

static char *dup_n(const char *s, size_t n)
{
    return mcp__strndup(s, n);
}

mcp_status mcp__conn_subscribe(mcp_conn *c, const char *uri, size_t len, int on)
{
    mcp_status st = MCP_OK;
    pthread_mutex_lock(&c->mu);
    size_t i;
    for (i = 0; i < c->nsubs; i++)
        if (strlen(c->subs[i]) == len && memcmp(c->subs[i], uri, len) == 0)
            break;
    if (on && i == c->nsubs) {
        char **n = c->nsubs >= MAX_SUBSCRIPTIONS ? NULL : mcp_realloc(c->subs, (c->nsubs + 1) * sizeof *n);
        char *copy = n ? dup_n(uri, len) : NULL;
        if (!copy) {
            if (n)
                c->subs = n;
            st = c->nsubs >= MAX_SUBSCRIPTIONS ? MCP_ERR_LIMIT : MCP_ERR_NOMEM;
        } else {
            c->subs = n;
            c->subs[c->nsubs++] = copy;
        }
    } else if (!on && i < c->nsubs) {
        mcp_free(c->subs[i]);
        c->subs[i] = c->subs[--c->nsubs];
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* Writes params._meta with the subscription id. */
void mcp__write_sub_meta(mcp_jw *w, const mcp_rpc_id *id)
{
    mcp_jw_key(w, "_meta");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "io.modelcontextprotocol/subscriptionId");
    mcp_rpc_write_id(w, id);
    mcp_jw_object_end(w);
}

/* One notification: `method`, params {uri?, _meta.subscriptionId?} (none when both are NULL). */
static void send_note(mcp_conn *c, const char *note, const char *uri, const mcp_rpc_id *listen)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "jsonrpc");
    mcp_jw_string(&w, "2.0");
    mcp_jw_key(&w, "method");
    mcp_jw_string(&w, note);
    if (uri || listen) {
        mcp_jw_key(&w, "params");
        mcp_jw_object_begin(&w);
        if (uri) {
            mcp_jw_key(&w, "uri");
            mcp_jw_string(&w, uri);
        }
        if (listen)
            mcp__write_sub_meta(&w, listen);
        mcp_jw_object_end(&w);
    }
    mcp_jw_object_end(&w);
    send_frame(c, &w, &b, listen);
    mcp_buf_cleanup(&b);
}

static unsigned listen_bit(const char *note)
{
    if (!strcmp(note, "notifications/tools/list_changed"))
        return MCP__LISTEN_TOOLS;
    if (!strcmp(note, "notifications/prompts/list_changed"))
        return MCP__LISTEN_PROMPTS;
    if (!strcmp(note, "notifications/resources/list_changed"))
        return MCP__LISTEN_RESOURCES;
    return 0;
}

/*
 * Copies the ids of matching listen streams so notifications go out
 * without holding conn->mu (sending may block on the transport).
 */
typedef struct targets {
    mcp_rpc_id ids[64];   /* matching streams (string ids copied into strs) */
    char *strs[64];       /* owned copies */
    size_t n;             /* how many */
} targets;

static void targets_free(targets *t)
{
    for (size_t i = 0; i < t->n; i++)
        mcp_free(t->strs[i]);
}

static void collect(mcp_conn *c, unsigned bit, const char *uri, targets *t)
{
    t->n = 0;
    for (mcp__listen *l = c->listens; l && t->n < 64; l = l->next) {
        int match = bit ? (l->what & bit) != 0 : 0;
        for (size_t i = 0; !match && uri && i < l->nuris; i++)
            match = strcmp(l->uris[i], uri) == 0;
        if (!match)
            continue;
        t->ids[t->n] = l->id;
        t->strs[t->n] = NULL;
        if (l->id.type == MCP_RPC_ID_STRING) {
            t->strs[t->n] = dup_n(l->id.str, l->id.len);
            if (!t->strs[t->n])
                continue;
            t->ids[t->n].str = t->strs[t->n];
        }
        t->n++;
    }
}

void mcp__conn_resource_updated(mcp_conn *c, const char *uri)
{
    targets t;
    pthread_mutex_lock(&c->mu);
    int legacy = 0;
    for (size_t i = 0; i < c->nsubs && !legacy; i++)
        legacy = strcmp(c->subs[i], uri) == 0;
    collect(c, 0, uri, &t);
    int closing = c->closing;
    pthread_mutex_unlock(&c->mu);
    if (!closing) {
        if (legacy)
            send_note(c, "notifications/resources/updated", uri, NULL);
        for (size_t i = 0; i < t.n; i++)
            send_note(c, "notifications/resources/updated", uri, &t.ids[i]);
    }
    targets_free(&t);
}

static void listen_free(mcp__listen *l)
{
    for (size_t i = 0; i < l->nuris; i++)
        mcp_free(l->uris[i]);
    mcp_free(l->uris);
    for (size_t i = 0; i < l->ntasks; i++)
        mcp_free(l->tasks[i]);
    mcp_free(l->tasks);
    mcp_free(l->id_str);
    mcp_free(l);
}

/* Removes the listen stream with this id; 1 when there was one. */
static int listen_remove(mcp_conn *c, const mcp_rpc_id *id)
{
    pthread_mutex_lock(&c->mu);
    mcp__listen **pp = &c->listens, *found = NULL;
    for (; *pp; pp = &(*pp)->next) {
        if (mcp_rpc_id_equal(&(*pp)->id, id)) {
            found = *pp;
            *pp = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (found) {
        mcp__tasks_unwatch(c, &found->id);
        listen_free(found);
    }
    return found != NULL;
}

/*
 * subscriptions/listen: acknowledge what will be delivered, then keep the
 * request open; notifications on it carry its id as subscriptionId. It ends
 * when the client cancels it or the connection closes.
 */
/* The taskIds a listen stream may hear of: the requester's own tasks that
 * exist now, at most MAX_LISTEN_TASKS; -1 when out of memory. */
static int listen_tasks(mcp__req *r, mcp__listen *l, const mcp_json *ids)
{
    size_t n = mcp_json_len(ids);
    if (n > MAX_LISTEN_TASKS)
        n = MAX_LISTEN_TASKS;
    if (!n)
        return 0;
    if (!(l->tasks = mcp__calloc(n, sizeof *l->tasks)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *id = mcp_json_str(mcp_json_at(ids, i), &len);
        if (!id || !mcp__task_visible(r->c->srv, id, len, r->principal))
            continue; /* unknown, expired or another principal's: not agreed */
        int seen = 0;
        for (size_t j = 0; j < l->ntasks && !seen; j++)
            seen = strlen(l->tasks[j]) == len && memcmp(l->tasks[j], id, len) == 0;
        if (seen)
            continue;
        if (!(l->tasks[l->ntasks] = dup_n(id, len)))
            return -1;
        l->ntasks++;
    }
    return 0;
}

/*
 * The listen stream subscriptions/listen asks for: the list changes this
 * server can have, and at most MAX_SUBSCRIPTIONS resource URIs. NULL when
 * out of memory (answered).
 */
static mcp__listen *listen_new(mcp__req *r, const mcp_json *want, const mcp_json *uris)
{
    mcp_server *srv = r->c->srv;
    pthread_rwlock_rdlock(&srv->reg_lock);
    int has_res = srv->has_resources, has_prompts = srv->has_prompts;
    pthread_rwlock_unlock(&srv->reg_lock);
    mcp__listen *l = mcp__calloc(1, sizeof *l);
    if (!l) {
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return NULL;
    }
    l->id = r->msg->id;
    if (l->id.type == MCP_RPC_ID_STRING) {
        l->id_str = dup_n(l->id.str, l->id.len);
        l->id.str = l->id_str;
    }
    if (mcp_json_bool(mcp_json_get(want, "toolsListChanged")))
        l->what |= MCP__LISTEN_TOOLS;
    if (has_prompts && mcp_json_bool(mcp_json_get(want, "promptsListChanged")))
        l->what |= MCP__LISTEN_PROMPTS;
    if (has_res && mcp_json_bool(mcp_json_get(want, "resourcesListChanged")))
        l->what |= MCP__LISTEN_RESOURCES;
    size_t nu = has_res ? mcp_json_len(uris) : 0;
    if (nu > MAX_SUBSCRIPTIONS)
        nu = MAX_SUBSCRIPTIONS;
    l->uris = nu ? mcp__calloc(nu, sizeof *l->uris) : NULL;
    int oom = (l->id.type == MCP_RPC_ID_STRING && !l->id_str) || (nu && !l->uris);
    for (size_t i = 0; i < nu && !oom; i++) {
        size_t ul;
        const char *u = mcp_json_str(mcp_json_at(uris, i), &ul);
        if (!u || memchr(u, '\0', ul))
            continue;
        if (!(l->uris[l->nuris] = dup_n(u, ul)))
            oom = 1;
        else
            l->nuris++;
    }
    if (!oom && listen_tasks(r, l, mcp_json_get(want, "taskIds")))
        oom = 1;
    if (oom) {
        listen_free(l);
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return NULL;
    }
    return l;
}

/* notifications/subscriptions/acknowledged: what the stream will deliver. */
static void write_listen_ack(mcp_jw *w, const mcp__listen *l)
{
    mcp_rpc_begin_notification(w, "notifications/subscriptions/acknowledged");
    mcp_jw_object_begin(w);
    mcp__write_sub_meta(w, &l->id);
    mcp_jw_key(w, "notifications");
    mcp_jw_object_begin(w);
    if (l->what & MCP__LISTEN_TOOLS) {
        mcp_jw_key(w, "toolsListChanged");
        mcp_jw_bool(w, 1);
    }
    if (l->what & MCP__LISTEN_PROMPTS) {
        mcp_jw_key(w, "promptsListChanged");
        mcp_jw_bool(w, 1);
    }
    if (l->what & MCP__LISTEN_RESOURCES) {
        mcp_jw_key(w, "resourcesListChanged");
        mcp_jw_bool(w, 1);
    }
    if (l->ntasks) {
        mcp_jw_key(w, "taskIds");
        mcp_jw_array_begin(w);
        for (size_t i = 0; i < l->ntasks; i++)
            mcp_jw_string(w, l->tasks[i]);
        mcp_jw_array_end(w);
    }
    if (l->nuris) {
        mcp_jw_key(w, "resourceSubscriptions");
        mcp_jw_array_begin(w);
        for (size_t i = 0; i < l->nuris; i++)
            mcp_jw_string(w, l->uris[i]);
        mcp_jw_array_end(w);
    }
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_rpc_end(w);
}

static void listen_watch(mcp_conn *c, mcp__listen *l);

static void m_listen(mcp__req *r)
{
    mcp_conn *c = r->c;
    const mcp_json *want = mcp_json_get(r->msg->params, "notifications");
    if (want && mcp_json_typeof(want) != MCP_JSON_OBJECT) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"notifications\" must be an object");
        return;
    }
    const mcp_json *uris = mcp_json_get(want, "resourceSubscriptions");
    if (uris && mcp_json_typeof(uris) != MCP_JSON_ARRAY) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"resourceSubscriptions\" must be an array");
        return;
    }
    const mcp_json *tasks = mcp_json_get(want, "taskIds");
    if (tasks && mcp_json_typeof(tasks) != MCP_JSON_ARRAY) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"taskIds\" must be an array");
        return;
    }
    if (mcp_json_len(tasks) && !mcp__tasks_declared(r->caps)) {
        mcp__tasks_reply_missing(r, "Missing required client capability: task notifications need the "
                                    "extension io.modelcontextprotocol/tasks");
        return;
    }
    mcp__listen *l = listen_new(r, want, uris);
    if (!l)
        return;
    /* The acknowledgement goes out first, with what will be delivered. */
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    write_listen_ack(&w, l);
    pthread_mutex_lock(&c->mu);
    size_t count = 0;
    for (mcp__listen *o = c->listens; o; o = o->next)
        count++;
    int dup = 0;
    for (mcp__listen *o = c->listens; o && !dup; o = o->next)
        dup = mcp_rpc_id_equal(&o->id, &l->id);
    if (!dup && count < MAX_SUBSCRIPTIONS) {
        l->next = c->listens;
        c->listens = l;
    }
    pthread_mutex_unlock(&c->mu);
    if (dup || count >= MAX_SUBSCRIPTIONS) {
        mcp_buf_cleanup(&b);
        listen_free(l);
        mcp__reply_error(r, dup ? MCP_RPC_INVALID_REQUEST : MCP_RPC_INTERNAL_ERROR,
                         dup ? "Invalid Request: a request with this id is already in progress"
                             : "Internal error: too many subscriptions on this connection");
        return;
    }
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(c, &b, &r->msg->id, 0);
    mcp_buf_cleanup(&b);
    if (l->ntasks)
        listen_watch(c, l);
}

/*
 * After the acknowledgement: the stream's tasks report their status
 * changes to it, and their state now. Unless the stream already ended
 * (cancelled, or the connection is closing: its watches are gone then).
 */
static void listen_watch(mcp_conn *c, mcp__listen *l)
{
    char *ids[MAX_LISTEN_TASKS];
    size_t n = 0;
    mcp_rpc_id id;
    memset(&id, 0, sizeof id);
    char *id_str = NULL;
    pthread_mutex_lock(&c->mu);
    int live = 0;
    for (mcp__listen *o = c->listens; o && !live; o = o->next)
        live = o == l;
    if (live && !c->closing) {
        mcp__tasks_watch_locked(c, l);
        id = l->id;
        if (id.type == MCP_RPC_ID_STRING && (id_str = dup_n(id.str, id.len)) != NULL)
            id.str = id_str;
        for (size_t i = 0; i < l->ntasks; i++)
            if ((ids[n] = mcp__strdup(l->tasks[i])) != NULL)
                n++;
    }
    pthread_mutex_unlock(&c->mu);
    if (n && (id.type != MCP_RPC_ID_STRING || id_str))
        mcp__tasks_send_current(c, &id, ids, n);
    for (size_t i = 0; i < n; i++)
        mcp_free(ids[i]);
    mcp_free(id_str);
}

/* At close: each open listen request gets its final (empty) result. */
static void end_listens(mcp_conn *c)
{
    mcp__tasks_unwatch(c, NULL);
    for (;;) {
        pthread_mutex_lock(&c->mu);
        mcp__listen *l = c->listens;
        if (l)
            c->listens = l->next;
        pthread_mutex_unlock(&c->mu);
        if (!l)
            return;
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_result(&w, &l->id);
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "resultType");
        mcp_jw_string(&w, "complete");
        mcp__write_sub_meta(&w, &l->id);
        mcp_jw_object_end(&w);
        mcp_rpc_end(&w);
        if (mcp_jw_finish(&w) == MCP_OK)
            mcp__conn_send_to(c, &b, &l->id, 1);
        mcp_buf_cleanup(&b);
        listen_free(l);
    }
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
    atomic_init(&c->flushing, 0);
    mcp__mutex_init_hot(&c->send_mu);
    mcp__mutex_init_hot(&c->mu);
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
    if (atomic_fetch_sub(&c->refs, 1) == 1)
        mcp__conn_destroy(c);
}

void mcp__conn_work_done(mcp_conn *c)
{
    /* Under the lock mcp_conn_close() waits with: once `running` drops,
     * the worker holds nothing of the connection, so a close that saw it
     * reach zero leaves no allocation behind. */
    pthread_mutex_lock(&c->mu);
    c->running--;
    pthread_cond_broadcast(&c->cv);
    int last = atomic_fetch_sub(&c->refs, 1) == 1;
    pthread_mutex_unlock(&c->mu);
    if (last)
        mcp__conn_destroy(c);
}

void mcp__conn_destroy(mcp_conn *c)
{
    for (size_t i = 0; i < c->nsubs; i++)
        mcp_free(c->subs[i]);
    mcp_free(c->subs);
    while (c->listens) {
        mcp__listen *l = c->listens;
        c->listens = l->next;
        listen_free(l);
    }
    mcp_json_doc_free(c->client_caps);
    /* A worker drops its reference under c->mu (mcp__conn_work_done); when
     * that was not the last one, it may still be inside the unlock while
     * the last goes here on another thread. Taking the lock once orders the
     * destruction after that unlock. */
    pthread_mutex_lock(&c->mu);
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_destroy(&c->send_mu);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    mcp_free(c);
}

mcp_status mcp_conn_recv(mcp_conn *c, const char *frame, size_t len)
{
    return mcp_conn_recv_auth(c, frame, len, NULL);
}

mcp_status mcp_conn_recv_auth(mcp_conn *c, const char *frame, size_t len, const mcp_principal *principal)
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
        /* No id to relate it to: the answer to the frame being processed. */
        if (mcp_jw_finish(&w) == MCP_OK)
            mcp__conn_send_to(c, &b, NULL, 1);
        mcp_buf_cleanup(&b);
        return MCP_OK;
    }
    mcp__conn_dispatch_as(c, &m, principal);
    mcp_rpc_msg_cleanup(&m); /* a no-op when call.c took the message */
    return MCP_OK;
}

void mcp__conn_dispatch(mcp_conn *c, mcp_rpc_msg *m)
{
    mcp__conn_dispatch_as(c, m, NULL);
}

void mcp__conn_dispatch_as(mcp_conn *c, mcp_rpc_msg *m, const mcp_principal *principal)
{
    switch (m->kind) {
    case MCP_RPC_REQUEST:
        handle_request(c, m, principal);
        break;
    case MCP_RPC_NOTIFICATION:
        handle_notification(c, m);
        break;
    default:
        /* A response: to a legacy server-to-client request, or to nothing. */
        if (!mcp__ask_answer(c, m))
            mcp__server_diag(c->srv, MCP_LOG_DEBUG, "ignored a response to an unknown request");
        break;
    }
}

mcp_status mcp__conn_assume_version(mcp_conn *c, const char *version, size_t len)
{
    const char *v = mcp__version_legacy(version, len);
    if (!v)
        return MCP_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->mu);
    c->initialized = 1;
    c->version = v;
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

void mcp__conn_set_flow(mcp_conn *c, uint64_t flow)
{
    c->flow = flow;
}

void mcp__conn_set_route(mcp_conn *c, mcp__route_fn route, void *ud)
{
    pthread_mutex_lock(&c->send_mu);
    c->route = route;
    c->route_ud = ud;
    pthread_mutex_unlock(&c->send_mu);
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
    uint64_t t = mcp__mono_ns() + (uint64_t)ms * 1000000ull;
    ts->tv_sec = (time_t)(t / 1000000000ull);
    ts->tv_nsec = (long)(t % 1000000000ull);
}

static int before(const struct timespec *ts)
{
    uint64_t t = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
    return mcp__mono_ns() < t;
}

/* An error answer owed to a call the closing connection cancelled, built under c->mu, sent after. */
typedef struct owed_answer {
    struct owed_answer *next;
    mcp_rpc_id id;   /* a string id points into `frame`'s allocation's tail */
    mcp_buf frame;
} owed_answer;

/*
 * Claims the answer of a call still in the table (0 when its own answer is
 * already on its way) and builds the error that tells the client it was
 * cancelled because the connection closed. Called with c->mu held.
 */
static owed_answer *owe_cancelled(mcp_call *call, unsigned grace_ms)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&call->finished, &expected, 1))
        return NULL;
    size_t idlen = call->msg.id.type == MCP_RPC_ID_STRING ? call->msg.id.len : 0;
    owed_answer *o = mcp_malloc(sizeof *o + idlen + 1);
    if (!o)
        return NULL;
    o->next = NULL;
    o->id = call->msg.id;
    if (idlen || call->msg.id.type == MCP_RPC_ID_STRING) {
        char *copy = (char *)(o + 1);
        memcpy(copy, call->msg.id.str, idlen);
        copy[idlen] = '\0';
        o->id.str = copy;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "Request cancelled: the connection closed and the call did not finish within %u ms",
             grace_ms);
    mcp_buf_init(&o->frame, 0);
    mcp_jw w;
    mcp_jw_init(&w, &o->frame);
    mcp_rpc_write_error(&w, &o->id, MCP_RPC_INTERNAL_ERROR, msg, NULL);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&o->frame);
        mcp_free(o);
        return NULL;
    }
    return o;
}

/* Sends the owed answers (in the order the calls were taken) and frees them. */
static void send_owed(mcp_conn *c, owed_answer *list)
{
    owed_answer *rev = NULL;
    while (list) {
        owed_answer *n = list->next;
        list->next = rev;
        rev = list;
        list = n;
    }
    while (rev) {
        owed_answer *n = rev->next;
        mcp__conn_send_to(c, &rev->frame, &rev->id, 1);
        mcp_buf_cleanup(&rev->frame);
        mcp_free(rev);
        rev = n;
    }
}

/*
 * Cancels every call left in the table: queued ones are withdrawn (and
 * freed here), running ones flagged. With a grace period each gets an
 * error answer unless its own was already claimed; with none (the caller
 * chose not to wait: its client is gone) none is written.
 */
static void cancel_the_rest(mcp_conn *c, unsigned grace_ms)
{
    mcp_call *owned = NULL;
    owed_answer *answers = NULL;
    pthread_mutex_lock(&c->mu);
    for (unsigned b = 0; b < MCP__CONN_BUCKETS; b++) {
        while (c->buckets[b]) {
            mcp_call *call = mcp__conn_take_call_locked(c, &c->buckets[b]->msg.id);
            atomic_store(&call->cancelled, 1);
            owed_answer *o = grace_ms ? owe_cancelled(call, grace_ms) : NULL;
            if (o) {
                o->next = answers;
                answers = o;
            }
            atomic_store(&call->finished, 1);
            if (call->state == MCP__CALL_QUEUED && mcp__pool_withdraw(c->srv->pool, &call->job)) {
                call->bucket_next = owned;
                owned = call;
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
    send_owed(c, answers);
    while (owned) {
        mcp_call *n = owned->bucket_next;
        owned->bucket_next = NULL;
        mcp__call_release(owned);
        owned = n;
    }
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
    pthread_mutex_unlock(&c->mu);
    cancel_the_rest(c, grace_ms);
    deadline_in(&until, grace_ms);
    pthread_mutex_lock(&c->mu);
    while (c->running > 0 && before(&until))
        pthread_cond_timedwait(&c->cv, &c->mu, &until);
    unsigned still = c->running;
    pthread_mutex_unlock(&c->mu);
    end_listens(c);
    pthread_mutex_lock(&c->send_mu);
    c->send_closed = 1;
    pthread_mutex_unlock(&c->send_mu);
    /* With no grace the caller chose not to wait (a request-scoped connection
     * whose client left, or whose answer is out and its handler unwinding):
     * nothing was ignored, so nothing is worth a warning. */
    if (still && grace_ms)
        mcp__server_diag(c->srv, MCP_LOG_WARNING, "%u handler(s) ignored cancellation; abandoned", still);
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

void mcp__conn_notify(mcp_conn *c, const char *notification)
{
    targets t;
    pthread_mutex_lock(&c->mu);
    int ok = c->initialized && !c->closing;
    collect(c, listen_bit(notification), NULL, &t);
    if (c->closing)
        t.n = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < t.n; i++)
        send_note(c, notification, NULL, &t.ids[i]);
    targets_free(&t);
    if (ok)
        send_note(c, notification, NULL, NULL);
}
