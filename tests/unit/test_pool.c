/*
 * The worker pool (src/util/pool.c): the flows of different clients take
 * turns, a flow on half the workers waits while another has jobs queued
 * or started jobs lately, a flow alone uses every worker, withdrawn jobs
 * leave the queue consistent, and a flow without memory for its record
 * still runs.
 *
 * The orders checked are decided by the pool, not by timing: busy workers
 * are held at gates until the test has queued everything.
 */
#include "testlib.h"

#include "util/pool.h"

#include <pthread.h>
#include <time.h>

/* A job that records its name when it runs, then waits at its gate if it has one. */
typedef struct tjob {
    mcp__job job; /* pool linkage; must stay first */
    char name;    /* recorded in the order of runs */
    int gated;    /* waits until its gate opens */
    int open;     /* the gate (under g_mu) */
} tjob;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static char g_order[64]; /* names, in the order the jobs ran (under g_mu) */
static size_t g_ran;     /* how many ran */
static int g_waiting;    /* gated jobs at their gate now */

static void tjob_run(mcp__job *job)
{
    tjob *t = (tjob *)job;
    pthread_mutex_lock(&g_mu);
    if (g_ran < sizeof g_order - 1)
        g_order[g_ran++] = t->name;
    g_order[g_ran] = '\0';
    if (t->gated)
        g_waiting++;
    pthread_cond_broadcast(&g_cv);
    if (t->gated) {
        while (!t->open)
            pthread_cond_wait(&g_cv, &g_mu);
        g_waiting--;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
}

static void reset(void)
{
    pthread_mutex_lock(&g_mu);
    g_order[0] = '\0';
    g_ran = 0;
    g_waiting = 0;
    pthread_mutex_unlock(&g_mu);
}

/* Queues job `t` named `name` in flow `flow`, gated or not. */
static mcp_status put(mcp__pool *p, tjob *t, char name, uint64_t flow, int gated)
{
    memset(t, 0, sizeof *t);
    t->job.run = tjob_run;
    t->job.flow = flow;
    t->name = name;
    t->gated = gated;
    return mcp__pool_submit(p, &t->job);
}

/* Waits (up to 10 s) until `n` gated jobs wait at their gates and `ran`
 * jobs have run; 1 when they did. */
static int wait_for(int n, size_t ran)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&g_mu);
    int ok = 1;
    while (ok && (g_waiting != n || g_ran < ran))
        ok = pthread_cond_timedwait(&g_cv, &g_mu, &until) == 0;
    pthread_mutex_unlock(&g_mu);
    return ok;
}

static void open_gate(tjob *t)
{
    pthread_mutex_lock(&g_mu);
    t->open = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

static void order(char *out, size_t cap)
{
    pthread_mutex_lock(&g_mu);
    snprintf(out, cap, "%s", g_order);
    pthread_mutex_unlock(&g_mu);
}

/* Opens `gate`, lets the pool finish its queue and frees it; the order the
 * jobs ran in, in got. */
static void finish(mcp__pool *p, tjob *gate, char *got, size_t cap)
{
    open_gate(gate);
    mcp__pool_free(p);
    order(got, cap);
}

/* One worker busy with client A's gated job; A queues five more, then B
 * one: B's job runs second, not after A's backlog (FIFO: "GAAAAAB"). */
static void test_flows_take_turns(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 1, 64, NULL));
    tjob gate, a[5], b;
    T_OK(put(p, &gate, 'G', 1, 1));
    int started = wait_for(1, 1);
    for (int i = 0; i < 5; i++)
        put(p, &a[i], 'A', 1, 0);
    put(p, &b, 'B', 2, 0);
    unsigned queued = mcp__pool_queued(p);
    char got[64];
    finish(p, &gate, got, sizeof got);
    T_TRUE(started);
    T_EQ_INT(queued, 6);
    T_EQ_STR(got, "GABAAAA");
}

/* Two workers, both on client A's gated jobs; A queues more, then B one.
 * When one of A's jobs ends, the freed worker goes to B (A already runs on
 * half the workers while B waits), although A's turn came first; and A's
 * next job does not take the worker B leaves (B started a job lately)
 * until A's other job ends. */
static void test_flow_capped_while_others_wait(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 2, 64, NULL));
    tjob g1, g2, a[3], b;
    put(p, &g1, 'G', 1, 1);
    put(p, &g2, 'H', 1, 1);
    int started = wait_for(2, 2);
    for (int i = 0; i < 3; i++)
        put(p, &a[i], 'A', 1, i == 0);
    put(p, &b, 'B', 2, 0);
    open_gate(&g1);
    /* The freed worker runs B; A's next job waits for A's other one. */
    int next = wait_for(1, 3);
    char mid[64];
    order(mid, sizeof mid);
    unsigned queued = mcp__pool_queued(p);
    open_gate(&g2);
    open_gate(&a[0]);
    mcp__pool_free(p);
    char got[64];
    order(got, sizeof got);
    T_TRUE(started);
    T_TRUE(next);
    T_EQ_INT(mid[2], 'B');
    T_EQ_INT(queued, 3);
    T_EQ_SIZE(strlen(got), 6);
}

