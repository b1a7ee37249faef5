/*
 * The client over Streamable HTTP (src/transport/http_client.c), against
 *   - libmcp's own HTTP server in this process (so sanitizers and valgrind
 *     see both sides): a forced 2025-11-25 session, a forced 2026-07-28
 *     client, the default dual-era probe, sessions off, the deprecated
 *     HTTP+SSE transport (asked for, and reached by fallback), progress on
 *     a call's event stream, a legacy elicitation, the GET stream, a
 *     resumed stream (Last-Event-ID), cancellation, calls from several
 *     threads, oversized answers, and a server that stops mid-call;
 *   - a scripted fake server on a raw socket, for what a well-behaved
 *     server never does: 500 with a text body, 401 with a challenge, an
 *     expired session (404), a stream cut before the answer, a legacy-only
 *     server behind the probe, and the headers the client sends.
 *
 * MCP_CLIENT_SCALE=N divides the concurrency run (for valgrind).
 */
#include "../fixture/fixture.h"

#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "http_testlib.h"


static int g_scale = 1;

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)ud;
    if (getenv("HTTP_CLIENT_DEBUG"))
        fprintf(stderr, "client log: %s\n", message);
}

static void quiet_server(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static const char *first_text(const mcp_response *r)
{
    const mcp_json *c0 = mcp_json_at(mcp_json_get(mcp_response_result(r), "content"), 0);
    const char *t = mcp_json_str(mcp_json_get(c0, "text"), NULL);
    return t ? t : "";
}

/* ---- the in-process server --------------------------------------------------------- */

static atomic_int g_waits_cancelled; /* `wait` calls that saw cancellation */

/* Returns `n` bytes of text; with "progress", a progress notification first (an event stream). */
static mcp_status big_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    size_t n = (size_t)mcp_json_int(mcp_json_get(args, "n"));
    if (mcp_json_bool(mcp_json_get(args, "progress")))
        mcp_call_progress(call, 1, 2, "half");
    char *text = malloc(n + 1);
    memset(text, 'x', n);
    text[n] = '\0';
    mcp_status st = mcp_call_text(call, text, NULL);
    free(text);
    return st;
}

/* Legacy: starts an event stream, closes it (SEP-1699), answers later on the resumed stream. */
static mcp_status hop_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    mcp_call_progress(call, 1, 2, "before the hop");
    mcp_call_close_stream(call);
    sleep_ms(300);
    mcp_call_progress(call, 2, 2, "after the hop");
    return mcp_call_text(call, "hopped", NULL);
}

/* Waits up to 10 s, noting cancellation. */
static mcp_status wait_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    for (int i = 0; i < 2000 && !mcp_call_is_cancelled(call); i++)
        sleep_ms(5);
    if (mcp_call_is_cancelled(call))
        atomic_fetch_add(&g_waits_cancelled, 1);
    return mcp_call_text(call, "waited", NULL);
}

typedef struct server {
    mcp_server *srv;
    mcp_http_server *hs;
    unsigned port;
    char url[128];
} server;

static int server_start(server *s, int sessionless, int legacy_sse, unsigned idle_ms)
{
    memset(s, 0, sizeof *s);
    mcp_server_opts o;
    fixture_opts(&o);
    o.log = quiet_server;
    mcp_error err;
    if (mcp_server_new(&s->srv, &o, &err) || fixture_register(s->srv, &err)) {
        printf("cannot create the server: %s\n", err.message);
        return -1;
    }
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "big";
    d.handler = big_tool;
    mcp_server_add_tool(s->srv, &d, NULL);
    d.name = "hop";
    d.handler = hop_tool;
    mcp_server_add_tool(s->srv, &d, NULL);
    d.name = "wait";
    d.handler = wait_tool;
    mcp_server_add_tool(s->srv, &d, NULL);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.sessionless = sessionless;
    ho.legacy_sse = legacy_sse;
    ho.retry_ms = 100;
    ho.keepalive_ms = 300;
    ho.session_idle_ms = idle_ms;
    if (mcp_http_server_start(&s->hs, s->srv, &ho, &err)) {
        printf("cannot start the HTTP server: %s\n", err.message);
        mcp_server_free(s->srv);
        return -1;
    }
    s->port = mcp_http_server_port(s->hs);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u/mcp", s->port);
    return 0;
}

static void server_stop(server *s)
{
    mcp_http_server_stop(s->hs, 1000);
    s->hs = NULL;
    mcp_server_free(s->srv);
    s->srv = NULL;
}

/* ---- connecting -------------------------------------------------------------------- */

typedef struct seen {
    atomic_int asked;         /* input callbacks */
    atomic_int list_changed;  /* notifications/tools/list_changed */
    atomic_int progress;      /* progress callbacks of the call being watched */
} seen;

/* Answers elicitation with {"action":"accept","content":{"name":"Ada"}}. */
static mcp_status answer_ada(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w, char *msg,
                             size_t cap, void *ud)
{
    (void)c;
    (void)params;
    (void)msg;
    (void)cap;
    seen *s = ud;
    atomic_fetch_add(&s->asked, 1);
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

static void on_notify(mcp_client *c, const char *method, const mcp_json *params, void *ud)
{
    (void)c;
    (void)params;
    seen *s = ud;
    if (!strcmp(method, "notifications/tools/list_changed"))
        atomic_fetch_add(&s->list_changed, 1);
}

static void on_progress(double progress, double total, const char *message, void *ud)
{
    (void)progress;
    (void)total;
    (void)message;
    seen *s = ud;
    atomic_fetch_add(&s->progress, 1);
}

/* Client options for the tests (name, a quiet log, elicitation declared). */
static void client_opts(mcp_client_opts *o, const char *version, seen *s)
{
    memset(o, 0, sizeof *o);
    o->name = "http-client-test";
    o->version = "1.0";
    o->protocol_version = version;
    o->capabilities = "{\"elicitation\":{}}";
    o->on_input = answer_ada;
    o->on_notify = on_notify;
    o->user_data = s;
    o->log = quiet;
    o->timeout_ms = 20000;
}

static mcp_status connect_url(mcp_client **c, const char *url, const char *version, seen *s, int legacy_sse,
                              mcp_error *err)
{
    mcp_client_opts o;
    client_opts(&o, version, s);
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = url;
    h.legacy_sse = legacy_sse;
    return mcp_client_connect_http(c, &o, &h, err);
}

/* ---- 1. both eras against the real server --------------------------------------- */

static void call_ok(mcp_client *c, const char *era, const char *tool, const char *args, const char *want)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &r, &err);
    CHECK(st == MCP_OK && strstr(first_text(r), want), "%s: %s -> %s (%s; %s)", era, tool, want,
          mcp_status_name(st), st ? err.message : first_text(r));
    mcp_response_free(r);
}

