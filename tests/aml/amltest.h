/*
 * Helpers shared by the mcp-server-aml tests: small hand-built fixtures
 * written through the ingest API (independent of the generator), running
 * the engine on a case, and scratch directories.
 */
#ifndef AML_TEST_H
#define AML_TEST_H

#include "engine/cases.h"
#include "commands/eval.h"
#include "commands/gen.h"
#include "commands/ingest.h"
#include "engine/scan.h"
#include "pgtest.h"
#include "testlib.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/* Day 0 of every fixture: 2025-01-01T00:00:00Z. */
#define FX_BASE 1735689600LL

typedef struct fx {
    aml_store *s;
    aml_ingest *in;
    aml_err err;
    int ok;
} fx;

static inline int64_t fx_t(int day, int hour)
{
    return FX_BASE + (int64_t)day * AML_DAY + (int64_t)hour * AML_HOUR;
}

static inline void fx_date(int day, char *out)
{
    aml_fmt_date(fx_t(day, 0), out);
}

/*
 * A fresh private store: in memory on SQLite or, when AML_TEST_DB names a
 * PostgreSQL database (tests/lib/pg.sh sets it; tests/README.md), a fresh
 * schema of that database. Tests that open their stores here run on both.
 */
static inline int amltest_open(aml_store **s, aml_err *err)
{
    if (!pgt_base())
        return aml_store_open(s, NULL, AML_OPEN_CREATE, err);
    char uri[1024];
    if (pgt_fresh(uri, sizeof uri, NULL, 0))
        return aml_errf(err, "cannot make a fresh schema in %s", pgt_base());
    return aml_store_open(s, uri, AML_OPEN_CREATE, err);
}

/** 1 when the tests run on PostgreSQL (AML_TEST_DB). */
static inline int amltest_pg(void)
{
    return pgt_base() != NULL;
}

static inline void fx_begin(fx *f)
{
    memset(f, 0, sizeof *f);
    f->ok = amltest_open(&f->s, &f->err) == 0 &&
            aml_ingest_begin(&f->in, f->s, NULL, &f->err) == 0;
    if (!f->ok)
        fprintf(stderr, "fixture: %s\n", f->err.msg);
}

/* A customer: kind "individual"/"entity"; exp_vol/exp_cash in dollars (< 0 = unknown). */
static inline void fx_cust(fx *f, const char *id, const char *name, const char *kind, const char *occupation, double exp_vol,
                    double exp_cash, int cash_intensive)
{
    if (!f->ok)
        return;
    aml_customer_rec c;
    memset(&c, 0, sizeof c);
    c.customer_id = id;
    c.full_name = name;
    c.customer_type = kind;
    c.occupation = occupation;
    c.onboarded_at = "2020-01-01";
    c.cash_intensive = cash_intensive;
    c.expected_monthly_volume.has = exp_vol >= 0;
    c.expected_monthly_volume.v = (int64_t)(exp_vol * 100);
    c.expected_monthly_cash.has = exp_cash >= 0;
    c.expected_monthly_cash.v = (int64_t)(exp_cash * 100);
    if (aml_ingest_customer(f->in, &c, &f->err)) {
        fprintf(stderr, "fixture customer %s: %s\n", id, f->err.msg);
        f->ok = 0;
    }
}

/* An account; cust NULL for an external one; opened_day may be negative. */
static inline void fx_acct(fx *f, const char *id, const char *cust, int opened_day, const char *region, const char *country,
                    const char *holder)
{
    if (!f->ok)
        return;
    char opened[11];
    fx_date(opened_day, opened);
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    a.account_id = id;
    a.is_internal = cust != NULL;
    a.opened_at = cust ? opened : NULL;
    a.opening_deposit.has = cust != NULL;
    a.opening_deposit.v = 5000;
    a.home_region = region;
    a.country = country ? country : "US";
    a.holder_name = holder;
    if (aml_ingest_account(f->in, &a, NULL, &f->err) || (cust && aml_ingest_party(f->in, id, cust, "primary", &f->err))) {
        fprintf(stderr, "fixture account %s: %s\n", id, f->err.msg);
        f->ok = 0;
    }
}

