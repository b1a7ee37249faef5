/*
 * Inside the monitoring scan: what scan.c (accounts, evaluation, cases) and
 * scan_job.c (jobs, batches, claims, threads, workers) share. See scan.h.
 */
#ifndef AML_SCAN_INTERNAL_H
#define AML_SCAN_INTERNAL_H

#include "engine/scan.h"

/* What one scan job covers (a scan_jobs row). */
typedef struct scan_run {
    int64_t from, to;   /* the window */
    int64_t since;      /* transactions after this txn_no are new (the last scan of the window) */
    int64_t maxno;      /* the newest transaction when the job started */
    char detected[16];  /* detection date of new cases */
    const char *actor;
    int64_t run_id;     /* its scan_runs row, once the cases are made */
    int64_t job_id;     /* its scan_jobs row */
    int64_t batches, accounts;
} scan_run;

/* The accounts that matched, ascending, with what they matched. */
typedef struct matches {
    aml_ivec accts;
    aml_ivec *links;       /* per account: (account << 5 | typology) its trigger evidence touches */
    unsigned *masks;       /* per account: the typologies it matched */
    unsigned char *scores; /* per account: AML_NTYP scores */
    size_t cap;
} matches;

void scan_matches_free(matches *m);
/** Appends an account's match (links copied); 0 or -1 (out of memory). */
int scan_match_push(matches *m, int64_t acct, unsigned mask, const unsigned char *scores, const aml_ivec *links);

/** The window of the options, or of all the data: 1 when the store has no transactions. */
int scan_window(aml_store *s, const aml_scan_opts *o, scan_run *r, aml_err *err);
/** The high-water marks: r->since (the last scan of the window) and r->maxno. */
int scan_marks(aml_store *s, scan_run *r, aml_err *err);
/** Internal accounts touched by the new transactions of the window, ascending. */
int scan_touched_accounts(aml_store *s, const scan_run *r, aml_ivec *accts, aml_err *err);
/**
 * Every typology over each account on its own (in one read transaction:
 * the caller's if s is in one, else its own), the matches appended to m;
 * *evaluated counts the accounts. On an error a transaction of the
 * caller's is rolled back too. scr: T15's
 * screener, kept by the caller across its batches so that a name is
 * screened once per thread.
 */
int scan_evaluate(aml_store *s, const scan_run *r, const aml_ivec *accts, aml_screener *scr, matches *m,
                  int64_t *evaluated, aml_err *err);
/**
 * The cases of a finished job from all its matches (ascending accounts):
 * the scan_runs row (r->run_id), groups opened or updated, assessed and
 * ranked. Runs inside the caller's write transaction; st->cases_* counted.
 */
int scan_make_cases(aml_store *s, scan_run *r, const matches *m, aml_scan_stats *st, aml_err *err);
void scan_print_summary(FILE *out, const scan_run *r, const aml_scan_stats *st);

#endif /* AML_SCAN_INTERNAL_H */
