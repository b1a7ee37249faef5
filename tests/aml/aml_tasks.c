/*
 * Long jobs as MCP tasks (docs/aml.md, "Long jobs as tasks"): runScan and
 * importTransactions.
 *
 * - `mcp-cli --task call runScan` against `mcp-server-aml --db STORE`
 *   shows the scan's progress on stderr and its result, resuming the job a
 *   stopped `scan` left.
 * - A runScan task cancelled after a batch keeps the batches it finished;
 *   listCases and listTypologies calls are answered while it runs; the next
 *   runScan resumes the job without redoing them and makes the same cases
 *   as a plain scan. (In the server's process: the test holds the write
 *   lock while it cancels, so that the scan cannot run to its end first.)
 * - importTransactions refuses paths that leave --import-dir ('..',
 *   absolute, symbolic links), is absent without it, and a cancelled import
 *   keeps nothing, then the same import completes.
 *
 * On SQLite without AML_TEST_DB; on PostgreSQL when tests/lib/pg.sh sets it.
 *
 * usage: aml_tasks PATH-TO-mcp-server-aml PATH-TO-mcp-cli WORKDIR
 */
#include "amltest.h"
#include "pgtest.h"
#include "runbin.h"
#include "tools/tools.h"

#include <limits.h>
#include <pthread.h>
#include <time.h>

static const char *aml_bin, *cli_bin;
static char workdir[512], bank[700], imports[600], secret[600];

/* ---- processes ----------------------------------------------------------------------- */

/* Runs argv (NULL-terminated) with stdout/stderr into WORKDIR/NAME.out/.err; the exit status. */
static int run(const char *name, const char *const *argv)
{
    return rb_run(workdir, name, argv);
}

/* A fresh store (a file, or a PostgreSQL schema), holding the bank unless `empty`. */
static void make_store(const char *name, char *db, size_t n, int empty)
{
    T_EQ_INT(amltest_fresh_db(workdir, name, db, n), 0);
    if (empty) {
        aml_store *s = NULL;
        aml_err err = {{0}};
        T_EQ_INT(aml_store_open(&s, db, AML_OPEN_CREATE, &err), 0);
        aml_store_close(s);
        return;
    }
    const char *args[] = {aml_bin, "import", "--db", db, "--format", "amlworld", bank, NULL};
    T_EQ_INT(run("import", args), 0);
}

/* A plain `scan --jobs 1` of the bank on a store of its own: its number of cases and scan matches. */
static int64_t ref_cases = -1, ref_matches = -1;

static void reference(void)
{
    if (ref_cases >= 0)
        return;
    char db[600];
    make_store("reference", db, sizeof db, 0);
    const char *args[] = {aml_bin, "scan", "--db", db, "--jobs", "1", NULL};
    T_EQ_INT(run("reference", args), 0);
    ref_cases = amltest_one(db, "SELECT count(*) FROM cases");
    ref_matches = amltest_one(db, "SELECT count(DISTINCT acct_no) FROM scan_matches");
    T_TRUE(ref_matches > 0);
}

/* ---- the command line: mcp-cli --task call runScan ------------------------------------- */

static void test_cli_task_shows_progress(void)
{
    reference();
    char db[600];
    make_store("cli", db, sizeof db, 0);
    /* A scan stopped after one of its batches of 4 accounts: runScan resumes it. */
    const char *stop[] = {aml_bin, "scan", "--db", db, "--jobs", "1", "--batch", "4", "--max-batches", "1", NULL};
    T_EQ_INT(run("stopped", stop), 0);
    int64_t job = amltest_one(db, "SELECT max(job_id) FROM scan_jobs");
    int64_t batches = amltest_one(db, "SELECT batches FROM scan_jobs");
    T_TRUE(batches > 2);
    const char *call[] = {cli_bin, "--task", "--timeout", "300000", "call", "runScan", "--", aml_bin, "--db", db, NULL};
    T_EQ_INT(run("cli-task", call), 0);
    char *out = rb_slurp_in(workdir, "cli-task", "out"), *err = rb_slurp_in(workdir, "cli-task", "err");
    T_TRUE(strstr(err, "accounts scanned") != NULL); /* "mcp-cli: task ID working: N of M accounts scanned" */
    T_TRUE(strstr(err, " completed") != NULL);
    mcp_json_doc *d = NULL;
    T_OK(mcp_json_parse(&d, out, strlen(out), NULL, NULL));
    const mcp_json *sc = mcp_json_get(mcp_json_doc_root(d), "structuredContent");
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "jobId")), job);
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "batchesHere")), batches - 1);
    T_EQ_INT(mcp_json_bool(mcp_json_get(sc, "stopped")), 0);
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "accountsMatched")), ref_matches);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM cases"), ref_cases);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM audit_log WHERE action = 'tool.runScan' AND outcome = 'ok'"), 1);
    mcp_json_doc_free(d);
    free(out);
    free(err);
}