/* A transaction of `dollars` (cents allowed); from/to NULL for cash in/out. */
static inline void fx_tx(fx *f, const char *ref, int day, int hour, const char *from, const char *to, double dollars,
                  const char *channel, const char *conductor, const char *location, const char *region)
{
    if (!f->ok)
        return;
    aml_txn_rec t;
    memset(&t, 0, sizeof t);
    t.txn_ref = ref;
    t.booked_at = fx_t(day, hour);
    t.from_account = from;
    t.to_account = to;
    t.amount_minor = (int64_t)(dollars * 100 + 0.5);
    t.currency = "USD";
    t.channel = channel;
    t.conductor_id = conductor;
    t.location_id = location;
    t.location_region = region;
    if (aml_ingest_txn(f->in, &t, NULL, &f->err)) {
        fprintf(stderr, "fixture txn %s: %s\n", ref ? ref : "-", f->err.msg);
        f->ok = 0;
    }
}

static inline void fx_case(fx *f, const char *id, int from_day, int to_day, const char *acct)
{
    if (!f->ok)
        return;
    char opened[11], det[11];
    fx_date(to_day + 1, opened);
    fx_date(to_day + 3, det);
    const char *accts[1] = {acct};
    aml_case_rec c;
    memset(&c, 0, sizeof c);
    c.case_id = id;
    c.title = "fixture";
    c.opened_at = opened;
    c.detection_date = det;
    c.origin = "fixture";
    c.window_from = fx_t(from_day, 0);
    c.window_to = fx_t(to_day, 0) + AML_DAY - 1;
    c.accounts = accts;
    c.naccounts = 1;
    if (aml_ingest_case(f->in, &c, &f->err)) {
        fprintf(stderr, "fixture case %s: %s\n", id, f->err.msg);
        f->ok = 0;
    }
}

/* Commits the fixture; returns the store (NULL on failure). */
static inline aml_store *fx_end(fx *f)
{
    if (!f->ok) {
        aml_ingest_abort(f->in);
    } else if (aml_ingest_commit(f->in, NULL, &f->err) == 0) {
        return f->s;
    }
    fprintf(stderr, "fixture: %s\n", f->err.msg);
    aml_store_close(f->s);
    return NULL;
}

/* Runs the engine on a stored case with default (or given) parameters. */
static inline int run_case(aml_store *s, const char *case_id, const aml_params *p, unsigned mask, aml_assessment *a)
{
    aml_case c;
    aml_err err = {{0}};
    if (aml_case_load(s, case_id, &c, &err)) {
        fprintf(stderr, "case %s: %s\n", case_id, err.msg);
        return -1;
    }
    aml_params def;
    aml_params_default(&def);
    aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
    int rc = aml_engine_run(s, &cs, p ? p : &def, mask, "case", a, &err);
    if (rc)
        fprintf(stderr, "engine: %s\n", err.msg);
    aml_case_free(&c);
    return rc;
}

/* A fresh scratch directory under `base` (created). */
static inline void scratch_dir(const char *base, char *out, size_t n)
{
    mkdir(base, 0755);
    snprintf(out, n, "%s/run-%d", base, (int)getpid());
    mkdir(out, 0755);
}

/*
 * Where a fresh store goes, into db (n bytes): a new PostgreSQL schema when
 * the tests run on PostgreSQL (amltest_pg), else the file DIR/NAME.db, which
 * is removed if there. 0, or -1 when the schema cannot be made.
 */
static inline int amltest_fresh_db(const char *dir, const char *name, char *db, size_t n)
{
    if (pgt_base())
        return pgt_fresh(db, n, NULL, 0) ? -1 : 0;
    snprintf(db, n, "%s/%s.db", dir, name);
    unlink(db);
    return 0;
}

/* The first column of the first row of `sql` on the store at `db` as an integer: 0 when no row, -1
 * when the store does not open. */
static inline int64_t amltest_one(const char *db, const char *sql)
{
    aml_store *s = NULL;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, 0, &err))
        return -1;
    aml_st *st = aml_prepare(s, sql);
    int64_t v = st && aml_step(st) == AML_ROW ? aml_col_int(st, 0) : 0;
    aml_finalize(st);
    aml_store_close(s);
    return v;
}

#endif /* AML_TEST_H */
