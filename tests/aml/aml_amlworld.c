/*
 * Imports and scans. An AMLworld-format file with laundering patterns
 * (fan-in, fan-out, cycle, scatter-gather, gather-scatter, stack,
 * bipartite) produced by the generator is imported with its accounts and
 * Patterns.txt, scanned, and scored per pattern (table printed). Plus: the
 * scan is incremental; bad rows are reported with their line and either
 * fail the whole import or are skipped; an import is one transaction;
 * AMLSim outputs (accounts, transactions with cash rows, alerts) load; the
 * native format round-trips the generator's bank.
 *
 * usage: aml_amlworld WORKDIR
 */
#include "amltest.h"

static char workdir[512];

static int64_t q1(aml_store *s, const char *sql)
{
    aml_st *st = NULL;
    int64_t v = -1;
    if ((st = aml_prepare(s, sql)) != NULL && aml_step(st) == AML_ROW)
        v = aml_col_int(st, 0);
    aml_finalize(st);
    return v;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_patterns(void)
{
    char trans[700], acc[700], pat[700];
    snprintf(trans, sizeof trans, "%s/HI-Synth_Trans.csv", workdir);
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.amlworld = 1;
    o.seed = 3;
    o.customers = 1500;
    o.days = 60; /* attempts after the first 30 days: the warm-up before a counterparty can be new */
    o.instances = 5;
    aml_gen_stats gs;
    aml_err err = {{0}};
    T_EQ_INT(aml_gen_amlworld(trans, &o, &gs, acc, pat, sizeof acc, &err), 0);
    aml_store *s;
    T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
    const char *paths[3] = {pat, trans, acc}; /* any order: reference data and labels are sequenced */
    aml_ingest_stats is;
    aml_ingest_opts io;
    memset(&io, 0, sizeof io);
    T_EQ_INT(aml_import(s, AML_FMT_AMLWORLD, paths, 3, &io, stderr, &is, &err), 0);
    printf("AMLworld file: %llu transactions (%llu laundering rows), %llu accounts, %llu attempts; imported %llu rows "
           "in %.2f s, %llu pattern rows labelled\n",
           (unsigned long long)gs.transactions, (unsigned long long)gs.laundering_rows, (unsigned long long)gs.accounts,
           (unsigned long long)gs.instances, (unsigned long long)is.rows, is.seconds, (unsigned long long)is.labels);
    T_EQ_INT(is.transactions, gs.transactions);
    T_EQ_INT(is.labels, gs.laundering_rows);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions WHERE gt_is_laundering = 1"), gs.laundering_rows);
    aml_scan_opts so;
    memset(&so, 0, sizeof so);
    aml_scan_stats ss;
    T_EQ_INT(aml_scan(s, &so, stdout, &ss, &err), 0);
    aml_pattern_quality pq[AML_NPATTERNS];
    printf("\nPer-pattern recall and precision (AMLworld format, generated, imported, scanned)\n");
    T_EQ_INT(aml_eval_patterns(s, stdout, pq, &err), 0);
    for (int k = 0; k < AML_NPATTERNS; k++) {
        T_EQ_INT(pq[k].attempts, 5);
        T_TRUE(pq[k].recall >= 0.8);
        T_TRUE(pq[k].laundering_alerts > 0);
    }
    /* The queue: scan cases ranked by their assessment (all were 'normal' before). */
    T_TRUE(q1(s, "SELECT count(*) FROM cases WHERE origin = 'scan' AND case_score >= 70") > 0);
    T_EQ_INT(q1(s, "SELECT count(*) FROM cases WHERE origin = 'scan' AND ((case_score >= 70 AND priority NOT IN "
                   "('high','urgent')) OR (case_score < 70 AND priority IN ('high','urgent')) OR "
                   "(case_score < 40 AND priority <> 'low'))"),
             0);
    /* Transaction level on the time-ordered last 20% (the published baselines' split). */
    aml_txn_quality tq;
    T_EQ_INT(aml_eval_txn_level(s, stdout, &tq, &err), 0);
    int64_t ntx = q1(s, "SELECT count(*) FROM transactions");
    T_TRUE(tq.transactions >= ntx / 5 && tq.transactions <= ntx / 5 + 1);
    T_EQ_INT(tq.laundering, q1(s, "SELECT count(*) FROM (SELECT gt_is_laundering FROM transactions ORDER BY booked_at, "
                                  "txn_no LIMIT -1 OFFSET (SELECT count(*) * 8 / 10 FROM transactions)) "
                                  "WHERE gt_is_laundering = 1"));
    T_EQ_INT(tq.tp + tq.fn, tq.laundering);
    T_TRUE(tq.tp > 0);
    /* Incremental: the same window again evaluates nothing. */
    T_EQ_INT(aml_scan(s, &so, NULL, &ss, &err), 0);
    T_EQ_INT(ss.accounts_evaluated, 0);
    /* New rows touch two accounts: only they are evaluated. */
    char more[700];
    snprintf(more, sizeof more, "%s/more_Trans.csv", workdir);
    aml_st *st;
    char a1[64] = "", a2[64] = "";
    st = aml_prepare(s, "SELECT account_id FROM accounts WHERE account_id LIKE 'AMLW:%' ORDER BY acct_no LIMIT 2 "
                              "OFFSET 400");
    if (aml_step(st) == AML_ROW)
        snprintf(a1, sizeof a1, "%s", aml_col_text(st, 0));
    if (aml_step(st) == AML_ROW)
        snprintf(a2, sizeof a2, "%s", aml_col_text(st, 0));
    aml_finalize(st);
    char b1[16], k1[32], b2[16], k2[32];
    sscanf(a1, "AMLW:%15[^:]:%31s", b1, k1);
    sscanf(a2, "AMLW:%15[^:]:%31s", b2, k2);
    char text[1024];
    snprintf(text, sizeof text,
             "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,Payment "
             "Currency,Payment Format,Is Laundering\n"
             "2022/09/20 10:00,%s,%s,%s,%s,120.00,US Dollar,120.00,US Dollar,ACH,0\n"
             "2022/09/21 11:30,%s,%s,%s,%s,80.50,US Dollar,80.50,US Dollar,Cheque,0\n",
             b1, k1, b2, k2, b2, k2, b1, k1);
    write_file(more, text);
    const char *mp[1] = {more};
    T_EQ_INT(aml_import(s, AML_FMT_AMLWORLD, mp, 1, &io, stderr, &is, &err), 0);
    T_EQ_INT(aml_scan(s, &so, NULL, &ss, &err), 0);
    T_EQ_INT(ss.accounts_evaluated, 2);
    aml_store_close(s);
    unlink(trans);
    unlink(acc);
    unlink(pat);
    unlink(more);
}

static const char aw_header[] = "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount "
                                "Paid,Payment Currency,Payment Format,Is Laundering\n";

static void test_bad_rows(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/bad_Trans.csv", workdir);
    char text[2048];
    snprintf(text, sizeof text,
             "%s"
             "2022/09/01 00:20,10,8000EBD30,10,8000EBD31,3697.34,US Dollar,3697.34,US Dollar,Wire,0\n"
             "2022/13/01 00:20,10,8000EBD30,10,8000EBD31,1.00,US Dollar,1.00,US Dollar,Wire,0\n"
             "2022/09/02 00:20,10,8000EBD30,11,8000EBD32,50.00,US Dollar,50.00,US Dollar,Cash,0\n"
             "2022/09/02 01:20,10,8000EBD30,11,8000EBD32,50.00,Doubloon,50.00,Doubloon,Cash,0\n"
             "2022/09/03 01:20,10,8000EBD30,11,8000EBD32,-5.00,US Dollar,-5.00,US Dollar,ACH,0\n"
             "2022/09/03 02:20,10,8000EBD30,11,8000EBD32,7.00,US Dollar,7.00,US Dollar,ACH,0\n",
             aw_header);
    write_file(path, text);
    const char *paths[1] = {path};
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
    aml_ingest_opts io;
    memset(&io, 0, sizeof io);
    aml_ingest_stats is;
    /* Fail: the first bad row stops the import and nothing is kept. */
    T_EQ_INT(aml_import(s, AML_FMT_AMLWORLD, paths, 1, &io, stderr, &is, &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    T_TRUE(strstr(err.msg, ":3:") != NULL);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(q1(s, "SELECT count(*) FROM accounts"), 0);
    /* Skip: the bad rows are reported by line and the others imported. */
    io.skip_bad = 1;
    char report[700];
    snprintf(report, sizeof report, "%s/report.txt", workdir);
    FILE *rep = fopen(report, "w+");
    T_EQ_INT(aml_import(s, AML_FMT_AMLWORLD, paths, 1, &io, rep, &is, &err), 0);
    T_EQ_INT(is.skipped, 3);
    T_EQ_INT(is.transactions, 3);
    rewind(rep);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, rep);
    buf[n] = '\0';
    fclose(rep);
    fputs(buf, stdout);
    T_TRUE(strstr(buf, ":3: skipped") != NULL);
    T_TRUE(strstr(buf, ":5: skipped") != NULL);
    T_TRUE(strstr(buf, ":6: skipped") != NULL);
    aml_store_close(s);
    unlink(path);
    unlink(report);
}

static void test_amlsim(void)
{
    char acc[700], txn[700], cash[700], alerts[700];
    snprintf(acc, sizeof acc, "%s/accounts.csv", workdir);
    snprintf(txn, sizeof txn, "%s/transactions.csv", workdir);
    snprintf(cash, sizeof cash, "%s/cash_tx.csv", workdir);
    snprintf(alerts, sizeof alerts, "%s/alert_transactions.csv", workdir);
    write_file(acc, "acct_id,dsply_nm,type,acct_stat,acct_rptng_crncy,prior_sar_count,branch_id,open_dt,close_dt,"
                    "initial_deposit,tx_behavior_id,bank_id,first_name,last_name,street_addr,city,state,country,zip,"
                    "gender,birth_date,ssn,lon,lat\n"
                    "1,C_1,SAV,A,USD,0,5,2016-12-01,,60000.5,1,bank_a,Ann,Lee,1 Main St,Springfield,IL,US,62701,F,"
                    "1980-02-03,123,0,0\n"
                    "2,C_2,SAV,A,USD,0,5,2016-12-01,,70000,1,bank_a,Bo,Kim,2 Main St,Springfield,IL,US,62701,M,"
                    "1975-04-05,124,0,0\n");
    /* Column order differs between parameter sets: read by name. */
    write_file(txn, "tran_id,tran_timestamp,base_amt,tx_type,orig_acct,bene_acct,is_sar,alert_id\n"
                    "10,2017-01-02T00:00:00Z,150.25,TRANSFER,1,2,True,7\n"
                    "11,2017-01-03T00:00:00Z,99.00,TRANSFER,2,1,False,-1\n");
    write_file(cash, "tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp,is_sar,alert_id\n"
                     "20,1,B12,CASH-IN,500,2017-01-04T00:00:00Z,False,-1\n"
                     "21,B12,2,CASH-OUT,300,2017-01-05T00:00:00Z,False,-1\n");
    write_file(alerts, "alert_id,alert_type,is_sar,tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp\n"
                       "7,fan_in,True,10,1,2,TRANSFER,150.25,2017-01-02T00:00:00Z\n");
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
    const char *paths[4] = {txn, cash, acc, alerts};
    aml_ingest_stats is;
    int rc = aml_import(s, AML_FMT_AMLSIM, paths, 4, NULL, stderr, &is, &err);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        aml_store_close(s);
    }
    T_EQ_INT(rc, 0);
    T_EQ_INT(is.transactions, 4);
    T_EQ_INT(q1(s, "SELECT count(*) FROM customers WHERE full_name = 'Ann Lee'"), 1);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions WHERE channel = 'cash' AND from_acct IS NULL AND "
                   "location_id = 'B12' AND amount_minor = 50000"),
             1);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions WHERE channel = 'cash' AND to_acct IS NULL"), 1);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions WHERE gt_label = 'fan_in' AND gt_attempt_id = '7'"), 1);
    T_EQ_INT(q1(s, "SELECT count(*) FROM transactions WHERE time_precision = 'day'"), 4);
    T_EQ_INT(q1(s, "SELECT count(*) FROM meta WHERE key = 'data.day_precision' AND value = '1'"), 1);
    aml_store_close(s);
    unlink(acc);
    unlink(txn);
    unlink(cash);
    unlink(alerts);
}

