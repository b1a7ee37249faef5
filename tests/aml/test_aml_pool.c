/*
 * Concurrent tool calls over a connection pool (store/pool.h, docs/aml.md
 * "Concurrency"): two identical generated banks in SQLite files (WAL); on
 * one the calls run one at a time, on the other all at once on four
 * workers with a pool of four connections: assessCase on every case,
 * traceFunds, listCases, listTypologies and the writing assignCase. Every
 * answer equals the serial one, the cases end in the same state, each
 * call left exactly one audit row and the chain verifies. With
 * AML_TEST_DB (tests/lib/pg.sh) the same runs on two PostgreSQL schemas.
 * The concurrent run must have had two or more connections lent at once.
 * Also: the in-memory store keeps one connection; a pool hands out no
 * connection twice and waits when all are lent.
 */
#include "amltest.h"
#include "pgtest.h"
#include "tools/tools.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define NCASES 12
#define NCALLS (NCASES * 2 + 6)

typedef struct cap {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *frames[NCALLS + 8]; /* by id - 100 */
    int got;
} cap;

static mcp_status on_frame(const char *f, size_t n, void *ud)
{
    cap *c = ud;
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, f, n, NULL, NULL) != MCP_OK)
        return MCP_OK;
    int64_t id = mcp_json_int(mcp_json_get(mcp_json_doc_root(d), "id"));
    mcp_json_doc_free(d);
    pthread_mutex_lock(&c->mu);
    if (id >= 100 && id < 100 + NCALLS + 8 && !c->frames[id - 100]) {
        c->frames[id - 100] = aml_strndup(f, n);
        c->got++;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static void silent(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/* Waits until `n` answers arrived (at most a minute). 0 when they did. */
static int wait_for(cap *c, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    while (c->got < n && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &until);
    int ok = c->got >= n;
    pthread_mutex_unlock(&c->mu);
    return ok ? 0 : -1;
}

static char case_ids[NCASES][AML_CASE_ID_MAX + 1];
static char account[128];

/* The bank both runs start from: a fresh SQLite file, or a fresh PostgreSQL schema.
 * 0, -1 on failure, 1 when the generator cannot write to PostgreSQL yet (said on stderr). */
static int make_store(const char *dir, const char *name, char *where, size_t n)
{
    if (pgt_base()) {
        if (pgt_fresh(where, n, NULL, 0))
            return -1;
    } else {
        snprintf(where, n, "%s/%s.db", dir, name);
    }
    aml_store *s;
    aml_err err = {{0}};
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.customers = 80;
    o.days = 90;
    o.instances = 1;
    if (aml_store_open(&s, where, AML_OPEN_CREATE, &err))
        return -1;
    if (aml_gen_store(s, &o, NULL, &err)) {
        fprintf(stderr, "make_store: %s\n", err.msg);
        aml_store_close(s);
        return -1;
    }
    aml_st *st = aml_prepare(s, "SELECT case_id FROM cases ORDER BY case_id");
    for (int i = 0; st && i < NCASES && aml_step(st) == AML_ROW; i++)
        snprintf(case_ids[i], sizeof case_ids[i], "%s", aml_col_text(st, 0));
    aml_finalize(st);
    st = aml_prepare(s, "SELECT account_id FROM accounts ORDER BY account_id LIMIT 1");
    if (st && aml_step(st) == AML_ROW)
        snprintf(account, sizeof account, "%s", aml_col_text(st, 0));
    aml_finalize(st);
    aml_store_close(s);
    return 0;
}

/* The i-th call's frame (ids from 100). */
static void frame(int i, char *out, size_t n)
{
    char args[300];
    const char *tool = "assessCase";
    if (i < NCASES) {
        snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", case_ids[i]);
    } else if (i < 2 * NCASES) {
        int k = i - NCASES;
        if (k % 3 == 0) {
            tool = "assignCase";
            snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"assignee\":\"analyst-%d\"}", case_ids[k], k);
        } else if (k % 3 == 1) {
            tool = "traceFunds";
            snprintf(args, sizeof args, "{\"accountId\":\"%s\",\"maxHops\":2}", account);
        } else {
            tool = "assessTypology";
            snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"typologies\":[\"T01\",\"T03\"]}", case_ids[k]);
        }
    } else if (i % 2) {
        tool = "listCases";
        snprintf(args, sizeof args, "{\"status\":\"any\",\"limit\":100}");
    } else {
        tool = "listTypologies";
        snprintf(args, sizeof args, "{}");
    }
    snprintf(out, n,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             100 + i, tool, args);
}

