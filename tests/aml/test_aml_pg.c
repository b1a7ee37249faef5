/*
 * The PostgreSQL store on a real server (run under tests/lib/pg.sh, which
 * sets AML_TEST_DB): placeholder translation, the URI without its password
 * in every message, the schema set up, reopened, a stranger's database and
 * a newer schema refused, concurrent first opens, statement round trips
 * (NULL, bigint extremes, quotes and Unicode, `?` inside literals, doubles
 * and numerics), transactions and rollback, SQLSTATEs, streams, COPY.
 */
#include "store/pg_conn.h"
#include "store/store.h"
#include "pgtest.h"
#include "testlib.h"

#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

static void test_translate(void)
{
    int n = 0;
    char *t = aml_pg_translate("SELECT ?, '?''?', \"a?\", ? -- ?\n, /* ? */ ?3, E'\\'?', $x$ ? $x$, ?", &n);
    T_NOT_NULL(t);
    T_EQ_STR(t, "SELECT $1, '?''?', \"a?\", $2 -- ?\n, /* ? */ $3, E'\\'?', $x$ ? $x$, $4");
    T_EQ_INT(n, 4);
    free(t);
    t = aml_pg_translate("WHERE substr(key, 1, length(?1)) = ?1", &n);
    T_EQ_STR(t, "WHERE substr(key, 1, length($1)) = $1");
    T_EQ_INT(n, 1);
    free(t);
    T_NULL(aml_pg_translate("SELECT ?0", &n));
    T_NULL(aml_pg_translate("SELECT ?99999", &n));
}

static void test_redact(void)
{
    char out[256];
    aml_pg_redact("postgresql://alice:s3cret@db.example:5433/aml?sslmode=require&password=x2&application_name=a", out,
                  sizeof out);
    T_EQ_STR(out, "postgresql://alice@db.example:5433/aml?sslmode=require&application_name=a");
    aml_pg_redact("postgres://bob@h/d?password=only", out, sizeof out);
    T_EQ_STR(out, "postgres://bob@h/d");
    aml_pg_redact("postgresql://u:p@w@h/d", out, sizeof out);
    T_EQ_STR(out, "postgresql://u@h/d");
    aml_pg_redact("postgresql:///d", out, sizeof out);
    T_EQ_STR(out, "postgresql:///d");
}

/* A connection with the schema set up in a fresh schema of the test database. */
static aml_pg *fresh(char *uri, size_t n)
{
    aml_pg *pg = NULL;
    aml_err err = {{0}};
    if (pgt_fresh(uri, n, NULL, 0))
        return NULL;
    if (aml_pg_connect(&pg, uri, &err) || aml_pg_schema_open(pg, AML_OPEN_CREATE, NULL, NULL, &err)) {
        fprintf(stderr, "fresh: %s\n", err.msg);
        aml_pg_free(pg);
        return NULL;
    }
    return pg;
}

static int64_t one_int(aml_pg *pg, const char *sql)
{
    aml_pg_st *st = aml_pg_get(pg, sql, 0);
    int64_t v = -1;
    if (st && aml_pg_step(st) == AML_ROW)
        v = aml_pg_col_int(st, 0);
    if (st)
        aml_pg_reset(st);
    return v;
}

