/*
 * Import on both stores (run under tests/lib/pg.sh, which sets AML_TEST_DB):
 * the same files imported into SQLite and into PostgreSQL (where an import
 * into an empty store goes through COPY) leave the same rows in every data
 * table, compared row by row in key order through the aml_ API; gen into
 * a store likewise; a second import into a filled store (row by row on
 * PostgreSQL) too; bad rows skipped alike, also rows the database would
 * refuse (text that is not UTF-8 in a bulk COPY, a unique key row by row);
 * text that COPY's text format escapes arrives byte for byte (binary COPY)
 * and the keys a bulk load takes down are back after it; a failed import
 * keeps nothing and leaves the indexes a bulk load takes down in place; so
 * does one its caller cancels through on_progress.
 */
#include "commands/gen.h"
#include "commands/ingest.h"
#include "pgtest.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char workdir[256];

/* The data tables and their keys: every row in key order. */
static const char *const dumps[] = {
    "SELECT * FROM customers ORDER BY customer_id",
    "SELECT * FROM accounts ORDER BY acct_no",
    "SELECT * FROM account_parties ORDER BY acct_no, customer_id, role",
    "SELECT * FROM transactions ORDER BY txn_no",
    "SELECT * FROM trade_documents ORDER BY doc_id",
    "SELECT * FROM fx_rates ORDER BY currency, rate_date",
    "SELECT * FROM jurisdiction_lists ORDER BY list_name, country, effective_from",
    "SELECT * FROM cases ORDER BY case_id",
    "SELECT * FROM case_accounts ORDER BY case_id, acct_no",
    "SELECT * FROM gt_instances ORDER BY instance_id",
    "SELECT * FROM gt_accounts ORDER BY instance_id, acct_no",
    "SELECT * FROM coverage ORDER BY acct_no, source",
    "SELECT key, value FROM meta WHERE key LIKE 'data.%' ORDER BY key",
    "SELECT key, value FROM settings ORDER BY key",
    NULL,
};

/* Every row of the data tables as text lines ("table: v1|v2|NULL|..."), into b. */
static void dump(aml_store *s, mcp_buf *b)
{
    for (size_t i = 0; dumps[i]; i++) {
        aml_st *st = aml_prepare(s, dumps[i]);
        T_NOT_NULL(st);
        int rc;
        while ((rc = aml_step(st)) == AML_ROW) {
            aml_buf_printf(b, "%zu:", i);
            for (int c = 0; c < aml_col_count(st); c++)
                aml_buf_printf(b, "%s%s", c ? "|" : " ", aml_col_null(st, c) ? "NULL" : aml_col_text(st, c));
            aml_buf_puts(b, "\n");
        }
        aml_finalize(st);
        T_EQ_INT(rc, AML_DONE);
    }
}

/* Fails at the first line where the two stores differ, naming it. */
static void same_rows(aml_store *lite, aml_store *pg)
{
    mcp_buf a, b;
    mcp_buf_init(&a, 0);
    mcp_buf_init(&b, 0);
    dump(lite, &a);
    dump(pg, &b);
    T_TRUE(a.len > 0);
    size_t i = 0, line = 1;
    while (i < a.len && i < b.len && a.data[i] == b.data[i])
        line += a.data[i++] == '\n';
    if (i != a.len || i != b.len) {
        size_t s0 = i;
        while (s0 && a.data[s0 - 1] != '\n')
            s0--;
        fprintf(stderr, "  line %zu differs:\n  sqlite: %.300s\n  pg:     %.300s\n", line,
                s0 < a.len ? a.data + s0 : "(end)", s0 < b.len ? b.data + s0 : "(end)");
    }
    T_TRUE(i == a.len && i == b.len);
    mcp_buf_cleanup(&a);
    mcp_buf_cleanup(&b);
}

