/*
 * Unit tests for the tasks extension (src/server/task.c) through the
 * sans-I/O connection: what the conformance suite does not reach. Tasks
 * are bound to the principal that made them, bounded per principal,
 * swept after their TTL; cancellation reaches the handler; progress
 * messages become statusMessage; a legacy session that declared the
 * extension gets tasks too; on_call_end hears of a task's call once; a
 * server freed with tasks running leaks nothing. Then the client against
 * the server in the same process: mcp_client_call_tool with as_task
 * polls the task to its result, and its time limit and mcp_client_cancel()
 * end the task on the server (tasks/cancel). Last, the W3C trace context:
 * read from _meta and checked (mcp_call_trace, on_call_end), and sent by
 * the client (mcp_request_opts.traceparent). Last, notifications/tasks on
 * subscriptions/listen streams.
 */
#include "client/client_internal.h"
#include "server/server_internal.h"
#include "util/util.h"
#include "testlib.h"
#include "mcp/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---- a transport that keeps the frames ---------------------------------- */

typedef struct frames {
    pthread_mutex_t mu;
    char **text;
    size_t n, cap;
} frames;

static mcp_status keep(const char *f, size_t len, void *ud)
{
    frames *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->text = realloc(c->text, c->cap * sizeof *c->text);
    }
    c->text[c->n] = malloc(len + 1);
    memcpy(c->text[c->n], f, len);
    c->text[c->n][len] = '\0';
    c->n++;
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static void frames_free(frames *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->text[i]);
    free(c->text);
    pthread_mutex_destroy(&c->mu);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The answer to request `id` (a parsed copy), waiting up to 3 s. */
static mcp_json_doc *answer(frames *c, int id)
{
    char needle[40];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    for (int t = 0; t < 1500; t++) {
        mcp_json_doc *d = NULL;
        pthread_mutex_lock(&c->mu);
        for (size_t i = 0; i < c->n && !d; i++)
            if (strstr(c->text[i], needle))
                mcp_json_parse(&d, c->text[i], strlen(c->text[i]), NULL, NULL);
        pthread_mutex_unlock(&c->mu);
        if (d)
            return d;
        sleep_ms(2);
    }
    return NULL;
}

static const char EXT[] = ",\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}";

/* Sends a 2026-07-28 request (with the extension when `ext`) and returns its answer. */
static mcp_json_doc *request(mcp_conn *c, frames *f, const mcp_principal *who, int id, const char *method,
                             const char *params, int ext)
{
    char req[2048];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}%s}}}}",
             id, method, params, params[0] ? "," : "", ext ? EXT : "");
    mcp_conn_recv_auth(c, req, strlen(req), who);
    return answer(f, id);
}

static const mcp_json *result_of(const mcp_json_doc *d)
{
    return mcp_json_get(mcp_json_doc_root(d), "result");
}

static long long error_code(const mcp_json_doc *d)
{
    return mcp_json_int(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "error"), "code"));
}

/* Copies the taskId of a CreateTaskResult into out ("" when there is none). */
static void task_id(const mcp_json_doc *d, char *out, size_t n)
{
    const char *id = mcp_json_str(mcp_json_get(result_of(d), "taskId"), NULL);
    snprintf(out, n, "%s", id ? id : "");
}

/* tasks/get of `id`; the status string copied into out. */
static void status_of(mcp_conn *c, frames *f, const mcp_principal *who, int rid, const char *id, char *out,
                      size_t n)
{
    char p[200];
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id);
    mcp_json_doc *d = request(c, f, who, rid, "tasks/get", p, 1);
    const char *s = mcp_json_str(mcp_json_get(result_of(d), "status"), NULL);
    snprintf(out, n, "%s", s ? s : d ? "(error)" : "(no answer)");
    mcp_json_doc_free(d);
}

/* ---- tools ---------------------------------------------------------------- */

static atomic_int g_cancelled_seen, g_started;

/* Runs `ms` milliseconds (arguments.ms), reporting progress, unless cancelled. */
static mcp_status slow(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    long ms = (long)mcp_json_int(mcp_json_get(args, "ms"));
    atomic_fetch_add(&g_started, 1);
    for (long t = 0; t < ms; t += 10) {
        if (mcp_call_is_cancelled(call)) {
            atomic_fetch_add(&g_cancelled_seen, 1);
            return MCP_ERR_CANCELLED;
        }
        if (t == 50)
            mcp_call_progress(call, 1, 2, "half way");
        sleep_ms(10);
    }
    return mcp_call_textf(call, "done in task %s", mcp_call_task_id(call) ? "yes" : "no");
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static atomic_int g_reports;
/* Reports come from the workers, after the answer went out: the slots
 * are written and read under g_report_mu, and read with report_wait. */
static pthread_mutex_t g_report_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_report_trace[128]; /* traceparent of the last "traced" report */
static char g_slow_trace[128];   /* traceparent of the last "slow" report */
static void count_report(const mcp_call_report *r, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&g_report_mu);
    if (strcmp(r->tool, "slow") == 0) {
        atomic_fetch_add(&g_reports, 1);
        snprintf(g_slow_trace, sizeof g_slow_trace, "%s", r->traceparent ? r->traceparent : "none");
    }
    if (strcmp(r->tool, "traced") == 0)
        snprintf(g_report_trace, sizeof g_report_trace, "%s", r->traceparent ? r->traceparent : "none");
    pthread_mutex_unlock(&g_report_mu);
}

static void report_set(char *slot, const char *text)
{
    pthread_mutex_lock(&g_report_mu);
    snprintf(slot, 128, "%s", text);
    pthread_mutex_unlock(&g_report_mu);
}

