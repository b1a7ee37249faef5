/*
 * The client over stdio, against two servers:
 *   - mcp-test-server (a real libmcp server): both eras, the typed helpers,
 *     progress, input in both eras, time limits, cancellation;
 *   - client-fake-server (scripted): 32 threads x 1000 calls answered in
 *     random order with timeouts and cancellations mixed in, and faults
 *     (death mid-call, closed stdout, garbage, unknown ids, silent or
 *     legacy-only probes, bad structured output, input_required rounds).
 *
 * usage: client_stdio MCP_TEST_SERVER CLIENT_FAKE_SERVER
 * MCP_CLIENT_SCALE=N divides the concurrency run (for valgrind).
 */
#include <mcp/mcp.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_passed, g_failed;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            atomic_fetch_add(&g_passed, 1);                                                                            \
        } else {                                                                                                       \
            atomic_fetch_add(&g_failed, 1);                                                                            \
            printf("FAIL line %d: ", __LINE__);                                                                        \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static const char *g_real, *g_fake;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/* Answers elicitation with {"action":"accept","content":{"name":"Ada"}}. */
static mcp_status answer_ada(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w, char *msg,
                             size_t cap, void *ud)
{
    (void)c;
    (void)params;
    (void)msg;
    (void)cap;
    atomic_int *calls = ud;
    if (calls)
        atomic_fetch_add(calls, 1);
    if (strcmp(method, "elicitation/create") != 0)
        return MCP_ERR_UNSUPPORTED;
    mcp_jw_key(w, "action");
    mcp_jw_string(w, "accept");
    mcp_jw_key(w, "content");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, "Ada");
    mcp_jw_object_end(w);
    return MCP_OK;
}

static mcp_status connect_to(mcp_client **c, const char *server, const char *extra, const char *version,
                             mcp_client_opts *base, mcp_error *err)
{
    const char *argv[] = {server, extra, NULL};
    mcp_stdio_client_opts so;
    memset(&so, 0, sizeof so);
    so.argv = argv;
    so.stderr_mode = MCP_STDERR_CAPTURE;
    so.kill_grace_ms = 500;
    mcp_client_opts o;
    if (base)
        o = *base;
    else
        memset(&o, 0, sizeof o);
    o.name = "client-test";
    o.version = "1.0";
    o.protocol_version = version;
    if (!o.log)
        o.log = quiet;
    return mcp_client_connect_stdio(c, &o, &so, err);
}

static const char *first_text(const mcp_response *r)
{
    const mcp_json *c0 = mcp_json_at(mcp_json_get(mcp_response_result(r), "content"), 0);
    const char *t = mcp_json_str(mcp_json_get(c0, "text"), NULL);
    return t ? t : "";
}

/* ---- against a real libmcp server ---------------------------------------------- */

static void progress_seen(double progress, double total, const char *message, void *ud)
{
    int *seen = ud;
    /* 2024-11-05 has no progress message; later versions carry the fixture's. */
    if (total == 3 && progress == seen[0] + 1 && (!message || !strncmp(message, "step ", 5)))
        seen[0]++;
}

