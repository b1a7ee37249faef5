/*
 * Metrics: counters the server keeps for operators, written in the
 * Prometheus text exposition format 0.0.4 (docs/server.md, "Metrics").
 *
 * Updates are relaxed atomic additions, so no lock is taken on the path of
 * a call. Per-tool counters live in a fixed open-addressing table of
 * registered tool names: slots are filled under `mu` at registration and
 * never emptied, so the call path reads them without a lock. A name the
 * peer made up (an unknown tool) never gets a slot of its own: the label
 * values are bounded by what the server registered.
 */
#include "util/util.h"
#include "json/json_internal.h"
#include "server/server_internal.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_SLOTS 1024u /* power of two, more than twice TOOL_MAX */
#define TOOL_MAX 512u    /* tools with series of their own; later ones count as "(other)" */
#define NBUCKETS 19
#define OUTCOMES ((int)MCP_CALL_FAILED + 1)
#define MAX_COLLECTORS 16
#define MAX_FAMILIES 64  /* families one collector scrape may describe */
#define NAME_MAX_LEN 200

/* Upper bounds of the latency buckets, in µs and as the `le` label. */
static const uint64_t bucket_us[NBUCKETS] = {100,    250,    500,     1000,    2500,    5000,     10000,
                                             25000,  50000,  100000,  250000,  500000,  1000000,  2500000,
                                             5000000, 10000000, 30000000, 60000000, 300000000};
static const char *const bucket_le[NBUCKETS] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
                                                "0.025",  "0.05",    "0.1",    "0.25",  "0.5",    "1",     "2.5",
                                                "5",      "10",      "30",     "60",    "300"};

static const char *const outcome_name[OUTCOMES] = {
    "ok", "tool_error", "invalid_arguments", "unknown_tool", "malformed", "forbidden",
    "busy", "input_required", "timed_out", "cancelled", "failed"};

/* HTTP status and label of each refusal reason (mcp__refusal). */
static const struct {
    const char *code;
    const char *reason;
} refusal_label[MCP__REFUSE_N] = {
    {"429", "rate_per_address"},       {"429", "rate_per_subject"},       {"429", "sessions_per_address"},
    {"429", "sessions_per_principal"}, {"429", "requests_per_address"},   {"429", "requests_per_principal"},
    {"429", "streams_per_address"},    {"429", "streams_per_principal"},  {"503", "sessions"},
    {"503", "streams"},                {"503", "buffers"},                {"503", "shutting_down"},
};

/* mcp_auth_error values after MCP_AUTH_OK. */
static const char *const auth_reason[] = {"no_token", "invalid_request", "invalid_token", "insufficient_scope",
                                          "unavailable"};
#define AUTH_REASONS (sizeof auth_reason / sizeof auth_reason[0])

typedef struct tool_stats {
    char name[130];                         /* the tool's name, or "(unknown)" / "(other)" */
    atomic_ullong outcomes[OUTCOMES];       /* calls by outcome */
    atomic_ullong buckets[NBUCKETS + 1];    /* latencies per bucket (not cumulative); the last is over 300 s */
    atomic_ullong sum_us;                   /* sum of the latencies */
} tool_stats;

typedef struct collector {
    mcp_metrics_fn fn;          /* writes the application's families */
    void *user_data;            /* passed to fn */
    void (*user_data_free)(void *); /* called when the server is freed, or NULL */
} collector;

struct mcp__metrics {
    atomic_int on;                          /* per-tool counting enabled */
    atomic_long gauges[MCP__GAUGE_N];       /* calls in flight, sessions, streams */
    atomic_ullong refused[MCP__REFUSE_N];   /* HTTP quota refusals by reason */
    atomic_ullong auth_failed[AUTH_REASONS]; /* HTTP authorization failures by mcp_auth_error - 1 */
    pthread_mutex_t mu;                     /* guards inserts into `slots` and the collectors */
    _Atomic(tool_stats *) slots[TOOL_SLOTS]; /* registered names; filled, never emptied */
    unsigned ntools;                        /* slots in use (mu) */
    tool_stats unknown;                     /* calls naming no registered tool */
    tool_stats other;                       /* tools past TOOL_MAX */
    collector coll[MAX_COLLECTORS];         /* mcp_server_add_metrics (mu) */
    unsigned ncoll;                         /* how many (mu) */
};