static void test_password_refused(void)
{
    aml_pg *pg = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_pg_connect(&pg, "postgresql://aml:hunter2@127.0.0.1:1/aml", &err), -1);
    T_TRUE(strstr(err.msg, "hunter2") == NULL);
    T_TRUE(strstr(err.msg, "password") != NULL);
    T_EQ_INT(aml_pg_connect(&pg, "postgresql://aml@127.0.0.1:1/aml?password=hunter2&connect_timeout=2", &err), -1);
    T_TRUE(strstr(err.msg, "hunter2") == NULL);
    /* Nobody listens on port 1: a clear "cannot connect" naming the URI. */
    T_EQ_INT(aml_pg_connect(&pg, "postgresql://aml@127.0.0.1:1/aml?connect_timeout=2", &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    T_TRUE(strstr(err.msg, "cannot connect") != NULL);
    T_TRUE(strstr(err.msg, "postgresql://aml@127.0.0.1:1/aml") != NULL);
}

static void test_schema(void)
{
    char uri[512];
    aml_pg *pg = fresh(uri, sizeof uri);
    T_NOT_NULL(pg);
    if (!pg)
        return;
    T_EQ_INT(one_int(pg, "SELECT version FROM aml_schema"), AML_SCHEMA_VERSION);
    T_TRUE(one_int(pg, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()") >= 20);
    /* Text sorts by bytes whatever the database's locale. */
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO meta VALUES ('b', '1'), ('B', '2'), ('a', '3'), ('\xc3\xa9', '4')"), 0);
    static const char order[] = "SELECT string_agg(key, ',' ORDER BY key) FROM meta";
    aml_pg_st *st = aml_pg_get(pg, order, 0);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_STR(aml_pg_col_text(st, 0), "B,a,b,\xc3\xa9");
    aml_pg_reset(st);
    /* The append-only triggers, with SQLite's messages. */
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO audit_log VALUES (1, 'a', 'b', 'c', NULL, NULL, NULL, 'r', NULL, 'ok', "
                             "NULL, 'p', 'e')"),
             0);
    T_EQ_INT(aml_pg_exec(pg, "UPDATE audit_log SET outcome = 'error'"), -1);
    T_TRUE(strstr(aml_pg_errmsg(pg), "audit_log is append-only") != NULL);
    T_EQ_INT(aml_pg_exec(pg, "DELETE FROM audit_log"), -1);
    T_EQ_INT(aml_pg_exec(pg, "TRUNCATE audit_log"), -1);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM audit_log"), 1);
    aml_pg_free(pg);
    /* Reopened: nothing to do; read-only works. */
    aml_err err = {{0}};
    T_EQ_INT(aml_pg_connect(&pg, uri, &err), 0);
    T_EQ_INT(aml_pg_schema_open(pg, AML_OPEN_READONLY, NULL, NULL, &err), 0);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM meta"), 4);
    /* A newer schema is refused. */
    T_EQ_INT(aml_pg_exec(pg, "UPDATE aml_schema SET version = 99"), 0);
    aml_pg_free(pg);
    T_EQ_INT(aml_pg_connect(&pg, uri, &err), 0);
    T_EQ_INT(aml_pg_schema_open(pg, 0, NULL, NULL, &err), -1);
    T_TRUE(strstr(err.msg, "newer") != NULL);
    aml_pg_free(pg);
}

static void test_stranger(void)
{
    char uri[512], schema[64], sql[200];
    T_EQ_INT(pgt_fresh(uri, sizeof uri, schema, sizeof schema), 0);
    snprintf(sql, sizeof sql, "CREATE TABLE %s.orders(id int); INSERT INTO %s.orders VALUES (1)", schema, schema);
    T_EQ_INT(pgt_exec(sql), 0);
    aml_pg *pg = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_pg_connect(&pg, uri, &err), 0);
    T_EQ_INT(aml_pg_schema_open(pg, AML_OPEN_CREATE, NULL, NULL, &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    T_TRUE(strstr(err.msg, "not an mcp-server-aml case store") != NULL);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"), 1);
    aml_pg_free(pg);
}

/* Four processes open the same empty schema at once: one sets it up, all succeed. */
static void test_concurrent_open(void)
{
    char uri[512];
    T_EQ_INT(pgt_fresh(uri, sizeof uri, NULL, 0), 0);
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            aml_pg *pg = NULL;
            aml_err err = {{0}};
            int rc = aml_pg_connect(&pg, uri, &err) || aml_pg_schema_open(pg, AML_OPEN_CREATE, NULL, NULL, &err);
            if (rc)
                fprintf(stderr, "child: %s\n", err.msg);
            aml_pg_free(pg);
            _exit(rc ? 1 : 0);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        waitpid(kids[i], &status, 0);
        T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

static void test_round_trip(void)
{
    char uri[512];
    aml_pg *pg = fresh(uri, sizeof uri);
    T_NOT_NULL(pg);
    if (!pg)
        return;
    static const char ins[] = "INSERT INTO customers(customer_id, customer_type, full_name, occupation, pep, "
                              "expected_monthly_cash_minor) VALUES (?, 'individual', ?, ?, ?, ?)";
    static const char hostile[] = "Robert'); DROP TABLE customers; -- \xe2\x82\xac \xf0\x9f\x98\x80 ?";
    aml_pg_st *st = aml_pg_get(pg, ins, 0);
    T_NOT_NULL(st);
    aml_pg_bind(st, 1, "C'1\"?", 5, AML_PG_UNKNOWN);
    aml_pg_bind(st, 2, hostile, strlen(hostile), AML_PG_UNKNOWN);
    aml_pg_bind(st, 3, NULL, 0, AML_PG_UNKNOWN);
    aml_pg_bind_int(st, 4, INT64_MAX);
    aml_pg_bind_int(st, 5, INT64_MIN);
    T_EQ_INT(aml_pg_step(st), AML_DONE);
    T_EQ_INT(aml_pg_changes(pg), 1);
    static const char sel[] = "SELECT full_name, occupation, pep, expected_monthly_cash_minor, '?' || ?, "
                              "pep = ?, avg(pep::numeric) - 0.5, 2.5::float8 FROM customers "
                              "WHERE customer_id = ? GROUP BY 1, 2, 3, 4";
    st = aml_pg_get(pg, sel, 0);
    aml_pg_bind(st, 1, "x", 1, AML_PG_UNKNOWN);
    aml_pg_bind_int(st, 2, INT64_MAX);
    aml_pg_bind(st, 3, "C'1\"?", 5, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_STR(aml_pg_col_text(st, 0), hostile);
    T_TRUE(aml_pg_col_null(st, 1));
    T_EQ_STR(aml_pg_col_text(st, 1), "");
    T_TRUE(aml_pg_col_int(st, 2) == INT64_MAX);
    T_TRUE(aml_pg_col_int(st, 3) == INT64_MIN);
    T_EQ_STR(aml_pg_col_text(st, 4), "?x");
    T_EQ_STR(aml_pg_col_text(st, 5), "1");
    T_EQ_INT(aml_pg_col_int(st, 5), 1);
    T_TRUE(aml_pg_col_int(st, 6) == INT64_MAX - 1);
    T_EQ_DBL(aml_pg_col_double(st, 7), 2.5);
    T_EQ_INT(aml_pg_col_int(st, 7), 2);
    T_EQ_INT(aml_pg_step(st), AML_DONE);
    /* The same text again: cached, bindings cleared, the same prepared statement. */
    T_TRUE(aml_pg_get(pg, sel, 0) == st);
    aml_pg_bind(st, 3, "nobody", 6, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), AML_DONE);
    aml_pg_reset(st);
    /* A unique violation keeps its SQLSTATE. */
    st = aml_pg_get(pg, ins, 0);
    aml_pg_bind(st, 1, "C'1\"?", 5, AML_PG_UNKNOWN);
    aml_pg_bind(st, 2, "again", 5, AML_PG_UNKNOWN);
    aml_pg_bind_int(st, 4, 0);
    T_EQ_INT(aml_pg_step(st), -1);
    T_EQ_STR(aml_pg_sqlstate(pg), "23505");
    aml_pg_free(pg);
}

static void test_transactions(void)
{
    char uri[512];
    aml_pg *pg = fresh(uri, sizeof uri);
    T_NOT_NULL(pg);
    if (!pg)
        return;
    T_EQ_INT(aml_pg_in_tx(pg), 0);
    T_EQ_INT(aml_pg_begin(pg), 0);
    T_EQ_INT(aml_pg_in_tx(pg), 1);
    T_EQ_INT(aml_pg_begin(pg), -1);
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO meta VALUES ('k', 'v')"), 0);
    aml_pg_rollback(pg);
    T_EQ_INT(aml_pg_in_tx(pg), 0);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM meta"), 0);
    /* An error aborts the transaction: committing it fails and rolls back. */
    T_EQ_INT(aml_pg_begin(pg), 0);
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO meta VALUES ('k', 'v')"), 0);
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO meta VALUES ('k', 'again')"), -1);
    T_EQ_INT(aml_pg_in_tx(pg), 1);
    T_EQ_INT(aml_pg_commit(pg), -1);
    T_TRUE(strstr(aml_pg_errmsg(pg), "rolled back") != NULL);
    T_EQ_INT(aml_pg_in_tx(pg), 0);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM meta"), 0);
    /* Rowid keys: largest + 1 as SQLite, read back with RETURNING. */
    T_EQ_INT(aml_pg_exec(pg, "INSERT INTO accounts(acct_no, account_id) VALUES (41, 'A41')"), 0);
    T_EQ_INT(one_int(pg, "INSERT INTO accounts(account_id) VALUES ('A42') RETURNING acct_no"), 42);
    aml_pg_free(pg);
}

static void test_stream_and_copy(void)
{
    char uri[512];
    aml_pg *pg = fresh(uri, sizeof uri);
    T_NOT_NULL(pg);
    if (!pg)
        return;
    T_EQ_INT(aml_pg_copy_begin(pg, "COPY meta(key, value) FROM STDIN"), 0);
    char key[32];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(key, sizeof key, "k%05d", i);
        aml_pg_copy_text(pg, key, (size_t)n);
        if (i == 7)
            aml_pg_copy_text(pg, "tab\there\nnew \\ line\r", 20);
        else
            aml_pg_copy_int(pg, i);
        T_EQ_INT(aml_pg_copy_row_end(pg), 0);
    }
    T_EQ_INT(aml_pg_copy_end(pg, NULL), 0);
    T_EQ_INT(aml_pg_changes(pg), 10000);
    static const char v7[] = "SELECT value FROM meta WHERE key = 'k00007'";
    aml_pg_st *st = aml_pg_get(pg, v7, 0);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_STR(aml_pg_col_text(st, 0), "tab\there\nnew \\ line\r");
    aml_pg_reset(st);
    /* A failed COPY (a NULL in a NOT NULL column) fails whole. */
    T_EQ_INT(aml_pg_copy_begin(pg, "COPY meta(key, value) FROM STDIN"), 0);
    aml_pg_copy_text(pg, "x", 1);
    aml_pg_copy_null(pg);
    aml_pg_copy_row_end(pg);
    T_EQ_INT(aml_pg_copy_end(pg, NULL), -1);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM meta"), 10000);
    /* A stream reads every row in batches, and other statements run between its steps. */
    static const char all[] = "SELECT key FROM meta WHERE key > ? ORDER BY key";
    st = aml_pg_get(pg, all, 1);
    aml_pg_bind(st, 1, "k", 1, AML_PG_UNKNOWN);
    int n = 0, ordered = 1;
    char prev[32] = "";
    while (aml_pg_step(st) == AML_ROW) {
        if (strcmp(prev, aml_pg_col_text(st, 0)) >= 0)
            ordered = 0;
        snprintf(prev, sizeof prev, "%s", aml_pg_col_text(st, 0));
        if (n++ == 5000)
            T_EQ_INT(one_int(pg, "SELECT count(*) FROM meta"), 10000);
    }
    T_EQ_INT(n, 10000);
    T_TRUE(ordered);
    T_EQ_INT(aml_pg_in_tx(pg), 0);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0); /* closed with the last row */
    /* Outside a transaction the cursor is held: transactions begin and commit between its steps. */
    st = aml_pg_get(pg, all, 1);
    aml_pg_bind(st, 1, "k", 1, AML_PG_UNKNOWN);
    n = 0;
    while (aml_pg_step(st) == AML_ROW)
        if (n++ % 2500 == 0) {
            T_EQ_INT(aml_pg_begin(pg), 0);
            T_EQ_INT(aml_pg_exec(pg, "UPDATE meta SET value = value WHERE key = 'k00001'"), 0);
            T_EQ_INT(aml_pg_commit(pg), 0);
        }
    T_EQ_INT(n, 10000);
    /* Inside one: a plain cursor; a reset closes it, and one whose transaction ended is left alone. */
    T_EQ_INT(aml_pg_begin(pg), 0);
    st = aml_pg_get(pg, all, 1);
    aml_pg_bind(st, 1, "k", 1, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 1);
    aml_pg_reset(st);
    T_EQ_INT(one_int(pg, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_INT(aml_pg_commit(pg), 0);
    T_EQ_INT(aml_pg_begin(pg), 0);
    aml_pg_reset(st);
    T_EQ_INT(aml_pg_commit(pg), 0); /* the transaction after it is intact */
    aml_pg_free(pg);
}

/* The server ends the session (a restart, an administrator): one statement fails, the next ones work. */
static void test_reconnect(void)
{
    char uri[512], sql[96];
    aml_pg *pg = fresh(uri, sizeof uri);
    T_NOT_NULL(pg);
    if (!pg)
        return;
    static const char q[] = "SELECT count(*) FROM meta WHERE key <> ?";
    aml_pg_st *st = aml_pg_get(pg, q, 0);
    aml_pg_bind(st, 1, "x", 1, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", PQbackendPID(aml_pg_conn(pg)));
    T_EQ_INT(pgt_exec(sql), 0);
    st = aml_pg_get(pg, q, 0);
    aml_pg_bind(st, 1, "x", 1, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), -1);
    T_TRUE(strstr(aml_pg_errmsg(pg), "connection to PostgreSQL lost") != NULL);
    st = aml_pg_get(pg, q, 0);
    aml_pg_bind(st, 1, "x", 1, AML_PG_UNKNOWN);
    T_EQ_INT(aml_pg_step(st), AML_ROW);
    T_EQ_INT(aml_pg_col_int(st, 0), 0);
    aml_pg_reset(st);
    aml_pg_free(pg);
}

/* ---- through the store API (store.h) ---------------------------------------- */

static aml_store *store_fresh(char *uri, size_t n)
{
    aml_store *s = NULL;
    aml_err err = {{0}};
    if (pgt_fresh(uri, n, NULL, 0) || aml_store_open(&s, uri, AML_OPEN_CREATE, &err)) {
        fprintf(stderr, "store_fresh: %s\n", err.msg);
        return NULL;
    }
    return s;
}

static void test_store_open(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    T_EQ_INT(aml_store_backend(s), AML_BACKEND_PG);
    /* Seeded by schema.c's seed of migration 1, in the migration's transaction. */
    aml_st *st = aml_prepare(s, "SELECT count(*) FROM jurisdiction_lists WHERE list_name = ?");
    T_NOT_NULL(st);
    aml_bind_text(st, 1, "fatf_call_for_action");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_INT(aml_col_int(st, 0), 3);
    aml_finalize(st);
    /* One-off SQL is not cached by address: the same buffer with another text runs the new text. */
    char buf[64];
    for (int k = 1; k <= 2; k++) {
        snprintf(buf, sizeof buf, "SELECT %d", k);
        st = aml_prepare(s, buf);
        T_EQ_INT(aml_step(st), AML_ROW);
        T_EQ_INT(aml_col_int(st, 0), k);
        aml_finalize(st);
    }
    /* aml_reset keeps the bindings; aml_stmt clears them. */
    static const char cat[] = "SELECT CAST(? AS text) || CAST(? AS text)";
    st = aml_stmt(s, cat);
    aml_bind_text(st, 1, "a");
    aml_bind_text(st, 2, "b");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_STR(aml_col_text(st, 0), "ab");
    aml_reset(st);
    aml_bind_text(st, 2, "c");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_STR(aml_col_text(st, 0), "ac");
    st = aml_stmt(s, cat);
    aml_bind_text(st, 2, "d");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_TRUE(aml_col_null(st, 0));
    aml_reset(st);
    char v[32];
    T_EQ_INT(aml_meta_get(s, "schema.created_by", v, sizeof v), 0);
    T_EQ_STR(v, "mcp-server-aml");
    aml_err err = {{0}};
    T_EQ_INT(aml_meta_set(s, "k", "v", &err), 0);
    /* A unique violation is told apart. */
    T_EQ_INT(aml_exec(s, "INSERT INTO meta VALUES ('k', 'again')", &err), -1);
    T_TRUE(aml_err_unique(s));
    T_EQ_INT(aml_exec(s, "INSERT INTO meta VALUES (NULL, 'x')", &err), -1);
    T_FALSE(aml_err_unique(s));
    aml_store_close(s);
    /* Errors naming the store never show a password. */
    T_EQ_INT(aml_store_open(&s, "postgresql://aml:hunter2@127.0.0.1:1/aml", 0, &err), -1);
    T_TRUE(strstr(err.msg, "hunter2") == NULL);
    T_EQ_INT(aml_store_open(&s, "postgres://aml@127.0.0.1:1/aml?connect_timeout=2", 0, &err), -1);
    T_TRUE(strstr(err.msg, "cannot connect") != NULL);
}

/* A backend to end after a delay, from another connection (pg_terminate_backend). */
typedef struct killer {
    int pid;     /* the backend */
    long ms;     /* after this long */
} killer;

static void *kill_later(void *arg)
{
    const killer *k = arg;
    struct timespec ts = {k->ms / 1000, (k->ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", k->pid);
    pgt_exec(sql);
    return NULL;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The server ends the session while statements sent ahead (a pipeline) are in flight: the statement
 * waiting for its answer fails at once saying the connection was lost, the others sent with it do not
 * hang or answer from the dead session, and the next statement runs on a new connection (prepared
 * again). aml_store_resets counts the reset; aml_store_check notices a session ended while idle.
 */
static void test_pipeline_lost(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    static const char slow[] = "SELECT pg_backend_pid(), pg_sleep(CAST(? AS float8))";
    static const char quick[] = "SELECT count(*) FROM meta WHERE key <> ?";
    aml_st *st = aml_stmt(s, slow);
    aml_bind_text(st, 1, "0");
    T_EQ_INT(aml_step(st), AML_ROW);
    static killer k;
    k.pid = (int)aml_col_int(st, 0);
    k.ms = 300;
    aml_reset(st);
    aml_st *q = aml_stmt(s, quick); /* run once, as on a warm connection */
    aml_bind_text(q, 1, "x");
    T_EQ_INT(aml_step(q), AML_ROW);
    aml_reset(q);
    T_EQ_INT(aml_store_resets(s), 0);
    /* Both sent ahead; reading the first waits for the server, which is ended meanwhile. */
    st = aml_stmt(s, slow);
    aml_bind_text(st, 1, "3");
    aml_prefetch(st);
    q = aml_stmt(s, quick);
    aml_bind_text(q, 1, "x");
    aml_prefetch(q);
    pthread_t th;
    T_EQ_INT(pthread_create(&th, NULL, kill_later, &k), 0);
    double t0 = mono_s();
    st = aml_stmt(s, slow);
    aml_bind_text(st, 1, "3");
    T_EQ_INT(aml_step(st), -1);
    T_TRUE(mono_s() - t0 < 2.5); /* the loss, not the 3 s sleep, ended the wait */
    T_TRUE(strstr(aml_errmsg(s), "connection to PostgreSQL lost") != NULL);
    aml_reset(st);
    pthread_join(th, NULL);
    T_EQ_INT(aml_store_resets(s), 1);
    /* The other statement of the pipeline runs afresh, on the new connection. */
    q = aml_stmt(s, quick);
    aml_bind_text(q, 1, "x");
    T_EQ_INT(aml_step(q), AML_ROW);
    T_TRUE(aml_col_int(q, 0) > 0);
    aml_reset(q);
    st = aml_stmt(s, slow);
    aml_bind_text(st, 1, "0");
    T_EQ_INT(aml_step(st), AML_ROW);
    int pid2 = (int)aml_col_int(st, 0);
    T_TRUE(pid2 != k.pid);
    aml_reset(st);
    /* Ended while idle: the check between uses reconnects, and the next statement runs. */
    k.pid = pid2;
    k.ms = 0;
    kill_later(&k);
    for (int i = 0; i < 100 && aml_store_resets(s) == 1; i++) {
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
        aml_store_check(s);
    }
    T_EQ_INT(aml_store_resets(s), 2);
    q = aml_stmt(s, quick);
    aml_bind_text(q, 1, "x");
    T_EQ_INT(aml_step(q), AML_ROW);
    aml_reset(q);
    aml_store_close(s);
}

/*
 * Statements sent ahead on a connection that has not prepared them: the prepares go in the same pipeline,
 * so two statements cost one round trip; a statement whose prepare fails takes the pipeline's statements
 * after it down with it, and each then runs afresh, the bad one reporting the server's error.
 */
static void test_prefetch_unprepared(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    static const char one[] = "SELECT count(*) FROM meta WHERE key <> ?";
    static const char two[] = "SELECT CAST(? AS bigint) * 2";
    static const char bad[] = "SELECT no_such_column FROM meta WHERE key = ?";
    int64_t before = aml_store_round_trips(s);
    aml_st *a = aml_stmt(s, one), *b = aml_stmt(s, two);
    aml_bind_text(a, 1, "x");
    aml_prefetch(a);
    aml_bind_int(b, 1, 21);
    aml_prefetch(b);
    a = aml_stmt(s, one);
    aml_bind_text(a, 1, "x");
    T_EQ_INT(aml_step(a), AML_ROW);
    T_TRUE(aml_col_int(a, 0) > 0);
    aml_reset(a);
    b = aml_stmt(s, two);
    aml_bind_int(b, 1, 21);
    T_EQ_INT(aml_step(b), AML_ROW);
    T_EQ_INT(aml_col_int(b, 0), 42);
    aml_reset(b);
    T_EQ_INT(aml_store_round_trips(s) - before, 1);
    aml_st *c = aml_stmt(s, bad);
    aml_bind_text(c, 1, "x");
    aml_prefetch(c);
    b = aml_stmt(s, two);
    aml_bind_int(b, 1, 5);
    aml_prefetch(b);
    c = aml_stmt(s, bad);
    aml_bind_text(c, 1, "x");
    T_EQ_INT(aml_step(c), -1);
    T_TRUE(strstr(aml_errmsg(s), "no_such_column") != NULL);
    aml_reset(c);
    b = aml_stmt(s, two);
    aml_bind_int(b, 1, 5);
    T_EQ_INT(aml_step(b), AML_ROW);
    T_EQ_INT(aml_col_int(b, 0), 10);
    aml_reset(b);
    aml_store_close(s);
}

/* Arrays bound as text come back element for element; an account map reads many accounts in one statement. */
static void test_store_arrays(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    static const char *const texts[] = {"plain", "", "a \"quoted\" word", "back\\slash\\", "{braces},commas",
                                        NULL, "NULL", "caf\xc3\xa9 \xe2\x82\xac"};
    static const char unnest_text[] = "SELECT x, x IS NULL FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS a(x, k) "
                                      "ORDER BY k";
    aml_st *st = aml_stmt(s, unnest_text);
    T_EQ_INT(aml_bind_text_array(st, 1, texts, 8), 0);
    for (int k = 0; k < 8; k++) {
        T_EQ_INT(aml_step(st), AML_ROW);
        T_EQ_INT(aml_col_int(st, 1), texts[k] == NULL);
        T_EQ_STR(aml_col_text(st, 0), texts[k] ? texts[k] : "");
    }
    T_EQ_INT(aml_step(st), AML_DONE);
    static const int64_t nums[] = {INT64_MIN, -1, 0, 42, INT64_MAX};
    static const char unnest_int[] = "SELECT sum(CAST(x AS numeric)), count(*), max(x) FROM "
                                     "unnest(CAST(? AS bigint[])) AS a(x)";
    st = aml_stmt(s, unnest_int);
    T_EQ_INT(aml_bind_int_array(st, 1, nums, 5), 0);
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_STR(aml_col_text(st, 0), "40");
    T_EQ_INT(aml_col_int(st, 1), 5);
    T_EQ_INT(aml_col_int(st, 2), INT64_MAX);
    aml_reset(st);
    aml_err err = {{0}};
    T_EQ_INT(aml_exec(s, "INSERT INTO accounts(acct_no, account_id, bank_id, is_internal) VALUES "
                         "(7, 'ACC-7', 'BANK-A', 1), (9, 'ACC-9', NULL, 0)", &err), 0);
    aml_acct_map m;
    const int64_t want[] = {9, 7, 8, 7};
    for (int col = AML_ACCT_ID; col <= AML_ACCT_BANK; col++) { /* the statements are prepared at their first use */
        aml_acct_map_init(&m, s, col);
        T_EQ_INT(aml_acct_map_load(&m, want, 1), 0);
        T_NOT_NULL(aml_acct_map_get(&m, 7));
        aml_acct_map_cleanup(&m);
    }
    aml_acct_map_init(&m, s, AML_ACCT_BANK);
    int64_t before = aml_store_round_trips(s);
    T_EQ_INT(aml_acct_map_load(&m, want, 4), 0);
    T_EQ_INT(aml_store_round_trips(s) - before, 1);
    T_EQ_STR(aml_acct_map_get(&m, 7), "BANK-A");
    T_TRUE(aml_acct_map_get(&m, 9) == NULL); /* NULL bank */
    T_TRUE(aml_acct_map_get(&m, 8) == NULL); /* no such account */
    T_EQ_INT(aml_store_round_trips(s) - before, 1);
    aml_acct_map_cleanup(&m);
    aml_acct_map_init(&m, s, AML_ACCT_ID);
    T_EQ_STR(aml_acct_map_get(&m, 9), "ACC-9"); /* not loaded ahead: read when asked */
    T_EQ_INT(aml_store_round_trips(s) - before, 2);
    T_EQ_STR(aml_acct_map_get(&m, 9), "ACC-9");
    T_EQ_INT(aml_store_round_trips(s) - before, 2);
    aml_acct_map_cleanup(&m);
    aml_store_close(s);
}

static void test_store_copy_stream(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    aml_err err = {{0}};
    T_EQ_INT(aml_copy_begin(s, "COPY accounts(acct_no, account_id, holder_name, opening_deposit_minor) FROM STDIN",
                            &err),
             0);
    char id[32];
    for (int i = 1; i <= 20000; i++) {
        snprintf(id, sizeof id, "ACC-%06d", i);
        aml_copy_int(s, i);
        aml_copy_text(s, id);
        aml_copy_text(s, i == 5 ? "O'Brien\t\\ \xc3\xa9" : NULL);
        aml_copy_int_opt(s, i, i % 2);
        T_EQ_INT(aml_copy_row_end(s, &err), 0);
    }
    T_EQ_INT(aml_copy_end(s, &err), 0);
    T_EQ_INT(aml_changes(s), 20000);
    T_EQ_INT(aml_account_no(s, "ACC-000005"), 5);
    static const char all[] = "SELECT acct_no, holder_name, opening_deposit_minor FROM accounts ORDER BY acct_no";
    aml_st *st = aml_stmt_stream(s, all);
    int64_t n = 0, sum = 0, nulls = 0;
    while (aml_step(st) == AML_ROW) {
        n++;
        sum += aml_col_int(st, 0);
        nulls += aml_col_null(st, 2);
        if (aml_col_int(st, 0) == 5)
            T_EQ_STR(aml_col_text(st, 1), "O'Brien\t\\ \xc3\xa9");
    }
    aml_reset(st);
    T_EQ_INT(n, 20000);
    T_TRUE(sum == 20000LL * 20001 / 2);
    T_EQ_INT(nulls, 10000);
    /* A rowid insert after COPY's explicit keys continues from the largest. */
    st = aml_stmt(s, "INSERT INTO accounts(account_id) VALUES (?) RETURNING acct_no");
    aml_bind_text(st, 1, "NEW");
    int64_t no = 0;
    T_EQ_INT(aml_step_id(s, st, &no, &err), 0);
    T_EQ_INT(no, 20001);
    /* COPY on SQLite says it needs PostgreSQL. */
    aml_store *lite = NULL;
    T_EQ_INT(aml_store_open(&lite, NULL, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_copy_begin(lite, "COPY meta FROM STDIN", &err), -1);
    T_TRUE(strstr(err.msg, "PostgreSQL") != NULL);
    aml_store_close(lite);
    aml_store_close(s);
}

/* Two processes append to one chain at once; it verifies whole. */
static void test_audit_two_writers(void)
{
    char uri[512];
    aml_store *s = store_fresh(uri, sizeof uri);
    T_NOT_NULL(s);
    if (!s)
        return;
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            aml_store *c = NULL;
            aml_err err = {{0}};
            int bad = aml_store_open(&c, uri, 0, &err);
            for (int i = 0; i < 200 && !bad; i++) {
                char req[65], detail[32];
                snprintf(detail, sizeof detail, "writer %d call %d", k, i);
                aml_sha256_hex(detail, strlen(detail), req);
                aml_audit_entry e = {"tester", "tool.assessCase", NULL, req, req, "ok", detail};
                bad = aml_audit_append(c, &e, &err);
            }
            if (bad)
                fprintf(stderr, "writer %d: %s\n", k, err.msg);
            aml_store_close(c);
            _exit(bad ? 1 : 0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int status = 0;
        waitpid(kids[k], &status, 0);
        T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    int64_t bad = 0;
    aml_err err = {{0}};
    T_EQ_INT(aml_audit_verify(s, stderr, &bad, &err), 0);
    aml_st *st = aml_prepare(s, "SELECT count(*), max(seq) FROM audit_log");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_INT(aml_col_int(st, 0), 400);
    T_EQ_INT(aml_col_int(st, 1), 400);
    aml_finalize(st);
    /* A cut tail (the trigger dropped by someone with access) is found through audit_head. */
    T_EQ_INT(aml_exec(s, "DROP TRIGGER audit_no_delete ON audit_log; DELETE FROM audit_log WHERE seq = 400", &err), 0);
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 1);
    T_EQ_INT(bad, 400);
    aml_store_close(s);
}

static int have_db(void)
{
    if (pgt_base())
        return 1;
    fprintf(stderr, "test_aml_pg: AML_TEST_DB is not set: run it under tests/lib/pg.sh\n");
    return 0;
}

static void test_environment(void)
{
    T_TRUE(have_db());
}

TEST_MAIN(TEST(test_environment), TEST(test_translate), TEST(test_redact), TEST(test_password_refused),
          TEST(test_schema), TEST(test_stranger), TEST(test_concurrent_open), TEST(test_round_trip),
          TEST(test_transactions), TEST(test_stream_and_copy), TEST(test_reconnect), TEST(test_store_open),
          TEST(test_store_copy_stream), TEST(test_store_arrays), TEST(test_prefetch_unprepared),
          TEST(test_pipeline_lost),
          TEST(test_audit_two_writers))
