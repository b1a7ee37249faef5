/*
 * The aml tool tests' harness: one mcp-server-aml server over a generated
 * in-memory bank, driven through libmcp's sans-I/O connection (frames the
 * server sends are captured; await() finds a response by id). A test
 * includes it after amltest.h and tools/tools.h, and defines
 * `static int setup(void)` calling pair_serve() with its bank.
 */
#ifndef AML_MCPPAIR_H
#define AML_MCPPAIR_H

#include <pthread.h>
#include <time.h>

typedef struct capture {
    pthread_mutex_t mu;
    char **frames;
    size_t n, cap;
} capture;

static inline mcp_status capture_send(const char *f, size_t len, void *ud)
{
    capture *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->frames = realloc(c->frames, c->cap * sizeof *c->frames);
    }
    c->frames[c->n++] = aml_strndup(f, len);
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static inline void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/* The shared fixture: one server over a generated in-memory bank, made on
 * first use by the test's own setup() through pair_serve(). */
static aml_store *store;
static aml_app app;
static mcp_server *srv;

static int setup(void);

/* Generates the bank of `o` into a new in-memory store and serves it with
 * the mcp-server-aml tools, calls recorded as `actor`. 0 or -1. */
static inline int pair_serve(const aml_gen_opts *o, const char *actor)
{
    if (srv)
        return 0;
    aml_err err = {{0}};
    if (amltest_open(&store, &err) || aml_gen_store(store, o, NULL, &err))
        return -1;
    app.store = store;
    app.actor = actor;
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.name = "mcp-server-aml";
    so.workers = 2;
    so.log = quiet;
    mcp_error e;
    if (mcp_server_new(&srv, &so, &e) || aml_tools_register(srv, &app, &e)) {
        fprintf(stderr, "setup: %s\n", e.message);
        return -1;
    }
    return 0;
}

typedef struct session {
    capture cap;
    mcp_conn *conn;
    int next_id;
} session;

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits for the response with id `id`; returns the parsed frame (caller frees). */
static inline mcp_json_doc *await(session *s, int id)
{
    char needle[32];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    for (int t = 0; t < 30000; t++) {
        pthread_mutex_lock(&s->cap.mu);
        for (size_t i = 0; i < s->cap.n; i++) {
            if (!s->cap.frames[i] || !strstr(s->cap.frames[i], needle))
                continue;
            mcp_json_doc *d = NULL;
            mcp_json_parse(&d, s->cap.frames[i], strlen(s->cap.frames[i]), NULL, NULL);
            const mcp_json *idv = mcp_json_get(mcp_json_doc_root(d), "id");
            if (d && mcp_json_int(idv) == id && mcp_json_typeof(idv) == MCP_JSON_INT) {
                free(s->cap.frames[i]);
                s->cap.frames[i] = NULL;
                pthread_mutex_unlock(&s->cap.mu);
                return d;
            }
            mcp_json_doc_free(d);
        }
        pthread_mutex_unlock(&s->cap.mu);
        sleep_ms(1);
    }
    return NULL;
}

static inline void send_raw(session *s, const char *frame)
{
    mcp_conn_recv(s->conn, frame, strlen(frame));
}

static inline int open_session(session *s, const char *version)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->cap.mu, NULL);
    if (setup() || mcp_conn_new(&s->conn, srv, capture_send, &s->cap))
        return -1;
    char init[512];
    snprintf(init, sizeof init,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
             "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}",
             version);
    send_raw(s, init);
    mcp_json_doc *d = await(s, 1);
    int ok = d && mcp_json_str_eq(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "protocolVersion"), version);
    mcp_json_doc_free(d);
    send_raw(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    s->next_id = 100;
    return ok ? 0 : -1;
}

static inline void close_session(session *s)
{
    mcp_conn_close(s->conn, 5000);
    mcp_conn_free(s->conn);
    for (size_t i = 0; i < s->cap.n; i++)
        free(s->cap.frames[i]);
    free(s->cap.frames);
    pthread_mutex_destroy(&s->cap.mu);
}

/* tools/call with `args` (JSON text); returns the whole response frame. */
static inline mcp_json_doc *call(session *s, const char *tool, const char *args)
{
    int id = s->next_id++;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    aml_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                       "\"arguments\":",
                   id, tool);
    aml_buf_puts(&b, args);
    aml_buf_puts(&b, "}}");
    mcp_conn_recv(s->conn, b.data, b.len);
    mcp_buf_cleanup(&b);
    return await(s, id);
}

static inline const mcp_json *result(mcp_json_doc *d)
{
    return mcp_json_get(mcp_json_doc_root(d), "result");
}

static inline const char *first_text(mcp_json_doc *d)
{
    return mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(result(d), "content"), 0), "text"), NULL);
}

static inline int64_t count(const char *sql)
{
    aml_st *st = NULL;
    int64_t v = -1;
    aml_store_lock(store);
    if ((st = aml_prepare(store, sql)) != NULL && aml_step(st) == AML_ROW)
        v = aml_col_int(st, 0);
    aml_finalize(st);
    aml_store_unlock(store);
    return v;
}

#endif /* AML_MCPPAIR_H */
