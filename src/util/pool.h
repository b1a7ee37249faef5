/*
 * Worker pool: N threads take jobs from one bounded FIFO queue. A job
 * still in the queue can be withdrawn (cancellation before it starts), so
 * the queue is an intrusive doubly-linked list. Internal to libmcp.
 */
#ifndef MCP_POOL_H
#define MCP_POOL_H

#include "mcp/base.h"

typedef struct mcp__job mcp__job;

/* Runs a job on a worker thread. The job is no longer in the pool. */
typedef void (*mcp__job_fn)(mcp__job *job);

/* Embed this in the object a job works on. */
struct mcp__job {
    mcp__job *prev;  /* queue links, owned by the pool while queued */
    mcp__job *next;
    mcp__job_fn run; /* what to do */
    int queued;      /* 1 while in the queue (under the pool lock) */
};

typedef struct mcp__pool mcp__pool;

/* Starts `threads` workers (>= 1) with room for `queue_max` waiting jobs. */
mcp_status mcp__pool_new(mcp__pool **out, unsigned threads, unsigned queue_max);

/*
 * Queues a job. Returns MCP_ERR_BUSY at once when the queue is full, and
 * MCP_ERR_CLOSED when the pool is stopping; the job is then not queued.
 */
mcp_status mcp__pool_submit(mcp__pool *p, mcp__job *job);

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