/* A copy of `slot` once it reads `want`, or after 3 s whatever it reads. */
static const char *report_wait(const char *slot, const char *want)
{
    static char copy[128];
    for (int i = 0; i < 300; i++) {
        pthread_mutex_lock(&g_report_mu);
        snprintf(copy, sizeof copy, "%s", slot);
        pthread_mutex_unlock(&g_report_mu);
        if (strcmp(copy, want) == 0)
            break;
        sleep_ms(10);
    }
    return copy;
}

/* Echoes the call's trace context: "traceparent|tracestate", "none" for an absent one. */
static mcp_status traced(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    const char *state;
    const char *parent = mcp_call_trace(call, &state);
    return mcp_call_textf(call, "%s|%s", parent ? parent : "none", state ? state : "none");
}

static const char *g_transcript; /* transcript_path of the next server(), or NULL */

static mcp_server *server(unsigned ttl_ms, unsigned max_tasks)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.transcript_path = g_transcript;
    o.name = "tasks";
    o.workers = 4;
    o.log = quiet;
    o.task_ttl_ms = ttl_ms;
    o.max_tasks = max_tasks;
    o.on_call_end = count_report;
    mcp_server *srv = NULL;
    if (mcp_server_new(&srv, &o, NULL))
        return NULL;
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = "slow";
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"}}}";
    t.handler = slow;
    t.task_support = MCP_TASK_OPTIONAL;
    if (mcp_server_add_tool(srv, &t, NULL))
        return NULL;
    t.name = "needs_task";
    t.task_support = MCP_TASK_REQUIRED;
    if (mcp_server_add_tool(srv, &t, NULL))
        return NULL;
    t.name = "traced";
    t.handler = traced;
    t.task_support = MCP_TASK_FORBIDDEN;
    if (mcp_server_add_tool(srv, &t, NULL))
        return NULL;
    return srv;
}

/* A principal with subject `sub` (no token behind it: enough for binding). */
static mcp_principal *principal(const char *sub)
{
    mcp_principal *p = mcp__calloc(1, sizeof *p);
    atomic_init(&p->refs, 1);
    p->sub = sub;
    p->scopes = mcp__strndup("", 0);
    p->held = mcp__strndup("", 0);
    return p;
}

typedef struct world {
    mcp_server *srv;
    mcp_conn *conn;
    frames f;
} world;

static void world_open(world *w, unsigned ttl_ms, unsigned max_tasks)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->f.mu, NULL);
    w->srv = server(ttl_ms, max_tasks);
    T_NOT_NULL(w->srv);
    T_OK(mcp_conn_new(&w->conn, w->srv, keep, &w->f));
}

static void world_close(world *w)
{
    mcp_conn_close(w->conn, 1000);
    mcp_conn_free(w->conn);
    mcp_server_free(w->srv);
    frames_free(&w->f);
}

/* ---- tests ---------------------------------------------------------------- */

/* A task is seen only by its creator: to anyone else it does not exist. */
static void test_bound_to_principal(void)
{
    world w;
    world_open(&w, 0, 0);
    mcp_principal *alice = principal("alice"), *bob = principal("bob");
    mcp_json_doc *d = request(w.conn, &w.f, alice, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":100}", 1);
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d), "resultType"), NULL), "task");
    char id[64], st[40], p[200];
    task_id(d, id, sizeof id);
    mcp_json_doc_free(d);
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id);
    d = request(w.conn, &w.f, bob, 2, "tasks/get", p, 1);
    T_EQ_INT(error_code(d), MCP_RPC_INVALID_PARAMS);
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, bob, 3, "tasks/cancel", p, 1);
    T_EQ_INT(error_code(d), MCP_RPC_INVALID_PARAMS);
    mcp_json_doc_free(d);
    /* Without authorization (no principal) it is not found either. */
    d = request(w.conn, &w.f, NULL, 4, "tasks/get", p, 1);
    T_EQ_INT(error_code(d), MCP_RPC_INVALID_PARAMS);
    mcp_json_doc_free(d);
    int rid = 10;
    do {
        sleep_ms(20);
        status_of(w.conn, &w.f, alice, rid++, id, st, sizeof st);
    } while (strcmp(st, "working") == 0 && rid < 200);
    T_EQ_STR(st, "completed");
    world_close(&w);
    mcp_principal_free(alice);
    mcp_principal_free(bob);
}

/* Per principal at most max_tasks: running ones refuse the next, a finished one makes room. */
static void test_bounded_per_principal(void)
{
    world w;
    world_open(&w, 0, 2);
    mcp_principal *alice = principal("alice"), *bob = principal("bob");
    const char *long_call = "\"name\":\"slow\",\"arguments\":{\"ms\":3000}";
    mcp_json_doc *d1 = request(w.conn, &w.f, alice, 1, "tools/call", long_call, 1);
    mcp_json_doc *d2 = request(w.conn, &w.f, alice, 2, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":0}", 1);
    char id1[64], id2[64], st[40], p[200];
    task_id(d1, id1, sizeof id1);
    task_id(d2, id2, sizeof id2);
    T_TRUE(id1[0] && id2[0]);
    mcp_json_doc *d3 = request(w.conn, &w.f, bob, 3, "tools/call", long_call, 1); /* bob has his own quota */
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d3), "resultType"), NULL), "task");
    int rid = 10;
    do {
        sleep_ms(10);
        status_of(w.conn, &w.f, alice, rid++, id2, st, sizeof st);
    } while (strcmp(st, "completed") != 0 && rid < 200);
    T_EQ_STR(st, "completed");
    /* The finished task makes room for a third. */
    mcp_json_doc *d4 = request(w.conn, &w.f, alice, 300, "tools/call", long_call, 1);
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d4), "resultType"), NULL), "task");
    status_of(w.conn, &w.f, alice, 301, id2, st, sizeof st);
    T_EQ_STR(st, "(error)"); /* evicted */
    /* Both slots now run: the next is refused, retryable. */
    mcp_json_doc *d5 = request(w.conn, &w.f, alice, 302, "tools/call", long_call, 1);
    T_EQ_INT(error_code(d5), MCP_RPC_INTERNAL_ERROR);
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id1);
    mcp_json_doc *c = request(w.conn, &w.f, alice, 303, "tasks/cancel", p, 1);
    T_NOT_NULL(result_of(c));
    mcp_json_doc_free(c);
    mcp_json_doc_free(d1);
    mcp_json_doc_free(d2);
    mcp_json_doc_free(d3);
    mcp_json_doc_free(d4);
    mcp_json_doc_free(d5);
    world_close(&w); /* bob's and alice's running tasks go with the server */
    mcp_principal_free(alice);
    mcp_principal_free(bob);
}

