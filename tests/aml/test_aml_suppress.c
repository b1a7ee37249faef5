/*
 * Alert suppression (engine/suppress.h): a pattern suppression (account +
 * typology) stops the re-alert in the next scan and only that one; after
 * its date (a scan detected later) the alert is back; a pair suppression
 * whose counterparty is not the whole of the evidence does not hide the
 * alert; the suppression is in the case's history with who, why and until
 * when; bad requests are refused with the reason; rows cannot be changed.
 */
#include "amltest.h"
#include "engine/suppress.h"

static int64_t scalar(aml_store *s, const char *sql, int64_t p1, const char *p2)
{
    aml_st *st;
    int64_t v = -1;
    if ((st = aml_prepare(s, sql)) == NULL)
        return -1;
    aml_bind_int(st, 1, p1);
    if (p2)
        aml_bind_text(st, 2, p2);
    if (aml_step(st) == AML_ROW)
        v = aml_col_int(st, 0);
    aml_finalize(st);
    return v;
}

static int64_t last_run(aml_store *s)
{
    return scalar(s, "SELECT max(run_id) + 0 * ? FROM scan_runs", 0, NULL);
}

static int64_t rows_of(aml_store *s, int64_t run)
{
    return scalar(s, "SELECT count(*) FROM scan_matches WHERE run_id = ?", run, NULL);
}

static int64_t has_row(aml_store *s, int64_t run, int64_t acct, const char *typ)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM scan_matches WHERE run_id = ? AND acct_no = %lld AND typology_id = ?",
             (long long)acct);
    return scalar(s, sql, run, typ);
}

static int scan_with(aml_store *s, int64_t from, int64_t to, const char *detected)
{
    aml_scan_opts o;
    memset(&o, 0, sizeof o);
    o.from = from;
    o.to = to;
    o.detected = detected;
    o.actor = "test";
    aml_scan_stats st;
    aml_err err = {{0}};
    int rc = aml_scan(s, &o, NULL, &st, &err);
    if (rc)
        fprintf(stderr, "scan: %s\n", err.msg);
    return rc;
}

static void test_suppression_and_expiry(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 20260728;
    o.customers = 60;
    o.days = 120;
    o.instances = 1;
    o.lookalikes = 1;
    T_EQ_INT(aml_gen_store(s, &o, NULL, &err), 0);
    T_EQ_INT(scan_with(s, 0, 0, NULL), 0);
    int64_t run1 = last_run(s), rows1 = rows_of(s, run1);
    T_TRUE(rows1 > 2);
    /* Two matched accounts of the first scan, with the case each went to. */
    aml_st *st;
    T_TRUE((st = aml_prepare(s, "SELECT m.acct_no, a.account_id, m.typology_id, m.case_id FROM scan_matches m JOIN "
                                "accounts a ON a.acct_no = m.acct_no WHERE m.run_id = ? AND m.case_id IS NOT NULL "
                                "ORDER BY m.acct_no, m.typology_id")) != NULL);
    aml_bind_int(st, 1, run1);
    int64_t acct[2] = {0, 0};
    char id[2][64], typ[2][64], cs[2][64];
    int n = 0;
    while (n < 2 && aml_step(st) == AML_ROW) {
        int64_t a = aml_col_int(st, 0);
        if (n == 1 && a == acct[0])
            continue;
        acct[n] = a;
        snprintf(id[n], sizeof id[n], "%s", aml_col_text(st, 1));
        snprintf(typ[n], sizeof typ[n], "%s", aml_col_text(st, 2));
        snprintf(cs[n], sizeof cs[n], "%s", aml_col_text(st, 3));
        n++;
    }
    aml_finalize(st);
    T_EQ_INT(n, 2);
    char until[11], later[11];
    aml_fmt_date(aml_now() + 30 * AML_DAY, until);
    aml_fmt_date(aml_now() + 31 * AML_DAY, later);
    /* Refusals say why. */
    int64_t sid = 0;
    aml_suppression bad = {cs[0], id[0], NULL, NULL, until, "Reviewed: salary and rent only."};
    T_EQ_INT(aml_suppress_add(s, &bad, "analyst-a", &sid, &err), 1);
    T_TRUE(strstr(err.msg, "typology") != NULL);
    aml_suppression forever = {cs[0], id[0], NULL, typ[0], "2099-01-01", "Reviewed: salary and rent only."};
    T_EQ_INT(aml_suppress_add(s, &forever, "analyst-a", &sid, &err), 1);
    T_TRUE(strstr(err.msg, "366") != NULL);
    aml_suppression other = {cs[0], id[1], NULL, typ[1], until, "Reviewed: salary and rent only."};
    T_TRUE(strcmp(cs[0], cs[1]) == 0 || aml_suppress_add(s, &other, "analyst-a", &sid, &err) == 1);
    /* A pattern suppression on the first account, a pair with an unrelated account on the second. */
    aml_suppression pat = {cs[0], id[0], NULL, typ[0], until, "Reviewed: the owner's own takings, documented."};
    T_EQ_INT(aml_suppress_add(s, &pat, "analyst-a", &sid, &err), 0);
    T_TRUE(sid > 0);
    char cp[64];
    aml_account_id(s, acct[0], cp, sizeof cp);
    aml_suppression pair = {cs[1], id[1], cp, NULL, until, "Reviewed: payments between relatives."};
    T_EQ_INT(aml_suppress_add(s, &pair, "analyst-b", &sid, &err), 0);
    /* In the case, with who, why and until when. */
    T_EQ_INT(scalar(s, "SELECT count(*) FROM case_events WHERE 0 * ? = 0 AND case_id = ? AND action = 'suppress' "
                       "AND actor = 'analyst-a' AND detail LIKE '%until%' AND detail LIKE '%own takings%'",
                    0, cs[0]),
             1);
    /* The next scan (another window over the same data: every account evaluated again) does not re-alert. */
    int64_t first = aml_day_start(scalar(s, "SELECT min(booked_at) + 0 * ? FROM transactions", 0, NULL));
    int64_t lastt = aml_day_start(scalar(s, "SELECT max(booked_at) + 0 * ? FROM transactions", 0, NULL)) + AML_DAY - 1;
    T_EQ_INT(scan_with(s, first - AML_DAY, lastt, NULL), 0);
    int64_t run2 = last_run(s);
    T_EQ_INT(has_row(s, run2, acct[0], typ[0]), 0);
    T_EQ_INT(has_row(s, run2, acct[1], typ[1]), 1); /* the pair does not explain that alert */
    T_EQ_INT(rows_of(s, run2), rows1 - 1);
    /* After its last day the alert is back. */
    T_EQ_INT(scan_with(s, first - 2 * AML_DAY, lastt, later), 0);
    int64_t run3 = last_run(s);
    T_EQ_INT(has_row(s, run3, acct[0], typ[0]), 1);
    T_EQ_INT(rows_of(s, run3), rows1);
    /* The record cannot be rewritten. */
    T_TRUE(aml_exec(s, "UPDATE suppressions SET until = '2099-01-01'", &err) != 0);
    aml_store_close(s);
}

TEST_MAIN(TEST(test_suppression_and_expiry))
