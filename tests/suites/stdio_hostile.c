/*
 * Hostile input over a real stdio pipe. Spawns the fixture server
 * (mcp-test-server), feeds it garbage bytes, half frames, a 10 MiB frame,
 * 10,000-deep nesting, invalid UTF-8, a wrong type in every field of every
 * message, duplicate ids and responses to nothing, each followed by a
 * valid call; then closes its input with a call in flight. Every valid
 * call must be answered correctly, every bad frame with its code, and the
 * server must exit 0. A second run closes the server's output early: it
 * must not die of SIGPIPE.
 *
 * usage: stdio_hostile SERVER [WRAPPER...]
 *   WRAPPER, when given (e.g. valgrind and its options), runs the server.
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

static void put(piped *c, const char *s, size_t n)
{
    write_all(c->in, s, n);
}

static void put_str(piped *c, const char *s)
{
    put(c, s, strlen(s));
}

static void puts_line(piped *c, const char *s)
{
    put(c, s, strlen(s));
    put(c, "\n", 1);
}

/* Reads the server's output into a buffer until EOF (on a thread). */
typedef struct reader {
    int fd;       /* the server's stdout */
    mcp_buf buf;  /* everything it wrote */
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(r->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        mcp_buf_append(&r->buf, chunk, (size_t)n);
    }
    return NULL;
}

/* The answers, parsed: by id (integers only here) and the id-null errors. */
typedef struct answers {
    mcp_json_doc *docs[4096]; /* every frame */
    size_t n;                 /* how many */
} answers;

static const mcp_json *by_id(answers *a, long id)
{
    for (size_t i = 0; i < a->n; i++) {
        const mcp_json *r = mcp_json_doc_root(a->docs[i]);
        const mcp_json *v = mcp_json_get(r, "id");
        if (mcp_json_typeof(v) == MCP_JSON_INT && mcp_json_int(v) == id)
            return r;
    }
    return NULL;
}

static long code_of(const mcp_json *r)
{
    return (long)mcp_json_int(mcp_json_get(mcp_json_get(r, "error"), "code"));
}

static int null_errors(answers *a, long code)
{
    int n = 0;
    for (size_t i = 0; i < a->n; i++) {
        const mcp_json *r = mcp_json_doc_root(a->docs[i]);
        if (mcp_json_typeof(mcp_json_get(r, "id")) == MCP_JSON_NULL && code_of(r) == code)
            n++;
    }
    return n;
}

static long g_next = 1000;

