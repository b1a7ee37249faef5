/*
 * T15 sanctions exposure in the monitoring scan (docs/aml.md, "Typologies"
 * and "Reviewing hits"), on the binary. The fixture: a generated bank
 * (`gen --out`, native CSV) plus two external counterparty accounts and
 * their transfers with two of its customers' accounts: one holder is a
 * listed person spelt a little differently ("Tharwat Salah Shehata" for the
 * UN list's THARWAT SALAH SHIHATA), the other a look-alike that scores
 * just under the threshold ("Tarek Salah Shahin"). The list is
 * tests/data/screening/positives_un_untreated.csv.
 *
 *   - the scan raises T15 on the first account, with the entity, list,
 *     version, score, explanations and the transfers as evidence, and not
 *     on the look-alike's;
 *   - `--jobs 2` stores the same cases, matches and findings as `--jobs 1`;
 *   - under tests/lib/pg.sh (AML_TEST_DB) the store is PostgreSQL, and a
 *     SQLite store of the same files must give the same bytes;
 *   - without a list, T15 is not evaluable and raises nothing;
 *   - dismissScreeningHit (who and why in the audit log) keeps the hit out
 *     of assessCase, screenCase and a later scan of new transactions.
 *
 * usage: aml_scan_t15 PATH-TO-mcp-server-aml PATH-TO-mcp-cli WORKDIR SCREENING-DATA-DIR
 */
#include "amltest.h"
#include "pgtest.h"

#include <sys/wait.h>

static const char *bin, *cli, *datadir;
static char workdir[512];
static char bank[600], more[600], list[600]; /* the fixture, the later transactions, the list */
static char acct_hit[64], acct_look[64];      /* the customers' accounts that pay the two holders */

#define HIT_NAME "Tharwat Salah Shehata"
#define LOOK_NAME "Tarek Salah Shahin"
#define T15 "T15_SANCTIONS_EXPOSURE"

/* Runs argv (NULL-terminated; argv[0] the program) with output to WORKDIR/NAME.out; its exit status. */
static int run(const char *name, const char *const *argv)
{
    char out[700];
    snprintf(out, sizeof out, "%s/%s.out", workdir, name);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen("/dev/null", "r", stdin))
            _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    if (pid <= 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (rc)
        fprintf(stderr, "  %s exited %d (output in %s)\n", name, rc, out);
    return rc;
}