/* A fresh SQLite file store and a fresh PostgreSQL schema. */
static void open_both(aml_store **lite, aml_store **pg)
{
    static int n;
    char path[512], uri[1024];
    aml_err err = {{0}};
    snprintf(path, sizeof path, "%s/s%d.db", workdir, ++n);
    unlink(path);
    T_EQ_INT(aml_store_open(lite, path, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(pgt_fresh(uri, sizeof uri, NULL, 0), 0);
    if (aml_store_open(pg, uri, AML_OPEN_CREATE, &err))
        fprintf(stderr, "  %s\n", err.msg);
    T_NOT_NULL(*pg);
}

/* The same import on both stores; its result (0 / -1) must agree. */
static int import_both(aml_store *lite, aml_store *pg, aml_format fmt, const char *const *paths, size_t n,
                       const aml_ingest_opts *o)
{
    aml_err e1 = {{0}}, e2 = {{0}};
    aml_ingest_stats s1, s2;
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    int r1 = aml_import(lite, fmt, paths, n, o, NULL, &s1, &e1);
    int r2 = aml_import(pg, fmt, paths, n, o, NULL, &s2, &e2);
    if (r1 || r2)
        fprintf(stderr, "  sqlite: %d %s\n  pg: %d %s\n", r1, e1.msg, r2, e2.msg);
    T_EQ_INT(r1, r2);
    T_EQ_INT(s1.transactions, s2.transactions);
    T_EQ_INT(s1.accounts, s2.accounts);
    T_EQ_INT(s1.customers, s2.customers);
    return r1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    T_NOT_NULL(f);
    fputs(text, f);
    fclose(f);
}

static void gen_native(const char *path, unsigned seed, int customers)
{
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = seed;
    o.customers = customers;
    aml_err err = {{0}};
    FILE *f = fopen(path, "wb");
    T_NOT_NULL(f);
    T_EQ_INT(aml_gen_native(f, &o, NULL, &err), 0);
    fclose(f);
}

static void test_gen(void)
{
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 7;
    o.customers = 40;
    aml_err err = {{0}};
    T_EQ_INT(aml_gen_store(lite, &o, NULL, &err), 0);
    T_EQ_INT(aml_gen_store(pg, &o, NULL, &err), 0);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
}

/* A native bank, then an AMLworld file into the same stores (the second import runs row by row). */
static void test_native_then_amlworld(void)
{
    char bank[512], trans[512], acc[512], pat[512];
    snprintf(bank, sizeof bank, "%s/bank.csv", workdir);
    snprintf(trans, sizeof trans, "%s/aw_Trans.csv", workdir);
    gen_native(bank, 1, 40);
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.amlworld = 1;
    o.seed = 2;
    o.customers = 40;
    aml_err err = {{0}};
    T_EQ_INT(aml_gen_amlworld(trans, &o, NULL, acc, pat, sizeof acc, &err), 0);
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *p1[] = {bank};
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, p1, 1, NULL), 0);
    same_rows(lite, pg);
    const char *p2[] = {trans, acc, pat};
    T_EQ_INT(import_both(lite, pg, AML_FMT_AMLWORLD, p2, 3, NULL), 0);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    /* AMLworld alone, into empty stores (COPY on PostgreSQL), first-activity coverage. */
    open_both(&lite, &pg);
    aml_ingest_opts io;
    memset(&io, 0, sizeof io);
    io.history_mode = AML_HISTORY_FIRST_ACTIVITY;
    T_EQ_INT(import_both(lite, pg, AML_FMT_AMLWORLD, p2, 3, &io), 0);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(bank);
    unlink(trans);
    unlink(acc);
    unlink(pat);
}

static const char amlsim_accounts[] =
    "acct_id,dsply_nm,type,acct_stat,acct_rptng_crncy,prior_sar_count,branch_id,open_dt,close_dt,initial_deposit,"
    "tx_behavior_id,bank_id,first_name,last_name,street_addr,city,state,country,zip,gender,birth_date,ssn,lon,lat\n"
    "1,C_1,SAV,A,USD,0,5,2016-12-01,,60000.5,1,bank_a,Ann,Lee,1 Main St,Springfield,IL,US,62701,F,1980-02-03,123,0,0\n"
    "2,C_2,SAV,A,USD,0,5,2016-12-01,,70000,1,bank_a,Bo,Kim,2 Main St,Springfield,IL,US,62701,M,1975-04-05,124,0,0\n";