static void real_server(const char *version)
{
    const char *era = version ? version : "dual-era";
    mcp_client *c;
    mcp_error err;
    atomic_int asked = 0;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.capabilities = "{\"elicitation\":{}}";
    o.on_input = answer_ada;
    o.user_data = &asked;
    mcp_status st = connect_to(&c, g_real, NULL, version, &o, &err);
    CHECK(st == MCP_OK, "%s: connect (%s)", era, err.message);
    if (st != MCP_OK)
        return;
    int modern = !version || !strcmp(version, "2026-07-28");
    CHECK(mcp_client_is_modern(c) == modern && !strcmp(mcp_client_protocol_version(c), version ? version : "2026-07-28"),
          "%s: negotiated %s", era, mcp_client_protocol_version(c));
    CHECK(mcp_json_str_eq(mcp_json_get(mcp_client_server_info(c), "name"), "fixture"), "%s: serverInfo", era);
    CHECK(mcp_json_get(mcp_client_server_capabilities(c), "tools") != NULL, "%s: tools capability", era);

    mcp_response *r;
    st = mcp_client_list_tools(c, &r, &err);
    const mcp_json *tools = mcp_json_get(mcp_response_result(r), "tools");
    CHECK(st == MCP_OK && mcp_json_len(tools) >= 10 &&
              mcp_json_str_eq(mcp_json_get(mcp_json_at(tools, 0), "name"), "assessTypology"),
          "%s: tools/list (%s)", era, mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "assessTypology", "{\"caseId\":\"C-1\"}", NULL, &r, &err);
    CHECK(st == MCP_OK && !strcmp(first_text(r), "Case C-1: typology T01 (structuring) matched on 4 cash deposits."),
          "%s: call (%s %s)", era, mcp_status_name(st), first_text(r));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "assessTypology", "{\"caseId\":\"C-404\"}", NULL, &r, &err);
    CHECK(st == MCP_OK && mcp_response_is_tool_error(r), "%s: a tool error is a result", era);
    mcp_response_free(r);

    /* Invalid arguments: a tool error from 2025-11-25 on, -32602 before (the founding transcript). */
    st = mcp_client_call_tool(c, "assessTypology", "{}", NULL, &r, &err);
    if (version && strcmp(version, "2025-11-25") < 0)
        CHECK(st == MCP_ERR_PROTOCOL && err.rpc_code == -32602 && mcp_response_error_code(r) == -32602,
              "%s: invalid arguments are -32602 (%s)", era, mcp_status_name(st));
    else
        CHECK(st == MCP_OK && mcp_response_is_tool_error(r) && strstr(first_text(r), "/caseId: required property missing"),
              "%s: invalid arguments are a tool error (%s)", era, mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "nope", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_PROTOCOL && err.rpc_code == -32602 && strstr(err.message, "Unknown tool"),
          "%s: unknown tool is -32602 (%s %s)", era, mcp_status_name(st), err.message);
    mcp_response_free(r);

    int seen[1] = {0};
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = progress_seen;
    ro.user_data = seen;
    st = mcp_client_call_tool(c, "progress", NULL, &ro, &r, &err);
    CHECK(st == MCP_OK && seen[0] == 3 && !strcmp(first_text(r), "done"), "%s: progress 1..3 (%d)", era, seen[0]);
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "askName", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK && !strcmp(first_text(r), "Hello, Ada!") && atomic_load(&asked) == 1,
          "%s: elicitation answered (%s, '%s', asked %d)", era, mcp_status_name(st), first_text(r),
          atomic_load(&asked));
    mcp_response_free(r);

    st = mcp_client_list_resources(c, &r, &err);
    CHECK(st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(r), "resources")) >= 1, "%s: resources",
          era);
    const char *uri = mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "resources"), 0), "uri"), NULL);
    mcp_response *rr = NULL;
    if (uri) {
        st = mcp_client_read_resource(c, uri, &rr, &err);
        CHECK(st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(rr), "contents")) == 1,
              "%s: read %s (%s)", era, uri, mcp_status_name(st));
    }
    mcp_response_free(rr);
    mcp_response_free(r);

    st = mcp_client_list_prompts(c, &r, &err);
    const char *pname = mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "prompts"), 0), "name"), NULL);
    CHECK(st == MCP_OK && pname, "%s: prompts", era);
    mcp_response_free(r);

    st = mcp_client_ping(c, &err);
    if (modern)
        CHECK(st == MCP_ERR_PROTOCOL && err.rpc_code == -32601, "%s: ping is gone in 2026-07-28", era);
    else
        CHECK(st == MCP_OK, "%s: ping", era);

    /* A time limit: the call fails on time, its late answer is dropped, the next call works. */
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = 100;
    uint64_t t0 = now_ms();
    st = mcp_client_call_tool(c, "slow", "{\"ms\":600}", &ro, &r, &err);
    uint64_t took = now_ms() - t0;
    CHECK(st == MCP_ERR_TIMEOUT && !r && took < 500 && strstr(err.message, "100 ms"), "%s: timeout (%s after %llu ms)",
          era, mcp_status_name(st), (unsigned long long)took);
    st = mcp_client_call_tool(c, "slow", "{\"ms\":10}", NULL, &r, &err);
    CHECK(st == MCP_OK && !strcmp(first_text(r), "slept 10 ms"), "%s: next call after a timeout (%s)", era,
          first_text(r));
    mcp_response_free(r);
    mcp_client_close(c);
}

/* ---- concurrency against the scripted server ------------------------------------ */

