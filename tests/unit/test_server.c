/*
 * Unit tests for the server role through the sans-I/O connection: the
 * registry, list_changed, pagination, concurrency (slow tools never block
 * fast calls or ping), back-pressure, cancellation, closing, and the
 * failing-allocator loop over tool registration.
 */
#include "../fixture/fixture.h"
#include "server/server_internal.h"
#include "util/util.h"
#include "testlib.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

/* ---- a capturing transport ------------------------------------------------ */

typedef struct frame {
    char *text;   /* the frame */
    uint64_t at;  /* when it was sent (monotonic ns) */
} frame;

typedef struct capture {
    pthread_mutex_t mu;  /* guards the rest */
    frame *frames;       /* frames sent by the server */
    size_t n;            /* how many */
    size_t cap;          /* capacity */
} capture;

static mcp_status capture_send(const char *f, size_t len, void *ud)
{
    capture *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->frames = realloc(c->frames, c->cap * sizeof *c->frames);
    }
    c->frames[c->n].text = malloc(len + 1);
    memcpy(c->frames[c->n].text, f, len);
    c->frames[c->n].text[len] = '\0';
    c->frames[c->n].at = mcp__mono_ns();
    c->n++;
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static void capture_init(capture *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
}

static void capture_free(capture *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->frames[i].text);
    free(c->frames);
    pthread_mutex_destroy(&c->mu);
}

static size_t capture_count(capture *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* Index of the first frame containing `needle`, or -1. */
static long capture_find(capture *c, const char *needle)
{
    pthread_mutex_lock(&c->mu);
    long r = -1;
    for (size_t i = 0; i < c->n && r < 0; i++)
        if (strstr(c->frames[i].text, needle))
            r = (long)i;
    pthread_mutex_unlock(&c->mu);
    return r;
}

/* How many frames contain `needle`. */
static int capture_matches(capture *c, const char *needle)
{
    pthread_mutex_lock(&c->mu);
    int k = 0;
    for (size_t i = 0; i < c->n; i++)
        k += strstr(c->frames[i].text, needle) != NULL;
    pthread_mutex_unlock(&c->mu);
    return k;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to `ms` for a frame containing `needle`. */
static long wait_for(capture *c, const char *needle, long ms)
{
    for (long t = 0; t <= ms; t += 2) {
        long i = capture_find(c, needle);
        if (i >= 0)
            return i;
        sleep_ms(2);
    }
    return -1;
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static mcp_server *fixture_server(unsigned workers, unsigned queue)
{
    mcp_server_opts o;
    fixture_opts(&o);
    o.workers = workers;
    o.queue_max = queue;
    o.log = quiet;
    mcp_server *srv = NULL;
    if (mcp_server_new(&srv, &o, NULL) || fixture_register(srv, NULL))
        return NULL;
    return srv;
}

static void send_line(mcp_conn *c, const char *line)
{
    mcp_conn_recv(c, line, strlen(line));
}

static void initialize(mcp_conn *c)
{
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* ---- registry ------------------------------------------------------------- */

static int g_freed;
static void count_free(void *p)
{
    (void)p;
    g_freed++;
}

static mcp_status ok_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_call_text(call, "ok", NULL);
}

static void test_registry(void)
{
    mcp_server_opts o = {0};
    o.log = quiet;
    o.workers = 1;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &o, NULL));
    mcp_tool_def d = {0};
    d.handler = ok_tool;
    d.user_data_free = count_free;
    mcp_error err;
    g_freed = 0;

    static const char *bad_names[] = {"", "has space", "slash/no", "é", NULL};
    for (int i = 0; bad_names[i]; i++) {
        d.name = bad_names[i];
        T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
        T_TRUE(strstr(err.message, "1-128") != NULL);
    }
    char longname[130];
    memset(longname, 'a', 129);
    longname[129] = '\0';
    d.name = longname;
    T_STATUS(mcp_server_add_tool(srv, &d, NULL), MCP_ERR_INVALID_ARG);
    longname[128] = '\0';
    T_OK(mcp_server_add_tool(srv, &d, NULL)); /* exactly 128 is fine */
    T_EQ_INT(g_freed, 5);                     /* destructor ran for every failure */

    d.name = "schema.bad";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/nowhere\"}}}";
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_SCHEMA);
    T_TRUE(strstr(err.message, "inputSchema") != NULL && strstr(err.message, "nowhere") != NULL);
    d.input_schema = "{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"type\":\"object\"}";
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_UNSUPPORTED);
    d.input_schema = "{\"type\":\"array\"}";
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
    d.input_schema = "{\"type\":";
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(err.message, "not valid JSON") != NULL);
    d.input_schema = NULL;
    d.icons = "{}";
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
    d.icons = NULL;
    d.read_only_hint = 7;
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
    d.read_only_hint = MCP_HINT_TRUE;
    d.handler = NULL;
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_INVALID_ARG);
    d.handler = ok_tool;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    T_STATUS(mcp_server_add_tool(srv, &d, &err), MCP_ERR_EXISTS);
    T_EQ_INT(g_freed, 13);

    T_OK(mcp_server_enable_tool(srv, "schema.bad", 0));
    T_OK(mcp_server_enable_tool(srv, "schema.bad", 1));
    T_STATUS(mcp_server_enable_tool(srv, "nope", 1), MCP_ERR_NOT_FOUND);
    T_OK(mcp_server_remove_tool(srv, "schema.bad"));
    T_EQ_INT(g_freed, 14);
    T_STATUS(mcp_server_remove_tool(srv, "schema.bad"), MCP_ERR_NOT_FOUND);
    mcp_server_free(srv);
    T_EQ_INT(g_freed, 15); /* the 128-character tool, at server free */
    mcp_server_free(NULL);
}

