/*
 * The server: options, the tool registry, tools/list pages, the timer
 * thread for call time limits, the connection list (for list_changed),
 * diagnostics and the transcript.
 */
#include "util/abi.h"
#include "util/util.h"
#include "json/json_internal.h"
#include "server/server_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_QUEUE_MAX 1024u
#define DEFAULT_MAX_IN_FLIGHT 4096u
#define DEFAULT_PAGE_SIZE 100u
#define DEFAULT_MAX_MESSAGE ((size_t)4 << 20)

/* The empty object handlers get when a request has no `arguments`. */
static const mcp_json g_empty_object = {MCP_JSON_OBJECT, 0, 0, 0, NULL, {0}};

const mcp_json *mcp__empty_object(void)
{
    return &g_empty_object;
}

/* ------------------------------------------------------------------------ */
/* Diagnostics and transcript                                                */

void mcp__server_diag(mcp_server *srv, mcp_log_level level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (srv->opts.log) {
        srv->opts.log(level, msg, srv->opts.log_user_data);
        return;
    }
    /* stdout carries protocol frames on stdio: diagnostics go to stderr,
     * debug-level ones only to a log callback that asks for them. */
    if (level < MCP_LOG_INFO)
        return;
    fprintf(stderr, "%s: %s: %s\n", srv->name, mcp_log_level_name(level), msg);
}

/* The HTTP request's trace context on this thread (mcp__trace_http_set). */
static _Thread_local const char *tl_traceparent, *tl_tracestate;

void mcp__trace_http_set(const char *traceparent, const char *tracestate)
{
    int ok = traceparent && mcp__traceparent_valid(traceparent, strlen(traceparent));
    tl_traceparent = ok ? traceparent : NULL;
    tl_tracestate = ok && tracestate && mcp__tracestate_valid(tracestate, strlen(tracestate)) ? tracestate : NULL;
}

void mcp__trace_http_get(const char **traceparent, const char **tracestate)
{
    *traceparent = tl_traceparent;
    *tracestate = tl_tracestate;
}

void mcp__server_transcript(mcp_server *srv, const char *dir, const char *frame, size_t len)
{
    if (!srv->transcript)
        return;
    int in = dir[0] == 'i';
    mcp__transcript_line_trace(srv->transcript, &srv->transcript_mu, dir, frame, len, &srv->popts,
                               in ? tl_traceparent : NULL, in ? tl_tracestate : NULL);
}

/* ------------------------------------------------------------------------ */
/* Timer thread                                                              */

static void *timer_main(void *arg)
{
    mcp_server *srv = arg;
    pthread_mutex_lock(&srv->timer_mu);
    while (!srv->timer_stop) {
        uint64_t now = mcp__mono_ns(), next = UINT64_MAX;
        mcp_call *expired = NULL;
        for (mcp_call *c = srv->timers, *n; c; c = n) {
            n = c->timer_next;
            if (c->deadline_ns <= now) {
                /* Unlink and mark it firing: mcp__server_timer_remove (on
                 * the way to freeing it) waits until the flag drops, so it
                 * stays alive while it is answered below without the lock. */
                if (c->timer_prev)
                    c->timer_prev->timer_next = c->timer_next;
                else
                    srv->timers = c->timer_next;
                if (c->timer_next)
                    c->timer_next->timer_prev = c->timer_prev;
                c->on_timer = 0;
                c->timer_firing = 1;
                c->timer_next = expired;
                expired = c;
            } else if (c->deadline_ns < next) {
                next = c->deadline_ns;
            }
        }
        /* Answer them without timer_mu: the answer runs the user's
         * on_call_end and may block on a write, and either may come back
         * into the server (a new call with a time limit takes timer_mu). */
        if (expired) {
            pthread_mutex_unlock(&srv->timer_mu);
            for (mcp_call *c = expired; c; c = c->timer_next)
                mcp__call_timeout(c);
            pthread_mutex_lock(&srv->timer_mu);
            for (mcp_call *c = expired, *n; c; c = n) {
                n = c->timer_next;
                c->timer_next = c->timer_prev = NULL;
                c->timer_firing = 0;
            }
            pthread_cond_broadcast(&srv->timer_fired_cv);
            continue; /* time went by: look at the list again */
        }
        if (next == UINT64_MAX) {
            pthread_cond_wait(&srv->timer_cv, &srv->timer_mu);
        } else {
            struct timespec ts;
            ts.tv_sec = (time_t)(next / 1000000000ull);
            ts.tv_nsec = (long)(next % 1000000000ull);
            pthread_cond_timedwait(&srv->timer_cv, &srv->timer_mu, &ts);
        }
    }
    pthread_mutex_unlock(&srv->timer_mu);
    return NULL;
}