struct mcp_metrics_out {
    mcp_buf *b;                      /* the scrape being written */
    char family[NAME_MAX_LEN + 1];   /* the family samples go to; "" before the first */
    mcp_status st;                   /* the first error of a collector's writes */
    unsigned nfam;                   /* families described by collectors this scrape */
    char names[MAX_FAMILIES][NAME_MAX_LEN + 1]; /* their names, to refuse a duplicate */
};

mcp_status mcp__metrics_new(mcp_server *srv)
{
    mcp__metrics *m = mcp__calloc(1, sizeof *m);
    if (!m)
        return MCP_ERR_NOMEM;
    pthread_mutex_init(&m->mu, NULL);
    snprintf(m->unknown.name, sizeof m->unknown.name, "(unknown)");
    snprintf(m->other.name, sizeof m->other.name, "(other)");
    srv->metrics = m;
    return MCP_OK;
}

void mcp__metrics_free(mcp_server *srv)
{
    mcp__metrics *m = srv->metrics;
    if (!m)
        return;
    for (unsigned i = 0; i < TOOL_SLOTS; i++)
        mcp_free(atomic_load(&m->slots[i]));
    for (unsigned i = 0; i < m->ncoll; i++)
        if (m->coll[i].user_data_free)
            m->coll[i].user_data_free(m->coll[i].user_data);
    pthread_mutex_destroy(&m->mu);
    mcp_free(m);
    srv->metrics = NULL;
}

static unsigned name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h & (TOOL_SLOTS - 1);
}

/* The slot holding `name`, or the empty slot where it would go. */
static unsigned find_slot(mcp__metrics *m, const char *name, tool_stats **found)
{
    unsigned i = name_hash(name);
    for (;;) {
        tool_stats *t = atomic_load_explicit(&m->slots[i], memory_order_acquire);
        if (!t || strcmp(t->name, name) == 0) {
            *found = t;
            return i;
        }
        i = (i + 1) & (TOOL_SLOTS - 1);
    }
}

void *mcp__metrics_tool_reserve(mcp_server *srv)
{
    return srv->metrics ? mcp__calloc(1, sizeof(tool_stats)) : NULL;
}

void mcp__metrics_tool_commit(mcp_server *srv, void *reserved, const char *name)
{
    mcp__metrics *m = srv->metrics;
    tool_stats *t = reserved;
    if (m && t && name && strlen(name) < sizeof t->name) {
        pthread_mutex_lock(&m->mu);
        tool_stats *old;
        unsigned i = find_slot(m, name, &old);
        if (!old && m->ntools < TOOL_MAX) {
            snprintf(t->name, sizeof t->name, "%s", name);
            atomic_store_explicit(&m->slots[i], t, memory_order_release);
            m->ntools++;
            t = NULL;
        }
        pthread_mutex_unlock(&m->mu);
    }
    mcp_free(t); /* not needed: the name has its series, or the table is full */
}

int mcp__metrics_on(const mcp_server *srv)
{
    return srv->metrics && atomic_load_explicit(&srv->metrics->on, memory_order_relaxed);
}

void mcp__metrics_call(mcp_server *srv, const char *tool, int outcome, uint64_t duration_us)
{
    mcp__metrics *m = srv->metrics;
    if (!m || outcome < 0 || outcome >= OUTCOMES)
        return;
    tool_stats *t = NULL;
    if (tool && tool[0])
        find_slot(m, tool, &t);
    if (!t)
        t = outcome == MCP_CALL_UNKNOWN_TOOL || outcome == MCP_CALL_MALFORMED || m->ntools < TOOL_MAX ? &m->unknown
                                                                                                        : &m->other;
    unsigned b = 0;
    while (b < NBUCKETS && duration_us > bucket_us[b])
        b++;
    atomic_fetch_add_explicit(&t->outcomes[outcome], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->sum_us, duration_us, memory_order_relaxed);
}

void mcp__metrics_gauge(mcp_server *srv, mcp__gauge g, long delta)
{
    if (srv && srv->metrics)
        atomic_fetch_add_explicit(&srv->metrics->gauges[g], delta, memory_order_relaxed);
}

void mcp__metrics_refused(mcp_server *srv, mcp__refusal why)
{
    if (srv && srv->metrics && why < MCP__REFUSE_N)
        atomic_fetch_add_explicit(&srv->metrics->refused[why], 1, memory_order_relaxed);
}

void mcp__metrics_auth_failed(mcp_server *srv, int why)
{
    if (srv && srv->metrics && why > 0 && (size_t)why <= AUTH_REASONS)
        atomic_fetch_add_explicit(&srv->metrics->auth_failed[why - 1], 1, memory_order_relaxed);
}