/* The whole output of a run. */
static char *output(const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.out", workdir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    char *s = malloc(1 << 20);
    size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* Field k (0-based) of a CSV line without quotes in the fields read, into out. */
static void field(const char *line, int k, char *out, size_t n)
{
    for (; k > 0 && line; k--)
        line = (line = strchr(line, ',')) ? line + 1 : NULL;
    size_t l = line ? strcspn(line, ",\r\n") : 0;
    snprintf(out, n, "%.*s", (int)l, line ? line : "");
}

/* The generated bank, with the two external holders and their transfers appended (bank), and one more
 * transfer to the listed holder on the bank's last day (more). */
static int make_fixture(void)
{
    char gen[600];
    snprintf(gen, sizeof gen, "%s/gen.csv", workdir);
    const char *args[] = {bin, "gen", "--seed", "5", "--customers", "60", "--days", "60", "--instances", "1",
                          "--out", gen, NULL};
    if (run("gen", args))
        return -1;
    FILE *in = fopen(gen, "r");
    snprintf(bank, sizeof bank, "%s/bank.csv", workdir);
    FILE *out = fopen(bank, "w");
    if (!in || !out)
        return -1;
    char line[4096], last[64] = "";
    while (fgets(line, sizeof line, in)) {
        fputs(line, out);
        char f[64];
        if (!strncmp(line, "party,", 6) && !acct_look[0]) {
            field(line, 1, f, sizeof f);
            if (!acct_hit[0])
                snprintf(acct_hit, sizeof acct_hit, "%s", f);
            else if (strcmp(f, acct_hit))
                snprintf(acct_look, sizeof acct_look, "%s", f);
        } else if (!strncmp(line, "txn,", 4)) {
            field(line, 2, f, sizeof f);
            if (strcmp(f, last) > 0)
                snprintf(last, sizeof last, "%s", f);
        }
    }
    fclose(in);
    char day[11];
    snprintf(day, sizeof day, "%.10s", last);
    fprintf(out, "account,EXT-T15-HIT,0,BANK-EG,Other Bank,checking,EGP,active,,,,,EG,%s\n", HIT_NAME);
    fprintf(out, "account,EXT-T15-LOOK,0,BANK-EG,Other Bank,checking,EGP,active,,,,,EG,%s\n", LOOK_NAME);
    const char *who[2] = {acct_hit, acct_look}, *to[2] = {"EXT-T15-HIT", "EXT-T15-LOOK"};
    for (int k = 0; k < 2; k++)
        for (int i = 1; i <= 2; i++)
            fprintf(out, "txn,T15-%s-%d,%sT1%d:00:00Z,second,%s,%s,%d00000,USD,wire,transfer,,,,EG,,,0,,\n",
                    k ? "LOOK" : "HIT", i, day, i, who[k], to[k], 40 + 7 * i);
    fclose(out);
    snprintf(more, sizeof more, "%s/more.csv", workdir);
    out = fopen(more, "w");
    if (!out)
        return -1;
    fprintf(out, "txn,T15-HIT-3,%sT18:00:00Z,second,%s,EXT-T15-HIT,6100000,USD,wire,transfer,,,,EG,,,0,,\n", day,
            acct_hit);
    fclose(out);
    snprintf(list, sizeof list, "%s/positives_un_untreated.csv", datadir);
    return acct_hit[0] && acct_look[0] && last[0] ? 0 : -1;
}

/* A fresh store with the fixture, and the UN list unless bare: a PostgreSQL schema under pg.sh unless sqlite. */
static void make_store(const char *name, int bare, int sqlite, char *db, size_t n)
{
    if (pgt_base() && !sqlite) {
        T_EQ_INT(pgt_fresh(db, n, NULL, 0), 0);
    } else {
        snprintf(db, n, "%s/%s.db", workdir, name);
        unlink(db);
    }
    const char *imp[] = {bin, "import", "--db", db, "--format", "native", bank, NULL};
    T_EQ_INT(run("import", imp), 0);
    const char *lists[] = {bin, "lists", "import", "--db", db, "--format", "csv", "--list", "un", list, NULL};
    if (!bare)
        T_EQ_INT(run("lists", lists), 0);
}

static void scan(const char *db, const char *jobs)
{
    const char *args[] = {bin, "scan", "--db", db, "--jobs", jobs, "--batch", "8", "--detected", "2026-01-31", NULL};
    T_EQ_INT(run("scan", args), 0);
}

/* Rows of the store as text, one line per row, columns joined by '|'. */
static char *rows(const char *db, const char *const *sql, size_t nsql)
{
    aml_store *s = NULL;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, 0, &err)) {
        fprintf(stderr, "  %s\n", err.msg);
        return NULL;
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    for (size_t k = 0; k < nsql; k++) {
        aml_st *st = aml_prepare(s, sql[k]);
        if (!st)
            fprintf(stderr, "  %s: %s\n", sql[k], aml_errmsg(s));
        while (st && aml_step(st) == AML_ROW)
            for (int c = 0; c < aml_col_count(st); c++)
                aml_buf_printf(&b, "%s%c", aml_col_text(st, c), c + 1 < aml_col_count(st) ? '|' : '\n');
        aml_finalize(st);
    }
    aml_store_close(s);
    char *out = aml_strdup(b.data ? b.data : "");
    mcp_buf_cleanup(&b);
    return out;
}

static char *one_text(const char *db, const char *sql)
{
    char *r = rows(db, &sql, 1);
    if (r && strchr(r, '\n'))
        *strchr(r, '\n') = '\0';
    return r;
}

/* What a scan stored: cases, matches, and every T15 finding with its evidence (wall-clock times masked). */
static char *fingerprint(const char *db)
{
    static const char *const sql[] = {
        "SELECT case_id, title, status, priority, origin, detection_date, window_from, window_to, risk_level, "
        "case_score, last_assessment_id FROM cases ORDER BY case_id",
        "SELECT case_id, acct_no FROM case_accounts ORDER BY case_id, acct_no",
        "SELECT case_id, typology_id, score FROM case_typologies ORDER BY case_id, typology_id",
        "SELECT acct_no, typology_id, score, case_id FROM scan_matches ORDER BY acct_no, typology_id",
        "SELECT assessment_id, status, score, explanation, metrics_json FROM assessment_findings WHERE "
        "typology_id = 'T15_SANCTIONS_EXPOSURE' ORDER BY assessment_id",
        "SELECT assessment_id, txn_no, ordinal, role FROM finding_evidence WHERE typology_id = "
        "'T15_SANCTIONS_EXPOSURE' ORDER BY assessment_id, ordinal",
    };
    return rows(db, sql, sizeof sql / sizeof sql[0]);
}