static void test_amlsim(void)
{
    char acc[512], txn[512], cash[512], alerts[512];
    snprintf(acc, sizeof acc, "%s/accounts.csv", workdir);
    snprintf(txn, sizeof txn, "%s/transactions.csv", workdir);
    snprintf(cash, sizeof cash, "%s/cash_tx.csv", workdir);
    snprintf(alerts, sizeof alerts, "%s/alert_transactions.csv", workdir);
    write_file(acc, amlsim_accounts);
    write_file(txn, "tran_id,tran_timestamp,base_amt,tx_type,orig_acct,bene_acct,is_sar,alert_id\n"
                    "10,2017-01-02T00:00:00Z,150.25,TRANSFER,1,2,True,7\n"
                    "11,2017-01-03T00:00:00Z,99.00,TRANSFER,2,1,False,-1\n");
    write_file(cash, "tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp,is_sar,alert_id\n"
                     "20,1,B12,CASH-IN,500,2017-01-04T00:00:00Z,False,-1\n"
                     "21,B12,2,CASH-OUT,300,2017-01-05T00:00:00Z,False,-1\n");
    write_file(alerts, "alert_id,alert_type,is_sar,tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp\n"
                       "7,fan_in,True,10,1,2,TRANSFER,150.25,2017-01-02T00:00:00Z\n");
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *paths[] = {txn, cash, acc, alerts};
    T_EQ_INT(import_both(lite, pg, AML_FMT_AMLSIM, paths, 4, NULL), 0);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(acc);
    unlink(txn);
    unlink(cash);
    unlink(alerts);
}

/* Bad rows (a duplicate transaction id, a duplicate customer, a bad party role) are skipped alike. */
static const char bad_rows[] =
    "customer,C1,individual,Ann Lee,,,,,,,,,,,,,,,\n"
    "customer,C1,individual,Ann Again,,,,,,,,,,,,,,,\n"
    "customer,C2,company,Bad Type,,,,,,,,,,,,,,,\n"
    "account,A1,1,,,,USD,active,,,,,,\n"
    "account,A2,1,,,,USD,frozen,,,,,,\n"
    "party,A1,C1,primary\n"
    "party,A1,C1,primary\n"
    "party,A1,C1,boss\n"
    "txn,T1,2025-01-02T10:00:00Z,second,A1,X9,1000,USD,wire,,,,,,,,,,\n"
    "txn,T1,2025-01-02T11:00:00Z,second,A1,X9,2000,USD,wire,,,,,,,,,,\n"
    "txn,T2,2025-01-03T10:00:00Z,second,X9,A1,300,USD,ach,,,,,,,,,,\n"
    "txn,T3,2025-01-04T10:00:00Z,second,A1,X8,-5,USD,wire,,,,,,,,,,\n";

static void test_bad_rows_skipped(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.csv", workdir);
    write_file(path, bad_rows);
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *paths[] = {path};
    aml_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.skip_bad = 1;
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, paths, 1, &o), 0);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(path);
}

static int64_t q1(aml_store *s, const char *sql);

/* What a FILE written so far holds (malloc'd). */
static char *slurp_file(FILE *f)
{
    long n = ftell(f);
    char *t = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(f);
    if (t && n > 0 && fread(t, 1, (size_t)n, f) != (size_t)n)
        t[0] = '\0';
    return t;
}

/* The same import with --skip-bad-rows on both stores: both succeed, skip the same rows and report them alike. */
static void skip_both(aml_store *lite, aml_store *pg, const char *path, uint64_t skipped, const char *expect)
{
    const char *paths[] = {path};
    aml_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.skip_bad = 1;
    FILE *r1 = tmpfile(), *r2 = tmpfile();
    T_NOT_NULL(r1);
    T_NOT_NULL(r2);
    aml_err e1 = {{0}}, e2 = {{0}};
    aml_ingest_stats s1, s2;
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    int rc1 = aml_import(lite, AML_FMT_NATIVE, paths, 1, &o, r1, &s1, &e1);
    int rc2 = aml_import(pg, AML_FMT_NATIVE, paths, 1, &o, r2, &s2, &e2);
    if (rc1 || rc2)
        fprintf(stderr, "  sqlite: %d %s\n  pg: %d %s\n", rc1, e1.msg, rc2, e2.msg);
    char *t1 = slurp_file(r1), *t2 = slurp_file(r2);
    if (t1 && t2 && strcmp(t1, t2))
        fprintf(stderr, "  sqlite reported:\n%s  pg reported:\n%s", t1, t2);
    T_EQ_INT(rc1, 0);
    T_EQ_INT(rc2, 0);
    T_EQ_INT(s1.skipped, skipped);
    T_EQ_INT(s2.skipped, skipped);
    T_EQ_INT(s1.transactions, s2.transactions);
    T_TRUE(t1 && t2 && strcmp(t1, t2) == 0);
    T_TRUE(t2 && strstr(t2, expect) != NULL);
    free(t1);
    free(t2);
    fclose(r1);
    fclose(r2);
    same_rows(lite, pg);
}

/*
 * Rows the database itself would refuse are skipped alike: text that is not
 * UTF-8 (PostgreSQL refuses it in the bulk COPY; every field is checked
 * first, on both stores), into an empty store (COPY on PostgreSQL).
 */
