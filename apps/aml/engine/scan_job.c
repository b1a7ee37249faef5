/*
 * The monitoring scan as a job of account batches (see scan.h): opening or
 * joining a job, claiming batches under a lease, evaluating them on threads
 * of their own connections, keeping their matches, and making the cases
 * once every batch is done.
 */
#include "engine/scan_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Job creation and case making are serialised: SQLite by BEGIN IMMEDIATE, PostgreSQL by this lock. */
static const char lock_pg[] = "SELECT pg_advisory_xact_lock(4705500959009144835)"; /* "AML1" 00000003 */

static int scan_lock(aml_store *s, aml_err *err)
{
    if (aml_store_backend(s) != AML_BACKEND_PG)
        return 0;
    aml_st *q = aml_stmt(s, lock_pg);
    if (!q || aml_step(q) < 0) {
        if (q)
            aml_reset(q);
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    aml_reset(q);
    return 0;
}

/* The database's clock in unix seconds: leases mean the same to every worker. */
static int64_t db_now(aml_store *s)
{
    aml_st *q = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG
                                ? "SELECT CAST(extract(epoch FROM clock_timestamp()) AS bigint)"
                                : "SELECT CAST(strftime('%s', 'now') AS INTEGER)");
    int64_t now = 0;
    if (q && aml_step(q) == AML_ROW)
        now = aml_col_int(q, 0);
    if (q)
        aml_reset(q);
    return now ? now : (int64_t)time(NULL);
}

/* Around a writing transaction on s: the caller's write lock, if any (scan.h). */
static void wlock(const aml_scan_opts *o, aml_store *s, int on)
{
    if (o->write_lock)
        o->write_lock(o->ud, s, on);
}

/* Seconds a claim lasts. */
static int64_t lease_of(const aml_scan_opts *o)
{
    return o->lease > 0 ? o->lease : AML_SCAN_LEASE_DEFAULT;
}

/* ---- opening a job ---------------------------------------------------------------- */