/* ---- in the server's process: a session on a pool ------------------------------------------ */

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
        c->cap = c->cap ? 2 * c->cap : 64;
        c->text = realloc(c->text, c->cap * sizeof *c->text);
    }
    c->text[c->n++] = aml_strndup(f, len);
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct served {
    aml_app app;
    mcp_server *srv;
    mcp_conn *conn;
    frames f;
    int id;
} served;

static int serve(served *v, const char *db, const char *import_dir)
{
    memset(v, 0, sizeof *v);
    pthread_mutex_init(&v->f.mu, NULL);
    aml_store *first = NULL;
    aml_err err = {{0}};
    if (aml_store_open(&first, db, 0, &err) || aml_pool_new(&v->app.pool, first, db, 0, 4, &err))
        return -1;
    v->app.store = aml_pool_first(v->app.pool);
    v->app.actor = "tasks-test";
    v->app.import_dir = import_dir;
    v->app.import = import_dir ? aml_import_files : NULL;
    mcp_server_opts so;
    aml_server_opts(&so, &v->app);
    so.workers = 4;
    mcp_error e;
    if (mcp_server_new(&v->srv, &so, &e) || aml_tools_register(v->srv, &v->app, &e) ||
        mcp_conn_new(&v->conn, v->srv, keep, &v->f))
        return -1;
    v->id = 10;
    return 0;
}

static void unserve(served *v)
{
    mcp_conn_close(v->conn, 10000);
    mcp_conn_free(v->conn);
    mcp_server_free(v->srv);
    aml_pool_free(v->app.pool);
    for (size_t i = 0; i < v->f.n; i++)
        free(v->f.text[i]);
    free(v->f.text);
    pthread_mutex_destroy(&v->f.mu);
}

/* The answer to request `id`, waiting up to 120 s. */
static mcp_json_doc *answer(served *v, int id)
{
    char needle[40];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    for (int t = 0; t < 60000; t++) {
        mcp_json_doc *d = NULL;
        pthread_mutex_lock(&v->f.mu);
        for (size_t i = 0; i < v->f.n && !d; i++)
            if (strstr(v->f.text[i], needle))
                mcp_json_parse(&d, v->f.text[i], strlen(v->f.text[i]), NULL, NULL);
        pthread_mutex_unlock(&v->f.mu);
        if (d)
            return d;
        sleep_ms(2);
    }
    return NULL;
}

/* A 2026-07-28 request, as a task-capable client when `ext`; its answer. */
static mcp_json_doc *request(served *v, const char *method, const char *params, int ext)
{
    char req[2048];
    int id = v->id++;
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientCapabilities\":{%s}}}}",
             id, method, params, params[0] ? "," : "",
             ext ? "\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}" : "");
    mcp_conn_recv(v->conn, req, strlen(req));
    return answer(v, id);
}

static const mcp_json *result_of(const mcp_json_doc *d)
{
    return mcp_json_get(mcp_json_doc_root(d), "result");
}

/* tasks/get: the status and the statusMessage copied out. */
static void task_get(served *v, const char *task, char *status, char *msg, size_t n)
{
    char p[200];
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", task);
    mcp_json_doc *d = request(v, "tasks/get", p, 1);
    const char *s = mcp_json_str(mcp_json_get(result_of(d), "status"), NULL);
    const char *m = mcp_json_str(mcp_json_get(result_of(d), "statusMessage"), NULL);
    snprintf(status, n, "%s", s ? s : "?");
    snprintf(msg, n, "%s", m ? m : "");
    mcp_json_doc_free(d);
}