void mcp__server_timer_add(mcp_server *srv, mcp_call *call)
{
    pthread_mutex_lock(&srv->timer_mu);
    call->timer_prev = NULL;
    call->timer_next = srv->timers;
    if (srv->timers)
        srv->timers->timer_prev = call;
    srv->timers = call;
    call->on_timer = 1;
    pthread_cond_signal(&srv->timer_cv);
    pthread_mutex_unlock(&srv->timer_mu);
}

void mcp__server_timer_remove(mcp_server *srv, mcp_call *call)
{
    pthread_mutex_lock(&srv->timer_mu);
    if (call->on_timer) {
        if (call->timer_prev)
            call->timer_prev->timer_next = call->timer_next;
        else
            srv->timers = call->timer_next;
        if (call->timer_next)
            call->timer_next->timer_prev = call->timer_prev;
        call->on_timer = 0;
    }
    /* Being answered by the timer thread: wait, unless this is it (an
     * on_call_end that came back into the server). */
    while (call->timer_firing && !pthread_equal(pthread_self(), srv->timer_thread))
        pthread_cond_wait(&srv->timer_fired_cv, &srv->timer_mu);
    pthread_mutex_unlock(&srv->timer_mu);
}

/* ------------------------------------------------------------------------ */
/* Server lifetime                                                           */

static char *dup_or_null(const char *s)
{
    return s ? mcp__strndup(s, strlen(s)) : NULL;
}

static unsigned ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

mcp_status mcp_server_new_sized(mcp_server **out, const mcp_server_opts *opts, size_t opts_size, mcp_error *err)
{
    mcp_server_opts opts_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_server_opts, &opts_copy, opts, opts_size, err);
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    if (!out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "out is NULL");
    mcp_server_opts o;
    if (opts)
        o = *opts;
    else
        memset(&o, 0, sizeof o);
    mcp_server *srv = mcp__calloc(1, sizeof *srv);
    if (!srv)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    srv->name = dup_or_null(o.name ? o.name : "libmcp-server");
    srv->version = dup_or_null(o.version ? o.version : mcp_version());
    srv->title = dup_or_null(o.title);
    srv->instructions = dup_or_null(o.instructions);
    mcp_status xst = mcp__parse_opt_json(o.extensions, MCP_JSON_OBJECT, "extensions", &srv->extensions_doc, err);
    if (xst) {
        mcp_free(srv->name);
        mcp_free(srv->version);
        mcp_free(srv->title);
        mcp_free(srv->instructions);
        mcp_free(srv);
        return xst;
    }
    if (!srv->name || !srv->version || (o.title && !srv->title) || (o.instructions && !srv->instructions)) {
        mcp_json_doc_free(srv->extensions_doc);
        mcp_free(srv->name);
        mcp_free(srv->version);
        mcp_free(srv->title);
        mcp_free(srv->instructions);
        mcp_free(srv);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    if (!o.workers)
        o.workers = ncores();
    if (!o.queue_max)
        o.queue_max = DEFAULT_QUEUE_MAX;
    if (!o.max_in_flight)
        o.max_in_flight = DEFAULT_MAX_IN_FLIGHT;
    if (!o.page_size)
        o.page_size = DEFAULT_PAGE_SIZE;
    if (!o.max_message)
        o.max_message = DEFAULT_MAX_MESSAGE;
    if (!o.max_depth)
        o.max_depth = MCP_JSON_DEFAULT_MAX_DEPTH;
    o.name = srv->name;
    o.version = srv->version;
    o.title = srv->title;
    o.instructions = srv->instructions;
    o.transcript_path = NULL;
    o.extensions = NULL; /* parsed: srv->extensions_doc */
    srv->opts = o;
    srv->popts.max_bytes = o.max_message > MCP_JSON_LIMIT_MAX_BYTES ? MCP_JSON_LIMIT_MAX_BYTES : o.max_message;
    srv->popts.max_depth = o.max_depth > MCP_JSON_LIMIT_MAX_DEPTH ? MCP_JSON_LIMIT_MAX_DEPTH : o.max_depth;
    if (getrandom(srv->cursor_key, sizeof srv->cursor_key, 0) != (ssize_t)sizeof srv->cursor_key) {
        srv->cursor_key[0] = mcp__mono_ns() ^ (uint64_t)(uintptr_t)srv;
        srv->cursor_key[1] = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
    }
    if (mcp__server_init_state_key(srv) != MCP_OK) {
        mcp_json_doc_free(srv->extensions_doc);
        mcp_free(srv->name);
        mcp_free(srv->version);
        mcp_free(srv->title);
        mcp_free(srv->instructions);
        mcp_free(srv);
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "no randomness for the requestState key");
    }
    pthread_rwlock_init(&srv->reg_lock, NULL);
    pthread_mutex_init(&srv->timer_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&srv->timer_fired_cv, NULL);
    pthread_mutex_init(&srv->conns_mu, NULL);
    pthread_mutex_init(&srv->transcript_mu, NULL);
    srv->next_seq = 1;

    mcp_status st = MCP_OK;
    if (opts && opts->transcript_path) {
        srv->transcript = mcp__transcript_open(opts->transcript_path);
        if (!srv->transcript)
            st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot open transcript %s: %s", opts->transcript_path,
                           strerror(errno));
    }
    if (!st && ((st = mcp__tasks_new(srv)) != MCP_OK || (st = mcp__metrics_new(srv)) != MCP_OK))
        mcp__fail(err, st, 0, 0, "out of memory");
    if (!st) {
        st = mcp__pool_new(&srv->pool, o.workers, o.queue_max, mcp__conn_flush_owed);
        if (st)
            mcp__fail(err, st, 0, 0, "cannot start %u worker threads", o.workers);
    }
    if (!st) {
        if (pthread_create(&srv->timer_thread, NULL, timer_main, srv) != 0)
            st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot start the timer thread");
        else
            srv->timer_started = 1;
    }
    if (st) {
        mcp_server_free(srv);
        return st;
    }
    *out = srv;
    return MCP_OK;
}