/* The stored T15 finding of the case holding account `acct` (metrics JSON, status first). */
static char *t15_of(const char *db, const char *acct)
{
    char sql[700];
    snprintf(sql, sizeof sql,
             "SELECT f.status || ' ' || f.metrics_json FROM assessment_findings f JOIN cases c ON "
             "c.last_assessment_id = f.assessment_id JOIN case_accounts ca ON ca.case_id = c.case_id JOIN "
             "accounts a ON a.acct_no = ca.acct_no WHERE a.account_id = '%s' AND f.typology_id = '%s'",
             acct, T15);
    return one_text(db, sql);
}

static int64_t scan_t15_rows(const char *db, const char *acct, const char *run_cond)
{
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM scan_matches m JOIN accounts a ON a.acct_no = m.acct_no WHERE a.account_id = "
             "'%s' AND m.typology_id = '%s'%s",
             acct, T15, run_cond);
    char *r = one_text(db, sql);
    int64_t n = r ? strtoll(r, NULL, 10) : -1;
    free(r);
    return n;
}

static char db_one[600], *ref;

/* Store "one": the fixture, scanned with one job (the reference of the other tests). */
static void scan_one(void)
{
    if (ref)
        return;
    make_store("one", 0, 0, db_one, sizeof db_one);
    scan(db_one, "1");
    ref = fingerprint(db_one);
    T_TRUE(ref != NULL);
}

static void test_scan_raises_t15(void)
{
    scan_one();
    T_EQ_INT(scan_t15_rows(db_one, acct_hit, ""), 1);
    T_EQ_INT(scan_t15_rows(db_one, acct_look, ""), 0);
    char *f = t15_of(db_one, acct_hit);
    T_NOT_NULL(f);
    if (!f)
        return;
    T_TRUE(!strncmp(f, "matched ", 8));
    static const char *const want[] = {"\"party\":\"account:EXT-T15-HIT\"", "\"name\":\"" HIT_NAME "\"",
                                       "\"entityId\":\"row-3\"", "\"caption\":\"THARWAT SALAH SHIHATA\"",
                                       "\"list\":\"un\"", "\"listVersion\":1", "\"listSha256\":\"",
                                       "\"transactions\":2", "\"explanations\":{", "name_jaro_winkler"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(f, want[i])) {
            fprintf(stderr, "  T15 finding lacks %s: %.400s\n", want[i], f);
            T_TRUE(0);
        }
    T_TRUE(strstr(f, LOOK_NAME) == NULL);
    free(f);
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM finding_evidence e JOIN cases c ON c.last_assessment_id = e.assessment_id JOIN "
             "case_accounts ca ON ca.case_id = c.case_id JOIN accounts a ON a.acct_no = ca.acct_no JOIN "
             "transactions t ON t.txn_no = e.txn_no WHERE a.account_id = '%s' AND e.typology_id = '%s' AND "
             "t.txn_ref LIKE 'T15-HIT-%%' AND e.role = 'trigger'",
             acct_hit, T15);
    char *ev = one_text(db_one, sql);
    T_TRUE(ev && !strcmp(ev, "2"));
    free(ev);
}

static void expect_same(const char *what, const char *db)
{
    char *fp = fingerprint(db);
    int same = fp && ref && !strcmp(fp, ref);
    if (!same)
        fprintf(stderr, "  %s: the scan's result differs from --jobs 1's\n", what);
    T_TRUE(same);
    free(fp);
}

static void test_jobs2_same(void)
{
    scan_one();
    char db[600];
    make_store("two", 0, 0, db, sizeof db);
    scan(db, "2");
    expect_same("--jobs 2", db);
}

/* Under pg.sh: the same files on SQLite give the same bytes as on PostgreSQL. */
static void test_same_on_sqlite(void)
{
    if (!pgt_base()) {
        fprintf(stderr, "  (on SQLite only: the cross-store comparison runs as aml.scan.t15.pg)\n");
        return;
    }
    scan_one();
    char db[600];
    make_store("sqlite", 0, 1, db, sizeof db);
    scan(db, "2");
    expect_same("SQLite against PostgreSQL", db);
}

static void test_no_lists_not_evaluable(void)
{
    char db[600];
    make_store("bare", 1, 0, db, sizeof db);
    scan(db, "2");
    T_EQ_INT(scan_t15_rows(db, acct_hit, ""), 0);
    char *n = one_text(db, "SELECT count(*) FROM assessment_findings WHERE typology_id = 'T15_SANCTIONS_EXPOSURE' "
                           "AND status = 'not_evaluable' AND explanation LIKE '%no screening lists loaded%'");
    char *all = one_text(db, "SELECT count(*) FROM assessment_findings WHERE typology_id = "
                             "'T15_SANCTIONS_EXPOSURE'");
    T_TRUE(n && all && atoi(all) > 0 && !strcmp(n, all));
    free(n);
    free(all);
}

