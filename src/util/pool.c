/*
 * Worker pool. One mutex guards the queue; workers sleep on a condition
 * variable. Submission never blocks: a full queue is back-pressure the
 * caller turns into a "busy, retry" answer, so the I/O thread is never
 * stuck behind slow tools.
 */
#include "util/pool.h"
#include "util/util.h"

#include <pthread.h>

struct mcp__pool {
    pthread_mutex_t mu;    /* guards everything below */
    pthread_cond_t cv;     /* signalled when a job arrives or on stop */
    mcp__job *head;        /* oldest queued job */
    mcp__job *tail;        /* newest queued job */
    unsigned queued;       /* jobs in the queue */
    unsigned queue_max;    /* capacity of the queue */
    int stopping;          /* no new jobs; workers exit when the queue is empty */
    unsigned idle;         /* workers waiting for a job */
    unsigned waking;       /* of those, how many were signalled and have not run yet */
    unsigned nthreads;     /* started workers */
    pthread_t *threads;    /* their handles */
};

static void *worker(void *arg)
{
    mcp__pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping) {
            p->idle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->idle--;
            if (p->waking)
                p->waking--;
        }
        mcp__job *j = p->head;
        if (!j)
            break; /* stopping and drained */
        p->head = j->next;
        if (p->head)
            p->head->prev = NULL;
        else
            p->tail = NULL;
        j->next = j->prev = NULL;
        j->queued = 0;
        p->queued--;
        pthread_mutex_unlock(&p->mu);
        j->run(j);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

mcp_status mcp__pool_new(mcp__pool **out, unsigned threads, unsigned queue_max)
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
    pthread_mutex_init(&p->mu, NULL);
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
    /* Wake a worker only when one sleeps and is not already being woken
     * (busy ones take the job when they finish), and after unlocking: a
     * worker woken while the lock is still held would at once block on it
     * again, a second wake-up per job. */
    int wake = p->idle > p->waking;
    if (wake)
        p->waking++;
    pthread_mutex_unlock(&p->mu);
    if (wake)
        pthread_cond_signal(&p->cv);
    return MCP_OK;
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