static void test_add_tool_nomem(void)
{
    mcp_server *srv = fixture_server(1, 16);
    T_NOT_NULL(srv);
    mcp_tool_def d = {0};
    d.name = "n";
    d.title = "N";
    d.description = "d";
    d.input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^x\"}}}";
    d.output_schema = "{\"type\":\"object\"}";
    d.icons = "[{\"src\":\"data:,\"}]";
    d.handler = ok_tool;
    mcp_status st;
    T_NOMEM_LOOP(st, { st = mcp_server_add_tool(srv, &d, NULL); }, { T_OK(mcp_server_remove_tool(srv, "n")); });
    mcp_server_free(srv);
}

/* ---- list_changed and pagination ---------------------------------------- */

static void test_list_changed(void)
{
    mcp_server *srv = fixture_server(1, 16);
    capture legacy, before;
    capture_init(&legacy);
    capture_init(&before);
    mcp_conn *a, *b;
    T_OK(mcp_conn_new(&a, srv, capture_send, &legacy));
    T_OK(mcp_conn_new(&b, srv, capture_send, &before));
    initialize(a); /* b never initializes: it must not be notified */
    mcp_tool_def d = {0};
    d.name = "dynamic";
    d.handler = ok_tool;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    T_OK(mcp_server_enable_tool(srv, "dynamic", 0));
    T_OK(mcp_server_enable_tool(srv, "dynamic", 0)); /* no change: no notification */
    T_OK(mcp_server_remove_tool(srv, "dynamic"));    /* disabled: invisible, no notification */
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    T_OK(mcp_server_remove_tool(srv, "dynamic"));
    size_t changes = 0;
    for (size_t i = 0; i < legacy.n; i++)
        changes += strstr(legacy.frames[i].text, "notifications/tools/list_changed") != NULL;
    T_EQ_SIZE(changes, 4);
    T_EQ_SIZE(before.n, 0);
    mcp_conn_free(a);
    mcp_conn_free(b);
    mcp_server_free(srv);
    capture_free(&legacy);
    capture_free(&before);
}

static void test_pagination(void)
{
    mcp_server_opts o;
    fixture_opts(&o);
    o.page_size = 4;
    o.workers = 1;
    o.log = quiet;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &o, NULL));
    T_OK(fixture_register(srv, NULL)); /* 13 visible tools */
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    char cursor[64] = "";
    size_t seen = 0;
    for (int page = 0; page < 10; page++) {
        char req[200];
        if (cursor[0])
            snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":{\"cursor\":\"%s\"}}",
                     page, cursor);
        else
            snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}", page);
        size_t before = cap.n;
        send_line(c, req);
        T_EQ_SIZE(cap.n, before + 1);
        mcp_json_doc *doc;
        T_OK(mcp_json_parse(&doc, cap.frames[before].text, strlen(cap.frames[before].text), NULL, NULL));
        const mcp_json *res = mcp_json_get(mcp_json_doc_root(doc), "result");
        seen += mcp_json_len(mcp_json_get(res, "tools"));
        T_TRUE(mcp_json_len(mcp_json_get(res, "tools")) <= 4);
        if (page == 0) /* a tool removed between pages does not break the walk */
            T_OK(mcp_server_remove_tool(srv, "media"));
        const char *next = mcp_json_str(mcp_json_get(res, "nextCursor"), NULL);
        if (next)
            snprintf(cursor, sizeof cursor, "%s", next);
        mcp_json_doc_free(doc);
        if (!next)
            break;
    }
    T_EQ_SIZE(seen, 12); /* all but the one removed after page 1 */
    /* A tampered cursor is refused. */
    T_TRUE(strlen(cursor) == 22);
    cursor[3] = cursor[3] == 'A' ? 'B' : 'A';
    char req[200];
    snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/list\",\"params\":{\"cursor\":\"%s\"}}", cursor);
    send_line(c, req);
    T_TRUE(strstr(cap.frames[cap.n - 1].text, "-32602") != NULL);
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* ---- concurrency ------------------------------------------------------------ */

/* MCP_UNIT_SCALE=k (the valgrind preset sets it) stretches the slow call
 * and the waits k times: under valgrind 1,000 calls take longer than 2 s. */