static int job_load(aml_store *s, int64_t job_id, scan_run *r, aml_err *err)
{
    aml_st *q = aml_stmt(s, "SELECT window_from, window_to, since_txn_no, max_txn_no, detection_date, batches, "
                            "accounts FROM scan_jobs WHERE job_id = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, job_id);
    int rc = aml_step(q) == AML_ROW ? 0 : -1;
    if (!rc) {
        r->job_id = job_id;
        r->from = aml_col_int(q, 0);
        r->to = aml_col_int(q, 1);
        r->since = aml_col_int(q, 2);
        r->maxno = aml_col_int(q, 3);
        snprintf(r->detected, sizeof r->detected, "%s", aml_col_text(q, 4));
        r->batches = aml_col_int(q, 5);
        r->accounts = aml_col_int(q, 6);
    }
    aml_reset(q);
    return rc ? aml_errf(err, "scan job %lld: not found", (long long)job_id) : 0;
}

/* The running job of the window (any window when `any`): its id, or 0. */
static int64_t job_running(aml_store *s, int any, int64_t from, int64_t to)
{
    aml_st *q = any ? aml_stmt(s, "SELECT job_id FROM scan_jobs WHERE state = 'running' ORDER BY job_id LIMIT 1")
                    : aml_stmt(s, "SELECT job_id FROM scan_jobs WHERE state = 'running' AND window_from = ? "
                                  "AND window_to = ? ORDER BY job_id LIMIT 1");
    if (!q)
        return -1;
    if (!any) {
        aml_bind_int(q, 1, from);
        aml_bind_int(q, 2, to);
    }
    int64_t id = aml_step(q) == AML_ROW ? aml_col_int(q, 0) : 0;
    aml_reset(q);
    return id;
}

/* The accounts accts[lo, hi) as text: decimal numbers separated by spaces. */
static char *accounts_text(const aml_ivec *accts, size_t lo, size_t hi)
{
    size_t cap = (hi - lo) * 21 + 1, k = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[0] = '\0';
    for (size_t i = lo; i < hi; i++)
        k += (size_t)snprintf(t + k, cap - k, "%s%lld", i > lo ? " " : "", (long long)accts->v[i]);
    return t;
}

static int insert_batches(aml_store *s, const scan_run *r, const aml_ivec *accts, size_t per, aml_err *err)
{
    for (size_t lo = 0, no = 1; lo < accts->n; lo += per, no++) {
        size_t hi = lo + per < accts->n ? lo + per : accts->n;
        char *text = accounts_text(accts, lo, hi);
        if (!text)
            return aml_errf(err, "out of memory");
        aml_st *q = aml_stmt(s, "INSERT INTO scan_batches(job_id, batch_no, accounts, n_accounts, state) "
                                "VALUES (?, ?, ?, ?, 'pending')");
        if (!q) {
            free(text);
            return aml_errf(err, "%s", aml_errmsg(s));
        }
        aml_bind_int(q, 1, r->job_id);
        aml_bind_int(q, 2, (int64_t)no);
        aml_bind_text(q, 3, text);
        aml_bind_int(q, 4, (int64_t)(hi - lo));
        int rc = aml_step_done(s, q, err);
        free(text);
        if (rc)
            return -1;
    }
    return 0;
}

/* A new job over the options' window (or all the data): 1 when the store has no transactions. */
static int job_create(aml_store *s, const aml_scan_opts *o, scan_run *r, aml_err *err)
{
    int rc = scan_window(s, o, r, err);
    if (rc)
        return rc;
    int64_t running = job_running(s, 0, r->from, r->to);
    if (running)
        return running < 0 ? aml_errf(err, "%s", aml_errmsg(s)) : job_load(s, running, r, err);
    if (o->detected)
        snprintf(r->detected, sizeof r->detected, "%s", o->detected);
    else
        aml_fmt_date(r->to, r->detected);
    aml_ivec accts = {0};
    if (scan_marks(s, r, err) || scan_touched_accounts(s, r, &accts, err)) {
        free(accts.v);
        return -1;
    }
    size_t per = o->batch > 0 ? (size_t)o->batch : AML_SCAN_BATCH_DEFAULT;
    r->accounts = (int64_t)accts.n;
    r->batches = (int64_t)((accts.n + per - 1) / per);
    char created[21];
    aml_fmt_time(aml_now(), created);
    aml_st *q = aml_stmt(s, "INSERT INTO scan_jobs(window_from, window_to, since_txn_no, max_txn_no, detection_date, "
                            "state, batches, accounts, created_at) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?) "
                            "RETURNING job_id");
    rc = q ? 0 : aml_errf(err, "%s", aml_errmsg(s));
    if (!rc) {
        aml_bind_int(q, 1, r->from);
        aml_bind_int(q, 2, r->to);
        aml_bind_int(q, 3, r->since);
        aml_bind_int(q, 4, r->maxno);
        aml_bind_text(q, 5, r->detected);
        aml_bind_int(q, 6, r->batches);
        aml_bind_int(q, 7, r->accounts);
        aml_bind_text(q, 8, created);
        rc = aml_step_id(s, q, &r->job_id, err);
    }
    if (!rc)
        rc = insert_batches(s, r, &accts, per, err);
    free(accts.v);
    return rc;
}

/* Joins the running job (of the window, or any for a worker without one) or starts one. 1: no data. */
static int job_open(aml_store *s, const aml_scan_opts *o, scan_run *r, aml_err *err)
{
    if (aml_begin(s, err))
        return -1;
    int rc = scan_lock(s, err);
    int64_t any = !rc && o->worker && !o->from && !o->to ? job_running(s, 1, 0, 0) : 0;
    if (any < 0)
        rc = aml_errf(err, "%s", aml_errmsg(s));
    else if (!rc)
        rc = any ? job_load(s, any, r, err) : job_create(s, o, r, err);
    if (rc)
        aml_rollback(s);
    else if (aml_commit(s, err))
        rc = -1;
    return rc;
}

/* ---- batches ------------------------------------------------------------------------ */

/* The claim a thread is evaluating, for the heartbeat that renews its lease. */
typedef struct held {
    int active;
    int lost;               /* the heartbeat found the claim no longer ours */
    int64_t batch_no, attempt;
    char me[128];
} held;

/* What the threads of one process share. */
typedef struct scan_shared {
    const aml_scan_opts *o;
    scan_run r;
    pthread_mutex_t mu;
    aml_progress prog;
    int64_t accounts_done;  /* in the job, as last seen */
    int64_t batches_here, accounts_here;
    int stop;               /* cancelled, max_batches, or a thread failed */
    int failed;
    aml_err err;            /* the first failure */
    char host[64];
    held holds[AML_SCAN_JOBS_MAX + 1]; /* by thread index (0: the caller's thread) */
    pthread_cond_t beat_cv; /* wakes the heartbeat to stop */
    int beat_stop;
    pthread_cond_t batch_cv; /* a batch of this process was kept, or the scan is stopping */
    pthread_mutex_t write_mu; /* the writing transactions of this process's scan threads, one at a time */
} scan_shared;

/*
 * Around a writing transaction of a scan thread or the heartbeat: the
 * scan's own lock, then the caller's write lock if any. SQLite lets one
 * writer at a time in and makes the others wait in its busy handler,
 * which sleeps 1, 2, 5, 10 ms and more, far longer than the claim or
 * commit it waits for; here a thread waits on a mutex instead and goes
 * in the moment the other is done. Other processes (scan --worker) are
 * still waited for by the busy handler.
 */
static void shared_wlock(scan_shared *sh, aml_store *s, int on)
{
    if (on) {
        pthread_mutex_lock(&sh->write_mu);
        wlock(sh->o, s, 1);
    } else {
        wlock(sh->o, s, 0);
        pthread_mutex_unlock(&sh->write_mu);
    }
}

/* A claimed batch. */
typedef struct claim {
    int64_t batch_no, attempt;
    aml_ivec accts;
} claim;

static int parse_accounts(const char *t, aml_ivec *out)
{
    while (*t) {
        char *end;
        long long v = strtoll(t, &end, 10);
        if (end == t)
            return -1;
        if (aml_ivec_push(out, (int64_t)v))
            return -1;
        t = end;
    }
    return 0;
}

static const char claim_sql_lite[] =
    "SELECT batch_no, accounts, attempts FROM scan_batches WHERE job_id = ? AND (state = 'pending' OR "
    "(state = 'claimed' AND lease_until < ?)) ORDER BY batch_no LIMIT 1";
static const char claim_sql_pg[] =
    "SELECT batch_no, accounts, attempts FROM scan_batches WHERE job_id = ? AND (state = 'pending' OR "
    "(state = 'claimed' AND lease_until < ?)) ORDER BY batch_no LIMIT 1 FOR UPDATE SKIP LOCKED";

/* The first pending batch, or one whose lease ended: 1 claimed, 0 none, -1 error. */
static int claim_next(aml_store *s, scan_shared *sh, const char *me, claim *c, aml_err *err)
{
    if (aml_begin(s, err))
        return -1;
    int64_t now = db_now(s);
    aml_st *q = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG ? claim_sql_pg : claim_sql_lite);
    int rc = q ? 0 : aml_errf(err, "%s", aml_errmsg(s)), got = 0;
    if (!rc) {
        aml_bind_int(q, 1, sh->r.job_id);
        aml_bind_int(q, 2, now);
        if (aml_step(q) == AML_ROW) {
            got = 1;
            c->batch_no = aml_col_int(q, 0);
            c->attempt = aml_col_int(q, 2) + 1;
            c->accts.n = 0;
            if (parse_accounts(aml_col_text(q, 1), &c->accts))
                rc = aml_errf(err, "scan batch %lld: unreadable account list", (long long)c->batch_no);
        }
        aml_reset(q);
    }
    if (!rc && got) {
        q = aml_stmt(s, "UPDATE scan_batches SET state = 'claimed', claimed_by = ?, lease_until = ?, attempts = ? "
                        "WHERE job_id = ? AND batch_no = ?");
        rc = q ? 0 : aml_errf(err, "%s", aml_errmsg(s));
        if (!rc) {
            aml_bind_text(q, 1, me);
            aml_bind_int(q, 2, now + lease_of(sh->o));
            aml_bind_int(q, 3, c->attempt);
            aml_bind_int(q, 4, sh->r.job_id);
            aml_bind_int(q, 5, c->batch_no);
            rc = aml_step_done(s, q, err);
        }
    }
    if (rc) {
        aml_rollback(s);
        return -1;
    }
    return aml_commit(s, err) ? -1 : got;
}

