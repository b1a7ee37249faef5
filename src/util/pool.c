/*
 * Worker pool. One mutex guards the queue; workers sleep on a condition
 * variable. Submission never blocks: a full queue is back-pressure the
 * caller turns into a "busy, retry" answer, so the I/O thread is never
 * stuck behind slow tools.
 *
 * Wake-ups are what a hand-off costs (a futex call, a context switch), far
 * more than the work of a small tool, so the pool spends as few as it can:
 *   - a thread that "holds" the pool (mcp__pool_hold) queues jobs without
 *     waking anyone; mcp__pool_unhold wakes one worker for the whole batch
 *     (an I/O thread holds the pool while it handles one read()'s frames);
 *   - a worker takes jobs until the queue is empty before it sleeps, and
 *     first watches the queue for a short while (SPIN_NS) without sleeping,
 *     since the next batch often arrives within microseconds;
 *   - a worker that takes a job and leaves others queued wakes one sleeping
 *     peer, so a slow job never holds up the jobs behind it while a worker
 *     sleeps (the guarantee the pool exists for).
 */
#include "util/pool.h"
#include "util/util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* How long an idle worker watches the queue before it sleeps. */
#define SPIN_NS 20000u

struct mcp__pool {
    pthread_mutex_t mu;    /* guards everything below but `avail` */
    pthread_cond_t cv;     /* signalled when a job arrives or on stop */
    mcp__job *head;        /* oldest queued job */
    mcp__job *tail;        /* newest queued job */
    unsigned queued;       /* jobs in the queue */
    unsigned queue_max;    /* capacity of the queue */
    int stopping;          /* no new jobs; workers exit when the queue is empty */
    unsigned idle;         /* workers waiting for a job */
    unsigned waking;       /* of those, how many were signalled and have not run yet */
    unsigned spinning;     /* workers watching `avail` before they sleep */
    unsigned nthreads;     /* started workers */
    atomic_uint avail;     /* `queued`, readable without the lock (for spinners) */
    void (*on_idle)(void); /* runs when a worker finds the queue empty, or NULL */
    pthread_t *threads;    /* their handles */
};

/* The pool the calling thread holds (mcp__pool_hold), if any. */
static _Thread_local mcp__pool *held;
/* On a worker: its pool. */
static _Thread_local mcp__pool *mine;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wakes one sleeping worker unless one is already on its way. Under p->mu;
 * returns 1 when the caller must signal (after unlocking). */
static int want_wake(mcp__pool *p)
{
    if (!p->head || p->spinning || p->idle <= p->waking)
        return 0;
    p->waking++;
    return 1;
}

/* Watches the queue for up to SPIN_NS without the lock. 1 when a job may be there. */
static int spin_for_job(mcp__pool *p)
{
    uint64_t until = now_ns() + SPIN_NS;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&p->avail, memory_order_relaxed))
            return 1;
        if ((i & 63) == 0) {
            if (now_ns() >= until)
                return 0;
            sched_yield(); /* on a busy machine, let the thread that feeds us run */
        }
    }
}

static mcp__job *take_locked(mcp__pool *p)
{
    mcp__job *j = p->head;
    p->head = j->next;
    if (p->head)
        p->head->prev = NULL;
    else
        p->tail = NULL;
    j->next = j->prev = NULL;
    j->queued = 0;
    p->queued--;
    atomic_store_explicit(&p->avail, p->queued, memory_order_relaxed);
    return j;
}

/* The idle hook, without the lock. Called and returns with p->mu held. */
static void run_idle_hook(mcp__pool *p)
{
    if (!p->on_idle)
        return;
    pthread_mutex_unlock(&p->mu);
    p->on_idle();
    pthread_mutex_lock(&p->mu);
}

