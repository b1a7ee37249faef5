/*
 * What the mcp-server-aml benchmarks share (bench_aml.c, bench_concurrent.c,
 * bench_screen.c): clocks, the load average printed beside each figure,
 * medians, and the answers of a sans-I/O connection counted as they come.
 * Header only, included once per benchmark program.
 */
#ifndef AML_BENCHAML_H
#define AML_BENCHAML_H

#include "commands/gen.h"

#include <mcp/mcp.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall time (monotonic), ms. */
static inline double bench_now_ms(void)
{
    return (double)aml_mono_ns() / 1e6;
}

/* CPU time of `clock` (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID), ms: unaffected by other processes
 * competing for the cores. */
static inline double bench_cpu_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The 1-minute load average, or 0 when unknown. */
static inline double bench_loadavg(void)
{
    double l[3] = {0, 0, 0};
    return getloadavg(l, 3) > 0 ? l[0] : 0;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The answers a connection sent (mcp_conn_new's send function bench_on_frame, user data a bench_waiter). */
typedef struct bench_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int got;      /* answers */
    int errors;   /* answers with isError or an error */
    size_t bytes; /* the last answer's length */
} bench_waiter;

static inline void bench_waiter_init(bench_waiter *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static inline mcp_status bench_on_frame(const char *f, size_t len, void *ud)
{
    bench_waiter *w = ud;
    pthread_mutex_lock(&w->mu);
    if (strstr(f, "\"id\":") && !strstr(f, "\"method\"")) {
        w->got++;
        w->bytes = len;
        if (strstr(f, "\"isError\":true") || strstr(f, "\"error\":{"))
            w->errors++;
    }
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return MCP_OK;
}

/* Waits until the waiter counted `n` answers. */
static inline void bench_wait_got(bench_waiter *w, int n)
{
    pthread_mutex_lock(&w->mu);
    while (w->got < n)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* A log callback that drops everything (the server's diagnostics would disturb the figures). */
static inline void bench_quiet(mcp_log_level l, const char *m, void *u)
{
    (void)l;
    (void)m;
    (void)u;
}

#endif /* AML_BENCHAML_H */
