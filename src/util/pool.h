/*
 * Worker pool: N threads take jobs from one bounded queue. A job still in
 * the queue can be withdrawn (cancellation before it starts), so the queue
 * is an intrusive doubly-linked list. Jobs belong to flows (the client a
 * job runs for, as the transport names it): each flow has its own FIFO,
 * and the workers serve the flows that have jobs waiting in turn, one job
 * each, so one client's backlog does not hold up another client's next
 * job. While more than one flow has jobs waiting, a flow already running
 * on half the workers (rounded up) waits for the others. Internal to
 * libmcp.
 */
#ifndef MCP_POOL_H
#define MCP_POOL_H

#include "mcp/base.h"

#include <stdint.h>

#include <pthread.h>

typedef struct mcp__job mcp__job;

/* Runs a job on a worker thread. The job is no longer in the pool. */
typedef void (*mcp__job_fn)(mcp__job *job);

typedef struct mcp__flow mcp__flow;

/* Embed this in the object a job works on. */
struct mcp__job {
    mcp__job *prev;  /* queue links, owned by the pool while queued */
    mcp__job *next;
    mcp__job_fn run; /* what to do */
    int queued;      /* 1 while in the queue (under the pool lock) */
    uint64_t flow;   /* the client it runs for, set before submitting: 0 for the default flow */
    mcp__flow *in;   /* its flow's queue while queued (under the pool lock) */
};

typedef struct mcp__pool mcp__pool;

/*
 * Initialises a mutex for short critical sections taken by several threads
 * at once (the pool's queue, a connection's tables, an output buffer): on
 * glibc an adaptive mutex, which spins briefly on contention before it
 * sleeps in the kernel, since the holder is about to release it.
 */
void mcp__mutex_init_hot(pthread_mutex_t *mu);

/*
 * Starts `threads` workers (>= 1) with room for `queue_max` waiting jobs.
 * `idle`, when not NULL, runs on a worker each time it finds the queue
 * empty, before it waits (and before it exits): work a job deferred while
 * more jobs were queued is done there (see mcp__pool_worker_more).
 */
mcp_status mcp__pool_new(mcp__pool **out, unsigned threads, unsigned queue_max, void (*idle)(void));

/*
 * On a worker of a pool with an idle hook: 1 while other jobs wait in its
 * queue (a hint, read without the lock); 0 on any other thread.
 */
int mcp__pool_worker_more(void);

/*
 * Queues a job behind the jobs of its flow (job->flow: any key the caller
 * derives from the client, 0 for the default flow). Returns MCP_ERR_BUSY
 * at once when the queue is full, and MCP_ERR_CLOSED when the pool is
 * stopping; the job is then not queued. When no memory is left for a new
 * flow the job joins the default flow.
 */
mcp_status mcp__pool_submit(mcp__pool *p, mcp__job *job);

/*
 * Batches submissions from the calling thread: until mcp__pool_unhold(p),
 * its mcp__pool_submit() calls queue jobs (busy workers take them) without
 * waking a sleeping worker; unhold wakes one for all of them. Hold only
 * while doing quick work (an I/O thread handling the frames of one read()):
 * held jobs may wait for the unhold when every worker sleeps.
 */
void mcp__pool_hold(mcp__pool *p);
void mcp__pool_unhold(mcp__pool *p);

/* Withdraws a job that has not started: 1 when it was removed, 0 otherwise. */
int mcp__pool_withdraw(mcp__pool *p, mcp__job *job);

/* Number of jobs waiting. */
unsigned mcp__pool_queued(mcp__pool *p);

/*
 * Stops accepting jobs, lets the workers finish the queue and joins them,
 * then frees the pool. NULL is a no-op.
 */
void mcp__pool_free(mcp__pool *p);

#endif /* MCP_POOL_H */