/* One account's match as kept: scores as two hex digits per typology, links as decimal numbers. */
static int insert_match(aml_store *s, const scan_run *r, int64_t batch_no, const matches *m, size_t i, aml_err *err)
{
    char scores[AML_NTYP * 2 + 1];
    for (int t = 0; t < AML_NTYP; t++)
        snprintf(scores + t * 2, 3, "%02x", m->scores[i * AML_NTYP + (size_t)t]);
    char *links = accounts_text(&m->links[i], 0, m->links[i].n);
    aml_st *q = aml_stmt(s, "INSERT INTO scan_batch_matches(job_id, acct_no, batch_no, mask, scores, links) "
                            "VALUES (?, ?, ?, ?, ?, ?)");
    if (!links || !q) {
        free(links);
        return aml_errf(err, "%s", links ? aml_errmsg(s) : "out of memory");
    }
    aml_bind_int(q, 1, r->job_id);
    aml_bind_int(q, 2, m->accts.v[i]);
    aml_bind_int(q, 3, batch_no);
    aml_bind_int(q, 4, m->masks[i]);
    aml_bind_text(q, 5, scores);
    aml_bind_text(q, 6, links);
    int rc = aml_step_done(s, q, err);
    free(links);
    return rc;
}

/*
 * The batch done with its matches, in one transaction, if the claim is still ours (same worker,
 * same attempt): a worker whose lease ended and was taken over keeps nothing. 1 kept, 0 lost.
 */
static int batch_done(aml_store *s, const scan_run *r, const char *me, const claim *c, const matches *m,
                      int64_t evaluated, aml_err *err)
{
    if (aml_begin(s, err))
        return -1;
    char done_at[21];
    aml_fmt_time(aml_now(), done_at);
    aml_st *q = aml_stmt(s, "UPDATE scan_batches SET state = 'done', accounts_evaluated = ?, accounts_matched = ?, "
                            "finished_at = ?, lease_until = NULL WHERE job_id = ? AND batch_no = ? "
                            "AND state = 'claimed' AND claimed_by = ? AND attempts = ?");
    int rc = q ? 0 : aml_errf(err, "%s", aml_errmsg(s));
    if (!rc) {
        aml_bind_int(q, 1, evaluated);
        aml_bind_int(q, 2, (int64_t)m->accts.n);
        aml_bind_text(q, 3, done_at);
        aml_bind_int(q, 4, r->job_id);
        aml_bind_int(q, 5, c->batch_no);
        aml_bind_text(q, 6, me);
        aml_bind_int(q, 7, c->attempt);
        rc = aml_step_done(s, q, err);
    }
    int ours = !rc && aml_changes(s) == 1;
    for (size_t i = 0; ours && !rc && i < m->accts.n; i++)
        rc = insert_match(s, r, c->batch_no, m, i, err);
    if (rc || !ours) {
        aml_rollback(s);
        return rc ? -1 : 0;
    }
    return aml_commit(s, err) ? -1 : 1;
}