static void real_era(const char *version, int sessionless, int want_modern)
{
    const char *era = version ? version : "dual-era";
    char label[64];
    snprintf(label, sizeof label, "%s%s", era, sessionless ? " sessionless" : "");
    server s;
    if (server_start(&s, sessionless, 0, 0)) {
        CHECK(0, "%s: server", label);
        return;
    }
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_url(&c, s.url, version, &sn, 0, &err);
    CHECK(st == MCP_OK, "%s: connect (%s: %s)", label, mcp_status_name(st), err.message);
    if (st) {
        server_stop(&s);
        return;
    }
    CHECK(mcp_client_is_modern(c) == want_modern, "%s: era is %s", label, want_modern ? "modern" : "legacy");
    CHECK(!version || !strcmp(mcp_client_protocol_version(c), version), "%s: version %s", label,
          mcp_client_protocol_version(c));
    call_ok(c, label, "assessTypology", "{\"caseId\":\"C-7\"}", "Case C-7: typology T01");
    call_ok(c, label, "echo", "{\"a\":\"h\\u00e9llo\"}", "h\xc3\xa9llo");

    /* Progress rides on the call's own event stream. */
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = on_progress;
    ro.user_data = &sn;
    mcp_response *r = NULL;
    st = mcp_client_call_tool(c, "progress", NULL, &ro, &r, &err);
    CHECK(st == MCP_OK && !strcmp(first_text(r), "done") && atomic_load(&sn.progress) == 3,
          "%s: progress on the event stream (%s, %d progress)", label, mcp_status_name(st), atomic_load(&sn.progress));
    mcp_response_free(r);

    /* A tool failure and a protocol error travel as JSON-RPC as usual. */
    st = mcp_client_call_tool(c, "fail", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK && mcp_response_is_tool_error(r), "%s: tool failure is isError", label);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "nosuch", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_PROTOCOL && err.rpc_code == MCP_RPC_INVALID_PARAMS, "%s: unknown tool -32602 (%s %d)",
          label, mcp_status_name(st), err.rpc_code);
    mcp_response_free(r);

    /* Resources: Mcp-Name carries the URI in 2026-07-28. */
    st = mcp_client_read_resource(c, "fixture://cases/C-3", &r, &err);
    const mcp_json *contents = mcp_json_get(mcp_response_result(r), "contents");
    const char *text = mcp_json_str(mcp_json_get(mcp_json_at(contents, 0), "text"), NULL);
    CHECK(st == MCP_OK && text && strstr(text, "C-3"), "%s: resources/read (%s: %s)", label, mcp_status_name(st),
          st ? err.message : "");
    mcp_response_free(r);

    /* Elicitation: a server-to-client request on the POST's stream (legacy
     * sessions), an input_required round (2026-07-28); unavailable without
     * a session. */
    st = mcp_client_call_tool(c, "askName", NULL, NULL, &r, &err);
    if (sessionless)
        CHECK(st == MCP_OK || st == MCP_ERR_PROTOCOL, "%s: askName without a session (%s)", label,
              mcp_status_name(st));
    else
        CHECK(st == MCP_OK && !strcmp(first_text(r), "Hello, Ada!") && atomic_load(&sn.asked) == 1,
              "%s: elicitation answered (%s: %s; asked %d)", label, mcp_status_name(st),
              st ? err.message : first_text(r), atomic_load(&sn.asked));
    mcp_response_free(r);

    if (!want_modern && !sessionless) {
        /* Session traffic arrives on the standalone GET stream. */
        for (int i = 0; i < 20 && !atomic_load(&sn.list_changed); i++) {
            call_ok(c, label, "touch", NULL, "touched");
            sleep_ms(100 * (long)g_scale);
        }
        CHECK(atomic_load(&sn.list_changed) > 0, "%s: list_changed on the GET stream", label);
        /* A stream the server closes early is resumed with Last-Event-ID. */
        atomic_store(&sn.progress, 0);
        st = mcp_client_call_tool(c, "hop", NULL, &ro, &r, &err);
        CHECK(st == MCP_OK && !strcmp(first_text(r), "hopped") && atomic_load(&sn.progress) == 2,
              "%s: resumed after the server closed the stream (%s: %s; %d progress)", label, mcp_status_name(st),
              st ? err.message : first_text(r), atomic_load(&sn.progress));
        mcp_response_free(r);
        st = mcp_client_ping(c, &err);
        CHECK(st == MCP_OK, "%s: ping (%s)", label, mcp_status_name(st));
    }

    /* Cancelling a call: the server's handler sees it. */
    int before = atomic_load(&g_waits_cancelled);
    uint64_t handle = 0;
    memset(&ro, 0, sizeof ro);
    ro.handle_out = &handle;
    ro.timeout_ms = want_modern || !sessionless ? 400 : 0;
    uint64_t t0 = now_ms();
    st = mcp_client_call_tool(c, "wait", NULL, &ro, &r, &err);
    mcp_response_free(r);
    if (!sessionless) {
        CHECK(st == MCP_ERR_TIMEOUT && now_ms() - t0 < 5000, "%s: a call times out (%s)", label,
              mcp_status_name(st));
        for (int i = 0; i < 200 && atomic_load(&g_waits_cancelled) == before; i++)
            sleep_ms(10);
        CHECK(atomic_load(&g_waits_cancelled) > before, "%s: the server saw the cancellation", label);
    }
    mcp_client_close(c);
    server_stop(&s);
}

/* ---- 2. the deprecated HTTP+SSE transport --------------------------------------- */

static void http_sse(int forced)
{
    const char *label = forced ? "HTTP+SSE (legacy_sse)" : "HTTP+SSE (fallback)";
    server s;
    if (server_start(&s, 0, 1, 0)) {
        CHECK(0, "%s: server", label);
        return;
    }
    char url[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/sse", s.port);
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_url(&c, url, MCP_PROTOCOL_2024_11_05, &sn, forced, &err);
    CHECK(st == MCP_OK, "%s: connect (%s: %s)", label, mcp_status_name(st), err.message);
    if (st == MCP_OK) {
        CHECK(!strcmp(mcp_client_protocol_version(c), MCP_PROTOCOL_2024_11_05), "%s: version", label);
        call_ok(c, label, "assessTypology", "{\"caseId\":\"C-2\"}", "Case C-2");
        mcp_request_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.on_progress = on_progress;
        ro.user_data = &sn;
        mcp_response *r = NULL;
        st = mcp_client_call_tool(c, "progress", NULL, &ro, &r, &err);
        CHECK(st == MCP_OK && atomic_load(&sn.progress) == 3, "%s: progress (%s, %d)", label, mcp_status_name(st),
              atomic_load(&sn.progress));
        mcp_response_free(r);
        st = mcp_client_call_tool(c, "askName", NULL, NULL, &r, &err);
        CHECK(st == MCP_OK && !strcmp(first_text(r), "Hello, Ada!"), "%s: elicitation (%s)", label,
              mcp_status_name(st));
        mcp_response_free(r);
        mcp_client_close(c);
    }
    server_stop(&s);
}

/* ---- 3. calls from several threads ----------------------------------------------- */

typedef struct worker {
    mcp_client *c;
    int index;    /* thread number */
    int calls;    /* to make */
    int ok;       /* answered with the right text */
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < w->calls; i++) {
        char args[64], want[64];
        snprintf(args, sizeof args, "{\"t\":%d,\"i\":%d}", w->index, i);
        snprintf(want, sizeof want, "{\"t\":%d,\"i\":%d}", w->index, i);
        mcp_response *r = NULL;
        if (mcp_client_call_tool(w->c, "echo", args, NULL, &r, NULL) == MCP_OK && !strcmp(first_text(r), want))
            w->ok++;
        mcp_response_free(r);
    }
    return NULL;
}

