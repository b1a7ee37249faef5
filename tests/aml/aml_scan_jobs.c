/*
 * The scan in batches (docs/aml.md, "Parallel and distributed scans"), on
 * the binary: `scan --jobs 2` makes the same cases, case ids and
 * assessments as `--jobs 1`; a scan stopped after a few batches keeps them
 * and the next scan resumes the job without redoing them; three
 * `scan --worker` processes started at once share one job and equal the
 * plain scan; a worker SIGKILLed mid-batch loses nothing (its batch is
 * claimed again once the lease ends) and another worker finishes the job
 * with the same result; a batch slower than its lease keeps its claim
 * (the worker's heartbeat renews the lease).
 *
 * On SQLite without AML_TEST_DB; on PostgreSQL when tests/lib/pg.sh sets
 * it (each store a fresh schema, pgtest.h).
 *
 * usage: aml_scan_jobs PATH-TO-mcp-server-aml WORKDIR
 */
#include "amltest.h"
#include "pgtest.h"
#include "runbin.h"

#include <signal.h>
#include <time.h>

static const char *bin;
static char workdir[512];
static char bank[600]; /* the generated AMLworld file */

/* Starts the binary with args (NULL-terminated), output to WORKDIR/NAME.out/.err; its pid. */
static pid_t spawn(const char *name, const char *const *args)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return rb_spawn(workdir, name, argv);
}

static int run(const char *name, const char *const *args)
{
    int rc = rb_wait(spawn(name, args));
    if (rc) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s.err", workdir, name);
        FILE *f = fopen(p, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            fprintf(stderr, "  %s: %s", name, line);
        if (f)
            fclose(f);
    }
    return rc;
}

/* A fresh store holding the bank: a file, or a PostgreSQL schema. */
static void make_store(const char *name, char *db, size_t n)
{
    T_EQ_INT(amltest_fresh_db(workdir, name, db, n), 0);
    const char *args[] = {"import", "--db", db, "--format", "amlworld", bank, NULL};
    T_EQ_INT(run("import", args), 0);
}

/* What a scan produced, as text: cases, their accounts and typologies, assessments, the scan's matches. */
static char *fingerprint(const char *db)
{
    static const char *const sql[] = {
        "SELECT case_id, title, status, priority, origin, opened_at, detection_date, window_from, window_to, "
        "risk_level, case_score, last_assessment_id FROM cases ORDER BY case_id",
        "SELECT case_id, acct_no FROM case_accounts ORDER BY case_id, acct_no",
        "SELECT case_id, typology_id, score FROM case_typologies ORDER BY case_id, typology_id",
        "SELECT assessment_id, case_id, kind, data_sha256, outcome, case_score, risk_level FROM assessments "
        "ORDER BY assessment_id",
        "SELECT acct_no, typology_id, score, case_id FROM scan_matches ORDER BY acct_no, typology_id",
    };
    aml_store *s = NULL;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, 0, &err)) {
        fprintf(stderr, "  %s\n", err.msg);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    for (size_t k = 0; out && k < sizeof sql / sizeof sql[0]; k++) {
        aml_st *st = aml_prepare(s, sql[k]);
        while (st && aml_step(st) == AML_ROW)
            for (int c = 0; c < aml_col_count(st); c++) {
                const char *v = aml_col_text(st, c);
                size_t l = strlen(v);
                if (n + l + 2 > cap) {
                    cap = (n + l + 2) * 2;
                    out = realloc(out, cap);
                }
                memcpy(out + n, v, l);
                n += l;
                out[n++] = c + 1 < aml_col_count(st) ? '|' : '\n';
            }
        aml_finalize(st);
    }
    if (out)
        out[n] = '\0';
    aml_store_close(s);
    return out;
}

/* The plain scan's result on a store of its own (--jobs 1), kept for the other tests. */
static char *reference;

static void scan_reference(void)
{
    if (reference)
        return;
    char db[600];
    make_store("ref", db, sizeof db);
    const char *args[] = {"scan", "--db", db, "--jobs", "1", "--batch", "16", NULL};
    T_EQ_INT(run("scan-ref", args), 0);
    reference = fingerprint(db);
    T_TRUE(reference != NULL);
    T_TRUE(amltest_one(db, "SELECT count(*) FROM cases WHERE origin = 'scan'") >= 3);
    T_TRUE(amltest_one(db, "SELECT count(*) FROM scan_batches") >= 10);
}

static void expect_reference(const char *db)
{
    char *fp = fingerprint(db);
    T_TRUE(fp != NULL);
    int same = fp && reference && strcmp(fp, reference) == 0;
    if (!same)
        fprintf(stderr, "  %s: the scan's result differs from the single-process scan\n", db);
    free(fp);
    T_TRUE(same);
}

static void test_jobs_same_as_one(void)
{
    scan_reference();
    char db[600];
    make_store("jobs2", db, sizeof db);
    const char *args[] = {"scan", "--db", db, "--jobs", "2", "--batch", "16", NULL};
    T_EQ_INT(run("scan-jobs2", args), 0);
    expect_reference(db);
    T_EQ_INT(amltest_one(db, "SELECT count(DISTINCT claimed_by) FROM scan_batches") >= 2, 1);
}