/* Counts of the job's batches: all, done, and the earliest lease end of a claimed one (0: none). */
static int batch_counts(aml_store *s, int64_t job_id, int64_t *all, int64_t *done, int64_t *accounts_done)
{
    aml_st *q = aml_stmt(s, "SELECT count(*), coalesce(sum(CASE WHEN state = 'done' THEN 1 ELSE 0 END), 0), "
                            "coalesce(sum(CASE WHEN state = 'done' THEN n_accounts ELSE 0 END), 0) "
                            "FROM scan_batches WHERE job_id = ?");
    if (!q)
        return -1;
    aml_bind_int(q, 1, job_id);
    int rc = aml_step(q) == AML_ROW ? 0 : -1;
    if (!rc) {
        *all = aml_col_int(q, 0);
        *done = aml_col_int(q, 1);
        *accounts_done = aml_col_int(q, 2);
    }
    aml_reset(q);
    return rc;
}

/* After a batch: progress, the caller's callback, the batch limit. */
static void after_batch(aml_store *s, scan_shared *sh, int64_t evaluated)
{
    int64_t all = 0, done = 0, adone = 0;
    batch_counts(s, sh->r.job_id, &all, &done, &adone);
    pthread_mutex_lock(&sh->mu);
    sh->batches_here++;
    sh->accounts_here += evaluated;
    if (adone > sh->accounts_done)
        sh->accounts_done = adone;
    aml_progress_update(&sh->prog, (uint64_t)sh->accounts_done);
    if (sh->o->on_batch && sh->o->on_batch(sh->o->ud, sh->accounts_done, sh->r.accounts))
        sh->stop = 1;
    if (sh->o->max_batches > 0 && sh->batches_here >= sh->o->max_batches)
        sh->stop = 1;
    pthread_cond_broadcast(&sh->batch_cv);
    pthread_mutex_unlock(&sh->mu);
}

/*
 * Waits until a thread of this process keeps a batch or the scan stops, or
 * 100 ms at most (batches held by other processes are looked at again then).
 */
static void wait_others(scan_shared *sh)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&sh->mu);
    if (!sh->stop)
        pthread_cond_timedwait(&sh->batch_cv, &sh->mu, &until);
    pthread_mutex_unlock(&sh->mu);
}

static int stopping(scan_shared *sh)
{
    pthread_mutex_lock(&sh->mu);
    int stop = sh->stop;
    pthread_mutex_unlock(&sh->mu);
    return stop;
}

static void hold(scan_shared *sh, int index, const char *me, const claim *c)
{
    pthread_mutex_lock(&sh->mu);
    held *h = &sh->holds[index];
    h->active = 1;
    h->lost = 0;
    h->batch_no = c->batch_no;
    h->attempt = c->attempt;
    snprintf(h->me, sizeof h->me, "%s", me);
    pthread_mutex_unlock(&sh->mu);
}

/* Ends the hold: 1 when the heartbeat found the claim taken over meanwhile. */
static int unhold(scan_shared *sh, int index)
{
    pthread_mutex_lock(&sh->mu);
    held *h = &sh->holds[index];
    int lost = h->lost;
    h->active = 0;
    pthread_mutex_unlock(&sh->mu);
    return lost;
}

/*
 * Test hook (tests/aml/aml_scan_jobs.c): every batch this much slower.
 * Only in test builds (MCP_TEST_HOOKS); a shipped binary reads no such
 * variable and this does nothing.
 */
static void test_batch_delay(void)
{
#ifdef AML_TEST_HOOKS
    const char *v = getenv("AML_TEST_SCAN_BATCH_DELAY_MS");
    long ms = v ? atol(v) : 0;
    if (ms > 0 && ms <= 600000)
        usleep((useconds_t)ms * 1000u);
#endif
}

/*
 * A scan thread's connections: `s` claims and keeps batches; `rd`, the same
 * connection or (a thread of jobs > 1 on SQLite) a second one, reads the
 * batches' data.
 *
 * SQLite drops a connection's page cache and map of the file whenever it
 * starts a read transaction after another connection committed. With two
 * threads, each one's claim and kept batch come between every two batches
 * of the other, so every batch began with an empty cache: the batches of
 * scan --jobs 2 took 1.3-1.7x the CPU of one thread's (more the smaller
 * the batches). So a thread of jobs > 1 reads through one read transaction
 * on `rd` across its batches, renewed between batches once it is
 * SCAN_SNAPSHOT_NS old, and writes on `s`. The data it evaluates is at most
 * that much (plus a batch) older than the start of the batch, and the
 * snapshot is let go often enough for checkpoints of the WAL to proceed.
 */
#define SCAN_SNAPSHOT_NS (5 * INT64_C(1000000000))

typedef struct scan_conn {
    aml_store *s;      /* claims, kept batches, counts */
    aml_store *rd;     /* the batches' reads: s, or a second connection holding a snapshot */
    int64_t snap_ns;   /* when rd's read transaction began (aml_mono_ns), if rd != s */
} scan_conn;