static void tool_destroy(mcp__entry *e)
{
    mcp__tool *t = (mcp__tool *)e;
    if (t->user_data_free)
        t->user_data_free(t->user_data);
    mcp_free(t->e.key);
    mcp_free(t->e.scopes);
    mcp_free(t->title);
    mcp_free(t->description);
    mcp_json_doc_free(t->input_doc);
    mcp_json_doc_free(t->output_doc);
    mcp_json_doc_free(t->icons_doc);
    mcp_json_doc_free(t->meta_doc);
    mcp_json_doc_free(t->ext_meta_doc);
    mcp_free(t->extension);
    mcp_schema_free(t->input_schema);
    mcp_schema_free(t->output_schema);
    mcp_free(t);
}

void mcp__entry_release(mcp__entry *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1)
        e->destroy(e);
}

void mcp__tool_release(mcp__tool *t)
{
    if (t)
        mcp__entry_release(&t->e);
}

static void registry_free(mcp__registry *r)
{
    for (size_t i = 0; i < r->n; i++)
        mcp__entry_release(r->items[i]);
    mcp_free(r->items);
    mcp_free(r->index);
    memset(r, 0, sizeof *r);
}

void mcp_server_free(mcp_server *srv)
{
    if (!srv)
        return;
    /* Tasks first: their private connections are cancelled and let go,
     * then the workers: a queued job still refers to its connection. */
    mcp__tasks_stop(srv);
    mcp__pool_free(srv->pool);
    mcp__tasks_free(srv);
    if (srv->timer_started) {
        pthread_mutex_lock(&srv->timer_mu);
        srv->timer_stop = 1;
        pthread_cond_signal(&srv->timer_cv);
        pthread_mutex_unlock(&srv->timer_mu);
        pthread_join(srv->timer_thread, NULL);
    }
    registry_free(&srv->tools);
    mcp__metrics_free(srv);
    registry_free(&srv->resources);
    registry_free(&srv->templates);
    registry_free(&srv->prompts);
    if (srv->transcript)
        fclose(srv->transcript);
    pthread_rwlock_destroy(&srv->reg_lock);
    pthread_mutex_destroy(&srv->timer_mu);
    pthread_cond_destroy(&srv->timer_cv);
    pthread_cond_destroy(&srv->timer_fired_cv);
    pthread_mutex_destroy(&srv->conns_mu);
    pthread_mutex_destroy(&srv->transcript_mu);
    mcp_json_doc_free(srv->extensions_doc);
    mcp_free(srv->name);
    mcp_free(srv->version);
    mcp_free(srv->title);
    mcp_free(srv->instructions);
    mcp_free(srv);
}

/* ------------------------------------------------------------------------ */
/* Connections                                                               */

void mcp__server_add_conn(mcp_server *srv, mcp_conn *c)
{
    pthread_mutex_lock(&srv->conns_mu);
    c->prev = NULL;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    pthread_mutex_unlock(&srv->conns_mu);
}

void mcp__server_remove_conn(mcp_server *srv, mcp_conn *c)
{
    pthread_mutex_lock(&srv->conns_mu);
    if (c->prev)
        c->prev->next = c->next;
    else if (srv->conns == c)
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    pthread_mutex_unlock(&srv->conns_mu);
}

void mcp__server_notify_all(mcp_server *srv, const char *method)
{
    pthread_mutex_lock(&srv->conns_mu);
    for (mcp_conn *c = srv->conns; c; c = c->next)
        mcp__conn_notify(c, method);
    pthread_mutex_unlock(&srv->conns_mu);
}

