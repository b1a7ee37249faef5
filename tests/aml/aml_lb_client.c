/*
 * The client side of aml.suite.lb (tests/aml/lb.sh): libmcp's HTTP client
 * against several mcp-server-aml servers behind HAProxy.
 *
 *   aml_lb_client URL OUT VICTIM_PID
 *
 * 1. three legacy clients (2025-11-25 sessions) make three calls each;
 * 2. one 2026-07-28 client makes 30 calls, one at a time;
 * 3. the same client runs 6 threads of 20 calls each; once 30 of them have
 *    returned, VICTIM_PID gets SIGSTOP (its requests hang in flight), and
 *    1.5 s later SIGKILL: what it held is lost without an answer;
 * 4. the legacy clients make three calls more each.
 *
 * Calls alternate between listCases (read-only, retried by the client when
 * lost) and assessTypology (writes, never retried), each with arguments no
 * other call has, so that the audit row of a call is found by the SHA-256
 * of its arguments. One line per call goes to OUT:
 *   PHASE CLIENT TOOL ARGS_SHA256 OUTCOME MESSAGE
 * OUTCOME is ok (a result), toolerror (isError) or fail (no result; the
 * message says why). lb.sh compares these lines with the audit log. The
 * exit status is 0 when every call could be made (whatever its outcome).
 */
#include "util/util.h"

#include <mcp/mcp.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define LEGACY 3
#define THREADS 6
#define PER_THREAD 20
#define KILL_AFTER 30
#define NCASES 28
#define NTYP 14

static FILE *g_out;
static pthread_mutex_t g_out_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_seq;        /* makes every call's arguments unique */
static atomic_int g_done;       /* calls returned in phase 3 */
static const char *g_url;

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)ud;
    if (level >= MCP_LOG_WARNING)
        fprintf(stderr, "client: %s\n", message);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The n-th unique arguments: listCases when even, assessTypology when odd. */
static const char *args_for(int n, char *buf, size_t cap)
{
    if (n % 2 == 0) {
        int k = n / 2;
        snprintf(buf, cap, "{\"status\":\"any\",\"limit\":%d,\"openedFrom\":\"20%02d-%02d-01\"}", 1 + k % 100,
                 10 + k / 1200 % 80, 1 + k / 100 % 12);
        return "listCases";
    }
    int k = n / 2;
    /* Pairs of different typologies on one case: 28 * 14 * 13 unique calls. */
    int c = k % NCASES, t1 = k / NCASES % NTYP, t2 = (t1 + 1 + k / (NCASES * NTYP) % (NTYP - 1)) % NTYP;
    snprintf(buf, cap, "{\"caseId\":\"CASE-%04d\",\"typologies\":[\"T%02d\",\"T%02d\"]}", c + 1, t1 + 1, t2 + 1);
    return "assessTypology";
}

/* One call, recorded. Returns 0 when it could be made at all. */
static int call_one(mcp_client *c, const char *phase, const char *who)
{
    char args[200], sha[65];
    const char *tool = args_for(atomic_fetch_add(&g_seq, 1), args, sizeof args);
    aml_sha256_hex(args, strlen(args), sha);
    mcp_response *r = NULL;
    mcp_error err;
    mcp_error_clear(&err);
    mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &r, &err);
    const char *outcome = st == MCP_OK ? (mcp_response_is_tool_error(r) ? "toolerror" : "ok") : "fail";
    char msg[MCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", st == MCP_OK ? "-" : err.message);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    pthread_mutex_lock(&g_out_mu);
    fprintf(g_out, "%s %s %s %s %s %s\n", phase, who, tool, sha, outcome, msg);
    fflush(g_out);
    pthread_mutex_unlock(&g_out_mu);
    mcp_response_free(r);
    return 0;
}

static mcp_client *connect_one(const char *version)
{
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "aml-lb-test";
    o.protocol_version = version;
    o.timeout_ms = 30000;
    o.log = quiet;
    /* AML_LB_RETRIES=-1 turns the client's retries off: then lb.sh must fail. */
    if (getenv("AML_LB_RETRIES"))
        o.read_only_retries = atoi(getenv("AML_LB_RETRIES"));
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = g_url;
    mcp_client *c;
    mcp_error err;
    if (mcp_client_connect_http(&c, &o, &h, &err) != MCP_OK) {
        fprintf(stderr, "aml_lb_client: connect (%s): %s\n", version ? version : "dual-era", err.message);
        return NULL;
    }
    /* The tool list tells the client which tools are read-only. */
    mcp_response *r;
    if (mcp_client_list_tools(c, &r, &err) != MCP_OK) {
        fprintf(stderr, "aml_lb_client: tools/list: %s\n", err.message);
        mcp_client_close(c);
        return NULL;
    }
    mcp_response_free(r);
    return c;
}

static void *worker(void *arg)
{
    mcp_client *c = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        call_one(c, "run", "modern");
        atomic_fetch_add(&g_done, 1);
    }
    return NULL;
}

/* Freezes the victim once the run is under way, then kills it. */
static void *killer(void *arg)
{
    pid_t victim = (pid_t)(intptr_t)arg;
    while (atomic_load(&g_done) < KILL_AFTER)
        sleep_ms(5);
    kill(victim, SIGSTOP);
    pthread_mutex_lock(&g_out_mu);
    fprintf(g_out, "# SIGSTOP after %d calls\n", atomic_load(&g_done));
    pthread_mutex_unlock(&g_out_mu);
    sleep_ms(1500);
    kill(victim, SIGKILL);
    pthread_mutex_lock(&g_out_mu);
    fprintf(g_out, "# SIGKILL after %d calls\n", atomic_load(&g_done));
    fflush(g_out);
    pthread_mutex_unlock(&g_out_mu);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: aml_lb_client URL OUT VICTIM_PID\n");
        return 2;
    }
    g_url = argv[1];
    g_out = fopen(argv[2], "w");
    pid_t victim = (pid_t)atol(argv[3]);
    if (!g_out || victim <= 1)
        return 2;
    mcp_client *legacy[LEGACY] = {NULL}, *modern = NULL;
    char who[16];
    for (int k = 0; k < LEGACY; k++)
        if (!(legacy[k] = connect_one(MCP_PROTOCOL_2025_11_25)))
            return 1;
    for (int k = 0; k < LEGACY; k++)
        for (int j = 0; j < 3; j++) {
            snprintf(who, sizeof who, "legacy%d", k);
            call_one(legacy[k], "before", who);
        }
    if (!(modern = connect_one(NULL)) || !mcp_client_is_modern(modern))
        return 1;
    for (int i = 0; i < 30; i++)
        call_one(modern, "spread", "modern");
    pthread_t th[THREADS], kt;
    pthread_create(&kt, NULL, killer, (void *)(intptr_t)victim);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, modern);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_join(kt, NULL);
    for (int k = 0; k < LEGACY; k++)
        for (int j = 0; j < 3; j++) {
            snprintf(who, sizeof who, "legacy%d", k);
            call_one(legacy[k], "after", who);
        }
    for (int k = 0; k < LEGACY; k++)
        mcp_client_close(legacy[k]);
    mcp_client_close(modern);
    fclose(g_out);
    return 0;
}