typedef struct worker_arg {
    mcp_client *c;
    int index;
    int calls;
    int ok, timeouts, cancels, wrong, other;
} worker_arg;

typedef struct async_box {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    mcp_status st;
    char text[64];
} async_box;

static void async_done(mcp_client *c, mcp_status st, mcp_response *resp, const mcp_error *err, void *ud)
{
    (void)c;
    (void)err;
    async_box *b = ud;
    pthread_mutex_lock(&b->mu);
    b->st = st;
    snprintf(b->text, sizeof b->text, "%s", resp ? first_text(resp) : "");
    b->done = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    mcp_response_free(resp);
}

static void *worker_main(void *arg)
{
    worker_arg *a = arg;
    for (int i = 0; i < a->calls; i++) {
        char tag[48], args[96];
        snprintf(tag, sizeof tag, "w%d-c%d", a->index, i);
        if (i % 97 == 13) {
            /* Cancelled at once: never a result meant for another call. */
            async_box b;
            memset(&b, 0, sizeof b);
            pthread_mutex_init(&b.mu, NULL);
            pthread_cond_init(&b.cv, NULL);
            snprintf(args, sizeof args, "{\"name\":\"jitter\",\"arguments\":{\"tag\":\"%s\",\"max\":3}}", tag);
            uint64_t h;
            if (mcp_client_request_async(a->c, "tools/call", args, NULL, async_done, &b, &h) != MCP_OK) {
                a->other++;
                continue;
            }
            mcp_client_cancel(a->c, h, "test");
            pthread_mutex_lock(&b.mu);
            while (!b.done)
                pthread_cond_wait(&b.cv, &b.mu);
            pthread_mutex_unlock(&b.mu);
            if (b.st == MCP_ERR_CANCELLED)
                a->cancels++;
            else if (b.st == MCP_OK && !strcmp(b.text, tag))
                a->ok++;
            else if (b.st == MCP_OK)
                a->wrong++;
            else
                a->other++;
            pthread_mutex_destroy(&b.mu);
            pthread_cond_destroy(&b.cv);
            continue;
        }
        mcp_request_opts ro;
        memset(&ro, 0, sizeof ro);
        int slowish = i % 53 == 7;
        if (slowish)
            ro.timeout_ms = 2; /* usually times out: its answer comes later */
        snprintf(args, sizeof args, "{\"tag\":\"%s\",\"max\":%d}", tag, slowish ? 30 : 2);
        mcp_response *r;
        mcp_error err;
        mcp_status st = mcp_client_call_tool(a->c, "jitter", args, &ro, &r, &err);
        if (st == MCP_OK && !strcmp(first_text(r), tag))
            a->ok++;
        else if (st == MCP_OK)
            a->wrong++;
        else if (st == MCP_ERR_TIMEOUT && slowish)
            a->timeouts++;
        else
            a->other++;
        mcp_response_free(r);
    }
    return NULL;
}

static void concurrency(int threads, int calls)
{
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(&c, g_fake, NULL, NULL, NULL, &err);
    CHECK(st == MCP_OK && mcp_client_is_modern(c), "fake: connect (%s)", err.message);
    if (st != MCP_OK)
        return;
    worker_arg *args = calloc((size_t)threads, sizeof *args);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    uint64_t t0 = now_ms();
    for (int i = 0; i < threads; i++) {
        args[i].c = c;
        args[i].index = i;
        args[i].calls = calls;
        pthread_create(&tid[i], NULL, worker_main, &args[i]);
    }
    int ok = 0, timeouts = 0, cancels = 0, wrong = 0, other = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        ok += args[i].ok;
        timeouts += args[i].timeouts;
        cancels += args[i].cancels;
        wrong += args[i].wrong;
        other += args[i].other;
    }
    uint64_t took = now_ms() - t0;
    printf("concurrency: %d threads x %d calls in %llu ms: %d own answers, %d timeouts, %d cancelled, %d wrong, "
           "%d other\n",
           threads, calls, (unsigned long long)took, ok, timeouts, cancels, wrong, other);
    CHECK(wrong == 0 && other == 0 && ok + timeouts + cancels == threads * calls,
          "every call got its own answer, a timeout or its cancellation");
    CHECK(timeouts > 0 && cancels > 0, "timeouts (%d) and cancellations (%d) were exercised", timeouts, cancels);
    /* Timeouts and cancellations told the server (notifications/cancelled on stdio). */
    mcp_response *r;
    st = mcp_client_call_tool(c, "cancels", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK && atoi(first_text(r)) == timeouts + cancels, "server saw %s cancellations of %d",
          first_text(r), timeouts + cancels);
    mcp_response_free(r);
    free(args);
    free(tid);
    mcp_client_close(c);
}