static void concurrency(const char *version, int threads, int calls)
{
    server s;
    if (server_start(&s, 0, 0, 0)) {
        CHECK(0, "concurrency: server");
        return;
    }
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_url(&c, s.url, version, &sn, 0, &err);
    CHECK(st == MCP_OK, "concurrency %s: connect (%s)", version, err.message);
    if (st == MCP_OK) {
        pthread_t th[16];
        worker w[16];
        uint64_t t0 = now_ms();
        for (int i = 0; i < threads; i++) {
            w[i] = (worker){c, i, calls, 0};
            pthread_create(&th[i], NULL, worker_main, &w[i]);
        }
        int ok = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(th[i], NULL);
            ok += w[i].ok;
        }
        CHECK(ok == threads * calls, "concurrency %s: %d of %d calls matched", version, ok, threads * calls);
        printf("concurrency %s: %d threads x %d calls in %llu ms\n", version, threads, calls,
               (unsigned long long)(now_ms() - t0));
        mcp_client_close(c);
    }
    server_stop(&s);
}

/* ---- 4. a server that stops mid-call, oversized answers, limits ------------------ */

typedef struct pending_call {
    mcp_client *c;
    mcp_status st;
    char msg[MCP_ERROR_MESSAGE_MAX];
    uint64_t done_ms;
} pending_call;

static void *slow_call_main(void *arg)
{
    pending_call *p = arg;
    mcp_error err;
    mcp_response *r = NULL;
    p->st = mcp_client_call_tool(p->c, "slow", "{\"ms\":8000}", NULL, &r, &err);
    snprintf(p->msg, sizeof p->msg, "%s", p->st ? err.message : "");
    p->done_ms = now_ms();
    mcp_response_free(r);
    return NULL;
}

static void server_dies(const char *version)
{
    server s;
    if (server_start(&s, 0, 0, 0)) {
        CHECK(0, "server dies: server");
        return;
    }
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_url(&c, s.url, version, &sn, 0, &err);
    CHECK(st == MCP_OK, "server dies %s: connect (%s)", version, err.message);
    if (st) {
        server_stop(&s);
        return;
    }
    pending_call p[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].c = c;
        pthread_create(&th[i], NULL, slow_call_main, &p[i]);
    }
    sleep_ms(500);
    uint64_t t0 = now_ms();
    mcp_http_server_stop(s.hs, 0);
    s.hs = NULL;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        /* The stream ends (2026-07-28), or the stopping server answers 503 (legacy). */
        int how = p[i].st == MCP_ERR_CLOSED || p[i].st == MCP_ERR_IO ||
                  (p[i].st == MCP_ERR_PROTOCOL && strstr(p[i].msg, "503"));
        CHECK(how && p[i].done_ms - t0 < 4000,
              "server dies %s: the pending call fails promptly (%s after %llu ms: %s)", version,
              mcp_status_name(p[i].st), (unsigned long long)(p[i].done_ms - t0), p[i].msg);
    }
    /* Later calls fail too, at once: the stopped server's port refuses. */
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = 1500;
    mcp_response *r = NULL;
    st = mcp_client_call_tool(c, "echo", NULL, &ro, &r, &err);
    CHECK(st == MCP_ERR_IO || st == MCP_ERR_CLOSED,
          "server dies %s: a later call fails (%s: %s)", version, mcp_status_name(st), err.message);
    mcp_response_free(r);
    mcp_client_close(c);
    mcp_server_free(s.srv);
}

static void oversized(const char *version)
{
    server s;
    if (server_start(&s, 0, 0, 0)) {
        CHECK(0, "oversized: server");
        return;
    }
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client_opts o;
    client_opts(&o, version, &sn);
    o.max_message = 64 * 1024;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = s.url;
    mcp_client *c;
    mcp_error err;
    mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(st == MCP_OK, "oversized %s: connect (%s)", version, err.message);
    if (st) {
        server_stop(&s);
        return;
    }
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = on_progress;
    ro.user_data = &sn;
    mcp_response *r = NULL;
    st = mcp_client_call_tool(c, "big", "{\"n\":100000,\"progress\":true}", &ro, &r, &err);
    CHECK(st == MCP_ERR_LIMIT && strstr(err.message, "SSE") && strstr(err.message, "longer than 655"),
          "oversized %s: an SSE event over max_message fails the call (%s: %s)", version, mcp_status_name(st),
          err.message);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "big", "{\"n\":100000}", NULL, &r, &err);
    CHECK(st == MCP_ERR_LIMIT && strstr(err.message, "longer than 65536"),
          "oversized %s: a JSON body over max_message fails the call (%s: %s)", version, mcp_status_name(st),
          err.message);
    mcp_response_free(r);
    call_ok(c, version, "big", "{\"n\":60000,\"progress\":true}", "xxxx");
    call_ok(c, version, "assessTypology", "{\"caseId\":\"C-1\"}", "Case C-1");
    mcp_client_close(c);
    server_stop(&s);
}

/* An idle session expires on the server; the next call gets 404 and goes again on a new one. */
static void expired_session(void)
{
    server s;
    if (server_start(&s, 0, 0, 300)) {
        CHECK(0, "expired: server");
        return;
    }
    seen sn;
    memset(&sn, 0, sizeof sn);
    mcp_client_opts o;
    client_opts(&o, MCP_PROTOCOL_2025_11_25, &sn);
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = s.url;
    h.no_get_stream = 1; /* an open stream would keep the session busy */
    mcp_client *c;
    mcp_error err;
    mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(st == MCP_OK, "expired: connect (%s)", err.message);
    if (st) {
        server_stop(&s);
        return;
    }
    call_ok(c, "expired", "echo", "{\"x\":1}", "{\"x\":1}");
    sleep_ms(2500);
    mcp_response *r = NULL;
    st = mcp_client_call_tool(c, "echo", NULL, NULL, &r, &err);
    CHECK(st == MCP_OK, "expired: the call after expiry goes again on a new session (%s: %s)",
          mcp_status_name(st), err.message);
    mcp_response_free(r);
    call_ok(c, "expired", "echo", "{\"x\":2}", "{\"x\":2}");
    CHECK(!strcmp(mcp_client_protocol_version(c), MCP_PROTOCOL_2025_11_25), "expired: same protocol version");
    mcp_client_close(c);
    server_stop(&s);
}

/* ---- 5. a scripted fake server ------------------------------------------------------ */

typedef struct freq {
    char method[16];       /* GET, POST, DELETE */
    char path[256];
    char headers[8192];    /* the header block, CRLF-separated */
    char *body;            /* NUL-terminated */
    size_t body_len;
    char rpc_method[64];   /* the body's method, or "" */
    long long rpc_id;      /* the body's id, or -1 */
} freq;

struct fake;
/* Writes the answer to `fd`; returns 1 to keep the connection for the next request. */
typedef int (*fake_fn)(struct fake *f, int fd, const freq *r);

typedef struct fconn {
    struct fconn *next;
    struct fake *f;
    int fd;
    pthread_t th;
} fconn;