static void test_bad_text_skipped(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad-text.csv", workdir);
    write_file(path, "customer,C1,individual,Ann Lee,,,,,,,,,,,,,,,\n"
                     "customer,C2,individual,Bad \377 Name,,,,,,,,,,,,,,,\n"
                     "account,A1,1,,,,USD,active,,,,,,\n"
                     "party,A1,C1,primary\n"
                     "txn,T1,2025-01-02T10:00:00Z,second,A1,X9,1000,USD,wire,,,,,,,\"caf\303\251\",,,\n"
                     "txn,T2,2025-01-02T11:00:00Z,second,A1,X9,2000,USD,wire,,,,,,,\"\300\257\",,,\n"
                     "txn,T3,2025-01-03T10:00:00Z,second,X9,A1,300,USD,ach,,,,,,,,,,\n");
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    skip_both(lite, pg, path, 2, "bad-text.csv:6: skipped: line 6: field 16 is not UTF-8 text");
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions"), 2);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM customers"), 1);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(path);
}

/*
 * Into a filled store (row by row on PostgreSQL): a row the database
 * refuses (a transaction id or customer already stored: a unique index)
 * fails alone and the rows after it are stored, as on SQLite.
 */
static void test_refused_rows_skipped_row_by_row(void)
{
    char first[512], second[512];
    snprintf(first, sizeof first, "%s/first.csv", workdir);
    snprintf(second, sizeof second, "%s/second.csv", workdir);
    write_file(first, "customer,C1,individual,Ann Lee,,,,,,,,,,,,,,,\n"
                      "account,A1,1,,,,USD,active,,,,,,\n"
                      "txn,T1,2025-01-02T10:00:00Z,second,A1,X9,1000,USD,wire,,,,,,,,,,\n");
    write_file(second, "txn,T1,2025-01-02T11:00:00Z,second,A1,X9,2000,USD,wire,,,,,,,,,,\n"
                       "txn,T2,2025-01-03T10:00:00Z,second,X9,A1,300,USD,ach,,,,,,,,,,\n"
                       "customer,C1,individual,Ann Again,,,,,,,,,,,,,,,\n"
                       "customer,C2,individual,Bob Ray,,,,,,,,,,,,,,,\n"
                       "party,A1,C2,joint\n"
                       "txn,T3,2025-01-04T10:00:00Z,second,A1,X8,700,USD,wire,,,,,,,,,,\n");
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *paths[] = {first};
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, paths, 1, NULL), 0);
    skip_both(lite, pg, second, 2, "second.csv:3: skipped: customer 'C1' already exists");
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions"), 3);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM account_parties"), 1);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(first);
    unlink(second);
}

static int64_t q1(aml_store *s, const char *sql)
{
    aml_st *st = aml_prepare(s, sql);
    int64_t v = -1;
    if (st && aml_step(st) == AML_ROW)
        v = aml_col_int(st, 0);
    aml_finalize(st);
    return v;
}

/*
 * Text that COPY's text format would have to escape (tab, newline, carriage return, backslash, "\\N") and
 * UTF-8 beyond ASCII arrives byte for byte through the bulk load's binary COPY; the load puts back the
 * keys it took down (transactions', and the keys and index of accounts, empty before), and the rowid
 * triggers: a transaction inserted afterwards without its key gets the next one.
 */
static void test_bulk_text_and_keys(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/text.csv", workdir);
    write_file(path, "customer,C1,individual,\"Ann\tLee \\N back\\slash\",,,,,,,,,,,,,,,\n"
                     "account,A1,1,,,,USD,active,,,,,,\"caf\xc3\xa9 \xe2\x82\xac\"\n"
                     "party,A1,C1,primary\n"
                     "txn,T1,2025-01-02T10:00:00Z,second,A1,X9,1000,USD,wire,,,,,,,\"l1\nl2\r\nl3\t\\\",,,\n"
                     "txn,,2025-01-02T11:00:00Z,minute,X9,A1,250,USD,cash,,,,,,,,,,\n");
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *paths[] = {path};
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, paths, 1, NULL), 0);
    same_rows(lite, pg);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM customers WHERE full_name = E'Ann\\tLee \\\\N back\\\\slash'"), 1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM accounts WHERE holder_name = 'caf\xc3\xa9 \xe2\x82\xac'"), 1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions WHERE memo = E'l1\\nl2\\r\\nl3\\t\\\\'"), 1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions WHERE txn_ref IS NULL AND txn_no = 2"), 1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'transactions'::regclass AND contype = 'p'"), 1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'accounts'::regclass AND "
                    "(conname, contype) IN (('accounts_pkey', 'p'), ('accounts_account_id_key', 'u'))"),
             2);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = "
                    "'accounts_country'"),
             1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM pg_trigger WHERE tgname IN ('transactions_rowid', 'accounts_rowid') AND "
                    "tgrelid IN ('transactions'::regclass, 'accounts'::regclass)"), 2);
    T_EQ_INT(aml_exec(pg, "INSERT INTO transactions(booked_at, from_acct, amount_minor, currency, "
                          "amount_base_minor, channel) VALUES (0, 1, 5, 'USD', 5, 'cash')",
                      NULL),
             0);
    T_EQ_INT(q1(pg, "SELECT max(txn_no) FROM transactions"), 3);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(path);
}