/* ---- faults ----------------------------------------------------------------------- */

typedef struct hang_arg {
    mcp_client *c;
    mcp_status st;
    char msg[MCP_ERROR_MESSAGE_MAX];
    uint64_t took;
} hang_arg;

static void *hang_main(void *arg)
{
    hang_arg *h = arg;
    mcp_error err;
    mcp_error_clear(&err);
    mcp_response *r;
    uint64_t t0 = now_ms();
    h->st = mcp_client_call_tool(h->c, "hang", NULL, NULL, &r, &err);
    h->took = now_ms() - t0;
    snprintf(h->msg, sizeof h->msg, "%s", err.message);
    mcp_response_free(r);
    return NULL;
}

/* Four calls wait; `trigger` breaks the server; all four must fail at once with `want`. */
static void fault(const char *trigger, mcp_status want, const char *want_msg, int lenient)
{
    mcp_client *c;
    mcp_error err;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.lenient = lenient;
    o.timeout_ms = 20000;
    if (connect_to(&c, g_fake, NULL, NULL, &o, &err) != MCP_OK) {
        CHECK(0, "%s: connect (%s)", trigger, err.message);
        return;
    }
    hang_arg h[4];
    pthread_t tid[4];
    for (int i = 0; i < 4; i++) {
        memset(&h[i], 0, sizeof h[i]);
        h[i].c = c;
        pthread_create(&tid[i], NULL, hang_main, &h[i]);
    }
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL); /* the four are waiting */
    mcp_response *r;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = lenient ? 300 : 0; /* lenient: the garbage is no answer */
    mcp_status st = mcp_client_call_tool(c, trigger, NULL, &ro, &r, &err);
    mcp_response_free(r);
    if (lenient) {
        /* Lenient: the garbage is skipped and the connection lives on. */
        CHECK(st == MCP_ERR_TIMEOUT || st == MCP_OK || st == MCP_ERR_PROTOCOL, "%s lenient: trigger (%s)", trigger,
              mcp_status_name(st));
        st = mcp_client_call_tool(c, "jitter", "{\"tag\":\"alive\"}", NULL, &r, &err);
        CHECK(st == MCP_OK && !strcmp(first_text(r), "alive"), "%s lenient: the connection lives on", trigger);
        mcp_response_free(r);
        mcp_client_close(c); /* fails the four hangs with MCP_ERR_CLOSED */
        for (int i = 0; i < 4; i++)
            pthread_join(tid[i], NULL);
        return;
    }
    CHECK(st == want && strstr(err.message, want_msg), "%s: the trigger call fails with %s (%s: %s)", trigger,
          mcp_status_name(want), mcp_status_name(st), err.message);
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        CHECK(h[i].st == want && strstr(h[i].msg, want_msg) && h[i].took < 5000,
              "%s: a pending call fails promptly with %s (%s: %s, %llu ms)", trigger, mcp_status_name(want),
              mcp_status_name(h[i].st), h[i].msg, (unsigned long long)h[i].took);
    }
    st = mcp_client_call_tool(c, "jitter", "{\"tag\":\"x\"}", NULL, &r, &err);
    CHECK(st == want, "%s: later calls fail at once (%s)", trigger, mcp_status_name(st));
    mcp_response_free(r);
    mcp_client_close(c);
}