mcp_status mcp_server_list_changed(mcp_server *srv, const char *which)
{
    if (!srv || !which)
        return MCP_ERR_INVALID_ARG;
    if (!strcmp(which, "tools"))
        mcp__server_notify_all(srv, "notifications/tools/list_changed");
    else if (!strcmp(which, "prompts"))
        mcp__server_notify_all(srv, "notifications/prompts/list_changed");
    else if (!strcmp(which, "resources"))
        mcp__server_notify_all(srv, "notifications/resources/list_changed");
    else
        return MCP_ERR_INVALID_ARG;
    return MCP_OK;
}

static void notify_tools_changed(mcp_server *srv)
{
    mcp__server_notify_all(srv, "notifications/tools/list_changed");
}

/* ------------------------------------------------------------------------ */
/* Registry                                                                  */

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: names are checked, short and server-chosen */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Rebuilds a registry's key index (registry write-locked). */
static mcp_status rebuild_index(mcp__registry *r)
{
    size_t cap = 16;
    while (cap <= 2 * r->n)
        cap *= 2;
    mcp__entry **idx = mcp__calloc(cap, sizeof *idx);
    if (!idx)
        return MCP_ERR_NOMEM;
    for (size_t i = 0; i < r->n; i++) {
        mcp__entry *e = r->items[i];
        size_t slot = (size_t)name_hash(e->key, e->key_len) & (cap - 1);
        while (idx[slot])
            slot = (slot + 1) & (cap - 1);
        idx[slot] = e;
    }
    mcp_free(r->index);
    r->index = idx;
    r->index_cap = cap;
    return MCP_OK;
}

mcp__entry *mcp__reg_find_locked(mcp__registry *r, const char *key, size_t len)
{
    if (!r->index)
        return NULL;
    size_t slot = (size_t)name_hash(key, len) & (r->index_cap - 1);
    for (mcp__entry *e; (e = r->index[slot]); slot = (slot + 1) & (r->index_cap - 1))
        if (e->key_len == len && memcmp(e->key, key, len) == 0)
            return e;
    return NULL;
}

mcp_status mcp__reg_add_locked(mcp_server *srv, mcp__registry *r, mcp__entry *e)
{
    if (mcp__reg_find_locked(r, e->key, e->key_len))
        return MCP_ERR_EXISTS;
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 16;
        mcp__entry **n = mcp_realloc(r->items, ncap * sizeof *n);
        if (!n)
            return MCP_ERR_NOMEM;
        r->items = n;
        r->cap = ncap;
    }
    r->items[r->n++] = e;
    if (rebuild_index(r) != MCP_OK) {
        r->n--;
        return MCP_ERR_NOMEM;
    }
    e->seq = srv->next_seq++;
    return MCP_OK;
}

mcp__entry *mcp__reg_remove_locked(mcp__registry *r, const char *key, size_t len)
{
    size_t i;
    for (i = 0; i < r->n; i++)
        if (r->items[i]->key_len == len && memcmp(r->items[i]->key, key, len) == 0)
            break;
    if (i == r->n)
        return NULL;
    mcp__entry *e = r->items[i];
    memmove(&r->items[i], &r->items[i + 1], (r->n - i - 1) * sizeof *r->items);
    r->n--;
    /* Rebuilding needs memory; if that fails, delete from the index in place
     * and re-insert the probe run that followed the removed slot. */
    if (rebuild_index(r) != MCP_OK) {
        size_t cap = r->index_cap, slot = (size_t)name_hash(e->key, e->key_len) & (cap - 1);
        while (r->index[slot] != e)
            slot = (slot + 1) & (cap - 1);
        r->index[slot] = NULL;
        for (size_t j = (slot + 1) & (cap - 1); r->index[j]; j = (j + 1) & (cap - 1)) {
            mcp__entry *m = r->index[j];
            r->index[j] = NULL;
            size_t k = (size_t)name_hash(m->key, m->key_len) & (cap - 1);
            while (r->index[k])
                k = (k + 1) & (cap - 1);
            r->index[k] = m;
        }
    }
    return e;
}

mcp__entry *mcp__server_find(mcp_server *srv, mcp__registry *r, const char *key, size_t len)
{
    pthread_rwlock_rdlock(&srv->reg_lock);
    mcp__entry *e = mcp__reg_find_locked(r, key, len);
    if (e && e->hidden)
        e = NULL;
    if (e)
        atomic_fetch_add(&e->refs, 1);
    pthread_rwlock_unlock(&srv->reg_lock);
    return e;
}

mcp__tool *mcp__server_find_tool(mcp_server *srv, const char *name, size_t len)
{
    return (mcp__tool *)mcp__server_find(srv, &srv->tools, name, len);
}