/* ------------------------------------------------------------------------ */
/* Writing the exposition                                                    */

static mcp_status put(mcp_buf *b, const char *s)
{
    return mcp_buf_append(b, s, strlen(s));
}

/* Appends `v` escaped for a label value (\\, \", \n) or, help != 0, for HELP text (\\, \n). */
static mcp_status put_escaped(mcp_buf *b, const char *v, int help)
{
    mcp_status st = MCP_OK;
    for (const char *p = v; *p && !st; p++) {
        if (*p == '\\')
            st = put(b, "\\\\");
        else if (*p == '\n')
            st = put(b, "\\n");
        else if (*p == '"' && !help)
            st = put(b, "\\\"");
        else
            st = mcp_buf_append(b, p, 1);
    }
    return st;
}

/* A sample value: integers as such, others in the C locale, shortest round trip. */
static mcp_status put_value(mcp_buf *b, double v)
{
    if (isnan(v))
        return put(b, "NaN");
    if (isinf(v))
        return put(b, v > 0 ? "+Inf" : "-Inf");
    char s[40];
    locale_t c = mcp__c_locale();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    if (c)
        uselocale(old);
    return put(b, s);
}

static mcp_status put_family(mcp_buf *b, const char *name, const char *type, const char *help)
{
    mcp_status st = put(b, "# HELP ");
    if (!st)
        st = put(b, name);
    if (!st)
        st = put(b, " ");
    if (!st)
        st = put_escaped(b, help, 1);
    if (!st)
        st = put(b, "\n# TYPE ");
    if (!st)
        st = put(b, name);
    if (!st)
        st = put(b, " ");
    if (!st)
        st = put(b, type);
    if (!st)
        st = put(b, "\n");
    return st;
}

/* One sample line: name{k="v",...} value; labels alternate names and values, NULL-terminated. */
static mcp_status put_sample(mcp_buf *b, const char *name, const char *const *labels, const char *value)
{
    mcp_status st = put(b, name);
    for (int i = 0; !st && labels && labels[i]; i += 2) {
        st = put(b, i ? "," : "{");
        if (!st)
            st = put(b, labels[i]);
        if (!st)
            st = put(b, "=\"");
        if (!st)
            st = put_escaped(b, labels[i + 1], 0);
        if (!st)
            st = put(b, "\"");
    }
    if (!st && labels && labels[0])
        st = put(b, "}");
    if (!st)
        st = put(b, " ");
    if (!st)
        st = put(b, value);
    if (!st)
        st = put(b, "\n");
    return st;
}

static mcp_status put_sample_u64(mcp_buf *b, const char *name, const char *const *labels, unsigned long long v)
{
    char s[32];
    snprintf(s, sizeof s, "%llu", v);
    return put_sample(b, name, labels, s);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(tool_stats *const *)a)->name, (*(tool_stats *const *)b)->name);
}

/* Every tool_stats: the registered ones by name, then "(unknown)" and "(other)". */
static unsigned all_tools(mcp__metrics *m, tool_stats **out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < TOOL_SLOTS; i++) {
        tool_stats *t = atomic_load_explicit(&m->slots[i], memory_order_acquire);
        if (t)
            out[n++] = t;
    }
    qsort(out, n, sizeof *out, by_name);
    out[n++] = &m->unknown;
    out[n++] = &m->other;
    return n;
}

static mcp_status write_calls(mcp_buf *b, tool_stats **tools, unsigned n)
{
    mcp_status st = put_family(b, "mcp_tool_calls_total", "counter",
                               "tools/call requests by tool and how they ended (the on_call_end outcomes).");
    for (unsigned i = 0; i < n && !st; i++) {
        int registered = tools[i]->name[0] != '(';
        for (int o = 0; o < OUTCOMES && !st; o++) {
            unsigned long long v = atomic_load_explicit(&tools[i]->outcomes[o], memory_order_relaxed);
            if (!v && !(registered && o == MCP_CALL_OK))
                continue;
            const char *labels[] = {"tool", tools[i]->name, "outcome", outcome_name[o], NULL};
            st = put_sample_u64(b, "mcp_tool_calls_total", labels, v);
        }
    }
    return st;
}

/* A histogram from one snapshot of the bucket counts, so that the buckets
 * rise and +Inf equals _count even while calls are counted. */