/* Starts a task of `tool`; its id into task. */
static void start_task(served *v, const char *tool, const char *args, char *task, size_t n)
{
    char p[1200];
    snprintf(p, sizeof p, "\"name\":\"%s\",\"arguments\":%s", tool, args);
    mcp_json_doc *d = request(v, "tools/call", p, 1);
    const char *id = mcp_json_str(mcp_json_get(result_of(d), "taskId"), NULL);
    T_TRUE(id != NULL);
    snprintf(task, n, "%s", id ? id : "");
    mcp_json_doc_free(d);
}

/* Polls the task until its statusMessage holds `needle` (0) or it is no longer working (-1). */
static int wait_message(served *v, const char *task, const char *needle)
{
    char st[300], msg[300];
    for (int i = 0; i < 60000; i++) {
        task_get(v, task, st, msg, sizeof st);
        if (strstr(msg, needle))
            return 0;
        if (strcmp(st, "working"))
            return -1;
        sleep_ms(1);
    }
    return -1;
}

/* Cancels the task (tasks/cancel answered) and waits for its handler's audit row (the handler ended). */
static void cancel_and_wait(served *v, const char *task, const char *db, const char *action)
{
    char p[200], sql[200];
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", task);
    mcp_json_doc *d = request(v, "tasks/cancel", p, 1);
    T_TRUE(d && result_of(d));
    mcp_json_doc_free(d);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM audit_log WHERE action = '%s'", action);
    for (int i = 0; i < 60000 && amltest_one(db, sql) == 0; i++)
        sleep_ms(2);
    T_EQ_INT(amltest_one(db, sql), 1);
}

/* tools/call as an ordinary call; the response. */
static mcp_json_doc *call_tool(served *v, const char *tool, const char *args)
{
    char p[1200];
    snprintf(p, sizeof p, "\"name\":\"%s\",\"arguments\":%s", tool, args);
    return request(v, "tools/call", p, 0);
}

static int is_error(const mcp_json_doc *d)
{
    return mcp_json_bool(mcp_json_get(result_of(d), "isError"));
}

/* ---- runScan: cancelled, other calls answered, resumed ---------------------------------------- */

/* A listCases and a listTypologies call (each with its audit row, a write) answered while the task
 * still works. (The bank has no cases before its first scan is done: listCases answers none.) */
static void others_answered(served *v, const char *task)
{
    mcp_json_doc *d = call_tool(v, "listCases", "{\"limit\":1}");
    T_TRUE(d && !is_error(d));
    mcp_json_doc *a = call_tool(v, "listTypologies", "{}");
    T_TRUE(a && !is_error(a));
    char st[300], msg[300];
    task_get(v, task, st, msg, sizeof st);
    T_EQ_STR(st, "working");
    mcp_json_doc_free(a);
    mcp_json_doc_free(d);
}