/* Tool names: 1-128 characters of [A-Za-z0-9_.-] (the spec's guidance, SEP-986). */
static int valid_tool_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

mcp_status mcp__parse_opt_json(const char *text, mcp_json_type want, const char *what, mcp_json_doc **out,
                                 mcp_error *err)
{
    *out = NULL;
    if (!text)
        return MCP_OK;
    mcp_error perr;
    mcp_status st = mcp_json_parse(out, text, strlen(text), NULL, &perr);
    if (st == MCP_ERR_NOMEM)
        return mcp__fail(err, st, 0, 0, "out of memory");
    if (st)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, perr.offset, "%s is not valid JSON: %s", what, perr.message);
    if (mcp_json_typeof(mcp_json_doc_root(*out)) != want) {
        mcp_json_doc_free(*out);
        *out = NULL;
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "%s must be a JSON %s", what, mcp_json_type_name(want));
    }
    return MCP_OK;
}

static mcp_status compile_schema(const mcp_json_doc *doc, const char *what, mcp_schema **out, mcp_error *err)
{
    mcp_error serr;
    mcp_status st = mcp_schema_new(out, mcp_json_doc_root(doc), NULL, &serr);
    if (st == MCP_ERR_NOMEM)
        return mcp__fail(err, st, 0, 0, "out of memory");
    if (st)
        return mcp__fail(err, st, 0, 0, "%s: %s", what, serr.message);
    return MCP_OK;
}

mcp_status mcp__def_in(mcp_status st, int present, const char *what, void *user_data,
                       void (*user_data_free)(void *), mcp_error *err)
{
    if (st == MCP_OK && !present)
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "server and %s definition are required", what);
    else if (st == MCP_ERR_NOMEM)
        st = mcp__fail(err, st, 0, 0, "out of memory");
    if (st != MCP_OK && user_data_free)
        user_data_free(user_data);
    return st;
}

mcp_status mcp_server_add_tool_sized(mcp_server *srv, const mcp_tool_def *def, size_t def_size, mcp_error *err)
{
    mcp_tool_def def_copy;
    mcp_status st = MCP__OPTS_IN(mcp_tool_def, &def_copy, def, def_size, err);
    if ((st = mcp__def_in(st, srv && def, "tool", def_copy.user_data, def_copy.user_data_free, err)))
        return st;
    def = &def_copy;
    mcp__tool *t = mcp__calloc(1, sizeof *t);
    if (!t)
        return mcp__def_in(MCP_ERR_NOMEM, 1, "tool", def->user_data, def->user_data_free, err);
    /* From here on tool_destroy() runs the destructor on any failure. */
    atomic_init(&t->e.refs, 1);
    t->e.destroy = tool_destroy;
    t->e.hidden = (def->flags & MCP_TOOL_DISABLED) != 0;
    t->e.unlisted = (def->flags & MCP_TOOL_UNLISTED) != 0;
    t->handler = def->handler;
    t->user_data = def->user_data;
    t->user_data_free = def->user_data_free;
    t->flags = def->flags;
    t->timeout_ms = def->timeout_ms;
    t->task_support = (int)def->task_support;
    t->hints[0] = def->read_only_hint;
    t->hints[1] = def->destructive_hint;
    t->hints[2] = def->idempotent_hint;
    t->hints[3] = def->open_world_hint;
    if (!def->name || !valid_tool_name(def->name)) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                       "tool name \"%.140s\" must be 1-128 characters of A-Z a-z 0-9 _ - .",
                       def->name ? def->name : "(null)");
        goto fail;
    }
    if (!def->handler) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "tool %s has no handler", def->name);
        goto fail;
    }
    if (t->task_support < MCP_TASK_FORBIDDEN || t->task_support > MCP_TASK_REQUIRED) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "tool %s: task_support must be MCP_TASK_*", def->name);
        goto fail;
    }
    for (int i = 0; i < 4; i++) {
        if (t->hints[i] < MCP_HINT_UNSET || t->hints[i] > MCP_HINT_TRUE) {
            st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "tool %s: a hint must be MCP_HINT_*", def->name);
            goto fail;
        }
    }
    t->e.key_len = strlen(def->name);
    t->e.key = mcp__strndup(def->name, t->e.key_len);
    t->title = dup_or_null(def->title);
    t->description = dup_or_null(def->description);
    if (!t->e.key || (def->title && !t->title) || (def->description && !t->description)) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        goto fail;
    }
    if ((st = mcp__scopes_normalize(def->scopes, &t->e.scopes))) {
        st = mcp__fail(err, st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG, 0, 0,
                       "tool %s: scopes must be space-separated OAuth scope tokens (RFC 6749)", def->name);
        goto fail;
    }
    if ((st = mcp__parse_opt_json(def->input_schema ? def->input_schema : "{\"type\":\"object\"}", MCP_JSON_OBJECT,
                             "inputSchema", &t->input_doc, err)) ||
        (st = mcp__parse_opt_json(def->output_schema, MCP_JSON_OBJECT, "outputSchema", &t->output_doc, err)) ||
        (st = mcp__parse_opt_json(def->icons, MCP_JSON_ARRAY, "icons", &t->icons_doc, err)) ||
        (st = mcp__parse_opt_json(def->meta, MCP_JSON_OBJECT, "_meta", &t->meta_doc, err)) ||
        (st = mcp__parse_opt_json(def->extension_meta, MCP_JSON_OBJECT, "extension_meta", &t->ext_meta_doc, err)))
        goto fail;
    if (def->extension && !(t->extension = dup_or_null(def->extension))) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        goto fail;
    }
    if (!mcp_json_str_eq(mcp_json_get(mcp_json_doc_root(t->input_doc), "type"), "object")) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "tool %s: inputSchema must have \"type\": \"object\"",
                       def->name);
        goto fail;
    }
    if ((st = compile_schema(t->input_doc, "inputSchema", &t->input_schema, err)))
        goto fail;
    if (t->output_doc && (st = compile_schema(t->output_doc, "outputSchema", &t->output_schema, err)))
        goto fail;

    void *series = mcp__metrics_tool_reserve(srv); /* its metrics, allocated before it is callable */
    if (!series) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory (%s)", t->e.key);
        goto fail;
    }
    pthread_rwlock_wrlock(&srv->reg_lock);
    st = mcp__reg_add_locked(srv, &srv->tools, &t->e);
    if (!st && t->task_support != MCP_TASK_FORBIDDEN)
        srv->has_tasks = 1; /* from now on the tasks extension is declared */
    mcp__metrics_tool_commit(srv, series, st ? NULL : t->e.key); /* before any call can find it */
    pthread_rwlock_unlock(&srv->reg_lock);
    if (st) {
        mcp__fail(err, st, 0, 0, st == MCP_ERR_EXISTS ? "a tool named %s is already registered" : "out of memory (%s)",
                  t->e.key);
        goto fail;
    }
    if (!t->e.hidden && !t->e.unlisted)
        notify_tools_changed(srv);
    return MCP_OK;