/* After its TTL a task is gone (-32602); ttlMs says how long it is kept. */
static void test_ttl_sweeps(void)
{
    world w;
    world_open(&w, 1000, 0); /* long enough for the first look on a loaded machine */
    mcp_json_doc *d = request(w.conn, &w.f, NULL, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":0}", 1);
    T_EQ_INT(mcp_json_int(mcp_json_get(result_of(d), "ttlMs")), 1000);
    T_TRUE(mcp_json_int(mcp_json_get(result_of(d), "pollIntervalMs")) > 0);
    char id[64], st[40];
    task_id(d, id, sizeof id);
    mcp_json_doc_free(d);
    sleep_ms(60);
    status_of(w.conn, &w.f, NULL, 2, id, st, sizeof st);
    T_EQ_STR(st, "completed");
    sleep_ms(1000);
    status_of(w.conn, &w.f, NULL, 3, id, st, sizeof st);
    T_EQ_STR(st, "(error)");
    world_close(&w);
}

/* tasks/cancel reaches the handler; a second cancel is the same empty ack. */
static void test_cancel_reaches_handler(void)
{
    world w;
    world_open(&w, 0, 0);
    atomic_store(&g_cancelled_seen, 0);
    atomic_store(&g_started, 0);
    mcp_json_doc *d = request(w.conn, &w.f, NULL, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":5000}", 1);
    for (int t = 0; t < 400 && !atomic_load(&g_started); t++)
        sleep_ms(5); /* cancel a running handler (a queued one is withdrawn before it runs) */
    char id[64], st[40], p[200];
    task_id(d, id, sizeof id);
    mcp_json_doc_free(d);
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id);
    for (int i = 0; i < 2; i++) {
        d = request(w.conn, &w.f, NULL, 2 + i, "tasks/cancel", p, 1);
        T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d), "resultType"), NULL), "complete");
        T_NULL(mcp_json_get(result_of(d), "status"));
        mcp_json_doc_free(d);
    }
    for (int t = 0; t < 200 && !atomic_load(&g_cancelled_seen); t++)
        sleep_ms(5);
    T_EQ_INT(atomic_load(&g_cancelled_seen), 1);
    status_of(w.conn, &w.f, NULL, 4, id, st, sizeof st);
    T_EQ_STR(st, "cancelled");
    world_close(&w);
}

/* A progress message becomes statusMessage; the handler knows its task id. */
static void test_status_message_and_id(void)
{
    world w;
    world_open(&w, 0, 0);
    atomic_store(&g_reports, 0);
    mcp_json_doc *d = request(w.conn, &w.f, NULL, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":300}", 1);
    char id[64], p[200];
    task_id(d, id, sizeof id);
    mcp_json_doc_free(d);
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id);
    const char *msg = NULL;
    for (int rid = 2; rid < 100 && !msg; rid++) {
        sleep_ms(10);
        d = request(w.conn, &w.f, NULL, rid, "tasks/get", p, 1);
        msg = mcp_json_str(mcp_json_get(result_of(d), "statusMessage"), NULL);
        if (msg)
            T_EQ_STR(msg, "half way");
        mcp_json_doc_free(d);
    }
    T_NOT_NULL(msg);
    const char *text = NULL;
    for (int rid = 100; rid < 300 && !text; rid++) {
        sleep_ms(10);
        d = request(w.conn, &w.f, NULL, rid, "tasks/get", p, 1);
        const mcp_json *content = mcp_json_get(mcp_json_get(result_of(d), "result"), "content");
        text = mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL);
        if (text)
            T_EQ_STR(text, "done in task yes");
        mcp_json_doc_free(d);
    }
    T_NOT_NULL(text);
    T_EQ_INT(atomic_load(&g_reports), 1); /* the task's call, once */
    world_close(&w);
}

/* Without the extension: no task, tasks/ methods and required tools get -32021. */
static void test_without_extension(void)
{
    world w;
    world_open(&w, 0, 0);
    mcp_json_doc *d = request(w.conn, &w.f, NULL, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":0}", 0);
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d), "resultType"), NULL), "complete");
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, NULL, 2, "tools/call", "\"name\":\"needs_task\",\"arguments\":{\"ms\":0}", 0);
    T_EQ_INT(error_code(d), MCP_RPC_MISSING_CAPABILITY);
    const mcp_json *data = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "error"), "data");
    T_NOT_NULL(mcp_json_get(mcp_json_get(mcp_json_get(data, "requiredCapabilities"), "extensions"),
                            "io.modelcontextprotocol/tasks"));
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, NULL, 3, "tasks/get", "\"taskId\":\"x\"", 0);
    T_EQ_INT(error_code(d), MCP_RPC_MISSING_CAPABILITY);
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, NULL, 4, "tasks/list", "", 1);
    T_EQ_INT(error_code(d), MCP_RPC_METHOD_NOT_FOUND);
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, NULL, 5, "tasks/update", "\"taskId\":\"x\",\"inputResponses\":{}", 1);
    T_EQ_INT(error_code(d), MCP_RPC_INVALID_PARAMS);
    mcp_json_doc_free(d);
    world_close(&w);
}