static void test_slow_never_blocks_fast(void)
{
    const char *scale_env = getenv("MCP_UNIT_SCALE");
    uint64_t scale = scale_env && atoi(scale_env) > 0 ? (uint64_t)atoi(scale_env) : 1;
    mcp_server *srv = fixture_server(2, 4096);
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    uint64_t t0 = mcp__mono_ns();
    char req[160];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
             "\"arguments\":{\"ms\":%llu}}}",
             (unsigned long long)(2000 * scale));
    send_line(c, req);
    for (int i = 0; i < 1000; i++) {
        snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                                  "\"assessTypology\",\"arguments\":{\"caseId\":\"C-%d\"}}}", i, i);
        send_line(c, req);
    }
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"}");
    T_TRUE(wait_for(&cap, "\"id\":\"ping\"", (long)(1000 * scale)) >= 0);
    /* All 1000 fast calls answered, each with its own id, while the slow one runs. */
    for (uint64_t t = 0; t < 1500 * scale && capture_count(&cap) < 1002; t++)
        sleep_ms(1);
    T_TRUE(capture_find(&cap, "\"id\":\"slow\"") < 0);
    size_t answered = 0;
    pthread_mutex_lock(&cap.mu);
    for (size_t i = 0; i < cap.n; i++) {
        /* Each answer names its own case: "C-<id>" (C-404 is a tool error). */
        int id;
        char want[24];
        if (sscanf(cap.frames[i].text, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\"", &id) != 1)
            continue;
        snprintf(want, sizeof want, "C-%d", id);
        const char *at = strstr(cap.frames[i].text, want);
        if (at && !(at[strlen(want)] >= '0' && at[strlen(want)] <= '9'))
            answered++;
        else
            fprintf(stderr, "  crossed: %.160s\n", cap.frames[i].text);
    }
    pthread_mutex_unlock(&cap.mu);
    T_EQ_SIZE(answered, 1000);
    uint64_t fast_done = mcp__mono_ns() - t0;
    T_TRUE(fast_done < 1900ull * 1000000ull * scale);
    /* Cancelling the slow call stops it: no answer, the handler returns. */
    send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"slow\"}}");
    for (uint64_t t = 0; t < 500 * scale; t++) {
        pthread_mutex_lock(&c->mu);
        unsigned running = c->running;
        pthread_mutex_unlock(&c->mu);
        if (!running)
            break;
        sleep_ms(2);
    }
    T_TRUE(mcp__mono_ns() - t0 < 1900ull * 1000000ull * scale); /* stopped well before its 2 s */
    T_EQ_INT(capture_find(&cap, "\"id\":\"slow\""), -1);
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

static void test_busy_queue(void)
{
    mcp_server *srv = fixture_server(1, 2);
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    char req[160];
    for (int i = 0; i < 4; i++) {
        snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                                  "\"slow\",\"arguments\":{\"ms\":400}}}", i);
        send_line(c, req);
        if (i == 0)
            sleep_ms(50); /* let the worker take the first */
    }
    /* One running, two queued, the fourth refused at once. */
    long busy = capture_find(&cap, "\"id\":3,\"error\"");
    T_TRUE(busy >= 0);
    T_TRUE(strstr(cap.frames[busy].text, "\"retryable\":true") != NULL);
    T_TRUE(strstr(cap.frames[busy].text, "-32603") != NULL);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
    T_TRUE(capture_find(&cap, "\"id\":\"p\"") >= 0); /* ping never waits */
    T_TRUE(wait_for(&cap, "\"id\":2,\"result\"", 3000) >= 0);
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

static void test_close_cancels(void)
{
    mcp_server *srv = fixture_server(1, 16);
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":60000}}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":60000}}}");
    sleep_ms(20);
    uint64_t t0 = mcp__mono_ns();
    T_OK(mcp_conn_close(c, 200)); /* waits 200 ms, cancels, the handler stops */
    uint64_t took = mcp__mono_ns() - t0;
    T_TRUE(took < 2000ull * 1000000ull);
    T_STATUS(mcp_conn_recv(c, "{}", 2), MCP_ERR_CLOSED);
    /* Each cancelled call is answered once, with -32603 (the running one and the queued one). */
    T_TRUE(capture_find(&cap, "\"id\":1,\"error\":{\"code\":-32603") >= 0);
    T_TRUE(capture_find(&cap, "\"id\":2,\"error\":{\"code\":-32603") >= 0);
    T_EQ_INT(capture_matches(&cap, "\"id\":1,"), 1);
    T_EQ_INT(capture_matches(&cap, "\"id\":2,"), 1);
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* A handler whose progress goes backwards gets an error back. */
static mcp_status backwards(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    int *result = ud;
    result[0] = mcp_call_progress(call, 2, -1, NULL);
    result[1] = mcp_call_progress(call, 1, -1, NULL);
    result[2] = mcp_call_progress(call, 2, -1, NULL);
    result[3] = mcp_call_progress(call, 3, 10, "three");
    result[4] = mcp_call_text(call, "bad \xff utf8", NULL);
    result[5] = mcp_call_image(call, NULL, 3, "image/png", NULL);
    mcp_annotations ann = {MCP_AUDIENCE_USER, 1.5, NULL};
    result[6] = mcp_call_text(call, "x", &ann);
    return mcp_call_text(call, "fine", NULL);
}