static void test_stopped_scan_resumes(void)
{
    scan_reference();
    char db[600];
    make_store("resume", db, sizeof db);
    const char *part[] = {"scan", "--db", db, "--jobs", "1", "--batch", "16", "--max-batches", "3", NULL};
    T_EQ_INT(run("scan-part", part), 0);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_batches WHERE state = 'done'"), 3);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM cases WHERE origin = 'scan'"), 0);
    const char *status[] = {"scan", "--db", db, "--status", NULL};
    T_EQ_INT(run("scan-status", status), 0);
    const char *rest[] = {"scan", "--db", db, "--jobs", "2", NULL};
    T_EQ_INT(run("scan-rest", rest), 0);
    expect_reference(db);
    /* one job, every batch evaluated once */
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_jobs"), 1);
    T_EQ_INT(amltest_one(db, "SELECT max(attempts) FROM scan_batches"), 1);
}

static void test_workers_share_one_scan(void)
{
    scan_reference();
    char db[600];
    make_store("workers", db, sizeof db);
    const char *args[] = {"scan", "--db", db, "--worker", "--batch", "16", NULL};
    pid_t p[3];
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "worker-%d", i);
        p[i] = spawn(name, args);
    }
    for (int i = 0; i < 3; i++)
        T_EQ_INT(rb_wait(p[i]), 0);
    expect_reference(db);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_jobs"), 1);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_batches WHERE state <> 'done'"), 0);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_runs"), 1);
}

/* Waits until a batch is claimed and none is done yet by this pid... returns when one is claimed. */
static int wait_claimed(const char *db, pid_t pid, int64_t *batch_no)
{
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT batch_no FROM scan_batches WHERE state = 'claimed' AND claimed_by LIKE '%%:%d:%%' "
             "ORDER BY batch_no LIMIT 1",
             (int)pid);
    for (int i = 0; i < 3000; i++) {
        int64_t b = amltest_one(db, sql);
        if (b > 0) {
            *batch_no = b;
            return 0;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void test_killed_worker_loses_nothing(void)
{
    scan_reference();
    char db[600];
    make_store("killed", db, sizeof db);
    const char *args[] = {"scan", "--db", db, "--worker", "--batch", "64", "--lease", "2", NULL};
    pid_t p = spawn("worker-killed", args);
    int64_t batch = 0;
    T_EQ_INT(wait_claimed(db, p, &batch), 0);
    kill(p, SIGKILL);
    T_EQ_INT(rb_wait(p), 128 + SIGKILL);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM scan_batches WHERE batch_no = %lld AND state = 'claimed'",
             (long long)batch);
    T_EQ_INT(amltest_one(db, sql), 1); /* killed mid-batch: its claim stays until the lease ends */
    T_EQ_INT(run("worker-after", args), 0);
    expect_reference(db);
    snprintf(sql, sizeof sql, "SELECT attempts FROM scan_batches WHERE batch_no = %lld", (long long)batch);
    T_EQ_INT(amltest_one(db, sql), 2);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_batches WHERE state <> 'done'"), 0);
}

/*
 * A batch slower than its lease keeps its claim: the worker's heartbeat
 * renews the lease while it evaluates, so the other worker, idle and
 * polling for a claim whose lease ended, never claims it again (attempted
 * once) and the result equals the plain scan. One batch (--batch 65536),
 * so that one worker is always idle. AML_TEST_SCAN_BATCH_DELAY_MS is a
 * test hook of the scan engine (engine/scan_job.c): each batch takes that
 * much longer before it is kept; here 5 s against a 2 s lease.
 */
#ifdef AML_TEST_HOOKS
static void test_slow_batch_keeps_its_lease(void)
{
    scan_reference();
    char db[600];
    make_store("slow", db, sizeof db);
    const char *args[] = {"scan", "--db", db, "--worker", "--batch", "65536", "--lease", "2", NULL};
    setenv("AML_TEST_SCAN_BATCH_DELAY_MS", "5000", 1);
    pid_t p[2];
    p[0] = spawn("slow-0", args);
    p[1] = spawn("slow-1", args);
    unsetenv("AML_TEST_SCAN_BATCH_DELAY_MS");
    /* Without renewals the two take the batch from each other for ever: give them two minutes. */
    int rc0 = rb_wait_within(p[0], 120);
    int rc1 = rb_wait_within(p[1], rc0 < 0 ? 1 : 60);
    T_EQ_INT(rc0, 0);
    T_EQ_INT(rc1, 0);
    expect_reference(db);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_batches"), 1);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_batches WHERE state <> 'done'"), 0);
    T_EQ_INT(amltest_one(db, "SELECT max(attempts) FROM scan_batches"), 1);
    T_EQ_INT(amltest_one(db, "SELECT count(*) FROM scan_runs"), 1);
}
#endif

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_jobs_same_as_one), TEST(test_stopped_scan_resumes),
                                   TEST(test_workers_share_one_scan), TEST(test_killed_worker_loses_nothing),
#ifdef AML_TEST_HOOKS /* the binary's batch delay (MCP_TEST_HOOKS) */
                                   TEST(test_slow_batch_keeps_its_lease)
#endif
    };
    if (argc < 2) {
        fprintf(stderr, "usage: aml_scan_jobs PATH-TO-mcp-server-aml [WORKDIR]\n");
        printf("aml_scan_jobs: 0 passed, 1 failed\n");
        return 1;
    }
    bin = argv[1];
    scratch_dir(argc > 2 ? argv[2] : "/tmp/aml-scan-jobs", workdir, sizeof workdir);
    snprintf(bank, sizeof bank, "%s/bank.csv", workdir);
    const char *gen[] = {"gen",   "--seed", "5",        "--customers", "400",  "--days", "60", "--instances",
                         "1",     "--format", "amlworld", "--out",      bank, NULL};
    if (run("gen", gen)) {
        printf("aml_scan_jobs: 0 passed, 1 failed\n");
        return 1;
    }
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    free(reference);
    if (!rc) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
        if (system(cmd)) {
        }
    }
    return rc;
}