static mcp_status write_histogram(mcp_buf *b, tool_stats *t)
{
    unsigned long long cnt[NBUCKETS + 1], total = 0;
    for (int i = 0; i <= NBUCKETS; i++)
        total += cnt[i] = atomic_load_explicit(&t->buckets[i], memory_order_relaxed);
    if (!total)
        return MCP_OK;
    unsigned long long sum_us = atomic_load_explicit(&t->sum_us, memory_order_relaxed), cum = 0;
    mcp_status st = MCP_OK;
    for (int i = 0; i <= NBUCKETS && !st; i++) {
        cum += cnt[i];
        const char *labels[] = {"tool", t->name, "le", i < NBUCKETS ? bucket_le[i] : "+Inf", NULL};
        st = put_sample_u64(b, "mcp_tool_call_duration_seconds_bucket", labels, cum);
    }
    const char *labels[] = {"tool", t->name, NULL};
    char s[48];
    snprintf(s, sizeof s, "%llu.%06llu", sum_us / 1000000u, sum_us % 1000000u);
    if (!st)
        st = put_sample(b, "mcp_tool_call_duration_seconds_sum", labels, s);
    if (!st)
        st = put_sample_u64(b, "mcp_tool_call_duration_seconds_count", labels, total);
    return st;
}

static mcp_status write_gauge(mcp_buf *b, const char *name, const char *help, long long v)
{
    mcp_status st = put_family(b, name, "gauge", help);
    char s[32];
    snprintf(s, sizeof s, "%lld", v < 0 ? 0 : v);
    return st ? st : put_sample(b, name, NULL, s);
}

static mcp_status write_refusals(mcp_buf *b, mcp__metrics *m)
{
    mcp_status st = put_family(b, "mcp_http_refusals_total", "counter",
                               "HTTP requests refused by a quota or limit, by status and reason.");
    for (int i = 0; i < MCP__REFUSE_N && !st; i++) {
        const char *labels[] = {"code", refusal_label[i].code, "reason", refusal_label[i].reason, NULL};
        st = put_sample_u64(b, "mcp_http_refusals_total", labels, atomic_load(&m->refused[i]));
    }
    if (!st)
        st = put_family(b, "mcp_auth_failures_total", "counter",
                        "HTTP requests refused by authorization, by reason.");
    for (size_t i = 0; i < AUTH_REASONS && !st; i++) {
        const char *labels[] = {"reason", auth_reason[i], NULL};
        st = put_sample_u64(b, "mcp_auth_failures_total", labels, atomic_load(&m->auth_failed[i]));
    }
    return st;
}