static void test_handler_api_errors(void)
{
    mcp_server *srv = fixture_server(1, 16);
    int result[7];
    mcp_tool_def d = {0};
    d.name = "backwards";
    d.handler = backwards;
    d.user_data = result;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"backwards\","
                 "\"_meta\":{\"progressToken\":\"p\"}}}");
    long i = wait_for(&cap, "\"id\":1,\"result\"", 2000);
    T_TRUE(i >= 0);
    T_EQ_INT(result[0], MCP_OK);
    T_EQ_INT(result[1], MCP_ERR_INVALID_ARG);
    T_EQ_INT(result[2], MCP_ERR_INVALID_ARG);
    T_EQ_INT(result[3], MCP_OK);
    T_EQ_INT(result[4], MCP_ERR_INVALID_ARG);
    T_EQ_INT(result[5], MCP_ERR_INVALID_ARG);
    T_EQ_INT(result[6], MCP_ERR_INVALID_ARG);
    /* The failed blocks left no trace: exactly one content block. */
    T_TRUE(strstr(cap.frames[i].text, "{\"content\":[{\"type\":\"text\",\"text\":\"fine\"}]}") != NULL);
    T_EQ_SIZE(capture_count(&cap), 4); /* init + 2 progress + result */
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* Many threads feeding many connections at once (TSan checks the locking). */
typedef struct feeder {
    mcp_server *srv;  /* shared server */
    capture cap;      /* this thread's frames */
    int ok;           /* every call answered with its own id */
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    mcp_conn *c;
    if (mcp_conn_new(&c, f->srv, capture_send, &f->cap))
        return NULL;
    initialize(c);
    char req[160];
    for (int i = 0; i < 200; i++) {
        snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                                  "\"%s\",\"arguments\":{\"caseId\":\"C-%d\"}}}",
                 i, i % 3 ? "assessTypology" : "echo", i);
        send_line(c, req);
        if (i % 50 == 0)
            mcp_server_enable_tool(f->srv, "stats", i % 100 == 0);
    }
    for (int t = 0; t < 3000 && capture_count(&f->cap) < 201; t++)
        sleep_ms(1);
    mcp_conn_close(c, 1000);
    mcp_conn_free(c);
    int answered = 0;
    for (int i = 0; i < 200; i++) {
        char needle[32];
        snprintf(needle, sizeof needle, "\"id\":%d,\"result\"", i);
        answered += capture_find(&f->cap, needle) >= 0;
    }
    f->ok = answered == 200;
    return NULL;
}