/* A legacy session that declared the extension at initialize gets tasks too. */
static void test_legacy_session(void)
{
    world w;
    world_open(&w, 0, 0);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}},"
                       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    mcp_conn_recv(w.conn, init, strlen(init));
    mcp_json_doc *d = answer(&w.f, 1);
    T_NOT_NULL(mcp_json_get(mcp_json_get(mcp_json_get(result_of(d), "capabilities"), "extensions"),
                            "io.modelcontextprotocol/tasks"));
    mcp_json_doc_free(d);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                       "\"arguments\":{\"ms\":0}}}";
    mcp_conn_recv(w.conn, call, strlen(call));
    d = answer(&w.f, 2);
    char id[64];
    task_id(d, id, sizeof id);
    T_TRUE(id[0] != '\0');
    mcp_json_doc_free(d);
    char get[200];
    const char *st = NULL;
    for (int rid = 3; rid < 100 && !st; rid++) {
        sleep_ms(10);
        snprintf(get, sizeof get, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"%s\"}}",
                 rid, id);
        mcp_conn_recv(w.conn, get, strlen(get));
        d = answer(&w.f, rid);
        const char *s = mcp_json_str(mcp_json_get(result_of(d), "status"), NULL);
        if (s && strcmp(s, "completed") == 0)
            st = "completed";
        mcp_json_doc_free(d);
    }
    T_NOT_NULL(st);
    world_close(&w);
}

/* ---- the client against the server, in one process ------------------------ */

/* A client transport that hands frames to a server connection and back. */
typedef struct bridge {
    mcp__ctransport base;
    mcp_conn *conn;             /* the server side */
    pthread_mutex_t mu;         /* one frame at a time into the client */
} bridge;

static mcp_status bridge_send(mcp__ctransport *t, const mcp__out *o)
{
    bridge *b = (bridge *)t;
    mcp_conn_recv(b->conn, o->frame, o->len);
    return MCP_OK;
}

static int bridge_cancel(mcp__ctransport *t, uint64_t id, int modern)
{
    (void)t;
    (void)id;
    (void)modern;
    return 0;
}

static void bridge_close(mcp__ctransport *t)
{
    (void)t;
}

static const mcp__ctransport_ops g_bridge_ops = {bridge_send, bridge_cancel, NULL, bridge_close};

static mcp_status to_client(const char *f, size_t len, void *ud)
{
    bridge *b = ud;
    pthread_mutex_lock(&b->mu);
    mcp__client_on_frame(b->base.client, f, len);
    pthread_mutex_unlock(&b->mu);
    return MCP_OK;
}

typedef struct pair {
    mcp_server *srv;
    bridge b;
    mcp_client *c;
} pair;

static void pair_open(pair *p)
{
    memset(p, 0, sizeof *p);
    p->srv = server(0, 0);
    T_NOT_NULL(p->srv);
    pthread_mutex_init(&p->b.mu, NULL);
    p->b.base.ops = &g_bridge_ops;
    T_OK(mcp_conn_new(&p->b.conn, p->srv, to_client, &p->b));
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "unit";
    o.version = "1";
    o.protocol_version = "2026-07-28";
    T_OK(mcp__client_new(&p->c, &o, NULL));
    mcp__client_attach(p->c, &p->b.base);
    T_OK(mcp__client_handshake(p->c, NULL));
}

static void pair_close(pair *p)
{
    mcp_client_close(p->c);
    mcp_conn_close(p->b.conn, 1000);
    mcp_conn_free(p->b.conn);
    mcp_server_free(p->srv);
    pthread_mutex_destroy(&p->b.mu);
}

static char g_seen_status[256];
static void seen_status(const char *id, const char *status, const char *message, void *ud)
{
    (void)id;
    (void)message;
    (void)ud;
    size_t n = strlen(g_seen_status);
    snprintf(g_seen_status + n, sizeof g_seen_status - n, "%s;", status);
}

/* as_task: the call becomes a task, the client polls it and returns its result. */
static void test_client_polls_task(void)
{
    pair p;
    pair_open(&p);
    g_seen_status[0] = '\0';
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.as_task = 1;
    ro.on_task = seen_status;
    mcp_response *r = NULL;
    mcp_error err;
    T_OK(mcp_client_call_tool(p.c, "slow", "{\"ms\":120}", &ro, &r, &err));
    const mcp_json *content = mcp_json_get(mcp_response_result(r), "content");
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL), "done in task yes");
    T_TRUE(strncmp(g_seen_status, "working;", 8) == 0);
    T_NOT_NULL(strstr(g_seen_status, "completed;"));
    mcp_response_free(r);
    /* Without as_task the same tool is an ordinary call. */
    T_OK(mcp_client_call_tool(p.c, "slow", "{\"ms\":0}", NULL, &r, &err));
    content = mcp_json_get(mcp_response_result(r), "content");
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL), "done in task no");
    mcp_response_free(r);
    /* A required tool without as_task: -32021. */
    T_STATUS(mcp_client_call_tool(p.c, "needs_task", "{\"ms\":0}", NULL, &r, &err), MCP_ERR_PROTOCOL);
    T_EQ_INT(err.rpc_code, MCP_RPC_MISSING_CAPABILITY);
    mcp_response_free(r);
    pair_close(&p);
}

/* The time limit covers the task: past it the client cancels the task. */
static void test_client_task_timeout(void)
{
    pair p;
    pair_open(&p);
    atomic_store(&g_cancelled_seen, 0);
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.as_task = 1;
    ro.timeout_ms = 150;
    mcp_response *r = NULL;
    mcp_error err;
    uint64_t t0 = mcp__mono_ns();
    T_STATUS(mcp_client_call_tool(p.c, "slow", "{\"ms\":5000}", &ro, &r, &err), MCP_ERR_TIMEOUT);
    T_NULL(r);
    T_TRUE(mcp__mono_ns() - t0 < 2000000000ull);
    for (int t = 0; t < 400 && !atomic_load(&g_cancelled_seen); t++)
        sleep_ms(5);
    T_EQ_INT(atomic_load(&g_cancelled_seen), 1);
    pair_close(&p);
}