typedef struct fake {
    int lfd;
    unsigned port;
    char url[128];
    pthread_t th;
    fake_fn fn;
    pthread_mutex_t mu;
    fconn *conns;
    char log[8192];        /* "METHOD rpc_method | interesting headers" lines */
    atomic_int stop;
    atomic_int session;    /* fake_forgetful: the current session is sess-<session> */
    atomic_int forgotten;  /* fake_forgetful: it no longer knows it */
    atomic_int refuse;     /* fake_forgetful: initialize after the first answers 503 */
    atomic_int bad;        /* fake_forgetful: an initialize carried a session id */
    atomic_int calls[8];   /* fake_dropper: tools/call attempts per tool */
} fake;

/* The value of header `name` in a header block, copied; "<none>" when absent. */
static const char *hdr_or_none(const freq *r, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    snprintf(out, cap, "<none>");
    for (const char *p = r->headers; *p;) {
        const char *e = strstr(p, "\r\n");
        size_t ll = e ? (size_t)(e - p) : strlen(p);
        if (ll > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = (size_t)(p + ll - v);
            if (vl >= cap)
                vl = cap - 1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return out;
        }
        p += ll + (e ? 2 : 0);
        if (!e)
            break;
    }
    return out;
}

/* The same, "" when absent. */
static const char *hdr(const freq *r, const char *name, char *out, size_t cap)
{
    hdr_or_none(r, name, out, cap);
    if (!strcmp(out, "<none>"))
        out[0] = '\0';
    return out;
}

static void fake_log(fake *f, const freq *r)
{
    char sid[128], ver[64], meth[64], name[128], auth[128], last[64], region[64];
    hdr(r, "Mcp-Session-Id", sid, sizeof sid);
    hdr(r, "MCP-Protocol-Version", ver, sizeof ver);
    hdr(r, "Mcp-Method", meth, sizeof meth);
    hdr(r, "Mcp-Name", name, sizeof name);
    hdr(r, "Authorization", auth, sizeof auth);
    hdr(r, "Last-Event-ID", last, sizeof last);
    hdr_or_none(r, "Mcp-Param-Region", region, sizeof region);
    pthread_mutex_lock(&f->mu);
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof f->log - n, "%s %s |sid=%s|ver=%s|method=%s|name=%s|auth=%s|last=%s|region=%s\n",
             r->method, r->rpc_method, sid, ver, meth, name, auth, last, region);
    pthread_mutex_unlock(&f->mu);
}

static int count_log(fake *f, const char *needle)
{
    pthread_mutex_lock(&f->mu);
    int n = 0;
    for (const char *p = f->log; (p = strstr(p, needle)) != NULL; p++)
        n++;
    pthread_mutex_unlock(&f->mu);
    return n;
}

static int has_log(fake *f, const char *needle)
{
    pthread_mutex_lock(&f->mu);
    int yes = strstr(f->log, needle) != NULL;
    pthread_mutex_unlock(&f->mu);
    return yes;
}

static void send_str(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void reply(int fd, int status, const char *type, const char *extra, const char *body)
{
    char head[1024];
    snprintf(head, sizeof head, "HTTP/1.1 %d X\r\n%s%s%sContent-Length: %zu\r\n\r\n", status,
             type ? "Content-Type: " : "", type ? type : "", type ? "\r\n" : "", strlen(body));
    char *all = malloc(strlen(head) + strlen(extra ? extra : "") + strlen(body) + 1);
    /* The extra headers go before the blank line. */
    size_t hl = strlen(head) - 2;
    memcpy(all, head, hl);
    strcpy(all + hl, extra ? extra : "");
    strcat(all, "\r\n");
    strcat(all, body);
    send_str(fd, all);
    free(all);
}

static void reply_result(int fd, const freq *r, const char *extra, const char *result)
{
    char body[2048];
    snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}", r->rpc_id, result);
    reply(fd, 200, "application/json", extra, body);
}

/* Reads one request; 0 at end of connection. */
static int read_request(int fd, freq *r, char *buf, size_t cap)
{
    size_t len = 0;
    char *end = NULL;
    while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
        if (len + 1 >= cap)
            return 0;
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n <= 0)
            return 0;
        len += (size_t)n;
    }
    memset(r, 0, sizeof *r);
    size_t hl = (size_t)(end - buf) + 4;
    sscanf(buf, "%15s %255s", r->method, r->path);
    const char *eol = strstr(buf, "\r\n");
    size_t bl = (size_t)(end - eol);
    if (bl >= sizeof r->headers)
        bl = sizeof r->headers - 1;
    memcpy(r->headers, eol + 2, bl);
    char cl[32];
    size_t want = (size_t)strtoul(hdr(r, "Content-Length", cl, sizeof cl), NULL, 10);
    r->body = malloc(want + 1);
    size_t have = len - hl < want ? len - hl : want;
    memcpy(r->body, buf + hl, have);
    while (have < want) {
        ssize_t n = recv(fd, r->body + have, want - have, 0);
        if (n <= 0) {
            free(r->body);
            return 0;
        }
        have += (size_t)n;
    }
    r->body[want] = '\0';
    r->body_len = want;
    r->rpc_id = -1;
    mcp_json_doc *d;
    if (want && mcp_json_parse(&d, r->body, want, NULL, NULL) == MCP_OK) {
        const mcp_json *root = mcp_json_doc_root(d);
        const char *m = mcp_json_str(mcp_json_get(root, "method"), NULL);
        snprintf(r->rpc_method, sizeof r->rpc_method, "%s", m ? m : "");
        if (mcp_json_typeof(mcp_json_get(root, "id")) == MCP_JSON_INT)
            r->rpc_id = (long long)mcp_json_int(mcp_json_get(root, "id"));
        mcp_json_doc_free(d);
    }
    return 1;
}

static void *fake_conn_main(void *arg)
{
    fconn *fc = arg;
    char *buf = malloc(65536);
    freq r;
    while (!atomic_load(&fc->f->stop) && read_request(fc->fd, &r, buf, 65536)) {
        fake_log(fc->f, &r);
        int keep = fc->f->fn(fc->f, fc->fd, &r);
        free(r.body);
        if (!keep)
            break;
    }
    shutdown(fc->fd, SHUT_RDWR);
    free(buf);
    return NULL;
}

static void *fake_accept_main(void *arg)
{
    fake *f = arg;
    for (;;) {
        int fd = accept(f->lfd, NULL, NULL);
        if (fd < 0 || atomic_load(&f->stop)) {
            if (fd >= 0)
                close(fd);
            break;
        }
        fconn *fc = calloc(1, sizeof *fc);
        fc->f = f;
        fc->fd = fd;
        pthread_mutex_lock(&f->mu);
        fc->next = f->conns;
        f->conns = fc;
        pthread_mutex_unlock(&f->mu);
        pthread_create(&fc->th, NULL, fake_conn_main, fc);
    }
    return NULL;
}

static int fake_start(fake *f, fake_fn fn)
{
    memset(f, 0, sizeof *f);
    f->fn = fn;
    pthread_mutex_init(&f->mu, NULL);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(f->lfd, (struct sockaddr *)&a, sizeof a) || listen(f->lfd, 64) ||
        getsockname(f->lfd, (struct sockaddr *)&a, &al))
        return -1;
    f->port = ntohs(a.sin_port);
    snprintf(f->url, sizeof f->url, "http://127.0.0.1:%u/mcp", f->port);
    pthread_create(&f->th, NULL, fake_accept_main, f);
    return 0;
}