static void test_many_connections(void)
{
    mcp_server *srv = fixture_server(2, 4096);
    enum { N = 4 };
    feeder f[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        f[i].srv = srv;
        f[i].ok = 0;
        capture_init(&f[i].cap);
        pthread_create(&th[i], NULL, feed, &f[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        T_TRUE(f[i].ok);
        capture_free(&f[i].cap);
    }
    mcp_server_free(srv);
}

/* Sends a modern tools/call and returns the parsed answer (caller frees). */
static mcp_json_doc *modern_call(mcp_conn *c, capture *cap, int id, const char *tool, const char *extra)
{
    char req[4096];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{}%s%s,"
             "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
             "clientCapabilities\":{\"elicitation\":{},\"sampling\":{},\"roots\":{}}}}}",
             id, tool, extra ? "," : "", extra ? extra : "");
    send_line(c, req);
    char needle[32];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    long i = wait_for(cap, needle, 3000);
    if (i < 0)
        return NULL;
    mcp_json_doc *d = NULL;
    mcp_json_parse(&d, cap->frames[i].text, strlen(cap->frames[i].text), NULL, NULL);
    return d;
}

/* Three rounds of askMany: answers of earlier rounds travel in requestState. */
static void test_input_required_rounds(void)
{
    mcp_server *srv = fixture_server(1, 16);
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    mcp_json_doc *r1 = modern_call(c, &cap, 1, "askMany", NULL);
    const mcp_json *res = mcp_json_get(mcp_json_doc_root(r1), "result");
    T_TRUE(mcp_json_str_eq(mcp_json_get(res, "resultType"), "input_required"));
    T_NOT_NULL(mcp_json_get(mcp_json_get(res, "inputRequests"), "name"));
    char extra[3000];
    snprintf(extra, sizeof extra,
             "\"inputResponses\":{\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}},\"requestState\":\"%s\"",
             mcp_json_str(mcp_json_get(res, "requestState"), NULL));
    mcp_json_doc *r2 = modern_call(c, &cap, 2, "askMany", extra);
    res = mcp_json_get(mcp_json_doc_root(r2), "result");
    T_EQ_SIZE(mcp_json_len(mcp_json_get(res, "inputRequests")), 3);
    const char *state2 = mcp_json_str(mcp_json_get(res, "requestState"), NULL);
    T_NOT_NULL(state2);
    /* Round 3 answers only the new questions: the name comes from the state. */
    snprintf(extra, sizeof extra,
             "\"inputResponses\":{\"color\":{\"action\":\"accept\",\"content\":{\"color\":\"red\"}},"
             "\"sample\":{\"model\":\"m\"},\"roots\":{\"roots\":[]}},\"requestState\":\"%s\"",
             state2);
    mcp_json_doc *r3 = modern_call(c, &cap, 3, "askMany", extra);
    T_TRUE(mcp_json_str_eq(mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(r3), "result"),
                                                                  "content"), 0), "text"),
                           "Ada likes red; model m; 0 root(s)"));
    /* A state changed by one character, or replayed with other arguments, is refused. */
    char tampered[1200];
    snprintf(tampered, sizeof tampered, "%s", state2);
    tampered[5] = tampered[5] == 'A' ? 'B' : 'A';
    snprintf(extra, sizeof extra, "\"requestState\":\"%s\"", tampered);
    mcp_json_doc *r4 = modern_call(c, &cap, 4, "askMany", extra);
    T_EQ_INT(mcp_json_int(mcp_json_get(mcp_json_get(mcp_json_doc_root(r4), "error"), "code")), -32602);
    snprintf(extra, sizeof extra, "\"requestState\":\"%s\"", state2);
    mcp_json_doc *r5 = modern_call(c, &cap, 5, "askName", extra); /* bound to askMany */
    T_EQ_INT(mcp_json_int(mcp_json_get(mcp_json_get(mcp_json_doc_root(r5), "error"), "code")), -32602);
    mcp_json_doc_free(r1);
    mcp_json_doc_free(r2);
    mcp_json_doc_free(r3);
    mcp_json_doc_free(r4);
    mcp_json_doc_free(r5);
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* Legacy: a handler waiting for an answer stops when the call is cancelled. */
static void test_legacy_ask_cancel(void)
{
    mcp_server *srv = fixture_server(1, 16);
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"2025-11-25\",\"capabilities\":{\"elicitation\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"askName\"}}");
    T_TRUE(wait_for(&cap, "elicitation/create", 2000) >= 0);
    uint64_t t0 = mcp__mono_ns();
    send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}");
    for (int t = 0; t < 1000; t++) {
        pthread_mutex_lock(&c->mu);
        unsigned running = c->running;
        pthread_mutex_unlock(&c->mu);
        if (!running)
            break;
        sleep_ms(2);
    }
    T_TRUE(mcp__mono_ns() - t0 < 1000ull * 1000000ull); /* well before its 1.5 s limit */
    T_EQ_INT(capture_find(&cap, "\"id\":7,"), -1);       /* cancelled: no answer */
    /* A late answer from the client is dropped quietly. */
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"accept\"}}");
    mcp_conn_free(c);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* ---- how each call ended (mcp_server_opts.on_call_end) -------------------------------------------- */

typedef struct seen_report {
    int outcome, code, has_args;
    long long id;
    char tool[64], message[200];
    uint64_t us;
} seen_report;

static pthread_mutex_t g_rep_mu = PTHREAD_MUTEX_INITIALIZER;
static seen_report g_rep[32];
static int g_nrep;

static void on_call_end(const mcp_call_report *r, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&g_rep_mu);
    if (g_nrep < 32) {
        seen_report *s = &g_rep[g_nrep++];
        s->outcome = (int)r->outcome;
        s->code = r->rpc_code;
        s->has_args = r->arguments != NULL;
        s->id = r->id && r->id->type == MCP_RPC_ID_INT ? (long long)r->id->num : -1;
        snprintf(s->tool, sizeof s->tool, "%s", r->tool);
        snprintf(s->message, sizeof s->message, "%s", r->message ? r->message : "(null)");
        s->us = r->duration_us;
    }
    pthread_mutex_unlock(&g_rep_mu);
}

static const seen_report *report_for(long long id)
{
    for (int i = 0; i < g_nrep; i++)
        if (g_rep[i].id == id)
            return &g_rep[i];
    return NULL;
}