typedef struct canceller {
    mcp_client *c;
    uint64_t handle;            /* written by the call, on the caller's thread */
    _Atomic uint64_t published; /* the handle, handed to the cancelling thread */
} canceller;

/* on_task runs on the caller's thread after *handle_out was written: it
 * publishes the handle, the way an application hands it to another thread. */
static void publish_handle(const char *task_id, const char *status, const char *message, void *user_data)
{
    (void)task_id, (void)status, (void)message;
    canceller *k = user_data;
    atomic_store(&k->published, k->handle);
}

static void *cancel_later(void *arg)
{
    canceller *k = arg;
    uint64_t h;
    for (int t = 0; t < 1000 && !(h = atomic_load(&k->published)); t++)
        sleep_ms(5);
    sleep_ms(50);
    mcp_client_cancel(k->c, h, "enough");
    return NULL;
}

/* mcp_client_cancel() with the handle ends the wait and cancels the task. */
static void test_client_task_cancel(void)
{
    pair p;
    pair_open(&p);
    atomic_store(&g_cancelled_seen, 0);
    canceller k = {p.c, 0, 0};
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.as_task = 1;
    ro.handle_out = &k.handle;
    ro.on_task = publish_handle;
    ro.user_data = &k;
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &k);
    mcp_response *r = NULL;
    mcp_error err;
    T_STATUS(mcp_client_call_tool(p.c, "slow", "{\"ms\":5000}", &ro, &r, &err), MCP_ERR_CANCELLED);
    pthread_join(th, NULL);
    for (int t = 0; t < 400 && !atomic_load(&g_cancelled_seen); t++)
        sleep_ms(5);
    T_EQ_INT(atomic_load(&g_cancelled_seen), 1);
    pair_close(&p);
}

/* ---- trace context (W3C, SEP-414) ------------------------------------------ */

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

/* The text a "traced" call answers when its _meta carries `meta` (JSON members). */
static void traced_text(world *w, int id, const char *meta, char *out, size_t n)
{
    char req[1024];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"traced\","
             "\"_meta\":{%s}}}",
             id, meta);
    mcp_conn_recv(w->conn, req, strlen(req));
    mcp_json_doc *d = answer(&w->f, id);
    const mcp_json *content = mcp_json_get(result_of(d), "content");
    const char *t = mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL);
    snprintf(out, n, "%s", t ? t : "(no text)");
    mcp_json_doc_free(d);
}

/* A well-formed trace context reaches the handler and on_call_end; a malformed one is dropped. */
static void test_trace_from_meta(void)
{
    world w;
    world_open(&w, 0, 0);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    mcp_conn_recv(w.conn, init, strlen(init));
    mcp_json_doc_free(answer(&w.f, 1));
    static const struct {
        const char *meta, *want;
    } cases[] = {
        {"\"traceparent\":\"" TP "\",\"tracestate\":\"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE\"",
         TP "|rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"},
        {"\"traceparent\":\"" TP "\"", TP "|none"},
        {"\"traceparent\":\"" TP "\",\"tracestate\":\"Bad Key=1\"", TP "|none"},
        {"\"traceparent\":\"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01\"", "none|none"},
        {"\"traceparent\":\"00-00000000000000000000000000000000-00f067aa0ba902b7-01\"", "none|none"},
        {"\"traceparent\":\"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"", "none|none"},
        {"\"traceparent\":\"" TP "-extra\"", "none|none"},
        {"\"traceparent\":\"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later\"",
         "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later|none"},
        {"\"tracestate\":\"rojo=1\"", "none|none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[400];
        traced_text(&w, 10 + (int)i, cases[i].meta, text, sizeof text);
        T_EQ_STR(text, cases[i].want);
    }
    traced_text(&w, 50, "\"traceparent\":\"" TP "\"", g_seen_status, sizeof g_seen_status);
    T_EQ_STR(report_wait(g_report_trace, TP), TP);
    world_close(&w);
}

/* mcp_request_opts.traceparent goes out in _meta; a malformed one is refused before sending. */
static void test_trace_propagated_by_client(void)
{
    pair p;
    pair_open(&p);
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.traceparent = TP;
    ro.tracestate = "congo=t61rcWkgMzE";
    mcp_response *r = NULL;
    mcp_error err;
    T_OK(mcp_client_call_tool(p.c, "traced", NULL, &ro, &r, &err));
    const mcp_json *content = mcp_json_get(mcp_response_result(r), "content");
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL), TP "|congo=t61rcWkgMzE");
    mcp_response_free(r);
    ro.traceparent = "00-xyz";
    T_STATUS(mcp_client_call_tool(p.c, "traced", NULL, &ro, &r, &err), MCP_ERR_INVALID_ARG);
    T_NULL(r);
    pair_close(&p);
}

/* The text of a "traced" call over HTTP with these extra request headers (and `meta_tp` in _meta, or NULL). */
static void traced_over_http(const char *url, const char *const *headers, const char *meta_tp, char *out, size_t n)
{
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.protocol_version = "2026-07-28";
    o.timeout_ms = 20000;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = url;
    h.headers = headers;
    mcp_client *c = NULL;
    mcp_error err;
    snprintf(out, n, "(no answer)");
    if (mcp_client_connect_http(&c, &o, &h, &err) != MCP_OK)
        return;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.traceparent = meta_tp;
    mcp_response *r = NULL;
    if (mcp_client_call_tool(c, "traced", NULL, &ro, &r, &err) == MCP_OK) {
        const mcp_json *content = mcp_json_get(mcp_response_result(r), "content");
        snprintf(out, n, "%s", mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL));
    }
    mcp_response_free(r);
    mcp_client_close(c);
}