/* A valid call whose answer is checked later: echo {"n": id}. */
static long valid(piped *c)
{
    char line[200];
    long id = g_next++;
    snprintf(line, sizeof line,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
             "\"arguments\":{\"n\":%ld}}}",
             id, id);
    puts_line(c, line);
    return id;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: stdio_hostile SERVER [WRAPPER...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    char *args[64];
    server_args(args, 64, argc, argv, NULL);

    piped c;
    if (piped_start(&c, args)) {
        printf("cannot start %s\n", argv[1]);
        return 2;
    }
    reader r = {c.out, {0}};
    mcp_buf_init(&r.buf, 0);
    pthread_t th;
    pthread_create(&th, NULL, read_all, &r);

    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}}");
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    long first = valid(&c);

    /* 1. Garbage bytes, including NUL and bytes that are not UTF-8. */
    {
        static const char garbage[] = "\x00\x01\xff\xfe garbage \x80\n";
        put(&c, garbage, sizeof garbage - 1);
    }
    long after_garbage = valid(&c);
    /* 2. A frame in three pieces. */
    put_str(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,");
    sleep_ms(30);
    put_str(&c, "\"method\":\"tools/call\",\"params\":{\"name\":\"ec");
    sleep_ms(30);
    puts_line(&c, "ho\",\"arguments\":{\"half\":true}}}");
    /* 3. A 10 MiB frame (the limit is 4 MiB). */
    {
        size_t n = (size_t)10 << 20;
        char *big = malloc(n);
        memset(big, 'a', n);
        memcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"", 54);
        put(&c, big, n);
        put(&c, "\"}}\n", 4);
        free(big);
    }
    long after_big = valid(&c);
    /* 4. 10,000-deep nesting. */
    {
        char *deep = malloc(20001);
        memset(deep, '[', 10000);
        memset(deep + 10000, ']', 10000);
        deep[20000] = '\n';
        put(&c, deep, 20001);
        free(deep);
    }
    long after_deep = valid(&c);
    /* 5. Invalid UTF-8 inside a string, overlong and surrogate forms. */
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"\xc0\xaf\"}}}");
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"\xed\xa0\x80\"}}}");
    long after_utf8 = valid(&c);
    /* 6. A wrong type in every field of every message kind. */
    static const struct {
        long id;     /* request id, 0 for frames answered with id null or not at all */
        long code;   /* expected error code; 0 = no answer expected */
        const char *frame;
    } wrong[] = {
        {10, -32600, "{\"jsonrpc\":2,\"id\":10,\"method\":\"ping\"}"},
        {0, -32600, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}"},
        {0, -32600, "{\"jsonrpc\":\"2.0\",\"id\":[11],\"method\":\"ping\"}"},
        {12, -32600, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":5}"},
        {13, -32600, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\",\"params\":\"x\"}"},
        {14, -32602, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\",\"params\":{\"name\":5}}"},
        {15, -32602, "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":\"x\"}}"},
        {16, -32602, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}"},
        {17, -32602, "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"logging/setLevel\",\"params\":{\"level\":7}}"},
        {18, -32602, "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"ping\",\"params\":{\"_meta\":5}}"},
        {19, -32602, "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":5}}}"},
        {20, -32602, "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":7}}}"},
        {21, -32602, "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"initialize\",\"params\":{\"protocolVersion\":5}}"},
        {22, 0, "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"_meta\":{\"progressToken\":{}}}}"},
        {0, 0, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":{}}}"},
        {0, 0, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\"x\"}"},
        {0, 0, "{\"jsonrpc\":\"2.0\",\"method\":7}"},
        {23, -32600, "{\"jsonrpc\":\"2.0\",\"id\":23,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}}"},
        {0, -32600, "{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{\"code\":1,\"message\":\"m\"}}"},
        {24, -32600, "{\"jsonrpc\":\"2.0\",\"id\":24,\"error\":{\"code\":\"x\",\"message\":5}}"},
    };
    long after_wrong[sizeof wrong / sizeof wrong[0]];
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        puts_line(&c, wrong[i].frame);
        after_wrong[i] = valid(&c);
    }
    /* 7. Duplicate ids: a slow call, then the same id again. */
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":400}}}");
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}");
    /* 8. Responses to nothing. */
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":31,\"result\":{}}");
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-1,\"message\":\"nobody asked\"}}");
    long after_responses = valid(&c);
    /* 9. CRLF line endings and blank lines. */
    put_str(&c, "{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"ping\"}\r\n\n\r\n");
    /* 10. Close the input with a call in flight: it still gets its answer. */
    puts_line(&c, "{\"jsonrpc\":\"2.0\",\"id\":33,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":300}}}");
    long last = valid(&c);
    close(c.in);

    int status = 0;
    time_t t0 = time(NULL);
    waitpid(c.pid, &status, 0);
    pthread_join(th, NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "server exit status %d", status);
    CHECK(time(NULL) - t0 < 30, "server took %ld s to exit", (long)(time(NULL) - t0));

    /* Parse what came back: every line must be a JSON-RPC response. */
    answers a = {{0}, 0};
    char *p = r.buf.data ? r.buf.data : "";
    int bad_lines = 0;
    for (char *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            break;
        mcp_rpc_msg m;
        if (a.n < 4096 && mcp_rpc_decode(&m, p, (size_t)(nl - p), NULL, NULL) == MCP_OK) {
            a.docs[a.n++] = m.doc;
        } else {
            bad_lines++;
        }
    }
    CHECK(bad_lines == 0, "%d output lines are not JSON-RPC messages", bad_lines);

    /* Every valid call got its own echo. */
    for (long id = first; id < g_next; id++) {
        const mcp_json *ans = by_id(&a, id);
        char want[64];
        snprintf(want, sizeof want, "{\"n\":%ld}", id);
        const mcp_json *text = mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(ans, "result"), "content"), 0), "text");
        CHECK(mcp_json_str_eq(text, want), "valid call %ld not answered correctly", id);
    }
    (void)after_garbage;
    (void)after_big;
    (void)after_deep;
    (void)after_utf8;
    (void)after_responses;
    (void)last;
    (void)after_wrong;
    /* The half frame is one call. */
    CHECK(mcp_json_str_eq(mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(by_id(&a, 2), "result"), "content"), 0), "text"),
                          "{\"half\":true}"),
          "the frame sent in pieces was not answered as one call");
    /* The bad frames. */
    CHECK(null_errors(&a, -32700) >= 4, "expected >= 4 parse errors (garbage, deep, 2 x UTF-8), got %d",
          null_errors(&a, -32700));
    CHECK(by_id(&a, 3) == NULL, "the 10 MiB frame must not be processed");
    CHECK(null_errors(&a, -32600) >= 1 + 4, "expected the over-limit error and 4 invalid frames, got %d",
          null_errors(&a, -32600));
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        if (!wrong[i].id)
            continue;
        const mcp_json *ans = by_id(&a, wrong[i].id);
        if (wrong[i].code)
            CHECK(code_of(ans) == wrong[i].code, "frame %zu (%s): got code %ld, want %ld", i, wrong[i].frame,
                  code_of(ans), wrong[i].code);
        else
            CHECK(ans && mcp_json_get(ans, "result"), "frame %zu (%s): want a result", i, wrong[i].frame);
    }
    /* Duplicate id: one answer is the slow result, one the -32600. */
    int dup_ok = 0, dup_err = 0;
    for (size_t i = 0; i < a.n; i++) {
        const mcp_json *rr = mcp_json_doc_root(a.docs[i]);
        if (mcp_json_int(mcp_json_get(rr, "id")) != 30)
            continue;
        if (code_of(rr) == -32600)
            dup_err++;
        else if (mcp_json_get(rr, "result"))
            dup_ok++;
    }
    CHECK(dup_ok == 1 && dup_err == 1, "duplicate id: %d results, %d errors", dup_ok, dup_err);
    CHECK(by_id(&a, 31) == NULL, "a response to nothing was answered");
    CHECK(by_id(&a, 32) && mcp_json_get(by_id(&a, 32), "result"), "the CRLF ping was not answered");
    CHECK(by_id(&a, 33) && mcp_json_get(by_id(&a, 33), "result"), "the call in flight at EOF was not answered");
    for (size_t i = 0; i < a.n; i++)
        mcp_json_doc_free(a.docs[i]);
    mcp_buf_cleanup(&r.buf);

    /* SIGPIPE: the client stops reading; the server must end normally. */
    piped d;
    if (piped_start(&d, args) == 0) {
        close(d.out);
        for (int i = 0; i < 200; i++)
            puts_line(&d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        close(d.in);
        int st2;
        waitpid(d.pid, &st2, 0);
        CHECK(WIFEXITED(st2) && WEXITSTATUS(st2) == 0,
              "with its output closed the server ended with status 0x%x (signal %d)", st2,
              WIFSIGNALED(st2) ? WTERMSIG(st2) : 0);
    }
    return check_summary("stdio_hostile");
}