fail:
    tool_destroy(&t->e);
    return st;
}

int mcp__entry_allows(const mcp__entry *e, const mcp_principal *p)
{
    return !p || !e->scopes || mcp_principal_has_scopes(p, e->scopes);
}

/* Appends the scopes of the visible entry `key` of registry `r`, if any. */
static mcp_status entry_scopes(mcp_server *srv, mcp__registry *r, const char *key, size_t len, mcp_buf *out)
{
    mcp__entry *e = key ? mcp__server_find(srv, r, key, len) : NULL;
    mcp_status st = mcp__entry_append_scopes(e, out);
    if (e)
        mcp__entry_release(e);
    return st;
}

mcp_status mcp__server_request_scopes(mcp_server *srv, const mcp_rpc_msg *m, mcp_buf *out)
{
    const mcp_json *p = m->params;
    size_t n;
    const char *s;
    if (m->kind != MCP_RPC_REQUEST)
        return MCP_OK;
    if (mcp_rpc_method_is(m, "tools/call")) {
        s = mcp_json_str(mcp_json_get(p, "name"), &n);
        return entry_scopes(srv, &srv->tools, s, n, out);
    }
    if (mcp_rpc_method_is(m, "prompts/get")) {
        s = mcp_json_str(mcp_json_get(p, "name"), &n);
        return entry_scopes(srv, &srv->prompts, s, n, out);
    }
    if (mcp_rpc_method_is(m, "resources/read") || mcp_rpc_method_is(m, "resources/subscribe")) {
        s = mcp_json_str(mcp_json_get(p, "uri"), &n);
        return s ? mcp__resource_scopes(srv, s, n, out) : MCP_OK;
    }
    if (mcp_rpc_method_is(m, "completion/complete")) {
        const mcp_json *ref = mcp_json_get(p, "ref");
        if (mcp_json_str_eq(mcp_json_get(ref, "type"), "ref/prompt")) {
            s = mcp_json_str(mcp_json_get(ref, "name"), &n);
            return entry_scopes(srv, &srv->prompts, s, n, out);
        }
        if (mcp_json_str_eq(mcp_json_get(ref, "type"), "ref/resource")) {
            s = mcp_json_str(mcp_json_get(ref, "uri"), &n);
            return s ? mcp__resource_key_scopes(srv, s, n, out) : MCP_OK;
        }
    }
    return MCP_OK;
}