/* Client B called last, one call at a time (nothing of it queued): client
 * A's backlog gets half the workers, the other half stays for B, whose
 * next call starts at once; once A's own jobs are the last four (twice the
 * workers) to start, A gets both workers. (FIFO: A's two gated jobs take
 * both workers and B's call waits.) */
static void test_reserve_for_recent_clients(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 2, 64, NULL));
    tjob b1, b2, a1, a2, a3, a4, a5, a6;
    put(p, &b1, 'B', 2, 0);
    int ok1 = wait_for(0, 1);
    put(p, &a1, 'A', 1, 1);
    put(p, &a2, 'A', 1, 1);
    int ok2 = wait_for(1, 2);
    put(p, &b2, 'B', 2, 0);
    int ok3 = wait_for(1, 3);
    unsigned queued = mcp__pool_queued(p); /* a2, held back */
    open_gate(&a1);
    int ok4 = wait_for(1, 4); /* a2 runs in a1's place */
    put(p, &a3, 'a', 1, 0);
    put(p, &a4, 'a', 1, 0);
    open_gate(&a2);
    int ok5 = wait_for(0, 6);
    put(p, &a5, 'X', 1, 1);
    put(p, &a6, 'X', 1, 1);
    int both = wait_for(2, 8);
    open_gate(&a5);
    open_gate(&a6);
    mcp__pool_free(p);
    char got[64];
    order(got, sizeof got);
    T_TRUE(ok1 && ok2 && ok4 && ok5);
    T_TRUE(ok3);
    T_EQ_INT(queued, 1);
    T_EQ_STR(got, "BABAaaXX");
    T_TRUE(both);
}

/* A flow alone uses every worker: its two gated jobs run at once. */
static void test_lone_flow_uses_all_workers(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 2, 64, NULL));
    tjob g1, g2, g3;
    put(p, &g1, 'G', 5, 1);
    put(p, &g2, 'H', 5, 1);
    int both = wait_for(2, 2);
    open_gate(&g1);
    open_gate(&g2);
    /* The default flow too. */
    put(p, &g3, 'I', 0, 1);
    int third = wait_for(1, 3);
    open_gate(&g3);
    mcp__pool_free(p);
    T_TRUE(both);
    T_TRUE(third);
}

/* Withdrawing queued jobs of several flows keeps the ring consistent; the
 * flows' records go when their last job does (the allocator counts them). */
static void test_withdraw(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 1, 64, NULL));
    tjob gate, a1, b1, a2, c1;
    put(p, &gate, 'G', 1, 1);
    int started = wait_for(1, 1);
    put(p, &a1, 'a', 1, 0);
    put(p, &b1, 'b', 2, 0);
    put(p, &a2, 'A', 1, 0);
    put(p, &c1, 'c', 3, 0);
    int w1 = mcp__pool_withdraw(p, &b1.job);
    int w2 = mcp__pool_withdraw(p, &a1.job);
    int w3 = mcp__pool_withdraw(p, &c1.job);
    int again = mcp__pool_withdraw(p, &c1.job);
    unsigned queued = mcp__pool_queued(p);
    char got[64];
    finish(p, &gate, got, sizeof got);
    T_TRUE(started);
    T_TRUE(w1 && w2 && w3);
    T_FALSE(again);
    T_EQ_INT(queued, 1);
    T_EQ_STR(got, "GA");
}

/* With no memory for a new flow's record, the job joins the default flow
 * and still runs. */
static void test_flow_without_memory(void)
{
    reset();
    mcp__pool *p;
    T_OK(mcp__pool_new(&p, 1, 64, NULL));
    tjob gate, a;
    put(p, &gate, 'G', 0, 1);
    int started = wait_for(1, 1);
    t_fail_reset(1);
    mcp_status st = put(p, &a, 'A', 9, 0);
    long failed = t_failed;
    t_fail_reset(0);
    char got[64];
    finish(p, &gate, got, sizeof got);
    T_TRUE(started);
    T_OK(st);
    T_EQ_INT(failed, 1);
    T_EQ_STR(got, "GA");
}

TEST_MAIN(TEST(test_flows_take_turns), TEST(test_flow_capped_while_others_wait), TEST(test_reserve_for_recent_clients),
          TEST(test_lone_flow_uses_all_workers),
          TEST(test_withdraw), TEST(test_flow_without_memory))
