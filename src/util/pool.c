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
 *
 * Fairness between clients: the queue is one FIFO per flow, and the flows
 * with jobs waiting form a ring that the workers go round, one job per
 * flow per turn (round robin: the cost of a job is not known before it
 * runs, so each counts as one). A flow already running on `cap` workers
 * (half of them, rounded up) is passed over while another flow has jobs
 * waiting; such a flow always exists when a worker is free, since were
 * every waiting flow (two or more) running on `cap` workers, they would
 * hold all of them. A client that calls one at a time has nothing queued
 * between its calls, though, and a backlog of slow jobs from another would
 * take the worker it just left: so a flow also stays within `cap` unless
 * the last `alone` jobs to start (twice the workers) were all its own.
 * The other half of the workers then waits for the other clients while
 * they keep calling (a worker may idle meanwhile: fairness over
 * throughput), and a lone client gets every worker after its first few
 * jobs (the first client of the pool's life at once). A flow's record
 * lives while it has jobs queued or running; the default flow (0) is part
 * of the pool, so the path of a single client (stdio) allocates nothing.
 */
#include "util/pool.h"
#include "util/util.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* How long an idle worker watches the queue before it sleeps. */
#define SPIN_NS 20000u
/* Hash buckets of the flows with jobs queued or running (a power of two). */
#define FLOW_BUCKETS 64u

/* The jobs of one client. */
struct mcp__flow {
    uint64_t key;          /* mcp__job.flow */
    mcp__job *head;        /* its oldest queued job */
    mcp__job *tail;        /* its newest queued job */
    unsigned queued;       /* its jobs in the queue */
    unsigned running;      /* its jobs on a worker now */
    mcp__flow *chain;      /* next in its hash bucket */
    mcp__flow *rprev;      /* the ring of flows with jobs queued */
    mcp__flow *rnext;
};

struct mcp__pool {
    pthread_mutex_t mu;    /* guards everything below but `avail` */
    pthread_cond_t cv;     /* signalled when a job arrives or on stop */
    mcp__flow *ring;       /* the flow whose turn is next (NULL when nothing is queued) */
    unsigned nring;        /* flows in the ring */
    unsigned cap;          /* workers a flow may hold while others wait: half, rounded up */
    unsigned alone;        /* starts in a row after which a flow may hold more (2 x workers) */
    uint64_t streak_key;   /* the flow of the last jobs to start */
    unsigned streak;       /* how many in a row (saturating) */
    int started;           /* some job has started */
    mcp__flow dflt;        /* flow 0 (never freed) */
    mcp__flow *flows[FLOW_BUCKETS]; /* the other flows, by key */
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
    if (!p->queued || p->spinning || p->idle <= p->waking)
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

static mcp__flow **bucket_of(mcp__pool *p, uint64_t key)
{
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return &p->flows[key & (FLOW_BUCKETS - 1)];
}

/* The flow of `key`, created when missing; the default flow when there is
 * no memory for it. Under p->mu. */
static mcp__flow *flow_get(mcp__pool *p, uint64_t key)
{
    if (key == 0)
        return &p->dflt;
    mcp__flow **pp = bucket_of(p, key);
    for (mcp__flow *f = *pp; f; f = f->chain)
        if (f->key == key)
            return f;
    mcp__flow *f = mcp__calloc(1, sizeof *f);
    if (!f)
        return &p->dflt;
    f->key = key;
    f->chain = *pp;
    *pp = f;
    return f;
}

/* Frees a flow with nothing queued or running (but the default). Under p->mu. */
static void flow_put(mcp__pool *p, mcp__flow *f)
{
    if (f == &p->dflt || f->queued || f->running)
        return;
    mcp__flow **pp = bucket_of(p, f->key);
    while (*pp != f)
        pp = &(*pp)->chain;
    *pp = f->chain;
    mcp_free(f);
}

/* Adds a flow at the end of the ring: its turn comes after the others'. */
static void ring_add(mcp__pool *p, mcp__flow *f)
{
    if (!p->ring) {
        f->rprev = f->rnext = f;
        p->ring = f;
    } else {
        f->rnext = p->ring;
        f->rprev = p->ring->rprev;
        f->rprev->rnext = f;
        p->ring->rprev = f;
    }
    p->nring++;
}

static void ring_remove(mcp__pool *p, mcp__flow *f)
{
    if (f->rnext == f) {
        p->ring = NULL;
    } else {
        f->rprev->rnext = f->rnext;
        f->rnext->rprev = f->rprev;
        if (p->ring == f)
            p->ring = f->rnext;
    }
    f->rprev = f->rnext = NULL;
    p->nring--;
}

/* Takes a job out of its flow's queue (and the flow out of the ring when
 * that was its last). Under p->mu. */
static void unlink_locked(mcp__pool *p, mcp__job *j)
{
    mcp__flow *f = j->in;
    if (j->prev)
        j->prev->next = j->next;
    else
        f->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        f->tail = j->prev;
    j->next = j->prev = NULL;
    j->in = NULL;
    j->queued = 0;
    if (--f->queued == 0)
        ring_remove(p, f);
    p->queued--;
    atomic_store_explicit(&p->avail, p->queued, memory_order_relaxed);
}

/* The next job: the oldest of the first flow in the ring that may take a
 * worker (see the top of the file; any while stopping); that flow's turn
 * then passes. NULL when none may. Under p->mu. */
static mcp__job *take_locked(mcp__pool *p, mcp__flow **flow)
{
    mcp__flow *f = p->ring;
    if (!f)
        return NULL;
    if (p->nring > 1) {
        unsigned left = p->nring;
        while (f->running >= p->cap && --left)
            f = f->rnext;
        if (!left)
            f = p->ring; /* cannot happen (see the top of the file); stay safe */
    } else if (f->running >= p->cap && !p->stopping && (p->streak_key != f->key || p->streak < p->alone)) {
        return NULL; /* others called lately: the rest of the workers wait for them */
    }
    if (!p->started || p->streak_key != f->key) {
        p->streak_key = f->key;
        p->streak = p->started ? 0 : p->alone; /* the first flow to start was alone until then */
        p->started = 1;
    }
    if (p->streak < UINT_MAX)
        p->streak++;
    mcp__job *j = f->head;
    unlink_locked(p, j);
    if (f->queued && p->ring == f)
        p->ring = f->rnext; /* its turn is over: the next flow's comes */
    else if (f->queued) {
        ring_remove(p, f); /* passed over flows before it keep their place */
        ring_add(p, f);
    }
    f->running++;
    *flow = f;
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
        mcp__flow *f;
        mcp__job *j = take_locked(p, &f);
        if (!j) {
            /* Also when jobs wait that this worker may not take (their flow
             * is at its cap): answers held back for them go out now. */
            run_idle_hook(p);
            j = take_locked(p, &f);
        }
        if (!j && !p->queued && !p->stopping) {
            p->spinning++;
            pthread_mutex_unlock(&p->mu);
            spin_for_job(p);
            pthread_mutex_lock(&p->mu);
            p->spinning--;
            j = take_locked(p, &f);
        }
        while (!j && !(p->stopping && !p->queued)) {
            p->idle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->idle--;
            if (p->waking)
                p->waking--;
            j = take_locked(p, &f);
        }
        if (!j)
            break; /* stopping and drained */
        int wake = want_wake(p); /* jobs left behind: a sleeping peer takes them */
        pthread_mutex_unlock(&p->mu);
        if (wake)
            pthread_cond_signal(&p->cv);
        j->run(j); /* may free j; f lives while it counts a running job */
        pthread_mutex_lock(&p->mu);
        f->running--;
        flow_put(p, f);
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
    p->cap = (threads + 1) / 2;
    p->alone = 2 * threads;
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
    mcp__flow *f = flow_get(p, job->flow);
    job->next = NULL;
    job->prev = f->tail;
    if (f->tail)
        f->tail->next = job;
    else
        f->head = job;
    f->tail = job;
    if (f->queued++ == 0)
        ring_add(p, f);
    job->in = f;
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
        mcp__flow *f = job->in;
        unlink_locked(p, job);
        flow_put(p, f);
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