/*
 * What must match the serial run: the structured result, except that a
 * workflow answer carries the time of the step (only its state and
 * assignee are compared) and listCases shows the risk levels the other
 * calls are setting (only the case ids are compared).
 */
static const char *or_dash(const char *v)
{
    return v ? v : "-";
}

static char *answer_of(const char *f, int i) /* mcp_free */
{
    mcp_json_doc *d = NULL;
    if (!f || mcp_json_parse(&d, f, strlen(f), NULL, NULL) != MCP_OK)
        return NULL;
    const mcp_json *r = mcp_json_get(mcp_json_doc_root(d), "result");
    const mcp_json *sc = mcp_json_get(r, "structuredContent");
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_buf_printf(&b, "error=%d ", mcp_json_bool(mcp_json_get(r, "isError")));
    int k = i - NCASES;
    if (i >= NCASES && i < 2 * NCASES && k % 3 == 0) {
        aml_buf_printf(&b, "%s %s", or_dash(mcp_json_str(mcp_json_get(mcp_json_get(sc, "workflow"), "state"), NULL)),
                       or_dash(mcp_json_str(mcp_json_get(mcp_json_get(sc, "workflow"), "assignee"), NULL)));
    } else if (i >= 2 * NCASES && i % 2) {
        const mcp_json *cases = mcp_json_get(sc, "cases");
        for (size_t j = 0; j < mcp_json_len(cases); j++)
            aml_buf_printf(&b, "%s,", or_dash(mcp_json_str(mcp_json_get(mcp_json_at(cases, j), "caseId"), NULL)));
    } else {
        mcp_jw_value(&w, sc);
    }
    mcp_json_doc_free(d);
    if (mcp_jw_status(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return b.data;
}

/* Runs every call on a server over a pool of `pool` connections to `where`, all at once or one by one. */
static int run_calls(const char *where, unsigned pool, int concurrent, char **answers, unsigned *peak)
{
    aml_app app = {NULL, "pool-test", NULL, NULL, NULL};
    aml_store *first;
    aml_err err = {{0}};
    if (aml_store_open(&first, where, 0, &err) || aml_pool_new(&app.pool, first, where, 0, pool, &err)) {
        fprintf(stderr, "run_calls: %s\n", err.msg);
        return -1;
    }
    app.store = aml_pool_first(app.pool);
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 4;
    so.log = silent;
    so.max_message = (size_t)16 << 20;
    mcp_server *srv;
    mcp_conn *conn;
    mcp_error e;
    static cap c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    if (mcp_server_new(&srv, &so, &e) || aml_tools_register(srv, &app, &e) || mcp_conn_new(&conn, srv, on_frame, &c))
        return -1;
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    mcp_conn_recv(conn, init, strlen(init));
    const char *inited = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcp_conn_recv(conn, inited, strlen(inited));
    int rc = 0;
    for (int i = 0; i < NCALLS && !rc; i++) {
        char f[512];
        frame(i, f, sizeof f);
        mcp_conn_recv(conn, f, strlen(f));
        if (!concurrent)
            rc = wait_for(&c, i + 1);
    }
    if (!rc)
        rc = wait_for(&c, NCALLS);
    for (int i = 0; i < NCALLS; i++) {
        answers[i] = answer_of(c.frames[i], i);
        free(c.frames[i]);
    }
    mcp_conn_close(conn, 5000);
    mcp_conn_free(conn);
    mcp_server_free(srv);
    *peak = aml_pool_peak(app.pool);
    aml_pool_free(app.pool);
    pthread_mutex_destroy(&c.mu);
    pthread_cond_destroy(&c.cv);
    return rc;
}

/* The cases' end state and the audit log: rows, and whether the chain holds. */
static char *end_state(const char *where, int64_t *audit_rows, int *chain)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, where, 0, &err))
        return NULL;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    aml_st *st = aml_prepare(s, "SELECT case_id, risk_level, case_score, last_assessment_id FROM cases ORDER BY case_id");
    while (st && aml_step(st) == AML_ROW)
        aml_buf_printf(&b, "%s %s %s %s\n", aml_col_text(st, 0), aml_col_text(st, 1), aml_col_text(st, 2),
                       aml_col_text(st, 3));
    aml_finalize(st);
    st = aml_prepare(s, "SELECT count(*) FROM audit_log");
    *audit_rows = st && aml_step(st) == AML_ROW ? aml_col_int(st, 0) : -1;
    aml_finalize(st);
    *chain = aml_audit_verify(s, NULL, NULL, &err);
    aml_store_close(s);
    return b.data; /* mcp_free */
}