static mcp_status write_builtin(mcp_server *srv, mcp_buf *b)
{
    mcp__metrics *m = srv->metrics;
    tool_stats *tools[TOOL_MAX + 2];
    unsigned n = all_tools(m, tools);
    mcp_status st = write_calls(b, tools, n);
    if (!st)
        st = put_family(b, "mcp_tool_call_duration_seconds", "histogram",
                        "Time from the start of a tools/call's processing to its answer, by tool.");
    for (unsigned i = 0; i < n && !st; i++)
        st = write_histogram(b, tools[i]);
    if (!st)
        st = write_gauge(b, "mcp_calls_in_flight", "tools/call requests being handled (queued or running).",
                         atomic_load(&m->gauges[MCP__GAUGE_IN_FLIGHT]));
    if (!st)
        st = write_gauge(b, "mcp_worker_queue_depth", "Jobs (tool calls, resource reads, prompts) waiting for a worker thread.",
                         srv->pool ? (long long)mcp__pool_queued(srv->pool) : 0);
    if (!st)
        st = write_gauge(b, "mcp_http_sessions", "Open legacy (Mcp-Session-Id) HTTP sessions.",
                         atomic_load(&m->gauges[MCP__GAUGE_SESSIONS]));
    if (!st)
        st = write_gauge(b, "mcp_http_streams", "Open SSE response streams.",
                         atomic_load(&m->gauges[MCP__GAUGE_STREAMS]));
    return st ? st : write_refusals(b, m);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */

mcp_status mcp_server_metrics_enable(mcp_server *srv)
{
    if (!srv || !srv->metrics)
        return MCP_ERR_INVALID_ARG;
    atomic_store(&srv->metrics->on, 1);
    return MCP_OK;
}

mcp_status mcp_server_add_metrics(mcp_server *srv, mcp_metrics_fn fn, void *user_data,
                                  void (*user_data_free)(void *user_data))
{
    if (!srv || !srv->metrics || !fn) {
        if (user_data_free)
            user_data_free(user_data);
        return MCP_ERR_INVALID_ARG;
    }
    mcp__metrics *m = srv->metrics;
    pthread_mutex_lock(&m->mu);
    int full = m->ncoll >= MAX_COLLECTORS;
    if (!full)
        m->coll[m->ncoll++] = (collector){fn, user_data, user_data_free};
    pthread_mutex_unlock(&m->mu);
    if (full && user_data_free)
        user_data_free(user_data);
    return full ? MCP_ERR_LIMIT : MCP_OK;
}

mcp_status mcp_server_metrics_text(mcp_server *srv, mcp_buf *out)
{
    if (!srv || !srv->metrics || !out)
        return MCP_ERR_INVALID_ARG;
    size_t start = out->len;
    mcp_status st = write_builtin(srv, out);
    mcp__metrics *m = srv->metrics;
    pthread_mutex_lock(&m->mu);
    unsigned ncoll = m->ncoll;
    collector coll[MAX_COLLECTORS];
    memcpy(coll, m->coll, sizeof coll);
    pthread_mutex_unlock(&m->mu);
    /* Collectors only ever get added, and stay until the server is freed. */
    mcp_metrics_out *w = st ? NULL : mcp__calloc(1, sizeof *w);
    if (!st && !w)
        st = MCP_ERR_NOMEM;
    for (unsigned i = 0; i < ncoll && !st; i++) {
        w->b = out;
        w->family[0] = '\0';
        size_t before = out->len;
        unsigned nfam = w->nfam;
        coll[i].fn(w, coll[i].user_data);
        if (w->st == MCP_ERR_NOMEM) {
            st = MCP_ERR_NOMEM;
        } else if (w->st) { /* a collector's mistake costs its own lines only */
            out->len = before;
            w->nfam = nfam;
        }
        w->st = MCP_OK;
    }
    mcp_free(w);
    if (st)
        out->len = start;
    if (out->data)
        out->data[out->len] = '\0';
    return st;
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: no ':' and not "__..." */
static int valid_name(const char *s, int label)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > NAME_MAX_LEN || (s[0] >= '0' && s[0] <= '9') || (label && s[0] == '_' && s[1] == '_'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              (c == ':' && !label)))
            return 0;
    }
    return 1;
}

static mcp_status out_fail(mcp_metrics_out *out, mcp_status st)
{
    if (!out->st)
        out->st = st;
    return st;
}

mcp_status mcp_metrics_family(mcp_metrics_out *out, const char *name, const char *type, const char *help)
{
    if (!out)
        return MCP_ERR_INVALID_ARG;
    if (out->st)
        return out->st;
    if (!valid_name(name, 0) || !type ||
        (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "untyped")))
        return out_fail(out, MCP_ERR_INVALID_ARG);
    /* The library's own families and every family already described. */
    if (strncmp(name, "mcp_", 4) == 0)
        return out_fail(out, MCP_ERR_EXISTS);
    for (unsigned i = 0; i < out->nfam; i++)
        if (strcmp(out->names[i], name) == 0)
            return out_fail(out, MCP_ERR_EXISTS);
    if (out->nfam >= MAX_FAMILIES)
        return out_fail(out, MCP_ERR_LIMIT);
    snprintf(out->names[out->nfam++], NAME_MAX_LEN + 1, "%s", name);
    mcp_status st = put_family(out->b, name, type, help ? help : "");
    if (st)
        return out_fail(out, st);
    snprintf(out->family, sizeof out->family, "%s", name);
    return MCP_OK;
}

mcp_status mcp_metrics_sample(mcp_metrics_out *out, const char *const *labels, double value)
{
    if (!out)
        return MCP_ERR_INVALID_ARG;
    if (out->st)
        return out->st;
    if (!out->family[0])
        return out_fail(out, MCP_ERR_STATE);
    for (int i = 0; labels && labels[i]; i += 2) {
        if (!valid_name(labels[i], 1) || !labels[i + 1] || i >= 32)
            return out_fail(out, MCP_ERR_INVALID_ARG);
        for (int j = 0; j < i; j += 2)
            if (strcmp(labels[j], labels[i]) == 0)
                return out_fail(out, MCP_ERR_INVALID_ARG);
    }
    mcp_buf v;
    mcp_buf_init(&v, 0);
    mcp_status st = put_value(&v, value);
    if (!st)
        st = put_sample(out->b, out->family, labels, v.data);
    mcp_buf_cleanup(&v);
    return st ? out_fail(out, st) : MCP_OK;
}