static void fake_stop(fake *f)
{
    atomic_store(&f->stop, 1);
    shutdown(f->lfd, SHUT_RDWR);
    pthread_join(f->th, NULL);
    close(f->lfd);
    while (f->conns) {
        fconn *fc = f->conns;
        f->conns = fc->next;
        shutdown(fc->fd, SHUT_RDWR);
        pthread_join(fc->th, NULL);
        close(fc->fd);
        free(fc);
    }
}

/* After the checks of its log. */
static void fake_free(fake *f)
{
    pthread_mutex_destroy(&f->mu);
}

static const char INIT_RESULT[] = "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                                  "\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"}}";
static const char TEXT_RESULT[] = "{\"content\":[{\"type\":\"text\",\"text\":\"fake says hi\"}]}";

/* A legacy server with sessions; tools/call "fire" -> 500, "gone" -> 404. */
static int fake_legacy(fake *f, int fd, const freq *r)
{
    (void)f;
    if (!strcmp(r->method, "GET")) {
        reply(fd, 405, "text/plain", NULL, "no GET stream here");
        return 1;
    }
    if (!strcmp(r->method, "DELETE")) {
        reply(fd, 200, NULL, NULL, "");
        return 1;
    }
    if (!strcmp(r->rpc_method, "server/discover")) {
        /* What a legacy-only server says to a modern request. */
        reply(fd, 400, "text/plain", NULL, "Bad Request: Mcp-Session-Id header is required");
        return 1;
    }
    if (!strcmp(r->rpc_method, "initialize")) {
        reply_result(fd, r, "Mcp-Session-Id: sess-42\r\n", INIT_RESULT);
        return 1;
    }
    if (r->rpc_id < 0) {
        reply(fd, 202, NULL, NULL, "");
        return 1;
    }
    if (strstr(r->body, "\"fire\"")) {
        reply(fd, 500, "text/html", NULL, "<html>database on fire</html>");
        return 1;
    }
    if (strstr(r->body, "\"gone\"")) {
        reply(fd, 404, "text/plain", NULL, "Not Found: unknown session");
        return 1;
    }
    if (strstr(r->body, "\"cut\"")) {
        /* An event stream that ends before the answer, without event ids. */
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                     ": hello\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                     "\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n");
        return 0;
    }
    reply_result(fd, r, NULL, TEXT_RESULT);
    return 1;
}

/*
 * A legacy server that forgets its session on request: initialize hands out
 * sess-1, sess-2, ...; a request with any other id, or after tools/call
 * "forget" was answered, gets 404.
 */
static int fake_forgetful(fake *f, int fd, const freq *r)
{
    char sid[128], cur[32];
    hdr(r, "Mcp-Session-Id", sid, sizeof sid);
    snprintf(cur, sizeof cur, "sess-%d", atomic_load(&f->session));
    if (!strcmp(r->method, "GET")) {
        reply(fd, 405, "text/plain", NULL, "no GET stream here");
        return 1;
    }
    if (!strcmp(r->method, "DELETE")) {
        reply(fd, 200, NULL, NULL, "");
        return 1;
    }
    if (!strcmp(r->rpc_method, "server/discover")) {
        reply(fd, 400, "text/plain", NULL, "Bad Request: Mcp-Session-Id header is required");
        return 1;
    }
    if (!strcmp(r->rpc_method, "initialize")) {
        if (sid[0])
            atomic_fetch_add(&f->bad, 1);
        if (atomic_load(&f->session) > 0 && atomic_load(&f->refuse)) {
            reply(fd, 503, "text/plain", NULL, "Service Unavailable: no new sessions");
            return 1;
        }
        char extra[64];
        snprintf(extra, sizeof extra, "Mcp-Session-Id: sess-%d\r\n", atomic_fetch_add(&f->session, 1) + 1);
        atomic_store(&f->forgotten, 0);
        reply_result(fd, r, extra, INIT_RESULT);
        return 1;
    }
    if (strcmp(sid, cur) != 0 || atomic_load(&f->forgotten)) {
        reply(fd, 404, "text/plain", NULL, "Not Found: unknown session");
        return 1;
    }
    if (r->rpc_id < 0) {
        reply(fd, 202, NULL, NULL, "");
        return 1;
    }
    if (strstr(r->body, "\"forget\""))
        atomic_store(&f->forgotten, 1);
    reply_result(fd, r, NULL, TEXT_RESULT);
    return 1;
}

typedef struct hello_call {
    mcp_client *c;
    mcp_status st;
    char msg[MCP_ERROR_MESSAGE_MAX];
} hello_call;

static void *hello_main(void *arg)
{
    hello_call *h = arg;
    mcp_response *r = NULL;
    mcp_error err;
    mcp_error_clear(&err);
    h->st = mcp_client_call_tool(h->c, "hello", NULL, NULL, &r, &err);
    if (h->st == MCP_OK && !strstr(r ? (const char *)mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(
                                                mcp_response_result(r), "content"), 0), "text"), NULL) : "",
                                   "fake says hi"))
        h->st = MCP_ERR_PROTOCOL;
    snprintf(h->msg, sizeof h->msg, "%s", err.message);
    mcp_response_free(r);
    return NULL;
}