mcp_status mcp_server_remove_tool(mcp_server *srv, const char *name)
{
    if (!srv || !name)
        return MCP_ERR_INVALID_ARG;
    pthread_rwlock_wrlock(&srv->reg_lock);
    mcp__entry *e = mcp__reg_remove_locked(&srv->tools, name, strlen(name));
    int was_visible = e && !e->hidden;
    pthread_rwlock_unlock(&srv->reg_lock);
    if (!e)
        return MCP_ERR_NOT_FOUND;
    mcp__entry_release(e);
    if (was_visible)
        notify_tools_changed(srv);
    return MCP_OK;
}

mcp_status mcp_server_enable_tool(mcp_server *srv, const char *name, int enabled)
{
    if (!srv || !name)
        return MCP_ERR_INVALID_ARG;
    pthread_rwlock_wrlock(&srv->reg_lock);
    mcp__entry *e = mcp__reg_find_locked(&srv->tools, name, strlen(name));
    int changed = e && e->hidden == enabled;
    if (e)
        e->hidden = !enabled;
    pthread_rwlock_unlock(&srv->reg_lock);
    if (!e)
        return MCP_ERR_NOT_FOUND;
    if (changed)
        notify_tools_changed(srv);
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* tools/list pages and their cursors                                        */

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

/* SipHash-2-4 of one 64-bit word: authenticates a cursor's position. */
static uint64_t siphash_u64(const uint64_t key[2], uint64_t m)
{
    uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
    uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);                                   \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                                     \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                                     \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);                                   \
    } while (0)
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
    uint64_t b = (uint64_t)8 << 56;
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
#undef SIPROUND
    return v0 ^ v1 ^ v2 ^ v3;
}

/* A cursor is 16 bytes (position, MAC) in unpadded base64url: 22 characters. */
#define CURSOR_LEN MCP__BASE64URL_LEN(16)

static void make_cursor(const mcp_server *srv, uint64_t seq, char out[CURSOR_LEN + 1])
{
    unsigned char raw[16];
    uint64_t mac = siphash_u64(srv->cursor_key, seq);
    for (int i = 0; i < 8; i++) {
        raw[i] = (unsigned char)(seq >> (8 * i));
        raw[8 + i] = (unsigned char)(mac >> (8 * i));
    }
    out[mcp__base64url_encode(out, raw, sizeof raw)] = '\0';
}

static int read_cursor(const mcp_server *srv, const char *s, size_t len, uint64_t *seq)
{
    /* The last character's 4 spare bits are not checked (the MAC covers the bytes). */
    unsigned char raw[16];
    size_t n;
    if (len != CURSOR_LEN || !mcp__base64url_decode(s, len, raw, sizeof raw, &n, 0))
        return 0;
    uint64_t pos = 0, mac = 0;
    for (int i = 0; i < 8; i++) {
        pos |= (uint64_t)raw[i] << (8 * i);
        mac |= (uint64_t)raw[8 + i] << (8 * i);
    }
    if (siphash_u64(srv->cursor_key, pos) != mac)
        return 0;
    *seq = pos;
    return 1;
}

static void write_hint(mcp_jw *w, const char *key, int hint)
{
    if (hint == MCP_HINT_UNSET)
        return;
    mcp_jw_key(w, key);
    mcp_jw_bool(w, hint == MCP_HINT_TRUE);
}

/* One Tool object, with the fields the client's protocol version knows. */
static void write_tool(mcp_jw *w, const mcp__entry *e, const char *version, const mcp_json *caps)
{
    const mcp__tool *t = (const mcp__tool *)e;
    int v0326 = mcp__version_at_least(version, MCP_PROTOCOL_2025_03_26);
    int v0618 = mcp__version_at_least(version, MCP_PROTOCOL_2025_06_18);
    int v1125 = mcp__version_at_least(version, MCP_PROTOCOL_2025_11_25);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_stringn(w, t->e.key, t->e.key_len);
    if (t->title && v0618) {
        mcp_jw_key(w, "title");
        mcp_jw_string(w, t->title);
    }
    if (t->description) {
        mcp_jw_key(w, "description");
        mcp_jw_string(w, t->description);
    }
    mcp_jw_key(w, "inputSchema");
    mcp_jw_value(w, mcp_json_doc_root(t->input_doc));
    if (t->output_doc && v0618) {
        mcp_jw_key(w, "outputSchema");
        mcp_jw_value(w, mcp_json_doc_root(t->output_doc));
    }
    if (v0326 && (t->hints[0] || t->hints[1] || t->hints[2] || t->hints[3])) {
        mcp_jw_key(w, "annotations");
        mcp_jw_object_begin(w);
        write_hint(w, "readOnlyHint", t->hints[0]);
        write_hint(w, "destructiveHint", t->hints[1]);
        write_hint(w, "idempotentHint", t->hints[2]);
        write_hint(w, "openWorldHint", t->hints[3]);
        mcp_jw_object_end(w);
    }
    if (t->icons_doc && v1125) {
        mcp_jw_key(w, "icons");
        mcp_jw_value(w, mcp_json_doc_root(t->icons_doc));
    }
    if (t->task_support != MCP_TASK_FORBIDDEN && version && !strcmp(version, MCP_PROTOCOL_2025_11_25)) {
        /* 2025-11-25 (tasks in the core, experimental): execution.taskSupport */
        mcp_jw_key(w, "execution");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "taskSupport");
        mcp_jw_string(w, t->task_support == MCP_TASK_REQUIRED ? "required" : "optional");
        mcp_jw_object_end(w);
    }
    if (v0618)
        mcp__write_meta(w, mcp_json_doc_root(t->meta_doc),
                        mcp__caps_declare(caps, t->extension) ? mcp_json_doc_root(t->ext_meta_doc) : NULL);
    mcp_jw_object_end(w);
}