static void test_call_reports(void)
{
    mcp_server_opts o;
    fixture_opts(&o);
    o.workers = 2;
    o.log = quiet;
    o.on_call_end = on_call_end;
    mcp_server *srv = NULL;
    T_OK(mcp_server_new(&srv, &o, NULL));
    T_OK(fixture_register(srv, NULL));
    g_nrep = 0;
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    static const char *calls[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":1}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fail\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nosuch\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"crash\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"limited\",\"arguments\":{\"ms\":3000}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":60000}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"hidden\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":[1]}}",
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        send_line(c, calls[i]);
    sleep_ms(50);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":8}}");
    T_TRUE(wait_for(&cap, "\"id\":7,\"result\"", 3000) >= 0);
    for (int i = 0; i < 300; i++) { /* reports follow the answers */
        pthread_mutex_lock(&g_rep_mu);
        int n = g_nrep;
        pthread_mutex_unlock(&g_rep_mu);
        if (n >= 10)
            break;
        sleep_ms(10);
    }
    mcp_conn_free(c);
    pthread_mutex_lock(&g_rep_mu);
    T_EQ_INT(g_nrep, 10); /* once per request, no more */
    const seen_report *r;
    T_TRUE((r = report_for(1)) && r->outcome == MCP_CALL_OK && r->code == 0 && r->has_args &&
           !strcmp(r->tool, "echo") && !strcmp(r->message, "(null)"));
    T_TRUE((r = report_for(2)) && r->outcome == MCP_CALL_TOOL_ERROR && strstr(r->message, "case store is unavailable"));
    T_TRUE((r = report_for(3)) && r->outcome == MCP_CALL_INVALID_ARGUMENTS && r->code == 0 &&
           strstr(r->message, "ms"));
    T_TRUE((r = report_for(4)) && r->outcome == MCP_CALL_UNKNOWN_TOOL && r->code == MCP_RPC_INVALID_PARAMS &&
           !strcmp(r->tool, "nosuch") && !r->has_args);
    T_TRUE((r = report_for(5)) && r->outcome == MCP_CALL_MALFORMED && !strcmp(r->tool, "") && r->has_args);
    T_TRUE((r = report_for(6)) && r->outcome == MCP_CALL_FAILED && r->code == MCP_RPC_INTERNAL_ERROR);
    T_TRUE((r = report_for(7)) && r->outcome == MCP_CALL_TIMED_OUT && strstr(r->message, "timed out") &&
           r->us >= 90000);
    T_TRUE((r = report_for(8)) && r->outcome == MCP_CALL_CANCELLED && !strcmp(r->message, "(null)"));
    T_TRUE((r = report_for(9)) && r->outcome == MCP_CALL_UNKNOWN_TOOL && !strcmp(r->tool, "hidden"));
    T_TRUE((r = report_for(10)) && r->outcome == MCP_CALL_MALFORMED && !r->has_args);
    pthread_mutex_unlock(&g_rep_mu);
    mcp_server_free(srv);
    capture_free(&cap);

    /* Busy (one worker, a queue of one) and an input_required round (2026-07-28). */
    o.workers = 1;
    o.queue_max = 1;
    T_OK(mcp_server_new(&srv, &o, NULL));
    T_OK(fixture_register(srv, NULL));
    g_nrep = 0;
    capture_init(&cap);
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                 "\"arguments\":{\"ms\":300}}}");
    sleep_ms(50); /* the worker takes it */
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                 "\"arguments\":{\"ms\":1}}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                 "\"arguments\":{\"ms\":1}}}");
    /* 13 finds the queue full (12 waits in it, or 11 still does on a slow machine). */
    T_TRUE(wait_for(&cap, "\"id\":11,\"result\"", 3000) >= 0);
    T_TRUE(wait_for(&cap, "\"id\":12,", 3000) >= 0);
    mcp_json_doc *d = modern_call(c, &cap, 14, "askMany", NULL);
    T_NOT_NULL(d);
    mcp_json_doc_free(d);
    mcp_conn_free(c);
    pthread_mutex_lock(&g_rep_mu);
    T_EQ_INT(g_nrep, 4);
    T_TRUE((r = report_for(11)) && r->outcome == MCP_CALL_OK && r->us >= 250000);
    T_TRUE((r = report_for(13)) && r->outcome == MCP_CALL_BUSY && r->code == MCP_RPC_INTERNAL_ERROR);
    T_TRUE((r = report_for(14)) && r->outcome == MCP_CALL_INPUT_REQUIRED && r->code == 0);
    pthread_mutex_unlock(&g_rep_mu);
    mcp_server_free(srv);
    capture_free(&cap);
}