/* The session is forgotten: every call in flight goes again on one new session. */
static void forgetful_tests(void)
{
    fake f;
    mcp_client *c;
    mcp_error err;
    mcp_response *r = NULL;
    seen sn;
    memset(&sn, 0, sizeof sn);
    if (fake_start(&f, fake_forgetful) == 0) {
        mcp_status st = connect_url(&c, f.url, NULL, &sn, 0, &err);
        CHECK(st == MCP_OK, "forgetful: connect (%s: %s)", mcp_status_name(st), err.message);
        if (st == MCP_OK) {
            call_ok(c, "forgetful", "hello", NULL, "fake says hi");
            call_ok(c, "forgetful", "forget", NULL, "fake says hi");
            enum { N = 8 };
            hello_call h[N];
            pthread_t th[N];
            for (int i = 0; i < N; i++) {
                memset(&h[i], 0, sizeof h[i]);
                h[i].c = c;
                pthread_create(&th[i], NULL, hello_main, &h[i]);
            }
            int ok = 0;
            for (int i = 0; i < N; i++) {
                pthread_join(th[i], NULL);
                ok += h[i].st == MCP_OK;
                if (h[i].st != MCP_OK)
                    fprintf(stderr, "  call %d: %s: %s\n", i, mcp_status_name(h[i].st), h[i].msg);
            }
            CHECK(ok == N, "forgetful: %d concurrent calls after the server forgot the session all answered (%d)",
                  N, ok);
            call_ok(c, "forgetful", "hello", NULL, "fake says hi");
            mcp_client_close(c);
        }
        fake_stop(&f);
        CHECK(count_log(&f, "POST initialize |sid=|") == 2, "forgetful: one new initialize for all of them:\n%s",
              f.log);
        CHECK(atomic_load(&f.bad) == 0, "forgetful: initialize never carries the old session id");
        CHECK(has_log(&f, "POST notifications/initialized |sid=sess-2|ver=2025-11-25|"),
              "forgetful: the new session is initialized");
        CHECK(count_log(&f, "POST tools/call |sid=sess-2|") >= 9, "forgetful: the calls went again on sess-2");
        CHECK(has_log(&f, "DELETE  |sid=sess-2|"), "forgetful: close ends the new session");
        fake_free(&f);
    }

    /* The server forgets and will not start another session: the call fails, clearly. */
    if (fake_start(&f, fake_forgetful) == 0) {
        atomic_store(&f.refuse, 1);
        mcp_status st = connect_url(&c, f.url, MCP_PROTOCOL_2025_11_25, &sn, 0, &err);
        CHECK(st == MCP_OK, "forgetful 2: connect (%s: %s)", mcp_status_name(st), err.message);
        if (st == MCP_OK) {
            call_ok(c, "forgetful 2", "forget", NULL, "fake says hi");
            st = mcp_client_call_tool(c, "hello", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_CLOSED && strstr(err.message, "404") && strstr(err.message, "503"),
                  "forgetful 2: no new session: the call fails with both statuses (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            atomic_store(&f.refuse, 0);
            call_ok(c, "forgetful 2", "hello", NULL, "fake says hi");
            mcp_client_close(c);
        }
        fake_stop(&f);
        CHECK(has_log(&f, "POST tools/call |sid=sess-2|ver=2025-11-25|"),
              "forgetful 2: once the server takes sessions again, the next call starts one:\n%s", f.log);
        fake_free(&f);
    }
}

/* A 2026-07-28 server; tools/call "cut" ends its stream before answering. */
static int fake_modern(fake *f, int fd, const freq *r)
{
    (void)f;
    if (!strcmp(r->rpc_method, "server/discover")) {
        reply_result(fd, r, NULL,
                     "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
                     "\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"},\"resultType\":\"complete\"}");
        return 1;
    }
    if (!strcmp(r->rpc_method, "tools/list")) {
        reply_result(fd, r, NULL,
                     "{\"tools\":[{\"name\":\"geo\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
                     "{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"}}}}],"
                     "\"resultType\":\"complete\",\"ttlMs\":0}");
        return 1;
    }
    if (strstr(r->body, "\"cut\"")) {
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                     "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                     "{\"progressToken\":\"x\",\"progress\":1}}\n\n");
        return 0;
    }
    if (strstr(r->body, "\"unauth\"")) {
        reply(fd, 403, "application/json",
              "WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"cases:write\"\r\n",
              "{\"error\":\"insufficient_scope\"}");
        return 1;
    }
    if (strstr(r->body, "\"wrongid\"")) {
        /* A JSON-RPC error that answers nobody: not a frame for the core. */
        reply(fd, 400, "application/json", NULL,
              "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bad thing\"}}");
        return 1;
    }
    reply_result(fd, r, NULL, "{\"content\":[{\"type\":\"text\",\"text\":\"modern hi\"}],\"resultType\":\"complete\"}");
    return 1;
}

/*
 * A 2026-07-28 server that loses answers, as one behind a proxy does when
 * it dies mid-call. Tools (index into f->calls): 0 "look" (read-only) and
 * 1 "write" (not read-only, though idempotent) drop the connection without
 * a word on their first attempt; 2 "look502" gets a proxy's 502 first; 3
 * "lookcut" a stream cut before the answer first; 4 "lookdead" (read-only)
 * and 5 "writedead" are never answered.
 */
static const char *const DROPPER_TOOLS[] = {"look", "write", "look502", "lookcut", "lookdead", "writedead", NULL};

static int fake_dropper(fake *f, int fd, const freq *r)
{
    if (!strcmp(r->rpc_method, "server/discover"))
        return fake_modern(f, fd, r);
    if (!strcmp(r->rpc_method, "tools/list")) {
        reply_result(fd, r, NULL,
                     "{\"tools\":["
                     "{\"name\":\"look\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true}},"
                     "{\"name\":\"write\",\"inputSchema\":{\"type\":\"object\"},"
                     "\"annotations\":{\"readOnlyHint\":false,\"idempotentHint\":true}},"
                     "{\"name\":\"look502\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true}},"
                     "{\"name\":\"lookcut\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true}},"
                     "{\"name\":\"lookdead\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true}},"
                     "{\"name\":\"writedead\",\"inputSchema\":{\"type\":\"object\"}}],"
                     "\"resultType\":\"complete\",\"ttlMs\":0}");
        return 1;
    }
    char name[64];
    hdr(r, "Mcp-Name", name, sizeof name);
    int t = -1;
    for (int i = 0; DROPPER_TOOLS[i]; i++)
        if (!strcmp(name, DROPPER_TOOLS[i]))
            t = i;
    int n = t >= 0 ? atomic_fetch_add(&f->calls[t], 1) : 0;
    if (t == 4 || t == 5 || ((t == 0 || t == 1) && n == 0))
        return 0; /* the connection closes: no status line at all */
    if (t == 2 && n == 0) {
        reply(fd, 502, "text/html", "Connection: close\r\n", "<html><body><h1>502 Bad Gateway</h1></body></html>");
        return 0;
    }
    if (t == 3 && n == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: working\n\n");
        return 0;
    }
    reply_result(fd, r, NULL, "{\"content\":[{\"type\":\"text\",\"text\":\"modern hi\"}],\"resultType\":\"complete\"}");
    return 1;
}

/*
 * Retries (docs/client.md, "Retries"): a call lost without an answer is
 * sent again only for a tool listed as read-only, a bounded number of
 * times; anything else fails saying it may have run.
 */