/* Runs "slow" as a task over HTTP with these extra request headers, to its end. */
static void task_over_http(const char *url, const char *const *headers)
{
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.protocol_version = "2026-07-28";
    o.timeout_ms = 20000;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = url;
    h.headers = headers;
    mcp_client *c = NULL;
    mcp_error err;
    T_OK(mcp_client_connect_http(&c, &o, &h, &err));
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.as_task = 1;
    mcp_response *r = NULL;
    report_set(g_slow_trace, "(not reported)");
    T_OK(mcp_client_call_tool(c, "slow", "{\"ms\":20}", &ro, &r, &err));
    mcp_response_free(r);
    mcp_client_close(c);
}

/*
 * Over HTTP the traceparent/tracestate headers are the trace context of a
 * request whose _meta has none (_meta wins); malformed or repeated headers
 * are dropped; the transcript's "in" line carries them; a task keeps its
 * creating request's headers for its run.
 */
static void test_trace_from_http_headers(void)
{
    char path[] = "/tmp/libmcp-trace-XXXXXX";
    int fd = mkstemp(path);
    T_TRUE(fd >= 0);
    close(fd);
    g_transcript = path;
    mcp_server *srv = server(0, 0);
    g_transcript = NULL;
    T_NOT_NULL(srv);
    mcp_http_server *hs = NULL;
    T_OK(mcp_http_server_start(&hs, srv, NULL, NULL));
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", mcp_http_server_port(hs));
    static const char *const both[] = {"traceparent: " TP2, "tracestate: congo=t61rcWkgMzE", NULL};
    static const char *const upper[] = {"traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
                                        NULL};
    static const char *const twice[] = {"traceparent: " TP2, "traceparent: " TP, NULL};
    static const char *const bad_state[] = {"traceparent: " TP2, "tracestate: Bad Key=1", NULL};
    char text[400];
    traced_over_http(url, both, NULL, text, sizeof text);
    T_EQ_STR(text, TP2 "|congo=t61rcWkgMzE");
    T_EQ_STR(report_wait(g_report_trace, TP2), TP2);
    traced_over_http(url, both, TP, text, sizeof text);
    T_EQ_STR(text, TP "|none"); /* _meta wins, with its own (absent) tracestate */
    traced_over_http(url, upper, NULL, text, sizeof text);
    T_EQ_STR(text, "none|none");
    traced_over_http(url, twice, NULL, text, sizeof text);
    T_EQ_STR(text, "none|none");
    traced_over_http(url, bad_state, NULL, text, sizeof text);
    T_EQ_STR(text, TP2 "|none");
    task_over_http(url, both);
    T_EQ_STR(report_wait(g_slow_trace, TP2), TP2);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
    /* The transcript's "in" lines name the headers' context. */
    FILE *f = fopen(path, "r");
    T_NOT_NULL(f);
    char line[4096];
    int with = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "\"dir\":\"in\",\"traceparent\":\"" TP2 "\",\"tracestate\":\"congo=t61rcWkgMzE\""))
            with++;
    fclose(f);
    unlink(path);
    T_TRUE(with >= 2); /* the first call, and the one whose _meta won */
}

/* A 2025-11-25 request on the legacy connection of `w` and its answer. */
static mcp_json_doc *legacy_req(world *w, int id, const char *method, const char *params)
{
    char req[1024];
    snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s}}", id, method, params);
    mcp_conn_recv(w->conn, req, strlen(req));
    return answer(&w->f, id);
}

/* The frame answering request `id`, if one came already (no waiting). */
static int answered_yet(frames *c, int id)
{
    char needle[40];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    int hit = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n && !hit; i++)
        hit = strstr(c->text[i], needle) != NULL;
    pthread_mutex_unlock(&c->mu);
    return hit;
}

/*
 * The 2025-11-25 form, for clients that negotiated that version: the
 * `tasks` capability and execution.taskSupport, params.task makes a task
 * ({"task": Task} with ttl and pollInterval), tasks/get answers the Task,
 * tasks/result waits for the end and answers the call's result with
 * related-task, tasks/list, tasks/cancel (-32602 once ended), -32601 for
 * a required tool without params.task and a forbidden one with it.
 */