static void test_cancelled_scan_resumes(void)
{
    reference();
    char db[600];
    make_store("cancel", db, sizeof db, 0);
    const char *stop[] = {aml_bin, "scan", "--db", db, "--jobs", "1", "--batch", "4", "--max-batches", "1", NULL};
    T_EQ_INT(run("stopped-4", stop), 0);
    int64_t job = amltest_one(db, "SELECT max(job_id) FROM scan_jobs");
    int64_t batches = amltest_one(db, "SELECT batches FROM scan_jobs");
    T_TRUE(batches > 20);
    served v;
    T_EQ_INT(serve(&v, db, NULL), 0);
    char task[128];
    start_task(&v, "runScan", "{}", task, sizeof task);
    T_EQ_INT(wait_message(&v, task, "accounts scanned"), 0);
    others_answered(&v, task);
    /* The write lock held: the scan waits before its next write, so it is still short of its end
     * when the cancellation reaches it; then at most the batch in hand is kept. */
    aml_app_write_lock(&v.app, NULL);
    char p[200];
    snprintf(p, sizeof p, "\"taskId\":\"%s\"", task);
    mcp_json_doc *d = request(&v, "tasks/cancel", p, 1);
    T_TRUE(d && result_of(d));
    mcp_json_doc_free(d);
    aml_app_write_unlock(&v.app);
    cancel_and_wait(&v, task, db, "tool.runScan"); /* idempotent: the same acknowledgement */
    char st[300], msg[300];
    task_get(&v, task, st, msg, sizeof st);
    T_EQ_STR(st, "cancelled");
    int64_t done = amltest_one(db, "SELECT count(*) FROM scan_batches WHERE state = 'done'");
    T_TRUE(done >= 2 && done < batches);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_jobs WHERE state = 'running'"), 1);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM audit_log WHERE action = 'tool.runScan' AND detail LIKE '%stopped%'"), 1);
    /* The next runScan (an ordinary call) resumes the job. */
    d = call_tool(&v, "runScan", "{}");
    const mcp_json *sc = mcp_json_get(result_of(d), "structuredContent");
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "jobId")), job);
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "batchesHere")), batches - done);
    T_EQ_INT(mcp_json_bool(mcp_json_get(sc, "stopped")), 0);
    mcp_json_doc_free(d);
    unserve(&v);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM cases"), ref_cases);
    T_EQ_INT(amltest_one(db, "SELECT count(DISTINCT acct_no) FROM scan_matches"), ref_matches);
}

static void test_scan_window_errors(void)
{
    char db[600];
    make_store("window", db, sizeof db, 1);
    served v;
    T_EQ_INT(serve(&v, db, NULL), 0);
    mcp_json_doc *d = call_tool(&v, "runScan", "{\"from\":\"2025-01-01\"}");
    T_TRUE(d && is_error(d));
    mcp_json_doc_free(d);
    d = call_tool(&v, "runScan", "{\"from\":\"2025-02-01\",\"to\":\"2025-01-01\"}");
    T_TRUE(d && is_error(d));
    mcp_json_doc_free(d);
    d = call_tool(&v, "runScan", "{}"); /* an empty store: a normal result saying so */
    T_TRUE(d && !is_error(d));
    T_EQ_INT(mcp_json_int(mcp_json_get(mcp_json_get(result_of(d), "structuredContent"), "jobId")), 0);
    mcp_json_doc_free(d);
    /* Without --import-dir, importTransactions is not there. */
    d = request(&v, "tools/list", "", 0);
    const mcp_json *tools = mcp_json_get(result_of(d), "tools");
    int scan = 0, import = 0;
    for (size_t i = 0; i < mcp_json_len(tools); i++) {
        const mcp_json *t = mcp_json_at(tools, i);
        scan += mcp_json_str_eq(mcp_json_get(t, "name"), "runScan");
        import += mcp_json_str_eq(mcp_json_get(t, "name"), "importTransactions");
    }
    T_EQ_INT(scan, 1);
    T_EQ_INT(import, 0);
    mcp_json_doc_free(d);
    unserve(&v);
}

/* ---- importTransactions ----------------------------------------------------------------------------- */

static void expect_refused(served *v, const char *path, const char *why)
{
    char args[400];
    snprintf(args, sizeof args, "{\"format\":\"amlworld\",\"path\":\"%s\"}", path);
    mcp_json_doc *d = call_tool(v, "importTransactions", args);
    T_TRUE(d && is_error(d));
    const char *text = mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(result_of(d), "content"), 0), "text"), NULL);
    if (!text || !strstr(text, why))
        fprintf(stderr, "  path %s: %s (expected '%s')\n", path, text ? text : "(no text)", why);
    T_TRUE(text && strstr(text, why));
    mcp_json_doc_free(d);
}