/* A failed bulk import keeps nothing: no rows, and the indexes it took down are back. */
static void test_failed_import_keeps_nothing(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fails.csv", workdir);
    write_file(path, "customer,C1,individual,Ann Lee,,,,,,,,,,,,,,,\n"
                     "account,A1,1,,,,USD,active,,,,,,\n"
                     "txn,T1,2025-01-02T10:00:00Z,second,A1,X9,1000,USD,wire,,,,,,,,,,\n"
                     "txn,T2,2025-01-02T11:00:00Z,second,A1,X9,2000,XXX,wire,,,,,,,,,,\n");
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    const char *paths[] = {path};
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, paths, 1, NULL), -1);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM accounts"), 0);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM customers"), 0);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN "
                    "('tx_from', 'tx_to', 'transactions_pkey', 'accounts_pkey', 'accounts_account_id_key', "
                    "'accounts_country')"),
             6);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(path);
}

/* on_progress: counts its calls, cancels at the first (a native file of more than 4,096 rows). */
static int cancel_at_once(void *ud, uint64_t done, uint64_t total)
{
    int *calls = ud;
    (*calls)++;
    return done > 0 && done <= total;
}

static void test_cancelled_import_keeps_nothing(void)
{
    char bank[512];
    snprintf(bank, sizeof bank, "%s/cancel.csv", workdir);
    gen_native(bank, 3, 40);
    aml_store *lite, *pg;
    open_both(&lite, &pg);
    int calls = 0;
    aml_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.on_progress = cancel_at_once;
    o.progress_ud = &calls;
    const char *paths[] = {bank};
    aml_err err = {{0}};
    T_EQ_INT(aml_import(pg, AML_FMT_NATIVE, paths, 1, &o, NULL, NULL, &err), -1); /* mid-COPY */
    T_TRUE(strstr(err.msg, "cancelled") != NULL);
    T_EQ_INT(calls, 1);
    T_EQ_INT(aml_import(lite, AML_FMT_NATIVE, paths, 1, &o, NULL, NULL, &err), -1);
    T_TRUE(strstr(err.msg, "cancelled") != NULL);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(q1(pg, "SELECT count(*) FROM accounts"), 0);
    T_EQ_INT(q1(lite, "SELECT count(*) FROM transactions"), 0);
    same_rows(lite, pg);
    /* The same import not cancelled afterwards: the store works and gets every row. */
    T_EQ_INT(import_both(lite, pg, AML_FMT_NATIVE, paths, 1, NULL), 0);
    T_TRUE(q1(pg, "SELECT count(*) FROM transactions") > 4096);
    same_rows(lite, pg);
    aml_store_close(lite);
    aml_store_close(pg);
    unlink(bank);
}

static void test_environment(void)
{
    if (!pgt_base())
        fprintf(stderr, "test_aml_pg_import: AML_TEST_DB is not set: run it under tests/lib/pg.sh\n");
    T_NOT_NULL(pgt_base());
    snprintf(workdir, sizeof workdir, "%s/aml-pgimport.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    T_NOT_NULL(mkdtemp(workdir));
}

static void test_cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    T_EQ_INT(system(cmd), 0);
}

TEST_MAIN(TEST(test_environment), TEST(test_gen), TEST(test_native_then_amlworld), TEST(test_amlsim),
          TEST(test_bad_rows_skipped), TEST(test_bad_text_skipped), TEST(test_refused_rows_skipped_row_by_row),
          TEST(test_bulk_text_and_keys), TEST(test_failed_import_keeps_nothing), TEST(test_cancelled_import_keeps_nothing),
          TEST(test_cleanup))