/* The transcript holds personal data: created owner-only (0600) whatever the umask. */
static void test_transcript_mode(void)
{
    char dir[] = "/tmp/mcp-server-transcript-XXXXXX";
    T_NOT_NULL(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    mode_t old = umask(022);
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 1;
    o.transcript_path = path;
    mcp_server *srv = NULL;
    mcp_status st = mcp_server_new(&srv, &o, NULL);
    umask(old);
    T_OK(st);
    mcp_server_free(srv);
    struct stat sb;
    int rc = stat(path, &sb);
    unlink(path);
    rmdir(dir);
    T_EQ_INT(rc, 0);
    T_EQ_INT((int)(sb.st_mode & 0777), 0600);
}

/* A URI the client sent is quoted in the server's log: one line, whatever it holds. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_log_line[512];

static void keep_log(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)ud;
    pthread_mutex_lock(&g_log_mu);
    if (strstr(message, "reading"))
        snprintf(g_log_line, sizeof g_log_line, "%s", message);
    pthread_mutex_unlock(&g_log_mu);
}

static mcp_status failing_read(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    (void)rd;
    (void)uri;
    (void)vars;
    (void)ud;
    return MCP_ERR_IO;
}

static void test_uri_logged_quoted(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 1;
    o.log = keep_log;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &o, NULL));
    mcp_resource_def rd;
    memset(&rd, 0, sizeof rd);
    rd.uri_template = "x://{name}";
    rd.name = "x";
    rd.size = -1;
    rd.handler = failing_read;
    T_OK(mcp_server_add_resource(srv, &rd, NULL));
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    g_log_line[0] = '\0';
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":"
                 "\"x://a\\nINFO forged line\\r\\tb\",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                 "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    T_TRUE(wait_for(&cap, "\"id\":7,", 3000) >= 0);
    pthread_mutex_lock(&g_log_mu);
    char line[512];
    snprintf(line, sizeof line, "%s", g_log_line);
    pthread_mutex_unlock(&g_log_mu);
    mcp_conn_free(c);
    capture_free(&cap);
    mcp_server_free(srv);
    T_TRUE(strstr(line, "reading") != NULL);
    T_TRUE(strstr(line, "forged line") != NULL);
    T_TRUE(strpbrk(line, "\r\n\t") == NULL);
}

/* ---- the timer thread calls back without its lock ------------------------------------------------- */

static mcp_conn *g_reenter_conn;
static atomic_int g_reenter_done;

static mcp_status wait_for_cancel(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    for (int i = 0; i < 300 && !mcp_call_is_cancelled(call); i++)
        sleep_ms(10);
    return mcp_call_textf(call, "late");
}

static mcp_status answer_now(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_call_textf(call, "now");
}

/* Reports a timed-out call by starting another call with a time limit on the
 * same connection: a nonblocking tool runs right here, and its time limit
 * puts it on the timer list (timer_mu). */
static void reenter_on_end(const mcp_call_report *r, void *ud)
{
    (void)ud;
    if (r->outcome != MCP_CALL_TIMED_OUT)
        return;
    send_line(g_reenter_conn, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"quick\"}}");
    atomic_store(&g_reenter_done, 1);
}

static void test_timeout_report_reenters(void)
{
    alarm(20); /* a deadlock fails the test (SIGALRM) instead of hanging it */
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 2;
    o.log = quiet;
    o.on_call_end = reenter_on_end;
    mcp_server *srv = NULL;
    T_OK(mcp_server_new(&srv, &o, NULL));
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "stuck";
    d.timeout_ms = 50;
    d.handler = wait_for_cancel;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    d.name = "quick";
    d.timeout_ms = 1000;
    d.flags = MCP_TOOL_NONBLOCKING;
    d.handler = answer_now;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    capture cap;
    capture_init(&cap);
    T_OK(mcp_conn_new(&g_reenter_conn, srv, capture_send, &cap));
    initialize(g_reenter_conn);
    atomic_store(&g_reenter_done, 0);
    send_line(g_reenter_conn, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"stuck\"}}");
    T_TRUE(wait_for(&cap, "\"id\":1,", 3000) >= 0);
    T_TRUE(wait_for(&cap, "\"id\":2,\"result\"", 3000) >= 0);
    T_TRUE(atomic_load(&g_reenter_done));
    mcp_conn_free(g_reenter_conn);
    g_reenter_conn = NULL;
    mcp_server_free(srv);
    capture_free(&cap);
    alarm(0);
}

/* ---- resource and prompt handlers run on the workers ---------------------------------------------- */

/* A handler that blocks until released (at most 3 s) and notes its thread. */
typedef struct slow_handler {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int release;
    int ran;
    pthread_t thread;
} slow_handler;

static void slow_wait(slow_handler *h)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    pthread_mutex_lock(&h->mu);
    h->thread = pthread_self();
    h->ran = 1;
    while (!h->release && pthread_cond_timedwait(&h->cv, &h->mu, &until) == 0)
        ;
    pthread_mutex_unlock(&h->mu);
}