static void retry_tests(int retries)
{
    fake f;
    if (fake_start(&f, fake_dropper) != 0)
        return;
    mcp_client_opts o;
    client_opts(&o, NULL, NULL);
    o.read_only_retries = retries;
    o.retry_backoff_ms = 20;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = f.url;
    mcp_client *c;
    mcp_error err;
    mcp_response *r = NULL;
    mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(st == MCP_OK && mcp_client_is_modern(c), "dropper: connect (%s: %s)", mcp_status_name(st), err.message);
    if (st != MCP_OK) {
        fake_stop(&f);
        fake_free(&f);
        return;
    }
    /* Before tools/list the client knows no annotations: nothing is sent twice. */
    st = mcp_client_call_tool(c, "look", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_IO && strstr(err.message, "not listed as read-only"),
          "dropper: an unlisted tool is not sent again (%s: %s)", mcp_status_name(st), err.message);
    mcp_response_free(r);
    atomic_store(&f.calls[0], 0);
    st = mcp_client_list_tools(c, &r, &err);
    CHECK(st == MCP_OK, "dropper: tools/list (%s)", err.message);
    mcp_response_free(r);
    int again = retries >= 0;
    const char *ok_tools[] = {"look", "look502", "lookcut"};
    for (int i = 0; i < 3; i++) {
        st = mcp_client_call_tool(c, ok_tools[i], NULL, NULL, &r, &err);
        if (again)
            CHECK(st == MCP_OK && r && !strcmp(first_text(r), "modern hi"),
                  "dropper: read-only %s answered on its second attempt (%s: %s)", ok_tools[i], mcp_status_name(st),
                  err.message);
        else
            CHECK(st != MCP_OK && strstr(err.message, "sent 1 time"),
                  "dropper: with retries off, %s fails at once (%s: %s)", ok_tools[i], mcp_status_name(st),
                  err.message);
        mcp_response_free(r);
    }
    st = mcp_client_call_tool(c, "write", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_IO && strstr(err.message, "not sent again") && strstr(err.message, "may have run"),
          "dropper: a tool that is not read-only is never sent again (%s: %s)", mcp_status_name(st), err.message);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "writedead", NULL, NULL, &r, &err);
    CHECK(st == MCP_ERR_IO && strstr(err.message, "may have run"),
          "dropper: nor one without annotations (%s: %s)", mcp_status_name(st), err.message);
    mcp_response_free(r);
    st = mcp_client_call_tool(c, "lookdead", NULL, NULL, &r, &err);
    char want[32];
    snprintf(want, sizeof want, "sent %d time", again ? (retries ? retries : 2) + 1 : 1);
    CHECK(st == MCP_ERR_IO && strstr(err.message, want), "dropper: a read-only call never answered gives up (%s: %s)",
          mcp_status_name(st), err.message);
    mcp_response_free(r);
    /* A short time limit leaves no room for the wait. */
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = 1;
    int before = atomic_load(&f.calls[4]);
    st = mcp_client_call_tool(c, "lookdead", NULL, &ro, &r, &err);
    CHECK(st != MCP_OK && atomic_load(&f.calls[4]) - before <= 1, "dropper: no retry past the time limit (%s: %s)",
          mcp_status_name(st), err.message);
    mcp_response_free(r);
    mcp_client_close(c);
    fake_stop(&f);
    int expect_look = again ? 2 : 1;
    CHECK(atomic_load(&f.calls[0]) == expect_look && atomic_load(&f.calls[2]) == expect_look &&
              atomic_load(&f.calls[3]) == expect_look,
          "dropper: attempts of the read-only tools: %d %d %d, expected %d", atomic_load(&f.calls[0]),
          atomic_load(&f.calls[2]), atomic_load(&f.calls[3]), expect_look);
    CHECK(atomic_load(&f.calls[1]) == 1 && atomic_load(&f.calls[5]) == 1,
          "dropper: the others ran at most once: write %d, writedead %d", atomic_load(&f.calls[1]),
          atomic_load(&f.calls[5]));
    fake_free(&f);
}

/* Everything is 401 with a challenge. */
static int fake_401(fake *f, int fd, const freq *r)
{
    (void)f;
    (void)r;
    reply(fd, 401, "text/plain",
          "WWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"\r\n",
          "Unauthorized");
    return 1;
}