static void test_import_paths_stay_under_dir(void)
{
    char db[600], real[PATH_MAX], link[700];
    make_store("paths", db, sizeof db, 1);
    T_TRUE(realpath(imports, real) != NULL);
    snprintf(link, sizeof link, "%s/outside", imports);
    unlink(link);
    T_EQ_INT(symlink(workdir, link), 0); /* a folder outside */
    snprintf(link, sizeof link, "%s/outside.csv", imports);
    unlink(link);
    T_EQ_INT(symlink(secret, link), 0); /* a file outside */
    served v;
    T_EQ_INT(serve(&v, db, real), 0);
    expect_refused(&v, "../bank.csv", "'..'");
    expect_refused(&v, "sub/../../bank.csv", "'..'");
    expect_refused(&v, "..", "'..'");
    expect_refused(&v, bank, "not absolute");
    expect_refused(&v, "/etc/passwd", "not absolute");
    expect_refused(&v, "outside/secret.csv", "leaves the import folder");
    expect_refused(&v, "outside.csv", "leaves the import folder");
    expect_refused(&v, "no-such.csv", "No such file");
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM audit_log WHERE action = 'tool.importTransactions' AND outcome = 'error'"),
             8);
    unserve(&v);
}

static void test_cancelled_import_keeps_nothing(void)
{
    char db[600], real[PATH_MAX];
    make_store("import", db, sizeof db, 1);
    T_TRUE(realpath(imports, real) != NULL);
    served v;
    T_EQ_INT(serve(&v, db, real), 0);
    char task[128], st[300], msg[300];
    start_task(&v, "importTransactions", "{\"format\":\"amlworld\",\"path\":\"big/bank.csv\"}", task, sizeof task);
    T_EQ_INT(wait_message(&v, task, "bytes read"), 0);
    cancel_and_wait(&v, task, db, "tool.importTransactions");
    task_get(&v, task, st, msg, sizeof st);
    T_EQ_STR(st, "cancelled");
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM accounts"), 0);
    /* The same import, to its end (a folder of one file). */
    mcp_json_doc *d = call_tool(&v, "importTransactions", "{\"format\":\"amlworld\",\"path\":\"big\"}");
    T_TRUE(d && !is_error(d));
    const mcp_json *sc = mcp_json_get(result_of(d), "structuredContent");
    T_TRUE(mcp_json_int(mcp_json_get(sc, "transactions")) > 0);
    T_EQ_INT(mcp_json_int(mcp_json_get(sc, "transactions")), amltest_one(db, "SELECT count(*) FROM transactions"));
    mcp_json_doc_free(d);
    unserve(&v);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_cli_task_shows_progress), TEST(test_cancelled_scan_resumes),
                                   TEST(test_scan_window_errors), TEST(test_import_paths_stay_under_dir),
                                   TEST(test_cancelled_import_keeps_nothing)};
    if (argc < 3) {
        fprintf(stderr, "usage: aml_tasks PATH-TO-mcp-server-aml PATH-TO-mcp-cli [WORKDIR]\n");
        printf("aml_tasks: 0 passed, 1 failed\n");
        return 1;
    }
    aml_bin = argv[1];
    cli_bin = argv[2];
    scratch_dir(argc > 3 ? argv[3] : "/tmp/aml-tasks", workdir, sizeof workdir);
    snprintf(imports, sizeof imports, "%s/imports", workdir);
    mkdir(imports, 0755);
    /* A bank of a year: long enough a scan for mcp-cli's polls (every 500 ms) to see its progress even on
     * a quiet machine (6.5 s at load 11 under ASan), and about 10 progress reports of 4,096 rows for
     * the cancelled import. */
    char big[700];
    snprintf(big, sizeof big, "%s/big", imports);
    mkdir(big, 0755);
    snprintf(bank, sizeof bank, "%s/big/bank.csv", imports);
    const char *gen[] = {aml_bin, "gen", "--seed", "5", "--customers", "300", "--days", "365", "--format",
                         "amlworld", "--out", bank, NULL};
    snprintf(secret, sizeof secret, "%s/secret.csv", workdir);
    FILE *f = fopen(secret, "w");
    if (f) {
        fputs("not for the server\n", f);
        fclose(f);
    }
    if (run("gen", gen)) {
        printf("aml_tasks: 0 passed, 1 failed\n");
        return 1;
    }
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    if (!rc) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
        if (system(cmd)) {
        }
    }
    return rc;
}