static void *worker(void *arg)
{
    mcp__pool *p = arg;
    mine = p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (!p->head)
            run_idle_hook(p);
        if (!p->head && !p->stopping) {
            p->spinning++;
            pthread_mutex_unlock(&p->mu);
            spin_for_job(p);
            pthread_mutex_lock(&p->mu);
            p->spinning--;
        }
        while (!p->head && !p->stopping) {
            p->idle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->idle--;
            if (p->waking)
                p->waking--;
        }
        if (!p->head)
            break; /* stopping and drained */
        mcp__job *j = take_locked(p);
        int wake = want_wake(p); /* jobs left behind: a sleeping peer takes them */
        pthread_mutex_unlock(&p->mu);
        if (wake)
            pthread_cond_signal(&p->cv);
        j->run(j);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int mcp__pool_worker_more(void)
{
    return mine && mine->on_idle && atomic_load_explicit(&mine->avail, memory_order_relaxed) > 0;
}

void mcp__mutex_init_hot(pthread_mutex_t *mu)
{
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
#else
    pthread_mutex_init(mu, NULL);
#endif
}

mcp_status mcp__pool_new(mcp__pool **out, unsigned threads, unsigned queue_max, void (*idle)(void))
{
    if (!out || threads == 0 || queue_max == 0)
        return MCP_ERR_INVALID_ARG;
    mcp__pool *p = mcp__calloc(1, sizeof *p);
    if (!p)
        return MCP_ERR_NOMEM;
    p->threads = mcp__calloc(threads, sizeof *p->threads);
    if (!p->threads) {
        mcp_free(p);
        return MCP_ERR_NOMEM;
    }
    p->queue_max = queue_max;
    p->on_idle = idle;
    atomic_init(&p->avail, 0);
    mcp__mutex_init_hot(&p->mu);
    pthread_cond_init(&p->cv, NULL);
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            mcp__pool_free(p);
            return MCP_ERR_IO;
        }
        p->nthreads++;
    }
    *out = p;
    return MCP_OK;
}

mcp_status mcp__pool_submit(mcp__pool *p, mcp__job *job)
{
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        return MCP_ERR_CLOSED;
    }
    if (p->queued >= p->queue_max) {
        pthread_mutex_unlock(&p->mu);
        return MCP_ERR_BUSY;
    }
    job->next = NULL;
    job->prev = p->tail;
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    job->queued = 1;
    p->queued++;
    atomic_store_explicit(&p->avail, p->queued, memory_order_relaxed);
    /* Wake a worker only when one sleeps and is not already being woken
     * (busy ones take the job when they finish), not while this thread
     * holds the pool (mcp__pool_unhold wakes one for the batch), and after
     * unlocking: a worker woken while the lock is still held would at once
     * block on it again, a second wake-up per job. */
    int wake = held != p && want_wake(p);
    pthread_mutex_unlock(&p->mu);
    if (wake)
        pthread_cond_signal(&p->cv);
    return MCP_OK;
}

void mcp__pool_hold(mcp__pool *p)
{
    held = p;
}

void mcp__pool_unhold(mcp__pool *p)
{
    if (held != p)
        return;
    held = NULL;
    pthread_mutex_lock(&p->mu);
    int wake = want_wake(p);
    pthread_mutex_unlock(&p->mu);
    if (wake)
        pthread_cond_signal(&p->cv);
}

int mcp__pool_withdraw(mcp__pool *p, mcp__job *job)
{
    pthread_mutex_lock(&p->mu);
    int removed = job->queued;
    if (removed) {
        if (job->prev)
            job->prev->next = job->next;
        else
            p->head = job->next;
        if (job->next)
            job->next->prev = job->prev;
        else
            p->tail = job->prev;
        job->next = job->prev = NULL;
        job->queued = 0;
        p->queued--;
        atomic_store_explicit(&p->avail, p->queued, memory_order_relaxed);
    }
    pthread_mutex_unlock(&p->mu);
    return removed;
}

unsigned mcp__pool_queued(mcp__pool *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned n = p->queued;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void mcp__pool_free(mcp__pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    mcp_free(p->threads);
    mcp_free(p);
}
