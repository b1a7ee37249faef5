/*
 * Answers of a burst over stdio are not held behind a slow call. Spawns the
 * fixture server (mcp-test-server) with ONE worker and writes, in a single
 * write(), quick calls (`stats`, on the worker pool), then a call of `slow`
 * (2 s), then more quick calls. The quick calls queued before the slow one
 * finish at once; their answers must arrive within a fraction of the slow
 * call's time, although the worker that produced them goes on to the slow
 * call (a worker holds back answers while calls wait in the queue, and must
 * write them before a call that may be slow). The calls queued behind the
 * slow one wait for it (one worker); the slow one is answered after ~2 s.
 * Then the same once more with `slow` known to be quick (it ran with
 * ms = 0 just before): the held answers may then wait, but only when no
 * one else writes; with one worker, the quick calls queued after the slow
 * one are what the test can check, and every call must be answered.
 *
 * usage: stdio_batch SERVER [WRAPPER...]
 */
#include <mcp/mcp.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "http_testlib.h"


#define MAX_ID 64

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static double g_at[MAX_ID]; /* when the answer to id N arrived (s), 0 = not yet */
static int g_error[MAX_ID]; /* 1 when it was an error */

/* Records the arrival time t of an answer, by id. */
static void record_answer(const char *s, size_t n, double t, void *ud)
{
    (void)ud;
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, s, n, NULL, NULL) == MCP_OK) {
        const mcp_json *r = mcp_json_doc_root(d);
        long id = (long)mcp_json_int(mcp_json_get(r, "id"));
        if (id > 0 && id < MAX_ID) {
            pthread_mutex_lock(&g_mu);
            g_at[id] = t;
            g_error[id] = mcp_json_get(r, "error") != NULL;
            pthread_cond_broadcast(&g_cv);
            pthread_mutex_unlock(&g_mu);
        }
    }
    mcp_json_doc_free(d);
}

/* Records the arrival time of every answer, by id, until EOF. */
static void *read_all(void *arg)
{
    read_lines(*(int *)arg, record_answer, NULL);
    return NULL;
}

/* Waits up to `secs` for the answer to `id`; its arrival time or 0. */
static double wait_answer(long id, double secs)
{
    double until = now_s() + secs;
    pthread_mutex_lock(&g_mu);
    while (!g_at[id] && now_s() < until) {
        pthread_mutex_unlock(&g_mu);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&g_mu);
    }
    double t = g_at[id];
    pthread_mutex_unlock(&g_mu);
    return t;
}

static void call_line(char *out, size_t cap, long id, const char *tool, const char *args)
{
    snprintf(out, cap,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":%s}}\n",
             id, tool, args);
}

/* One write(): quick calls first..first+before-1, `slow` 2 s at id `slow_id`, quick calls after it. */
static double burst(int fd, long first, int before, long slow_id, int after)
{
    char all[8192], line[300];
    all[0] = '\0';
    long id = first;
    for (int i = 0; i < before; i++, id++) {
        call_line(line, sizeof line, id, "stats", "{}");
        strcat(all, line);
    }
    call_line(line, sizeof line, slow_id, "slow", "{\"ms\":2000}");
    strcat(all, line);
    id = slow_id + 1;
    for (int i = 0; i < after; i++, id++) {
        call_line(line, sizeof line, id, "stats", "{}");
        strcat(all, line);
    }
    double t0 = now_s();
    write_all(fd, all, strlen(all));
    return t0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: stdio_batch SERVER [WRAPPER...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    char *args[64], *workers[] = {"--workers", "1", NULL};
    server_args(args, 64, argc, argv, workers);
    piped c;
    if (piped_start(&c, args))
        return 2;
    int in = c.in, out = c.out;
    pthread_t th;
    pthread_create(&th, NULL, read_all, &out);

    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"batch\",\"version\":\"1\"}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    write_all(in, init, strlen(init));
    CHECK(wait_answer(1, 20) > 0, "initialize answered");
    /* `stats` runs a few times first, so that it is known to be quick. */
    char line[300];
    for (long id = 2; id <= 4; id++) {
        call_line(line, sizeof line, id, "stats", "{}");
        write_all(in, line, strlen(line));
        CHECK(wait_answer(id, 20) > 0, "warm-up call %ld answered", id);
    }

    /* 1. `slow` never ran: the answers before it leave before it ends. */
    double t0 = burst(in, 10, 6, 16, 3);
    for (long id = 10; id < 16; id++) {
        double t = wait_answer(id, 20);
        CHECK(t > 0 && !g_error[id], "quick call %ld answered", id);
        CHECK(t > 0 && t - t0 < 1.0, "quick call %ld answered %.3f s after the burst, before the slow call ended",
              id, t - t0);
    }
    double ts = wait_answer(16, 20);
    CHECK(ts > 0 && ts - t0 >= 1.9, "the slow call answered after %.3f s", ts - t0);
    for (long id = 17; id < 20; id++)
        CHECK(wait_answer(id, 20) > 0 && !g_error[id], "call %ld behind the slow one answered", id);

    /* 2. `slow` known to be quick (ms = 0): every call is still answered. */
    call_line(line, sizeof line, 20, "slow", "{\"ms\":0}");
    write_all(in, line, strlen(line));
    CHECK(wait_answer(20, 20) > 0, "slow with ms 0 answered");
    t0 = burst(in, 30, 6, 36, 3);
    for (long id = 30; id < 40; id++)
        CHECK(wait_answer(id, 20) > 0 && !g_error[id], "call %ld of the second burst answered", id);
    ts = wait_answer(36, 1);
    CHECK(ts - t0 >= 1.9, "the second slow call answered after %.3f s", ts - t0);

    close(in);
    int status = 0;
    waitpid(c.pid, &status, 0);
    pthread_join(th, NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the server exits 0 at end of input (status %d)", status);
    return check_summary("stdio_batch");
}