static void test_legacy_2025_11_25_form(void)
{
    world w;
    world_open(&w, 0, 0);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{\"tasks\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    mcp_conn_recv(w.conn, init, strlen(init));
    mcp_json_doc *d = answer(&w.f, 1);
    const mcp_json *caps = mcp_json_get(result_of(d), "capabilities");
    T_NOT_NULL(mcp_json_get(mcp_json_get(mcp_json_get(mcp_json_get(caps, "tasks"), "requests"), "tools"), "call"));
    T_NOT_NULL(mcp_json_get(mcp_json_get(caps, "tasks"), "list"));
    mcp_json_doc_free(d);
    d = legacy_req(&w, 2, "tools/list", "");
    const mcp_json *tools = mcp_json_get(result_of(d), "tools");
    int optional = 0, required = 0;
    for (size_t i = 0; i < mcp_json_len(tools); i++) {
        const mcp_json *t = mcp_json_at(tools, i);
        const char *ts = mcp_json_str(mcp_json_get(mcp_json_get(t, "execution"), "taskSupport"), NULL);
        optional += mcp_json_str_eq(mcp_json_get(t, "name"), "slow") && ts && !strcmp(ts, "optional");
        required += mcp_json_str_eq(mcp_json_get(t, "name"), "needs_task") && ts && !strcmp(ts, "required");
    }
    T_EQ_INT(optional, 1);
    T_EQ_INT(required, 1);
    mcp_json_doc_free(d);
    /* A task: CreateTaskResult of that era, then tasks/result waits for the end. */
    d = legacy_req(&w, 3, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":300},\"task\":{\"ttl\":60000}");
    const mcp_json *task = mcp_json_get(result_of(d), "task");
    char id[64];
    snprintf(id, sizeof id, "%s", mcp_json_str(mcp_json_get(task, "taskId"), NULL) ? mcp_json_str(mcp_json_get(task, "taskId"), NULL) : "");
    T_TRUE(id[0] != '\0');
    T_EQ_STR(mcp_json_str(mcp_json_get(task, "status"), NULL), "working");
    T_EQ_INT(mcp_json_int(mcp_json_get(task, "ttl")), 60000);
    T_NOT_NULL(mcp_json_get(task, "pollInterval"));
    T_NULL(mcp_json_get(result_of(d), "content"));
    mcp_json_doc_free(d);
    char p[200];
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", id);
    char req[400];
    snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/result\",\"params\":{%s}}", p);
    mcp_conn_recv(w.conn, req, strlen(req));
    T_FALSE(answered_yet(&w.f, 4)); /* still working: it waits */
    d = legacy_req(&w, 5, "tasks/list", "");
    const mcp_json *listed = mcp_json_get(result_of(d), "tasks");
    T_EQ_INT((long long)mcp_json_len(listed), 1);
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(listed, 0), "taskId"), NULL), id);
    mcp_json_doc_free(d);
    d = answer(&w.f, 4);
    T_NOT_NULL(d);
    const mcp_json *content = mcp_json_get(result_of(d), "content");
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL), "done in task yes");
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_get(mcp_json_get(result_of(d), "_meta"),
                                                    "io.modelcontextprotocol/related-task"), "taskId"), NULL), id);
    mcp_json_doc_free(d);
    d = legacy_req(&w, 6, "tasks/get", p);
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d), "status"), NULL), "completed");
    T_NULL(mcp_json_get(result_of(d), "result")); /* the result comes from tasks/result only */
    T_NULL(mcp_json_get(result_of(d), "resultType"));
    mcp_json_doc_free(d);
    d = legacy_req(&w, 7, "tasks/result", p); /* ended: at once */
    T_NOT_NULL(mcp_json_get(result_of(d), "content"));
    mcp_json_doc_free(d);
    d = legacy_req(&w, 8, "tasks/cancel", p);
    T_EQ_INT(error_code(d), -32602);
    mcp_json_doc_free(d);
    /* Cancelling a running one answers the cancelled Task, and a waiting tasks/result. */
    d = legacy_req(&w, 9, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":5000},\"task\":{}");
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", mcp_json_str(mcp_json_get(mcp_json_get(result_of(d), "task"), "taskId"), NULL));
    mcp_json_doc_free(d);
    snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tasks/result\",\"params\":{%s}}", p);
    mcp_conn_recv(w.conn, req, strlen(req));
    d = legacy_req(&w, 11, "tasks/cancel", p);
    T_EQ_STR(mcp_json_str(mcp_json_get(result_of(d), "status"), NULL), "cancelled");
    mcp_json_doc_free(d);
    d = answer(&w.f, 10);
    T_EQ_INT(error_code(d), -32603);
    mcp_json_doc_free(d);
    /* Tool-level negotiation. */
    d = legacy_req(&w, 12, "tools/call", "\"name\":\"needs_task\",\"arguments\":{\"ms\":1}");
    T_EQ_INT(error_code(d), -32601);
    mcp_json_doc_free(d);
    d = legacy_req(&w, 13, "tools/call", "\"name\":\"traced\",\"task\":{}");
    T_EQ_INT(error_code(d), -32601);
    mcp_json_doc_free(d);
    d = legacy_req(&w, 14, "tasks/result", "\"taskId\":\"nope\"");
    T_EQ_INT(error_code(d), -32602);
    mcp_json_doc_free(d);
    world_close(&w);
}

/* ---- notifications/tasks on subscriptions/listen ---------------------------- */

/* Sends a 2026-07-28 request without waiting for its answer. */
static void send_only(mcp_conn *c, const mcp_principal *who, int id, const char *method, const char *params, int ext)
{
    char req[2048];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s,\"_meta\":{"
             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientCapabilities\":{%s}}}}",
             id, method, params, ext ? EXT + 1 : "");
    mcp_conn_recv_auth(c, req, strlen(req), who);
}

/* Index of the first frame from `from` on that contains `a` and `b` (b may be NULL), waiting up to `ms`; -1. */
static long frame_with(frames *f, size_t from, const char *a, const char *b, int ms)
{
    for (int t = 0; t <= ms; t += 2) {
        long hit = -1;
        pthread_mutex_lock(&f->mu);
        for (size_t i = from; i < f->n && hit < 0; i++)
            if (strstr(f->text[i], a) && (!b || strstr(f->text[i], b)))
                hit = (long)i;
        pthread_mutex_unlock(&f->mu);
        if (hit >= 0 || ms == 0)
            return hit;
        sleep_ms(2);
    }
    return -1;
}

/*
 * A listen stream that names a task hears its status changes
 * (notifications/tasks with the full task and the stream's
 * subscriptionId), after the acknowledgement that lists the taskIds
 * agreed: only the requester's own; never an older state after a newer
 * one. Asking without the extension is -32021; a stream whose connection
 * closed before the task ended is forgotten (ASan: nothing touched after).
 */