/* mcp-cli call TOOL ARGS -- mcp-server-aml --db DB --actor alice; the output. */
static char *tool(const char *name, const char *db, const char *tool_name, const char *args_json)
{
    const char *argv[] = {cli, "call", tool_name, args_json, "--", bin, "--db", db, "--actor", "alice", NULL};
    if (run(name, argv))
        return NULL;
    return output(name);
}

static void test_dismissed_not_raised(void)
{
    scan_one();
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT ca.case_id FROM case_accounts ca JOIN accounts a ON a.acct_no = ca.acct_no WHERE "
             "a.account_id = '%s' ORDER BY ca.case_id LIMIT 1",
             acct_hit);
    char *case_id = one_text(db_one, sql);
    T_TRUE(case_id && case_id[0]);
    char *r = tool("dismiss", db_one, "dismissScreeningHit",
                   "{\"name\":\"" HIT_NAME "\",\"list\":\"un\",\"entityId\":\"row-3\",\"reason\":\"reviewed: born "
                   "1981 in Alexandria, not the listed person\"}");
    T_TRUE(r && strstr(r, "\"dismissedBy\":\"alice\""));
    free(r);
    char *audit = one_text(db_one, "SELECT actor || ' ' || detail FROM audit_log WHERE action = "
                                   "'tool.dismissScreeningHit' AND outcome = 'ok' ORDER BY seq DESC LIMIT 1");
    T_TRUE(audit && !strncmp(audit, "alice ", 6) && strstr(audit, "not the listed person") &&
           strstr(audit, "un/row-3"));
    free(audit);
    char args[200];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", case_id ? case_id : "");
    /* The case's T15 finding (its strongest account's) lists no hit on the dismissed holder. */
    r = tool("assess", db_one, "assessCase", args);
    char *t = NULL; /* the last mention: the findings follow the summary */
    for (char *x = r; x && (x = strstr(x, "\"typologyId\":\"" T15 "\"")) != NULL; x++)
        t = x;
    T_TRUE(t != NULL);
    if (t && strstr(t + 1, "\"typologyId\":"))
        *strstr(t + 1, "\"typologyId\":") = '\0';
    T_TRUE(t && strstr(t, "\"status\":") && !strstr(t, "\"party\":\"account:EXT-T15-HIT\""));
    free(r);
    r = tool("screencase", db_one, "screenCase", args);
    t = r ? strstr(r, "\"party\":\"account:EXT-T15-HIT\"") : NULL;
    if (t && strstr(t + 1, "\"party\":"))
        *strstr(t + 1, "\"party\":") = '\0';
    T_TRUE(t && strstr(t, "\"dismissed\":true") && strstr(t, "\"matches\":0"));
    free(r);
    /* New transactions to the listed holder: the next scan evaluates the account again, and raises nothing. */
    const char *imp[] = {bin, "import", "--db", db_one, "--format", "native", more, NULL};
    T_EQ_INT(run("import-more", imp), 0);
    scan(db_one, "2");
    T_EQ_INT(scan_t15_rows(db_one, acct_hit, " AND m.run_id = (SELECT max(run_id) FROM scan_runs)"), 0);
    char *evaluated = one_text(db_one, "SELECT accounts_evaluated FROM scan_runs ORDER BY run_id DESC LIMIT 1");
    T_TRUE(evaluated && atoi(evaluated) >= 1);
    free(evaluated);
    free(case_id);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_scan_raises_t15), TEST(test_jobs2_same), TEST(test_same_on_sqlite),
                                   TEST(test_no_lists_not_evaluable), TEST(test_dismissed_not_raised)};
    if (argc < 5) {
        fprintf(stderr, "usage: aml_scan_t15 MCP-SERVER-AML MCP-CLI WORKDIR SCREENING-DATA-DIR\n");
        printf("aml_scan_t15: 0 passed, 1 failed\n");
        return 1;
    }
    bin = argv[1];
    cli = argv[2];
    scratch_dir(argv[3], workdir, sizeof workdir);
    datadir = argv[4];
    if (make_fixture()) {
        fprintf(stderr, "the fixture could not be made in %s\n", workdir);
        printf("aml_scan_t15: 0 passed, 1 failed\n");
        return 1;
    }
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    free(ref);
    return rc;
}