static void test_concurrent_equals_serial(void)
{
    char dir[256], a[512], b[512];
    scratch_dir("/tmp/aml-pool-test", dir, sizeof dir);
    T_EQ_INT(make_store(dir, "serial", a, sizeof a), 0);
    T_EQ_INT(make_store(dir, "concurrent", b, sizeof b), 0);
    T_TRUE(case_ids[NCASES - 1][0] != '\0');
    int64_t rows_a0, rows_b0;
    int chain;
    char *sa = end_state(a, &rows_a0, &chain), *sb = end_state(b, &rows_b0, &chain);
    mcp_free(sa);
    mcp_free(sb);
    static char *serial[NCALLS], *conc[NCALLS];
    unsigned peak_serial = 0, peak_conc = 0;
    T_EQ_INT(run_calls(a, 4, 0, serial, &peak_serial), 0);
    T_EQ_INT(run_calls(b, 4, 1, conc, &peak_conc), 0);
    /* The calls really overlapped on several connections (one at a time before the pool). */
    T_EQ_INT((int)peak_serial, 1);
    T_TRUE(peak_conc >= 2);
    int same = 0;
    for (int i = 0; i < NCALLS; i++) {
        if (serial[i] && conc[i] && strcmp(serial[i], conc[i]) == 0 && strncmp(serial[i], "error=0", 7) == 0)
            same++;
        else
            fprintf(stderr, "call %d differs:\n  serial %.200s\n  concurrent %.200s\n", i, or_dash(serial[i]),
                    or_dash(conc[i]));
        mcp_free(serial[i]);
        mcp_free(conc[i]);
    }
    T_EQ_INT(same, NCALLS);
    int64_t rows_a, rows_b;
    int chain_a, chain_b;
    sa = end_state(a, &rows_a, &chain_a);
    sb = end_state(b, &rows_b, &chain_b);
    T_TRUE(sa && sb && strcmp(sa, sb) == 0);
    mcp_free(sa);
    mcp_free(sb);
    T_EQ_INT(chain_a, 0);
    T_EQ_INT(chain_b, 0);
    T_EQ_INT(rows_a - rows_a0, NCALLS);
    T_EQ_INT(rows_b - rows_b0, NCALLS);
}

/* A private in-memory database exists on one connection only: the pool keeps that one. */
static void test_memory_single(void)
{
    aml_store *s;
    aml_pool *p;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_pool_new(&p, s, ":memory:", 0, 8, &err), 0);
    T_EQ_INT((int)aml_pool_size(p), 1);
    T_TRUE(aml_pool_acquire(p) == s);
    aml_pool_release(p, s);
    aml_pool_free(p);
}

typedef struct borrower {
    aml_pool *p;
    aml_store *got;
} borrower;

static void *borrow(void *arg)
{
    borrower *b = arg;
    b->got = aml_pool_acquire(b->p);
    return NULL;
}

/* Every connection is lent once; a borrower waits while all are out and gets the one given back. */
static void test_bounded(void)
{
    char dir[256], where[512];
    scratch_dir("/tmp/aml-pool-test", dir, sizeof dir);
    snprintf(where, sizeof where, "%s/bounded.db", dir);
    if (pgt_base())
        T_EQ_INT(pgt_fresh(where, sizeof where, NULL, 0), 0);
    aml_store *s;
    aml_pool *p;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, where, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_pool_new(&p, s, where, 0, 3, &err), 0);
    T_EQ_INT((int)aml_pool_size(p), 3);
    aml_store *c[3];
    for (int i = 0; i < 3; i++)
        c[i] = aml_pool_acquire(p);
    T_TRUE(c[0] != c[1] && c[1] != c[2] && c[0] != c[2]);
    borrower b = {p, NULL};
    pthread_t t;
    T_EQ_INT(pthread_create(&t, NULL, borrow, &b), 0);
    struct timespec ms50 = {0, 50000000L};
    nanosleep(&ms50, NULL);
    /* Still waiting: nothing was given back. (Read after join: the thread owns b until then.) */
    aml_pool_release(p, c[1]);
    pthread_join(t, NULL);
    T_TRUE(b.got == c[1]);
    aml_pool_release(p, c[0]);
    aml_pool_release(p, c[2]);
    aml_pool_release(p, b.got);
    aml_pool_free(p);
}

TEST_MAIN(TEST(test_concurrent_equals_serial), TEST(test_memory_single), TEST(test_bounded))