int mcp__caps_declare(const mcp_json *caps, const char *id)
{
    if (!caps || !id)
        return 0;
    const mcp_json *exts = mcp_json_get(caps, "extensions");
    return mcp_json_typeof(mcp_json_get(exts, id)) == MCP_JSON_OBJECT;
}

void mcp__write_meta(mcp_jw *w, const mcp_json *meta, const mcp_json *ext)
{
    if (!meta && !ext)
        return;
    mcp_jw_key(w, "_meta");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(meta); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(meta, i, &kl);
        int shadowed = 0;
        for (size_t j = 0; j < mcp_json_len(ext) && !shadowed; j++) {
            size_t el;
            const char *ek = mcp_json_key_at(ext, j, &el);
            shadowed = el == kl && !memcmp(ek, k, kl);
        }
        if (!shadowed) {
            mcp_jw_keyn(w, k, kl);
            mcp_jw_value(w, mcp_json_value_at(meta, i));
        }
    }
    for (size_t j = 0; j < mcp_json_len(ext); j++) {
        size_t el;
        const char *ek = mcp_json_key_at(ext, j, &el);
        mcp_jw_keyn(w, ek, el);
        mcp_jw_value(w, mcp_json_value_at(ext, j));
    }
    mcp_jw_object_end(w);
}

const mcp_json *mcp_call_client_extension(const mcp_call *call, const char *id)
{
    if (!call || !id || !mcp__caps_declare(call->ask.caps, id))
        return NULL;
    return mcp_json_get(mcp_json_get(call->ask.caps, "extensions"), id);
}

int mcp_client_extension_has_mime_type(const mcp_json *settings, const char *mime_type)
{
    const mcp_json *types = mcp_json_get(settings, "mimeTypes");
    for (size_t i = 0; mime_type && i < mcp_json_len(types); i++)
        if (mcp_json_str_eq(mcp_json_at(types, i), mime_type))
            return 1;
    return 0;
}

mcp_status mcp__server_write_page(mcp_server *srv, mcp__registry *r, mcp_jw *w, const char *array_key,
                                  const char *cursor, size_t cursor_len, const char *version,
                                  const mcp_json *caps, mcp__write_item_fn write_item)
{
    uint64_t from = 0;
    if (cursor && !read_cursor(srv, cursor, cursor_len, &from))
        return MCP_ERR_INVALID_ARG;
    pthread_rwlock_rdlock(&srv->reg_lock);
    mcp_jw_key(w, array_key);
    mcp_jw_array_begin(w);
    unsigned listed = 0;
    uint64_t next = 0;
    for (size_t i = 0; i < r->n; i++) {
        const mcp__entry *e = r->items[i];
        if (e->seq < from || e->hidden || e->unlisted)
            continue;
        if (listed == srv->opts.page_size) {
            next = e->seq;
            break;
        }
        write_item(w, e, version, caps);
        listed++;
    }
    mcp_jw_array_end(w);
    pthread_rwlock_unlock(&srv->reg_lock);
    if (next) {
        char c[CURSOR_LEN + 1];
        make_cursor(srv, next, c);
        mcp_jw_key(w, "nextCursor");
        mcp_jw_string(w, c);
    }
    return mcp_jw_status(w);
}

mcp_status mcp__server_write_tools(mcp_server *srv, mcp_jw *w, const char *cursor, size_t cursor_len,
                                   const char *version, const mcp_json *caps)
{
    return mcp__server_write_page(srv, &srv->tools, w, "tools", cursor, cursor_len, version, caps, write_tool);
}

const char *mcp_log_level_name(mcp_log_level level)
{
    static const char *names[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
    if ((int)level < 0 || (int)level > MCP_LOG_EMERGENCY)
        return "debug";
    return names[level];
}