/* Begins rd's read transaction across batches, or renews it once old; nothing when rd is s. */
static int snapshot(scan_conn *k, aml_err *err)
{
    if (k->rd == k->s)
        return 0;
    int64_t now = aml_mono_ns();
    if (aml_in_tx(k->rd) && now - k->snap_ns < SCAN_SNAPSHOT_NS)
        return 0;
    if (aml_in_tx(k->rd) && aml_commit(k->rd, err))
        return -1;
    k->snap_ns = now;
    return aml_exec(k->rd, "BEGIN", err);
}

/*
 * Evaluates one claimed batch and keeps it, unless the claim was lost
 * meanwhile (batch_done checks that again, in the transaction).
 */
static int run_batch(scan_conn *k, scan_shared *sh, int index, const char *me, const claim *c, aml_screener *scr,
                     aml_err *err)
{
    aml_store *s = k->s;
    matches m;
    memset(&m, 0, sizeof m);
    int64_t evaluated = 0;
    hold(sh, index, me, c);
    int rc = snapshot(k, err);
    if (!rc)
        rc = scan_evaluate(k->rd, &sh->r, &c->accts, scr, &m, &evaluated, err);
    int kept = -1;
    if (!rc)
        test_batch_delay();
    int lost = unhold(sh, index);
    if (!rc && lost) {
        kept = 0;
    } else if (!rc) {
        shared_wlock(sh, s, 1);
        kept = batch_done(s, &sh->r, me, c, &m, evaluated, err);
        shared_wlock(sh, s, 0);
    }
    scan_matches_free(&m);
    if (kept < 0)
        return -1;
    if (kept)
        after_batch(s, sh, evaluated);
    return 0;
}

/*
 * Claims and evaluates batches until none is left to claim and every batch is done (batches
 * claimed by others are waited for; their lease ends if their worker died), or until stopped.
 */
static void worker_name(const scan_shared *sh, int index, char *out, size_t n);

static int work(scan_conn *k, scan_shared *sh, int index, aml_err *err)
{
    aml_store *s = k->s;
    char me[128];
    worker_name(sh, index, me, sizeof me);
    claim c;
    memset(&c, 0, sizeof c);
    /* T15: one screener for all this thread's batches (the process's index of the lists as the scan starts,
     * answers cached by name). */
    aml_screener *scr = NULL;
    int rc = aml_screener_new(k->rd, &scr, err);
    while (!rc && !stopping(sh)) {
        shared_wlock(sh, s, 1);
        int got = claim_next(s, sh, me, &c, err);
        shared_wlock(sh, s, 0);
        if (got < 0) {
            rc = -1;
        } else if (got) {
            rc = run_batch(k, sh, index, me, &c, scr, err);
        } else {
            int64_t all = 0, done = 0, adone = 0;
            if (batch_counts(s, sh->r.job_id, &all, &done, &adone)) {
                rc = aml_errf(err, "%s", aml_errmsg(s));
                break;
            }
            if (done == all)
                break;
            wait_others(sh); /* others hold the rest: wait for them or for their lease to end */
        }
    }
    free(c.accts.v);
    aml_screener_free(scr);
    if (k->rd != s)
        aml_rollback(k->rd); /* the snapshot, if any: it read only */
    return rc;
}

/* ---- threads ---------------------------------------------------------------------- */

typedef struct scan_thread {
    scan_shared *sh;
    int index;
    pthread_t tid;
} scan_thread;

static void fail(scan_shared *sh, const aml_err *err)
{
    pthread_mutex_lock(&sh->mu);
    if (!sh->failed) {
        sh->failed = 1;
        sh->err = *err;
    }
    sh->stop = 1;
    pthread_cond_broadcast(&sh->batch_cv);
    pthread_mutex_unlock(&sh->mu);
}

static void worker_name(const scan_shared *sh, int index, char *out, size_t n)
{
    snprintf(out, n, "%s:%ld:%d", sh->host, (long)getpid(), index);
}

static void *thread_main(void *arg)
{
    scan_thread *t = arg;
    aml_err err = {{0}};
    scan_conn k = {NULL, NULL, 0};
    int rc = aml_store_open(&k.s, t->sh->o->db, 0, &err);
    if (!rc && aml_store_backend(k.s) == AML_BACKEND_PG)
        k.rd = k.s; /* a PostgreSQL session keeps no cache that another's commit drops */
    else if (!rc)
        rc = aml_store_open(&k.rd, t->sh->o->db, 0, &err) || aml_store_map(k.rd, 1, &err);
    if (rc || work(&k, t->sh, t->index, &err))
        fail(t->sh, &err);
    if (k.rd != k.s)
        aml_store_close(k.rd);
    aml_store_close(k.s);
    return NULL;
}

/* The batches on `jobs` threads with their own connections, or on the caller's connection. */
static int run_batches(aml_store *s, scan_shared *sh, aml_err *err)
{
    int jobs = sh->o->jobs > 1 && sh->o->db && !aml_store_is_memory(s) ? sh->o->jobs : 1;
    if (jobs > AML_SCAN_JOBS_MAX)
        jobs = AML_SCAN_JOBS_MAX;
    if (jobs == 1) {
        scan_conn k = {s, s, 0};
        return work(&k, sh, 0, err);
    }
    scan_thread th[AML_SCAN_JOBS_MAX];
    int started = 0;
    for (int i = 0; i < jobs; i++) {
        th[i].sh = sh;
        th[i].index = i + 1;
        if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]))
            break;
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i].tid, NULL);
    if (!started)
        return aml_errf(err, "cannot start a scan thread");
    if (sh->failed) {
        *err = sh->err;
        return -1;
    }
    return 0;
}