static void handshakes(void)
{
    mcp_client *c;
    mcp_error err;
    mcp_response *r;
    /* A legacy server answers the probe with an error: initialize follows. */
    mcp_status st = connect_to(&c, g_fake, "--legacy-only", NULL, NULL, &err);
    CHECK(st == MCP_OK && !mcp_client_is_modern(c) && !strcmp(mcp_client_protocol_version(c), "2025-11-25") &&
              !strcmp(mcp_client_instructions(c), "be nice"),
          "legacy-only: falls back to initialize (%s)", err.message);
    if (st == MCP_OK)
        mcp_client_close(c);
    /* A silent probe means legacy too, after discover_timeout_ms. */
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.discover_timeout_ms = 200;
    uint64_t t0 = now_ms();
    st = connect_to(&c, g_fake, "--silent-discover", NULL, &o, &err);
    CHECK(st == MCP_OK && !mcp_client_is_modern(c) && now_ms() - t0 < 2000, "silent probe: legacy after the timeout");
    if (st == MCP_OK)
        mcp_client_close(c);
    /* Forcing 2026-07-28 against a legacy server fails clearly. */
    st = connect_to(&c, g_fake, "--legacy-only", "2026-07-28", NULL, &err);
    CHECK(st == MCP_ERR_UNSUPPORTED && strstr(err.message, "2026-07-28"), "forced modern vs legacy (%s: %s)",
          mcp_status_name(st), err.message);
    /* A banner on stdout before the first frame breaks the protocol... */
    st = connect_to(&c, g_fake, "--banner", NULL, NULL, &err);
    CHECK(st == MCP_ERR_INVALID_MSG && strstr(err.message, "Starting fake server"), "banner: %s (%s)",
          mcp_status_name(st), err.message);
    /* ...unless the client is lenient. */
    memset(&o, 0, sizeof o);
    o.lenient = 1;
    st = connect_to(&c, g_fake, "--banner", NULL, &o, &err);
    CHECK(st == MCP_OK, "banner, lenient: connects (%s)", err.message);
    if (st == MCP_OK)
        mcp_client_close(c);
    /* A command that does not exist, and one that exits at once. */
    st = connect_to(&c, "/nonexistent/mcp-server", NULL, NULL, NULL, &err);
    CHECK(st == MCP_ERR_IO && strstr(err.message, "cannot start"), "missing command: %s", err.message);
    st = connect_to(&c, "false", NULL, NULL, NULL, &err);
    CHECK(st == MCP_ERR_CLOSED && strstr(err.message, "exited with status 1"), "exits at once: %s (%s)",
          mcp_status_name(st), err.message);
    /* Paging, output schemas, input_required rounds. */
    atomic_int asked = 0;
    memset(&o, 0, sizeof o);
    o.capabilities = "{\"elicitation\":{}}";
    o.on_input = answer_ada;
    o.user_data = &asked;
    st = connect_to(&c, g_fake, NULL, NULL, &o, &err);
    if (st != MCP_OK) {
        CHECK(0, "fake: connect (%s)", err.message);
        return;
    }
    st = mcp_client_list_tools(c, &r, &err);
    CHECK(st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(r), "tools")) == 4,
          "tools/list follows nextCursor to the end");
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "goodout", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK, "structuredContent matching the outputSchema (%s)", err.message);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "badout", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_INVALID && r && strstr(err.message, "/n"), "structuredContent breaking it: %s (%s)",
          mcp_status_name(st), err.message);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "mrtr", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK && !strcmp(first_text(r), "ok Ada state=same newid=yes") && atomic_load(&asked) == 1,
          "input_required round: %s (%s)", first_text(r), err.message);
    mcp_response_free(r);
    mcp_client_close(c);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: client_stdio MCP_TEST_SERVER CLIENT_FAKE_SERVER\n");
        return 2;
    }
    g_real = argv[1];
    g_fake = argv[2];
    int scale = getenv("MCP_CLIENT_SCALE") ? atoi(getenv("MCP_CLIENT_SCALE")) : 1;
    if (scale < 1)
        scale = 1;
    real_server(NULL);
    real_server("2025-11-25");
    real_server("2025-06-18");
    real_server("2024-11-05");
    handshakes();
    fault("die", MCP_ERR_CLOSED, "exited with status 3; its stderr ends: dying on purpose", 0);
    fault("close", MCP_ERR_CLOSED, "closed its stdout", 0);
    fault("garbage", MCP_ERR_INVALID_MSG, "not a JSON-RPC message", 0);
    fault("wrongid", MCP_ERR_INVALID_MSG, "never sent", 0);
    fault("garbage", MCP_OK, "", 1);
    concurrency(32, 1000 / scale);
    printf("client_stdio: %d passed, %d failed\n", atomic_load(&g_passed), atomic_load(&g_failed));
    return atomic_load(&g_failed) ? 1 : 0;
}