static void test_listen_notifications(void)
{
    world w;
    world_open(&w, 0, 0);
    mcp_principal *alice = principal("alice"), *bob = principal("bob");
    mcp_json_doc *d = request(w.conn, &w.f, alice, 1, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":300}", 1);
    char id[64], p[256];
    task_id(d, id, sizeof id);
    mcp_json_doc_free(d);
    T_TRUE(id[0] != '\0');
    snprintf(p, sizeof p, "\"notifications\":{\"taskIds\":[\"%s\",\"0000\"]}", id);
    /* Without the extension: -32021. taskIds not an array: -32602. */
    d = request(w.conn, &w.f, alice, 2, "subscriptions/listen", p, 0);
    T_EQ_INT(error_code(d), MCP_RPC_MISSING_CAPABILITY);
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, alice, 3, "subscriptions/listen", "\"notifications\":{\"taskIds\":\"x\"}", 1);
    T_EQ_INT(error_code(d), MCP_RPC_INVALID_PARAMS);
    mcp_json_doc_free(d);
    /* Alice's stream on a connection of its own; Bob's on another. */
    frames fa, fb;
    memset(&fa, 0, sizeof fa);
    memset(&fb, 0, sizeof fb);
    pthread_mutex_init(&fa.mu, NULL);
    pthread_mutex_init(&fb.mu, NULL);
    mcp_conn *ca, *cb;
    T_OK(mcp_conn_new(&ca, w.srv, keep, &fa));
    T_OK(mcp_conn_new(&cb, w.srv, keep, &fb));
    send_only(cb, bob, 60, "subscriptions/listen", p, 1);
    send_only(ca, alice, 50, "subscriptions/listen", p, 1);
    long ack = frame_with(&fa, 0, "notifications/subscriptions/acknowledged", NULL, 2000);
    T_TRUE(ack >= 0);
    if (ack >= 0) {
        char want[160];
        snprintf(want, sizeof want, "\"taskIds\":[\"%s\"]", id); /* the unknown id is not agreed */
        T_TRUE(strstr(fa.text[ack], want) != NULL);
    }
    long done = frame_with(&fa, 0, "notifications/tasks\"", "\"status\":\"completed\"", 3000);
    T_TRUE(done > ack);
    long first = frame_with(&fa, 0, "notifications/tasks\"", NULL, 0);
    T_TRUE(first > ack); /* nothing before the acknowledgement */
    if (done >= 0) {
        mcp_json_doc *n = NULL;
        T_OK(mcp_json_parse(&n, fa.text[done], strlen(fa.text[done]), NULL, NULL));
        const mcp_json *params = mcp_json_get(mcp_json_doc_root(n), "params");
        T_EQ_STR(mcp_json_str(mcp_json_get(params, "taskId"), NULL), id);
        T_EQ_INT(mcp_json_int(mcp_json_get(mcp_json_get(params, "_meta"), "io.modelcontextprotocol/subscriptionId")), 50);
        const mcp_json *content = mcp_json_get(mcp_json_get(params, "result"), "content");
        T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(content, 0), "text"), NULL), "done in task yes");
        T_NOT_NULL(mcp_json_get(params, "createdAt"));
        T_NOT_NULL(mcp_json_get(params, "ttlMs"));
        mcp_json_doc_free(n);
        /* Never "working" after "completed". */
        T_TRUE(frame_with(&fa, (size_t)done + 1, "\"status\":\"working\"", NULL, 0) < 0);
    }
    /* Bob's stream was acknowledged without the task and hears nothing of it. */
    long back = frame_with(&fb, 0, "notifications/subscriptions/acknowledged", NULL, 500);
    T_TRUE(back >= 0);
    if (back >= 0)
        T_NULL(strstr(fb.text[back], "taskIds"));
    T_TRUE(frame_with(&fb, 0, "notifications/tasks\"", NULL, 0) < 0);
    /* A stream whose connection closes before its task ends is forgotten. */
    d = request(w.conn, &w.f, alice, 4, "tools/call", "\"name\":\"slow\",\"arguments\":{\"ms\":150}", 1);
    char id2[64];
    task_id(d, id2, sizeof id2);
    mcp_json_doc_free(d);
    snprintf(p, sizeof p, "\"notifications\":{\"taskIds\":[\"%s\"]}", id2);
    size_t before = fa.n;
    send_only(ca, alice, 51, "subscriptions/listen", p, 1);
    T_TRUE(frame_with(&fa, before, "\"status\":\"working\"", id2, 2000) >= 0); /* the state now */
    mcp_conn_close(ca, 1000);
    mcp_conn_free(ca);
    char st[40];
    int rid = 10;
    do {
        sleep_ms(20);
        status_of(w.conn, &w.f, alice, rid++, id2, st, sizeof st);
    } while (strcmp(st, "working") == 0 && rid < 200);
    T_EQ_STR(st, "completed");
    mcp_conn_close(cb, 1000);
    mcp_conn_free(cb);
    world_close(&w);
    frames_free(&fa);
    frames_free(&fb);
    mcp_principal_free(alice);
    mcp_principal_free(bob);
}

/* tasks/result and tasks/list are not methods of the extension (2026-07-28): -32601. */
static void test_removed_methods_modern(void)
{
    world w;
    world_open(&w, 0, 0);
    mcp_json_doc *d = request(w.conn, &w.f, NULL, 2, "tasks/result", "\"taskId\":\"x\"", 1);
    T_EQ_INT(error_code(d), -32601);
    mcp_json_doc_free(d);
    d = request(w.conn, &w.f, NULL, 3, "tasks/list", "", 1);
    T_EQ_INT(error_code(d), -32601);
    mcp_json_doc_free(d);
    world_close(&w);
}

TEST_MAIN(TEST(test_bound_to_principal), TEST(test_bounded_per_principal), TEST(test_ttl_sweeps),
          TEST(test_cancel_reaches_handler), TEST(test_status_message_and_id), TEST(test_without_extension),
          TEST(test_legacy_session), TEST(test_client_polls_task), TEST(test_client_task_timeout),
          TEST(test_client_task_cancel), TEST(test_trace_from_meta), TEST(test_trace_propagated_by_client),
          TEST(test_trace_from_http_headers), TEST(test_legacy_2025_11_25_form), TEST(test_removed_methods_modern),
          TEST(test_listen_notifications))