/* ---- the heartbeat ---------------------------------------------------------------- */

/*
 * A batch may take longer than the lease: while a thread evaluates one, a
 * heartbeat thread of the process renews its lease every third of the
 * lease, on a connection of its own (a long evaluation holds the thread's
 * connection). A claim found no longer ours (its lease ended anyway, say
 * the process was stopped, and another worker took the batch) is marked
 * lost: the thread keeps nothing of the batch.
 */
/* Extends one claim's lease: 1 renewed, 0 no longer ours, -1 error. */
static int renew(aml_store *s, const scan_shared *sh, const held *h)
{
    aml_st *q = aml_stmt(s, "UPDATE scan_batches SET lease_until = ? WHERE job_id = ? AND batch_no = ? "
                            "AND state = 'claimed' AND claimed_by = ? AND attempts = ?");
    if (!q)
        return -1;
    aml_bind_int(q, 1, db_now(s) + lease_of(sh->o));
    aml_bind_int(q, 2, sh->r.job_id);
    aml_bind_int(q, 3, h->batch_no);
    aml_bind_text(q, 4, h->me);
    aml_bind_int(q, 5, h->attempt);
    aml_err err;
    if (aml_step_done(s, q, &err))
        return -1;
    return aml_changes(s) == 1;
}

/* Renews every claim held now; marks the lost ones. Called with sh->mu held; returns with it held. */
static void renew_all(aml_store *s, scan_shared *sh)
{
    held now[AML_SCAN_JOBS_MAX + 1];
    memcpy(now, sh->holds, sizeof now);
    pthread_mutex_unlock(&sh->mu);
    int got[AML_SCAN_JOBS_MAX + 1], any = 0;
    for (int i = 0; i <= AML_SCAN_JOBS_MAX; i++)
        any |= now[i].active;
    if (any)
        shared_wlock(sh, s, 1); /* the renewals write: in turn with the threads' claims and commits */
    for (int i = 0; i <= AML_SCAN_JOBS_MAX; i++)
        got[i] = now[i].active ? renew(s, sh, &now[i]) : 1;
    if (any)
        shared_wlock(sh, s, 0);
    pthread_mutex_lock(&sh->mu);
    for (int i = 0; i <= AML_SCAN_JOBS_MAX; i++) {
        held *h = &sh->holds[i];
        if (got[i] == 0 && h->active && h->batch_no == now[i].batch_no && h->attempt == now[i].attempt)
            h->lost = 1; /* an error (-1) is not a loss: the next beat tries again */
    }
}

static void *heartbeat_main(void *arg)
{
    scan_shared *sh = arg;
    aml_store *s = NULL;
    aml_err err = {{0}};
    if (aml_store_open(&s, sh->o->db, 0, &err))
        return NULL; /* no renewals: each lease runs its course, as a claim's first lease does */
    int64_t every_ms = lease_of(sh->o) * 1000 / 3;
    pthread_mutex_lock(&sh->mu);
    while (!sh->beat_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        int64_t ns = (int64_t)until.tv_nsec + every_ms % 1000 * 1000000;
        until.tv_sec += (time_t)(every_ms / 1000 + ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!sh->beat_stop && pthread_cond_timedwait(&sh->beat_cv, &sh->mu, &until) == 0)
            ;
        if (!sh->beat_stop)
            renew_all(s, sh);
    }
    pthread_mutex_unlock(&sh->mu);
    aml_store_close(s);
    return NULL;
}

/* The batches, with a heartbeat when the store can be opened again (not an in-memory one). */
static int run_batches_beating(aml_store *s, scan_shared *sh, aml_err *err)
{
    pthread_t beat;
    int beating = sh->o->db && !aml_store_is_memory(s) && pthread_create(&beat, NULL, heartbeat_main, sh) == 0;
    int rc = run_batches(s, sh, err);
    if (beating) {
        pthread_mutex_lock(&sh->mu);
        sh->beat_stop = 1;
        pthread_cond_broadcast(&sh->beat_cv);
        pthread_mutex_unlock(&sh->mu);
        pthread_join(beat, NULL);
    }
    return rc;
}

/* ---- the cases -------------------------------------------------------------------- */

/* Every match of the job, ascending accounts, and the typology counts. */
static int load_matches(aml_store *s, const scan_run *r, matches *m, aml_scan_stats *st, aml_err *err)
{
    aml_st *q = aml_stmt_stream(s, "SELECT acct_no, mask, scores, links FROM scan_batch_matches WHERE job_id = ? "
                                   "ORDER BY acct_no");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, r->job_id);
    int rc = 0, step;
    aml_ivec links = {0};
    while (!rc && (step = aml_step(q)) == AML_ROW) {
        unsigned mask = (unsigned)aml_col_int(q, 1);
        const char *hex = aml_col_text(q, 2);
        unsigned char scores[AML_NTYP] = {0};
        for (int t = 0; t < AML_NTYP && hex[t * 2] && hex[t * 2 + 1]; t++) {
            char two[3] = {hex[t * 2], hex[t * 2 + 1], 0};
            scores[t] = (unsigned char)strtoul(two, NULL, 16);
        }
        for (int t = 0; t < AML_NTYP; t++)
            st->matched_by_typology[t] += (mask >> t) & 1u;
        links.n = 0;
        if (parse_accounts(aml_col_text(q, 3), &links) ||
            scan_match_push(m, aml_col_int(q, 0), mask, scores, &links))
            rc = aml_errf(err, "scan job %lld: unreadable matches", (long long)r->job_id);
    }
    if (!rc && step < 0)
        rc = aml_errf(err, "%s", aml_errmsg(s));
    aml_reset(q);
    free(links.v);
    st->accounts_matched = (int64_t)m->accts.n;
    return rc;
}

