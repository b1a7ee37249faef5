/*
 * The monitoring scan.
 *
 * The scan turns transactions into case work: every typology over every
 * internal account with new activity in the window; accounts that match
 * and are linked through their evidence become one case (or join the open
 * case one of them already has); each such case is assessed and stored.
 * A re-scan of the same window only revisits accounts touched by
 * transactions added since (scan_runs keeps the high-water mark).
 *
 * A scan is a job of account batches kept in the store (scan_jobs,
 * scan_batches, scan_batch_matches; migration 7). Batches are claimed
 * with a lease, evaluated (by `jobs` threads of this process, each on its
 * own connection, and by any other process working on the same job) and
 * their matches kept with the batch marked done, in one transaction. When
 * every batch is done, one process makes the cases from all the matches
 * in account order: the same cases, case ids and assessments whatever the
 * number of threads or workers and whatever order batches finished in.
 * A scan that stops (cancelled, killed, a failed batch) keeps the batches
 * it finished; the next scan of the same window resumes the job.
 *
 * Workers (`worker`): join the oldest running job (any window when the
 * options give none), or start one over the window a plain scan would use,
 * and help until the job is done. On PostgreSQL batches are claimed with
 * SELECT ... FOR UPDATE SKIP LOCKED; on SQLite claims are serialised by
 * BEGIN IMMEDIATE (workers work on one machine there).
 */
#ifndef AML_SCAN_H
#define AML_SCAN_H

#include "engine/cases.h"

#define AML_SCAN_BATCH_DEFAULT 256 /* accounts per batch */
#define AML_SCAN_BATCH_MAX 65536
#define AML_SCAN_LEASE_DEFAULT 600 /* seconds a claim lasts */
#define AML_SCAN_JOBS_MAX 64

typedef struct aml_scan_opts {
    int64_t from, to;       /* window; 0/0 = all data */
    const char *detected;   /* detection date for new cases (YYYY-MM-DD); NULL = the window's last day */
    int progress;           /* progress bar on a terminal */
    const char *actor;      /* for the audit log */
    /* Parallel and distributed scans (0 = the defaults). */
    const char *db;         /* the store's path or URI: jobs > 1 opens it once per thread */
    int jobs;               /* threads evaluating batches (<= 1 or no db: the caller's connection) */
    int batch;              /* accounts per batch of a new job (AML_SCAN_BATCH_DEFAULT) */
    int lease;              /* seconds a claim lasts (AML_SCAN_LEASE_DEFAULT) */
    int worker;             /* join the running job of any window when from/to are 0 */
    int max_batches;        /* stop after this many batches of this process (tests; 0 = no limit) */
    /**
     * Called after each batch this process finished (under a lock, from the
     * thread that finished it): accounts done in the job so far and in all.
     * Nonzero stops the scan between batches (cancelled: finished batches
     * stay). NULL: none.
     */
    int (*on_batch)(void *ud, int64_t done, int64_t total);
    void *ud;
    /**
     * Called with on = 1 before and on = 0 after each writing transaction
     * on the caller's connection `s` (opening the job, claiming a batch,
     * keeping a batch, making the cases), never while evaluating a batch:
     * a server passes its write lock (tools.h aml_app_write_lock) so that
     * other tool calls keep writing between batches. NULL: none. Threads
     * of jobs > 1 call it too, with their own connections. Gets `ud`.
     */
    void (*write_lock)(void *ud, aml_store *s, int on);
} aml_scan_opts;

typedef struct aml_scan_stats {
    int64_t accounts_evaluated, accounts_skipped, accounts_matched, cases_opened, cases_updated;
    int64_t matched_by_typology[AML_NTYP];
    double seconds;
    /* The job (new fields at the end). */
    int64_t job_id;
    int64_t batches, batches_here; /* in the job; finished by this process */
    int64_t accounts_here;         /* evaluated by this process */
    int stopped;                   /* cancelled or max_batches: the job is not done */
    int made_cases;                /* this process made the job's cases (else another did) */
    int64_t window_from, window_to; /* the job's window (seconds) */
} aml_scan_stats;

/**
 * Runs (or resumes, or joins) a scan and, once every batch is done, makes
 * its cases. Writes a summary to out (may be NULL).
 * @return 0 (also when stopped: st->stopped), or -1 with err set.
 */
int aml_scan(aml_store *s, const aml_scan_opts *o, FILE *out, aml_scan_stats *st, aml_err *err);

/** Writes the progress of the running scan jobs and the last finished one to out. 0 or -1. */
int aml_scan_status(aml_store *s, FILE *out, aml_err *err);

#endif /* AML_SCAN_H */