static void slow_release(slow_handler *h)
{
    pthread_mutex_lock(&h->mu);
    h->release = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static mcp_status slow_read(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    (void)vars;
    slow_wait(ud);
    return mcp_read_text(rd, uri, "text/plain", "slow");
}

static mcp_status slow_prompt(mcp_prompt *p, const mcp_json *args, void *ud)
{
    (void)args;
    slow_wait(ud);
    return mcp_prompt_text(p, MCP_ROLE_USER, "slow");
}

static mcp_status release_prompt(mcp_prompt *p, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_prompt_text(p, MCP_ROLE_USER, "unused");
}

static mcp_status slow_complete(mcp_completion *cmp, const char *arg, const char *value, const mcp_json *context,
                                void *ud)
{
    (void)arg;
    (void)value;
    (void)context;
    slow_wait(ud);
    return mcp_completion_add(cmp, "slow");
}

enum { H_READ, H_PROMPT, H_COMPLETE_PROMPT, H_COMPLETE_RESOURCE };

/*
 * One blocking resource or prompt handler or completion callback (flags
 * 0), or one flagged non-blocking: recv must return at once for the
 * first, the answer come from a worker; the second runs on the receiving
 * thread.
 */
static void check_handler_thread(int kind, unsigned flags)
{
    static const char *const requests[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"slow://a\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"slow\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":"
        "\"ref/prompt\",\"name\":\"slow\"},\"argument\":{\"name\":\"name\",\"value\":\"a\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":"
        "\"ref/resource\",\"uri\":\"slow://{name}\"},\"argument\":{\"name\":\"name\",\"value\":\"a\"}}}",
    };
    int prompt = kind == H_PROMPT || kind == H_COMPLETE_PROMPT;
    int completing = kind >= H_COMPLETE_PROMPT;
    static const mcp_prompt_arg parg = {"name", NULL, NULL, 0};
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 2;
    o.log = quiet;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &o, NULL));
    slow_handler h;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    if (flags)
        h.release = 1; /* runs inline: must not wait */
    if (prompt) {
        mcp_prompt_def pd;
        memset(&pd, 0, sizeof pd);
        pd.name = "slow";
        pd.handler = slow_prompt;
        pd.user_data = &h;
        pd.flags = flags;
        pd.args = &parg;
        pd.nargs = 1;
        if (completing) {
            pd.handler = release_prompt; /* not called */
            pd.complete = slow_complete;
        }
        T_OK(mcp_server_add_prompt(srv, &pd, NULL));
    } else {
        mcp_resource_def rd;
        memset(&rd, 0, sizeof rd);
        rd.uri_template = "slow://{name}";
        rd.name = "slow";
        rd.size = -1;
        rd.handler = slow_read;
        rd.user_data = &h;
        rd.flags = flags;
        if (completing)
            rd.complete = slow_complete;
        T_OK(mcp_server_add_resource(srv, &rd, NULL));
    }
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    uint64_t t0 = mcp__mono_ns();
    send_line(c, requests[kind]);
    uint64_t took_ms = (mcp__mono_ns() - t0) / 1000000u;
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
    long ping = capture_find(&cap, "\"id\":6,");
    slow_release(&h);
    T_TRUE(wait_for(&cap, "\"id\":5,", 5000) >= 0);
    T_TRUE(capture_find(&cap, "slow") >= 0);
    pthread_mutex_lock(&h.mu);
    int on_me = h.ran && pthread_equal(h.thread, pthread_self());
    pthread_mutex_unlock(&h.mu);
    if (flags) {
        T_TRUE(on_me);
    } else {
        T_FALSE(on_me);
        T_TRUE(took_ms < 1000); /* recv did not wait for the handler */
        T_TRUE(ping >= 0);      /* ping answered while the handler still blocked */
        T_TRUE(ping < capture_find(&cap, "\"id\":5,"));
    }
    mcp_conn_free(c);
    capture_free(&cap);
    mcp_server_free(srv);
    pthread_cond_destroy(&h.cv);
    pthread_mutex_destroy(&h.mu);
}

static void test_resource_prompt_on_workers(void)
{
    check_handler_thread(H_READ, 0);
    check_handler_thread(H_PROMPT, 0);
    check_handler_thread(H_READ, MCP_RESOURCE_NONBLOCKING);
    check_handler_thread(H_PROMPT, MCP_PROMPT_NONBLOCKING);
}

/* completion/complete callbacks likewise: on a worker unless flagged. */
static void test_completion_on_workers(void)
{
    check_handler_thread(H_COMPLETE_PROMPT, 0);
    check_handler_thread(H_COMPLETE_RESOURCE, 0);
    check_handler_thread(H_COMPLETE_PROMPT, MCP_PROMPT_NONBLOCKING);
    check_handler_thread(H_COMPLETE_RESOURCE, MCP_RESOURCE_NONBLOCKING);
}

/* A read queued behind a busy pool on a connection being closed: dropped, nothing leaks. */
static void test_deferred_read_dropped_on_close(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 1;
    o.log = quiet;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &o, NULL));
    slow_handler h;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    mcp_resource_def rd;
    memset(&rd, 0, sizeof rd);
    rd.uri_template = "slow://{name}";
    rd.name = "slow";
    rd.size = -1;
    rd.handler = slow_read;
    rd.user_data = &h;
    T_OK(mcp_server_add_resource(srv, &rd, NULL));
    capture cap;
    capture_init(&cap);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, capture_send, &cap));
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"slow://a\"}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"slow://b\"}}");
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&h.mu);
        int ran = h.ran;
        pthread_mutex_unlock(&h.mu);
        if (ran)
            break;
        sleep_ms(2);
    }
    T_STATUS(mcp_conn_close(c, 0), MCP_ERR_TIMEOUT); /* the first still runs */
    slow_release(&h);
    mcp_conn_free(c);
    mcp_server_free(srv); /* the pool runs the second, which sees the close */
    T_TRUE(capture_find(&cap, "\"id\":2,") < 0);
    capture_free(&cap);
    pthread_cond_destroy(&h.cv);
    pthread_mutex_destroy(&h.mu);
}

TEST_MAIN(TEST(test_registry), TEST(test_add_tool_nomem), TEST(test_list_changed), TEST(test_pagination),
          TEST(test_slow_never_blocks_fast), TEST(test_busy_queue), TEST(test_close_cancels),
          TEST(test_handler_api_errors), TEST(test_many_connections), TEST(test_input_required_rounds),
          TEST(test_legacy_ask_cancel), TEST(test_call_reports),
          TEST(test_transcript_mode), TEST(test_uri_logged_quoted), TEST(test_timeout_report_reenters),
          TEST(test_resource_prompt_on_workers), TEST(test_completion_on_workers),
          TEST(test_deferred_read_dropped_on_close))