static int job_state(aml_store *s, const scan_run *r, char *state, size_t n, int64_t *evaluated)
{
    aml_st *q = aml_stmt(s, "SELECT state, (SELECT coalesce(sum(accounts_evaluated), 0) FROM scan_batches b "
                            "WHERE b.job_id = j.job_id) FROM scan_jobs j WHERE job_id = ?");
    if (!q)
        return -1;
    aml_bind_int(q, 1, r->job_id);
    int rc = aml_step(q) == AML_ROW ? 0 : -1;
    if (!rc) {
        snprintf(state, n, "%s", aml_col_text(q, 0));
        *evaluated = aml_col_int(q, 1);
    }
    aml_reset(q);
    return rc;
}

static int mark_done(aml_store *s, const scan_run *r, aml_err *err)
{
    char at[21];
    aml_fmt_time(aml_now(), at);
    aml_st *q = aml_stmt(s, "UPDATE scan_jobs SET state = 'done', finished_at = ?, run_id = ? WHERE job_id = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(q, 1, at);
    aml_bind_int(q, 2, r->run_id);
    aml_bind_int(q, 3, r->job_id);
    return aml_step_done(s, q, err);
}

/*
 * The job's cases, once every batch is done, by whichever process gets here first (the others find
 * the job done). 1: made here, 0: made by another, -1: error.
 */
static int finish_job(aml_store *s, scan_run *r, aml_scan_stats *st, aml_err *err)
{
    if (aml_begin(s, err))
        return -1;
    char state[16] = "";
    int64_t all = 0, done = 0, adone = 0, evaluated = 0;
    int rc = scan_lock(s, err);
    if (!rc && (job_state(s, r, state, sizeof state, &evaluated) || batch_counts(s, r->job_id, &all, &done, &adone)))
        rc = aml_errf(err, "%s", aml_errmsg(s));
    if (!rc && strcmp(state, "done") == 0) {
        aml_rollback(s);
        return 0;
    }
    if (!rc && done != all)
        rc = aml_errf(err, "scan job %lld: %lld of %lld batches done", (long long)r->job_id, (long long)done,
                      (long long)all);
    matches m;
    memset(&m, 0, sizeof m);
    st->accounts_evaluated = evaluated;
    if (!rc)
        rc = load_matches(s, r, &m, st, err);
    if (!rc)
        rc = scan_make_cases(s, r, &m, st, err);
    if (!rc)
        rc = mark_done(s, r, err);
    scan_matches_free(&m);
    if (rc) {
        aml_rollback(s);
        return -1;
    }
    return aml_commit(s, err) ? -1 : 1;
}

/* ---- the scan ----------------------------------------------------------------------- */

static void print_joined(FILE *out, const scan_run *r, const aml_scan_stats *st)
{
    char f[11], t[11];
    aml_fmt_date(r->from, f);
    aml_fmt_date(r->to, t);
    fprintf(out, "scan job %lld (%s .. %s): %lld of %lld batches (%lld accounts) evaluated here; %s, %.2f s\n",
            (long long)r->job_id, f, t, (long long)st->batches_here, (long long)st->batches,
            (long long)st->accounts_here,
            st->stopped ? "stopped before the job was done (its finished batches are kept)"
                        : "the cases were made by another worker",
            st->seconds);
}

static int scan_job(aml_store *s, scan_shared *sh, aml_scan_stats *st, aml_err *err)
{
    int64_t all = 0, done = 0;
    batch_counts(s, sh->r.job_id, &all, &done, &sh->accounts_done);
    aml_progress_start(&sh->prog, "scanning", (uint64_t)sh->r.accounts);
    if (!sh->o->progress)
        sh->prog.enabled = 0;
    aml_progress_update(&sh->prog, (uint64_t)sh->accounts_done);
    int rc = run_batches_beating(s, sh, err);
    aml_progress_end(&sh->prog);
    st->job_id = sh->r.job_id;
    st->batches = sh->r.batches;
    st->batches_here = sh->batches_here;
    st->accounts_here = sh->accounts_here;
    st->stopped = !rc && sh->stop;
    if (rc || st->stopped)
        return rc;
    wlock(sh->o, s, 1);
    rc = finish_job(s, &sh->r, st, err);
    wlock(sh->o, s, 0);
    st->made_cases = rc == 1;
    return rc < 0 ? -1 : 0;
}

int aml_scan(aml_store *s, const aml_scan_opts *o, FILE *out, aml_scan_stats *stp, aml_err *err)
{
    aml_scan_stats st;
    memset(&st, 0, sizeof st);
    int64_t t0 = aml_mono_ns();
    scan_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.o = o;
    sh.r.actor = o->actor ? o->actor : "scan";
    if (gethostname(sh.host, sizeof sh.host - 1))
        snprintf(sh.host, sizeof sh.host, "localhost");
    /* The scan reads much of the file: through a map for its length (aml_store_map), given back after,
     * since s may be a connection of the server's pool. */
    int rc = aml_store_map(s, 1, err);
    if (rc)
        return -1;
    wlock(o, s, 1);
    rc = job_open(s, o, &sh.r, err);
    wlock(o, s, 0);
    if (rc > 0 && out)
        fprintf(out, "scan: the store has no transactions\n");
    if (rc == 0) {
        pthread_mutex_init(&sh.mu, NULL);
        pthread_mutex_init(&sh.write_mu, NULL);
        pthread_cond_init(&sh.beat_cv, NULL);
        pthread_cond_init(&sh.batch_cv, NULL);
        rc = scan_job(s, &sh, &st, err);
        pthread_cond_destroy(&sh.batch_cv);
        pthread_cond_destroy(&sh.beat_cv);
        pthread_mutex_destroy(&sh.write_mu);
        pthread_mutex_destroy(&sh.mu);
    }
    aml_store_map(s, 0, NULL);
    st.seconds = (double)(aml_mono_ns() - t0) / 1e9;
    st.window_from = sh.r.from;
    st.window_to = sh.r.to;
    if (!rc && out && st.made_cases)
        scan_print_summary(out, &sh.r, &st);
    else if (!rc && out && st.job_id)
        print_joined(out, &sh.r, &st);
    if (stp)
        *stp = st;
    return rc > 0 ? 0 : rc;
}

/* ---- status ------------------------------------------------------------------------- */

static void status_job(aml_store *s, FILE *out, aml_st *j)
{
    int64_t id = aml_col_int(j, 0), run_id = aml_col_int(j, 7);
    char f[11], t[11];
    aml_fmt_date(aml_col_int(j, 1), f);
    aml_fmt_date(aml_col_int(j, 2), t);
    fprintf(out, "scan job %lld (%s .. %s, detected %s): %s\n", (long long)id, f, t, aml_col_text(j, 3),
            aml_col_text(j, 4));
    aml_st *q = aml_stmt(s, "SELECT coalesce(sum(CASE WHEN state = 'done' THEN 1 ELSE 0 END), 0), "
                            "coalesce(sum(CASE WHEN state = 'claimed' AND lease_until >= ? THEN 1 ELSE 0 END), 0), "
                            "coalesce(sum(CASE WHEN state = 'claimed' AND lease_until < ? THEN 1 ELSE 0 END), 0), "
                            "coalesce(sum(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0), "
                            "coalesce(sum(accounts_evaluated), 0), coalesce(sum(accounts_matched), 0), "
                            "count(DISTINCT claimed_by) FROM scan_batches WHERE job_id = ?");
    if (!q)
        return;
    int64_t now = db_now(s);
    aml_bind_int(q, 1, now);
    aml_bind_int(q, 2, now);
    aml_bind_int(q, 3, id);
    if (aml_step(q) == AML_ROW)
        fprintf(out, "  batches: %lld done, %lld claimed, %lld claimed with the lease ended, %lld pending, of %lld\n"
                     "  accounts: %lld of %lld evaluated, %lld matched; %lld workers took part\n",
                (long long)aml_col_int(q, 0), (long long)aml_col_int(q, 1), (long long)aml_col_int(q, 2),
                (long long)aml_col_int(q, 3), (long long)aml_col_int(j, 5), (long long)aml_col_int(q, 4),
                (long long)aml_col_int(j, 6), (long long)aml_col_int(q, 5), (long long)aml_col_int(q, 6));
    aml_reset(q);
    q = aml_stmt(s, "SELECT cases_opened, cases_updated FROM scan_runs WHERE run_id = ?");
    if (!q)
        return;
    aml_bind_int(q, 1, run_id);
    if (aml_step(q) == AML_ROW)
        fprintf(out, "  cases: %lld opened, %lld updated (scan run %lld)\n", (long long)aml_col_int(q, 0),
                (long long)aml_col_int(q, 1), (long long)run_id);
    else
        fprintf(out, "  cases: made once every batch is done\n");
    aml_reset(q);
}

int aml_scan_status(aml_store *s, FILE *out, aml_err *err)
{
    aml_st *j = aml_stmt(s, "SELECT job_id, window_from, window_to, detection_date, state, batches, accounts, "
                            "coalesce(run_id, 0) FROM scan_jobs WHERE state = 'running' OR job_id = "
                            "(SELECT max(job_id) FROM scan_jobs WHERE state = 'done') ORDER BY job_id");
    if (!j)
        return aml_errf(err, "%s", aml_errmsg(s));
    int n = 0, rc;
    while ((rc = aml_step(j)) == AML_ROW) {
        status_job(s, out, j);
        n++;
    }
    aml_reset(j);
    if (rc < 0)
        return aml_errf(err, "%s", aml_errmsg(s));
    if (!n)
        fprintf(out, "no scan jobs yet\n");
    return 0;
}