static void test_native_roundtrip(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/bank.csv", workdir);
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 9;
    o.customers = 40;
    o.days = 100;
    o.instances = 1;
    aml_err err = {{0}};
    FILE *f = fopen(path, "wb");
    T_NOT_NULL(f);
    T_EQ_INT(aml_gen_native(f, &o, NULL, &err), 0);
    fclose(f);
    aml_store *a, *b;
    T_EQ_INT(aml_store_open(&a, NULL, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_store_open(&b, NULL, AML_OPEN_CREATE, &err), 0);
    const char *paths[1] = {path};
    T_EQ_INT(aml_import(a, AML_FMT_NATIVE, paths, 1, NULL, stderr, NULL, &err), 0);
    T_EQ_INT(aml_gen_store(b, &o, NULL, &err), 0);
    static const char *const counts[] = {"SELECT count(*) FROM customers", "SELECT count(*) FROM accounts",
                                         "SELECT count(*) FROM transactions", "SELECT sum(amount_minor) FROM transactions",
                                         "SELECT count(*) FROM cases", "SELECT count(*) FROM trade_documents",
                                         "SELECT count(*) FROM gt_instances", "SELECT count(*) FROM account_parties"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        T_EQ_INT(q1(a, counts[i]), q1(b, counts[i]));
    aml_quality qa[AML_NTYP], qb[AML_NTYP];
    T_EQ_INT(aml_eval_cases(a, NULL, qa, &err), 0);
    T_EQ_INT(aml_eval_cases(b, NULL, qb, &err), 0);
    T_EQ_MEM(qa, qb, sizeof qa);
    /* A fatal row in the middle of a file: the import keeps nothing. */
    aml_store *c;
    T_EQ_INT(aml_store_open(&c, NULL, AML_OPEN_CREATE, &err), 0);
    FILE *in = fopen(path, "ab");
    fputs("txn,TX-BAD,not-a-time,second,ACC-100001,,100,USD,cash,,,,,,,,,,\n", in);
    fclose(in);
    T_EQ_INT(aml_import(c, AML_FMT_NATIVE, paths, 1, NULL, stderr, NULL, &err), -1);
    T_TRUE(strstr(err.msg, "booked_at") != NULL);
    T_EQ_INT(q1(c, "SELECT count(*) FROM transactions"), 0);
    T_EQ_INT(q1(c, "SELECT count(*) FROM customers"), 0);
    aml_store_close(a);
    aml_store_close(b);
    aml_store_close(c);
    unlink(path);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_patterns), TEST(test_bad_rows), TEST(test_amlsim),
                                   TEST(test_native_roundtrip)};
    scratch_dir(argc > 1 ? argv[1] : "/tmp/aml-amlworld", workdir, sizeof workdir);
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    rmdir(workdir);
    return rc;
}