static void fake_tests(void)
{
    fake f;
    mcp_client *c;
    mcp_error err;
    mcp_response *r = NULL;
    seen sn;
    memset(&sn, 0, sizeof sn);

    /* Legacy: the session id travels; the probe falls back; DELETE on close. */
    if (fake_start(&f, fake_legacy) == 0) {
        mcp_status st = connect_url(&c, f.url, NULL, &sn, 0, &err);
        CHECK(st == MCP_OK && !mcp_client_is_modern(c), "fake legacy: the dual-era probe falls back (%s: %s)",
              mcp_status_name(st), err.message);
        if (st == MCP_OK) {
            call_ok(c, "fake legacy", "hello", NULL, "fake says hi");
            st = mcp_client_call_tool(c, "fire", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_PROTOCOL && strstr(err.message, "500") && strstr(err.message, "database on fire"),
                  "fake legacy: a text 500 fails the call with the status (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            st = mcp_client_call_tool(c, "cut", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_CLOSED && strstr(err.message, "stream ended before the response"),
                  "fake legacy: a stream without ids cut before the answer (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            call_ok(c, "fake legacy", "hello", NULL, "fake says hi");
            st = mcp_client_call_tool(c, "gone", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_CLOSED && strstr(err.message, "404") && strstr(err.message, "session") &&
                      strstr(err.message, "after 2 new sessions"),
                  "fake legacy: a request the server keeps refusing with 404 fails after two new sessions "
                  "(%s: %s)", mcp_status_name(st), err.message);
            mcp_response_free(r);
            call_ok(c, "fake legacy", "hello", NULL, "fake says hi");
            mcp_client_close(c);
        }
        fake_stop(&f);
        CHECK(has_log(&f, "POST initialize |sid=|ver=|"), "fake legacy: initialize without a session:\n%s", f.log);
        CHECK(has_log(&f, "POST notifications/initialized |sid=sess-42|ver=2025-11-25|"),
              "fake legacy: initialized carries the session and version");
        CHECK(has_log(&f, "POST tools/call |sid=sess-42|ver=2025-11-25|method=|name=|"),
              "fake legacy: calls carry the session, not Mcp-Method");
        CHECK(has_log(&f, "GET  |sid=sess-42|ver=2025-11-25"), "fake legacy: the GET stream was tried");
        CHECK(has_log(&f, "POST server/discover |sid=|ver=2026-07-28|method=server/discover|"),
              "fake legacy: the probe is a modern request");
        CHECK(count_log(&f, "POST initialize |sid=|") == 3, "fake legacy: 404 to a session request: new sessions");
        CHECK(has_log(&f, "DELETE  |sid=sess-42|"), "fake legacy: the last session is ended on close");
        fake_free(&f);
    }

    /* Legacy again, closing normally: DELETE ends the session. */
    if (fake_start(&f, fake_legacy) == 0) {
        mcp_status st = connect_url(&c, f.url, MCP_PROTOCOL_2025_11_25, &sn, 0, &err);
        CHECK(st == MCP_OK, "fake legacy 2: connect (%s)", err.message);
        if (st == MCP_OK)
            mcp_client_close(c);
        fake_stop(&f);
        CHECK(has_log(&f, "DELETE  |sid=sess-42|"), "fake legacy 2: DELETE on close:\n%s", f.log);
        CHECK(!has_log(&f, "server/discover"), "fake legacy 2: a forced version does not probe");
        fake_free(&f);
    }

    /* Modern: headers, a cut stream, 403, an error answering nobody. */
    if (fake_start(&f, fake_modern) == 0) {
        mcp_status st = connect_url(&c, f.url, NULL, &sn, 0, &err);
        CHECK(st == MCP_OK && mcp_client_is_modern(c), "fake modern: connect (%s: %s)", mcp_status_name(st),
              err.message);
        if (st == MCP_OK) {
            call_ok(c, "fake modern", "h\xc3\xa9llo", NULL, "modern hi");
            call_ok(c, "fake modern", "plain_name", NULL, "modern hi");
            st = mcp_client_call_tool(c, "cut", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_CLOSED && strstr(err.message, "stream ended before the response"),
                  "fake modern: a stream cut before the answer is not resumed (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            st = mcp_client_call_tool(c, "unauth", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_AUTH && strstr(err.message, "403") && strstr(err.message, "insufficient_scope"),
                  "fake modern: 403 is MCP_ERR_AUTH with the challenge (%s: %s)", mcp_status_name(st), err.message);
            mcp_response_free(r);
            st = mcp_client_call_tool(c, "wrongid", NULL, NULL, &r, &err);
            CHECK(st == MCP_ERR_PROTOCOL && strstr(err.message, "400") && strstr(err.message, "bad thing"),
                  "fake modern: an error answering id null fails the call (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            call_ok(c, "fake modern", "plain_name", NULL, "modern hi");
            /* x-mcp-header arguments: plain, encoded by the core, empty but present. */
            st = mcp_client_list_tools(c, &r, &err);
            CHECK(st == MCP_OK, "fake modern: tools/list (%s: %s)", mcp_status_name(st), err.message);
            mcp_response_free(r);
            call_ok(c, "fake modern", "geo", "{\"region\":\"eu west\"}", "modern hi");
            call_ok(c, "fake modern", "geo", "{\"region\":\"\u00e9\"}", "modern hi");
            call_ok(c, "fake modern", "geo", "{\"region\":\"\"}", "modern hi");
            call_ok(c, "fake modern", "geo", "{}", "modern hi");
            mcp_client_close(c);
        }
        fake_stop(&f);
        CHECK(has_log(&f, "|name=geo|auth=|last=|region=eu west\n"), "fake modern: a plain Mcp-Param-Region");
        CHECK(has_log(&f, "|name=geo|auth=|last=|region==?base64?w6k=?=\n"), "fake modern: an encoded Mcp-Param");
        CHECK(has_log(&f, "|name=geo|auth=|last=|region=\n"), "fake modern: an empty Mcp-Param is sent");
        CHECK(has_log(&f, "|name=geo|auth=|last=|region=<none>\n"), "fake modern: an absent argument, no header");
        CHECK(has_log(&f, "POST tools/call |sid=|ver=2026-07-28|method=tools/call|name==?base64?aMOpbGxv?=|"),
              "fake modern: a non-ASCII Mcp-Name is Base64-encoded:\n%s", f.log);
        CHECK(has_log(&f, "|method=tools/call|name=plain_name|"), "fake modern: a plain Mcp-Name");
        CHECK(!has_log(&f, "GET") && !has_log(&f, "DELETE"), "fake modern: no GET stream, no DELETE");
        fake_free(&f);
    }

    /* 401: connecting fails with the challenge; the token is sent, never shown. */
    if (fake_start(&f, fake_401) == 0) {
        mcp_client_opts o;
        client_opts(&o, NULL, &sn);
        mcp_http_client_opts h;
        memset(&h, 0, sizeof h);
        h.url = f.url;
        h.bearer_token = "s3cr3t-token";
        const char *extra[] = {"X-Trace: 42", NULL};
        h.headers = extra;
        mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
        CHECK(st == MCP_ERR_AUTH && strstr(err.message, "resource_metadata") && !strstr(err.message, "s3cr3t"),
              "fake 401: connect fails with MCP_ERR_AUTH and the challenge (%s: %s)", mcp_status_name(st),
              err.message);
        if (st == MCP_OK)
            mcp_client_close(c);
        fake_stop(&f);
        CHECK(has_log(&f, "auth=Bearer s3cr3t-token"), "fake 401: the bearer token was sent:\n%s", f.log);
        fake_free(&f);
    }
}

/* ---- 6. options and connection failures --------------------------------------- */

static void bad_options(void)
{
    mcp_client *c = NULL;
    mcp_error err;
    mcp_client_opts o;
    client_opts(&o, NULL, NULL);
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "no url: %s", err.message);
    CHECK(mcp_client_connect_http(&c, &o, NULL, &err) == MCP_ERR_INVALID_ARG, "no http options");
    h.url = "ftp://127.0.0.1/mcp";
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "ftp url: %s", err.message);
    h.url = "http://";
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "no host: %s", err.message);
    h.url = "http://127.0.0.1:1/mcp";
    const char *bad[] = {"X-Evil: a\r\nHost: b", NULL};
    h.headers = bad;
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "header injection: %s", err.message);
    const char *noname[] = {": value", NULL};
    h.headers = noname;
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "header without a name");
    h.headers = NULL;
    h.bearer_token = "a b\n";
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG, "token with a newline");
    /* A bearer token never crosses the network in clear text: plain http://
     * is for loopback only unless the caller opts in (OAuth 2.1, 1.5). The
     * refusal comes before any connection is tried. 0.0.0.0 is not a
     * loopback name, yet were the check to regress, the connection attempt
     * would still stay on this machine. */
    h.bearer_token = "s3cr3t-token";
    h.url = "http://0.0.0.0:1/mcp";
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_INVALID_ARG &&
              strstr(err.message, "https") && !strstr(err.message, "s3cr3t"),
          "token over http:// off loopback refused: %s", err.message);
    h.allow_insecure_bearer = 1;
    mcp_status ist = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(ist == MCP_ERR_IO, "opted in: the token may go, the connection is tried: %s", mcp_status_name(ist));
    h.allow_insecure_bearer = 0;
    h.url = "http://127.0.0.1:1/mcp";
    h.bearer_token = NULL;
    o.protocol_version = "1999-01-01";
    CHECK(mcp_client_connect_http(&c, &o, &h, &err) == MCP_ERR_UNSUPPORTED, "unknown version: %s", err.message);
    CHECK(c == NULL, "failed connects leave *out alone");

    /* Nothing listens: a network error, quickly, for every era. */
    const char *versions[] = {NULL, MCP_PROTOCOL_2025_11_25, MCP_PROTOCOL_2026_07_28};
    for (int i = 0; i < 3; i++) {
        client_opts(&o, versions[i], NULL);
        uint64_t t0 = now_ms();
        mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
        CHECK(st == MCP_ERR_IO && now_ms() - t0 < 3000, "closed port (%s): %s: %s",
              versions[i] ? versions[i] : "dual", mcp_status_name(st), err.message);
    }
    o.protocol_version = NULL;
    h.legacy_sse = 1;
    mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(st == MCP_ERR_IO, "closed port (HTTP+SSE): %s: %s", mcp_status_name(st), err.message);
}

int main(void)
{
    const char *scale = getenv("MCP_CLIENT_SCALE");
    if (scale && atoi(scale) > 1)
        g_scale = atoi(scale);
    bad_options();
    real_era(MCP_PROTOCOL_2025_11_25, 0, 0);
    real_era(MCP_PROTOCOL_2026_07_28, 0, 1);
    real_era(NULL, 0, 1);
    real_era(MCP_PROTOCOL_2025_06_18, 1, 0);
    http_sse(1);
    http_sse(0);
    int threads = 8, calls = 200 / g_scale > 5 ? 200 / g_scale : 5;
    concurrency(MCP_PROTOCOL_2025_11_25, threads, calls);
    concurrency(MCP_PROTOCOL_2026_07_28, threads, calls);
    server_dies(MCP_PROTOCOL_2026_07_28);
    server_dies(MCP_PROTOCOL_2025_11_25);
    oversized(MCP_PROTOCOL_2025_11_25);
    oversized(MCP_PROTOCOL_2026_07_28);
    expired_session();
    forgetful_tests();
    fake_tests();
    retry_tests(0);
    retry_tests(-1);
    retry_tests(1);
    return check_summary("http_client");
}
