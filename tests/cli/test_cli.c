/*
 * mcp-cli as a program: every command, every exit status, both protocol
 * eras, --transcript, --pretty, key=value typing, elicitation, usage
 * errors and the --help text against the man page, driven against the
 * fixture server (mcp-test-server) and, when given, mcp-server-aml.
 *
 *   test_cli stdio MCP-CLI MCP-TEST-SERVER MAN-PAGE WORKDIR [LAUNCHER...]
 *   test_cli http  MCP-CLI MCP-TEST-SERVER MAN-PAGE WORKDIR [LAUNCHER...]
 *   test_cli aml   MCP-CLI MCP-SERVER-AML  MAN-PAGE WORKDIR [LAUNCHER...]
 *
 * stdio runs `mcp-cli ... -- mcp-test-server`; http starts
 * `mcp-test-server --http 127.0.0.1:0` and runs `mcp-cli --url URL ...`,
 * plus a bare socket that records what --header and --token send; aml
 * repeats the founding checks against the AML server's demo store.
 * LAUNCHER (e.g. valgrind and its options) is put in front of every
 * mcp-cli run; a memcheck error then shows as a wrong exit status.
 * Ends with "test_cli: N passed, M failed".
 */
#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int g_passed, g_failed;
static const char *g_mode, *g_cli, *g_server, *g_man, *g_work;
static char **g_launcher;
static int g_nlauncher;
static char g_url[256];
static pid_t g_http_pid;

/* ---- running mcp-cli ---------------------------------------------------------------- */

typedef struct ran {
    int status;        /* exit status, or 128 + signal */
    char *out;         /* stdout (malloc, NUL-terminated) */
    char *err;         /* stderr */
    mcp_json_doc *doc; /* stdout parsed, or NULL when it is not one JSON value */
    char what[512];    /* the command line, for failure reports */
} ran;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        char *e = malloc(1);
        e[0] = '\0';
        return e;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

static void path_in_work(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_work, name);
}

/* Starts LAUNCHER... mcp-cli argv... with stdout/stderr into WORKDIR files; returns the pid. */
static pid_t spawn_cli(const char *const *args, size_t n)
{
    char out[600], err[600];
    path_in_work(out, sizeof out, "stdout");
    path_in_work(err, sizeof err, "stderr");
    pid_t pid = fork();
    if (pid == 0) {
        int i0 = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(i0, 0);
        dup2(o, 1);
        dup2(e, 2);
        const char **argv = calloc(n + (size_t)g_nlauncher + 2, sizeof *argv);
        size_t k = 0;
        for (int i = 0; i < g_nlauncher; i++)
            argv[k++] = g_launcher[i];
        argv[k++] = g_cli;
        for (size_t i = 0; i < n; i++)
            argv[k++] = args[i];
        argv[k] = NULL;
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for `pid` (unless `reaped`, then `st` is its status) and reads what it wrote. */
static void collect_status(ran *r, pid_t pid, int reaped, int st)
{
    while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char path[600];
    path_in_work(path, sizeof path, "stdout");
    r->out = slurp(path);
    path_in_work(path, sizeof path, "stderr");
    r->err = slurp(path);
    r->doc = NULL;
    if (mcp_json_parse(&r->doc, r->out, strlen(r->out), NULL, NULL) != MCP_OK)
        r->doc = NULL;
}

static void collect(ran *r, pid_t pid)
{
    collect_status(r, pid, 0, 0);
}

/* Runs mcp-cli with exactly these words (NULL-terminated). */
static ran run_raw(const char *const *words)
{
    ran r;
    memset(&r, 0, sizeof r);
    size_t n = 0, used = 0;
    while (words[n]) {
        used += (size_t)snprintf(r.what + used, used < sizeof r.what ? sizeof r.what - used : 0, "%s%s", n ? " " : "",
                                 words[n]);
        if (used >= sizeof r.what)
            used = sizeof r.what - 1;
        n++;
    }
    collect(&r, spawn_cli(words, n));
    return r;
}

/*
 * Runs mcp-cli with `words` (NULL-terminated) against the server of this
 * mode: "-- SERVER" after them (stdio, aml) or "--url URL" before (http).
 */
static ran run(const char *const *words)
{
    const char *all[64];
    size_t n = 0;
    if (strcmp(g_mode, "http") == 0) {
        all[n++] = "--url";
        all[n++] = g_url;
    }
    for (size_t i = 0; words[i] && n < 60; i++)
        all[n++] = words[i];
    if (strcmp(g_mode, "http") != 0) {
        all[n++] = "--";
        all[n++] = g_server;
    }
    all[n] = NULL;
    return run_raw(all);
}

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})
#define RUN_RAW(...) run_raw((const char *const[]){__VA_ARGS__, NULL})

static void ran_free(ran *r)
{
    free(r->out);
    free(r->err);
    mcp_json_doc_free(r->doc);
}

/* ---- checks --------------------------------------------------------------------------- */

static void check(int ok, const ran *r, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void check(int ok, const ran *r, int line, const char *fmt, ...)
{
    if (ok) {
        g_passed++;
        return;
    }
    g_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL line %d: ", line);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (r)
        printf("  run: mcp-cli %s\n  exit %d\n  stdout: %.1500s\n  stderr: %.1500s\n", r->what, r->status, r->out,
               r->err);
}

#define CHECK(r, cond, ...) check((cond), (r), __LINE__, __VA_ARGS__)

/* The value at JSON Pointer `ptr` of the output. */
static const mcp_json *at(const ran *r, const char *ptr)
{
    return r->doc ? mcp_json_pointer(mcp_json_doc_root(r->doc), ptr, strlen(ptr)) : NULL;
}

static const char *str_at(const ran *r, const char *ptr)
{
    const char *s = mcp_json_str(at(r, ptr), NULL);
    return s ? s : "";
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

/* Exactly one line of output (compact JSON), ending with a newline. */
static int one_line(const ran *r)
{
    size_t n = strlen(r->out);
    return n > 1 && r->out[n - 1] == '\n' && memchr(r->out, '\n', n - 1) == NULL;
}

/* ---- every command against the fixture --------------------------------------------------- */

/* The founding transcript: assessTypology without caseId. */
static void founding(void)
{
    ran r = RUN("call", "assessTypology");
    CHECK(&r, r.status == 1, "tool error exits 1");
    CHECK(&r, mcp_json_bool(at(&r, "/isError")), "isError true");
    CHECK(&r, contains(str_at(&r, "/content/0/text"), "/caseId: required property missing"), "violation in text");
    CHECK(&r, !strcmp(str_at(&r, "/_meta/validationErrors/0/message"), "/caseId: required property missing"),
          "violation in _meta");
    CHECK(&r, one_line(&r), "compact output is one line");
    ran_free(&r);

    r = RUN("--protocol", "2025-06-18", "call", "assessTypology");
    CHECK(&r, r.status == 2, "-32602 exits 2");
    CHECK(&r, mcp_json_int(at(&r, "/code")) == -32602, "code -32602");
    CHECK(&r, !strcmp(str_at(&r, "/message"), "invalid params for assessTypology"), "message");
    CHECK(&r, !strcmp(str_at(&r, "/data/validationErrors/0/message"), "/caseId: required property missing"),
          "violation in data");
    CHECK(&r, contains(r.err, "-32602") && contains(r.err, "invalid params for assessTypology"),
          "one-line message on stderr");
    CHECK(&r, strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "exactly one stderr line");
    ran_free(&r);

    r = RUN("call", "assessTypology", "caseId=C-1");
    CHECK(&r, r.status == 0, "a matching case exits 0");
    CHECK(&r, contains(str_at(&r, "/content/0/text"), "Case C-1: typology T01"), "assessment text");
    CHECK(&r, at(&r, "/isError") == NULL, "no isError");
    ran_free(&r);

    r = RUN("call", "assessTypology", "caseId=C-404");
    CHECK(&r, r.status == 1, "unknown case is a tool error");
    CHECK(&r, contains(str_at(&r, "/content/0/text"), "Unknown caseId C-404"), "tool error text");
    ran_free(&r);

    /* 2025-11-25 reports invalid arguments as a tool error too. */
    r = RUN("--protocol", "2025-11-25", "call", "assessTypology", "caseId=7");
    CHECK(&r, r.status == 1, "a number where a string is due: isError under 2025-11-25");
    CHECK(&r, contains(str_at(&r, "/content/0/text"), "/caseId: must be string"), "type violation");
    ran_free(&r);
}

static void rpc_errors(void)
{
    const char *versions[] = {NULL, "2025-06-18"};
    for (int i = 0; i < 2; i++) {
        ran r = versions[i] ? RUN("--protocol", versions[i], "call", "nope") : RUN("call", "nope");
        CHECK(&r, r.status == 2, "unknown tool exits 2");
        CHECK(&r, mcp_json_int(at(&r, "/code")) == -32602, "code -32602");
        CHECK(&r, !strcmp(str_at(&r, "/message"), "Unknown tool: nope"), "message");
        CHECK(&r, at(&r, "/data") == NULL, "no data member when the server sent none");
        ran_free(&r);
    }
    ran r = RUN("call", "crash");
    CHECK(&r, r.status == 2 && mcp_json_int(at(&r, "/code")) == -32603, "a crashing tool is -32603");
    ran_free(&r);
}

/* Arguments: key=value typing, the whole-object form, and what is refused. */
static void typing(void)
{
    ran r = RUN("call", "echo", "n=5", "name=Ada", "flag=true", "x=null", "f=2.5", "ids=[1,\"C-1\"]", "s=\"5\"",
                "caseId=C-1", "empty=", "eq=a=b");
    CHECK(&r, r.status == 0, "echo exits 0");
    const char *text = str_at(&r, "/content/0/text");
    mcp_json_doc *args = NULL;
    int parsed = mcp_json_parse(&args, text, strlen(text), NULL, NULL) == MCP_OK;
    CHECK(&r, parsed, "echo returns the arguments as JSON");
    if (parsed) {
        const mcp_json *a = mcp_json_doc_root(args);
        CHECK(&r, mcp_json_typeof(mcp_json_get(a, "n")) == MCP_JSON_INT && mcp_json_int(mcp_json_get(a, "n")) == 5,
              "n=5 is a number");
        CHECK(&r, mcp_json_str_eq(mcp_json_get(a, "name"), "Ada"), "name=Ada is a string");
        CHECK(&r, mcp_json_typeof(mcp_json_get(a, "flag")) == MCP_JSON_BOOL && mcp_json_bool(mcp_json_get(a, "flag")),
              "flag=true is a boolean");
        CHECK(&r, mcp_json_typeof(mcp_json_get(a, "x")) == MCP_JSON_NULL, "x=null is null");
        CHECK(&r, mcp_json_number(mcp_json_get(a, "f")) == 2.5, "f=2.5 is a number");
        CHECK(&r,
              mcp_json_len(mcp_json_get(a, "ids")) == 2 &&
                  mcp_json_str_eq(mcp_json_at(mcp_json_get(a, "ids"), 1), "C-1"),
              "ids=[...] is an array");
        CHECK(&r, mcp_json_str_eq(mcp_json_get(a, "s"), "5"), "s=\"5\" is the string 5");
        CHECK(&r, mcp_json_str_eq(mcp_json_get(a, "caseId"), "C-1"), "caseId=C-1 is a string");
        CHECK(&r, mcp_json_str_eq(mcp_json_get(a, "empty"), ""), "empty= is the empty string");
        CHECK(&r, mcp_json_str_eq(mcp_json_get(a, "eq"), "a=b"), "the first = splits");
        CHECK(&r, mcp_json_len(a) == 10, "ten members");
    }
    mcp_json_doc_free(args);
    ran_free(&r);

    r = RUN("call", "echo", "{\"caseId\": \"C-1\", \"nested\": {\"a\": [true]}}");
    text = str_at(&r, "/content/0/text");
    CHECK(&r, r.status == 0 && !strcmp(text, "{\"caseId\":\"C-1\",\"nested\":{\"a\":[true]}}"),
          "a single {...} argument is the whole object");
    ran_free(&r);

    r = RUN("call", "echo");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/content/0/text"), "{}"), "no arguments send {}");
    ran_free(&r);

    /* Options may come among the command's words. */
    r = RUN("call", "echo", "a=1", "--pretty");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/content/0/text"), "{\"a\":1}") && !one_line(&r),
          "--pretty after the arguments");
    ran_free(&r);

    const char *const bad[][4] = {
        {"call", "echo", "oops", NULL},       {"call", "echo", "a=1", "a=2"}, {"call", "echo", "=1", NULL},
        {"call", "echo", "{\"a\":", NULL},    {"call", "echo", "[1]", NULL},  {"call", "echo", "{\"a\":1}", "b=2"},
        {"prompt", "review", "caseId", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *w[8];
        size_t n = 0;
        for (size_t k = 0; k < 4 && bad[i][k]; k++)
            w[n++] = bad[i][k];
        w[n] = NULL;
        r = run(w);
        CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "mcp-cli: ") && contains(r.err, "--help"),
              "bad arguments are a usage error (case %zu)", i);
        ran_free(&r);
    }
}

static void lists_and_reads(void)
{
    ran r = RUN("tools");
    CHECK(&r, r.status == 0, "tools exits 0");
    CHECK(&r, !strcmp(str_at(&r, "/tools/0/name"), "assessTypology"), "first tool");
    CHECK(&r, !strcmp(str_at(&r, "/tools/0/inputSchema/required/0"), "caseId"), "its schema");
    int found = 0;
    for (size_t i = 0; i < mcp_json_len(at(&r, "/tools")); i++)
        found += mcp_json_str_eq(mcp_json_get(mcp_json_at(at(&r, "/tools"), i), "name"), "askName");
    CHECK(&r, found == 1, "askName listed");
    ran_free(&r);

    r = RUN("resources");
    CHECK(&r,
          r.status == 0 && !strcmp(str_at(&r, "/resources/0/uri"), "fixture://readme") &&
              mcp_json_len(at(&r, "/resources")) == 2,
          "resources");
    ran_free(&r);

    r = RUN("templates");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/resourceTemplates/0/uriTemplate"), "fixture://cases/{caseId}"),
          "templates");
    ran_free(&r);

    r = RUN("read", "fixture://readme");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/contents/0/text"), "The fixture server."), "read");
    ran_free(&r);

    r = RUN("read", "fixture://cases/C-7");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/contents/0/text"), "{\"caseId\":\"C-7\",\"status\":\"open\"}"),
          "read through a template");
    ran_free(&r);

    r = RUN("read", "fixture://cases/C-404");
    CHECK(&r, r.status == 2 && mcp_json_int(at(&r, "/code")) < 0 && contains(str_at(&r, "/message"), "C-404"),
          "an unknown resource is a JSON-RPC error");
    ran_free(&r);

    r = RUN("--protocol", "2025-06-18", "read", "fixture://cases/C-404");
    CHECK(&r,
          r.status == 2 && mcp_json_int(at(&r, "/code")) == -32002 &&
              !strcmp(str_at(&r, "/data/uri"), "fixture://cases/C-404"),
          "legacy: -32002 with data");
    ran_free(&r);

    r = RUN("prompts");
    CHECK(&r,
          r.status == 0 && !strcmp(str_at(&r, "/prompts/0/name"), "review") &&
              !strcmp(str_at(&r, "/prompts/0/arguments/0/name"), "caseId"),
          "prompts");
    ran_free(&r);

    r = RUN("prompt", "review", "caseId=C-1", "tone=formal");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/messages/0/content/text"), "Review case C-1 in a formal tone."),
          "prompt with arguments");
    ran_free(&r);

    /* Prompt arguments are strings: 5 is sent as "5". */
    r = RUN("prompt", "review", "caseId=5");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/messages/0/content/text"), "Review case 5 in a plain tone."),
          "prompt values are strings");
    ran_free(&r);

    r = RUN("prompt", "review", "caseId=C-1", "tone=angry");
    CHECK(&r, r.status == 2 && mcp_json_int(at(&r, "/code")) == -32602 && contains(str_at(&r, "/message"), "tone"),
          "a refused prompt argument is -32602");
    ran_free(&r);

    r = RUN("complete", "prompt", "review", "caseId", "C-1");
    CHECK(&r,
          r.status == 0 && mcp_json_len(at(&r, "/completion/values")) == 3 &&
              !strcmp(str_at(&r, "/completion/values/1"), "C-10"),
          "complete prompt");
    ran_free(&r);

    r = RUN("complete", "resource", "fixture://cases/{caseId}", "caseId", "C-1", "region=eu");
    CHECK(&r, r.status == 0 && mcp_json_len(at(&r, "/completion/values")) == 2, "complete resource with context");
    ran_free(&r);

    r = RUN("complete", "tool", "x", "caseId", "C");
    CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "prompt NAME"), "complete wants prompt or resource");
    ran_free(&r);
}

/* ping and discover in both eras: the dual-era probe by default, initialize when forced. */
static void eras(void)
{
    ran r = RUN("ping");
    CHECK(&r, r.status == 2 && mcp_json_int(at(&r, "/code")) == -32601, "2026-07-28 has no ping: -32601");
    ran_free(&r);

    r = RUN("--protocol", "2025-06-18", "ping");
    CHECK(&r, r.status == 0 && !strcmp(r.out, "{}\n"), "legacy ping prints {}");
    ran_free(&r);

    r = RUN("discover");
    CHECK(&r, r.status == 0, "discover exits 0");
    CHECK(&r, !strcmp(str_at(&r, "/protocolVersion"), "2026-07-28"), "default: 2026-07-28 through the probe");
    CHECK(&r, mcp_json_bool(at(&r, "/modern")), "modern");
    CHECK(&r, !strcmp(str_at(&r, "/serverInfo/name"), "fixture") && !strcmp(str_at(&r, "/serverInfo/version"), "1.0.0"),
          "serverInfo");
    CHECK(&r, mcp_json_typeof(at(&r, "/capabilities/tools")) == MCP_JSON_OBJECT, "capabilities");
    CHECK(&r, !strcmp(str_at(&r, "/result/supportedVersions/0"), "2026-07-28"), "the DiscoverResult");
    ran_free(&r);

    r = RUN("--protocol", "2025-06-18", "discover");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/protocolVersion"), "2025-06-18"), "forced 2025-06-18");
    CHECK(&r, mcp_json_typeof(at(&r, "/modern")) == MCP_JSON_BOOL && !mcp_json_bool(at(&r, "/modern")), "legacy");
    CHECK(&r, !strcmp(str_at(&r, "/result/protocolVersion"), "2025-06-18"), "the InitializeResult");
    CHECK(&r, !strcmp(str_at(&r, "/serverInfo/name"), "fixture"), "serverInfo");
    ran_free(&r);

    r = RUN("--protocol=2024-11-05", "discover");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/protocolVersion"), "2024-11-05"), "--protocol=VERSION form");
    ran_free(&r);

    r = RUN("--protocol", "2026-07-28", "call", "assessTypology");
    CHECK(&r, r.status == 1, "forced 2026-07-28 reports violations as a tool error");
    ran_free(&r);
}

static void transcript(void)
{
    const char *versions[] = {NULL, "2025-06-18"};
    for (int v = 0; v < 2; v++) {
        char path[600];
        path_in_work(path, sizeof path, v ? "legacy.jsonl" : "modern.jsonl");
        unlink(path);
        ran r = v ? RUN("--protocol", versions[v], "--transcript", path, "call", "assessTypology", "caseId=C-1")
                  : RUN("--transcript", path, "call", "assessTypology", "caseId=C-1");
        CHECK(&r, r.status == 0, "call with a transcript");
        char *text = slurp(path);
        int lines = 0, bad = 0, handshake = 0, call_out = 0, call_in = 0, initialized = 0;
        for (char *line = text, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl)
                break;
            lines++;
            mcp_json_doc *d;
            if (mcp_json_parse(&d, line, (size_t)(nl - line), NULL, NULL) != MCP_OK) {
                bad++;
                continue;
            }
            const mcp_json *o = mcp_json_doc_root(d);
            const mcp_json *msg = mcp_json_get(o, "msg");
            int out = mcp_json_str_eq(mcp_json_get(o, "dir"), "out");
            bad += !out && !mcp_json_str_eq(mcp_json_get(o, "dir"), "in");
            bad += mcp_json_typeof(mcp_json_get(o, "time")) != MCP_JSON_STRING;
            const mcp_json *method = mcp_json_get(msg, "method");
            if (out && mcp_json_str_eq(method, v ? "initialize" : "server/discover"))
                handshake++;
            if (out && mcp_json_str_eq(method, "notifications/initialized"))
                initialized++;
            if (out && mcp_json_str_eq(method, "tools/call") &&
                mcp_json_str_eq(mcp_json_get(mcp_json_get(mcp_json_get(msg, "params"), "arguments"), "caseId"), "C-1"))
                call_out++;
            if (!out &&
                contains(mcp_json_str(
                             mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(msg, "result"), "content"), 0), "text"),
                             NULL),
                         "typology T01"))
                call_in++;
            mcp_json_doc_free(d);
        }
        CHECK(&r, lines >= (v ? 5 : 4) && bad == 0, "%s transcript: %d JSON lines with time and dir",
              v ? "legacy" : "modern", lines);
        CHECK(&r, handshake == 1, "the handshake request is recorded");
        CHECK(&r, initialized == (v ? 1 : 0), "notifications/initialized only in the legacy era");
        CHECK(&r, call_out == 1 && call_in == 1, "the call and its result are recorded");
        free(text);
        ran_free(&r);
    }
}

static void pretty(void)
{
    ran compact = RUN("tools");
    ran r = RUN("--pretty", "tools");
    CHECK(&r, r.status == 0, "--pretty exits 0");
    CHECK(&r, !strncmp(r.out, "{\n  \"tools\": [\n    {\n      \"name\": \"assessTypology\",\n", 52),
          "two spaces per level, \"key\": value");
    CHECK(&r, r.doc && compact.doc && mcp_json_equal(mcp_json_doc_root(r.doc), mcp_json_doc_root(compact.doc)),
          "the same JSON as the compact output");
    size_t n = strlen(r.out);
    CHECK(&r, n > 2 && r.out[n - 1] == '\n' && r.out[n - 2] == '}', "ends with } and a newline");
    ran_free(&r);
    ran_free(&compact);

    r = RUN("--pretty", "--protocol", "2025-06-18", "call", "nope");
    CHECK(&r, r.status == 2 && !strcmp(r.out, "{\n  \"code\": -32602,\n  \"message\": \"Unknown tool: nope\"\n}\n"),
          "the error object pretty-printed");
    ran_free(&r);
}

static void elicitation(void)
{
    const char *versions[] = {NULL, "2025-11-25"};
    for (int v = 0; v < 2; v++) {
        ran r = v ? RUN("--protocol", versions[v], "call", "askName") : RUN("call", "askName");
        CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/content/0/text"), "Hello, (declined)!"),
              "%s: declined without --elicit-json", v ? "legacy" : "modern");
        CHECK(&r, contains(r.err, "What is your name?") && contains(r.err, "declined"), "a note on stderr");
        ran_free(&r);
        r = v ? RUN("--protocol", versions[v], "--elicit-json", "{\"name\":\"Ada\"}", "call", "askName")
              : RUN("--elicit-json", "{\"name\":\"Ada\"}", "call", "askName");
        CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/content/0/text"), "Hello, Ada!"),
              "%s: accepted with --elicit-json", v ? "legacy" : "modern");
        ran_free(&r);
        r = v ? RUN("--quiet", "--protocol", versions[v], "call", "askName") : RUN("--quiet", "call", "askName");
        CHECK(&r, r.status == 0 && r.err[0] == '\0', "--quiet: no note");
        ran_free(&r);
    }
    ran r = RUN("--elicit-json", "[1]", "call", "askName");
    CHECK(&r, r.status == 3 && contains(r.err, "--elicit-json"), "--elicit-json must be an object");
    ran_free(&r);
    r = RUN("--elicit-json", "{nope", "call", "askName");
    CHECK(&r, r.status == 3 && contains(r.err, "--elicit-json"), "--elicit-json must be JSON");
    ran_free(&r);
}

static void progress_and_time_limits(void)
{
    ran r = RUN("call", "progress");
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/content/0/text"), "done"), "progress tool");
    CHECK(&r, contains(r.err, "progress 3/3"), "progress notes on stderr");
    ran_free(&r);

    r = RUN("--timeout", "2000", "call", "slow", "ms=30000");
    CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "tools/call") && contains(r.err, "2000 ms"),
          "a time limit exits 3");
    ran_free(&r);

    r = RUN("--timeout", "20000", "call", "slow", "ms=10");
    CHECK(&r, r.status == 0 && contains(str_at(&r, "/content/0/text"), "slept"), "within the time limit");
    ran_free(&r);
}

/* ---- usage and connection errors ---------------------------------------------------------- */

static void usage_errors(void)
{
    const char *srv = g_server;
    const char *const cases[][6] = {
        {NULL},
        {"--pretty", NULL},
        {"--", srv, NULL},
        {"tools", NULL},
        {"frob", "--", srv, NULL},
        {"--bogus", "tools", "--", srv, NULL},
        {"tools", "--url", "http://127.0.0.1:9/mcp", "--", srv, NULL},
        {"--header", "X-A: 1", "tools", "--", srv, NULL},
        {"--token", "t", "tools", "--", srv, NULL},
        {"--url", "http://127.0.0.1:9/mcp", "--header", "no-colon", "tools"},
        {"--protocol", "2099-01-01", "tools", "--", srv, NULL},
        {"--timeout", "soon", "tools", "--", srv, NULL},
        {"--timeout", "0", "tools", "--", srv, NULL},
        {"read", "--", srv, NULL},
        {"tools", "extra", "--", srv, NULL},
        {"ping", "x=1", "--", srv, NULL},
        {"call", "--", srv, NULL},
        {"complete", "prompt", "review", "caseId", "--", srv},
        {"tools", "--", NULL},
        {"tools", "--timeout", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *w[8];
        size_t n = 0;
        for (size_t k = 0; k < 6 && cases[i][k]; k++)
            w[n++] = cases[i][k];
        w[n] = NULL;
        ran r = run_raw(w);
        CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "Try 'mcp-cli --help'"),
              "usage error %zu exits 3 with a message", i);
        ran_free(&r);
    }
}

static void connection_errors(void)
{
    ran r = RUN_RAW("tools", "--", "/nonexistent/mcp-server");
    CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "/nonexistent/mcp-server"),
          "a command that cannot start exits 3");
    ran_free(&r);

    /* The server exits at once (a usage error of its own): its status and stderr are quoted. */
    r = RUN_RAW("tools", "--", g_server, "--no-such-option");
    CHECK(&r, r.status == 3 && contains(r.err, "exited with status 2") && contains(r.err, "usage: mcp-test-server"),
          "a dying server's status and stderr tail");
    ran_free(&r);

    r = RUN_RAW("--quiet", "tools", "--", g_server, "--no-such-option");
    CHECK(&r, r.status == 3 && contains(r.err, "exited with status 2") && !contains(r.err, "usage: mcp-test-server"),
          "--quiet discards the server's stderr");
    ran_free(&r);

    /* Server stderr is shown when a command fails, not when it succeeds. */
    r = RUN("call", "crash");
    CHECK(&r, r.status == 2 && contains(r.err, "tool crash failed"), "captured server stderr shown on failure");
    ran_free(&r);
    r = RUN("--quiet", "call", "crash");
    CHECK(&r, r.status == 2 && !contains(r.err, "fixture: error"), "--quiet: no server stderr");
    ran_free(&r);
    r = RUN("call", "assessTypology", "caseId=C-1");
    CHECK(&r, r.status == 0 && r.err[0] == '\0', "nothing on stderr on success");
    ran_free(&r);
}

/* Every option and command of --help is in the man page, and every option of the man page in --help. */
static void help_and_man(void)
{
    ran r = RUN_RAW("--help");
    CHECK(&r, r.status == 0 && contains(r.out, "usage: mcp-cli"), "--help exits 0 with the usage on stdout");
    char *man = slurp(g_man);
    CHECK(NULL, man[0] != '\0', "the man page %s is readable", g_man);
    static const char *const commands[] = {"tools",   "call NAME",   "resources",       "templates",         "read URI",
                                           "prompts", "prompt NAME", "complete prompt", "complete resource", "ping",
                                           "discover"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char roff[64];
        CHECK(&r, contains(r.out, commands[i]), "--help lists %s", commands[i]);
        /* In the man page a command is a ".B word" item, or ".BI "words " ARG" when it takes some. */
        const char *arg = commands[i];
        while ((arg = strchr(arg, ' ')) != NULL && !(arg[1] >= 'A' && arg[1] <= 'Z'))
            arg++;
        if (arg || strchr(commands[i], ' '))
            snprintf(roff, sizeof roff, ".BI \"%.*s \"", arg ? (int)(arg - commands[i]) : 64, commands[i]);
        else
            snprintf(roff, sizeof roff, ".B %s\n", commands[i]);
        CHECK(&r, contains(man, roff), "the man page has %s", roff);
    }
    /* --help's options -> man page (roff writes "-" as "\-"). */
    int nopts = 0;
    for (const char *p = r.out; (p = strstr(p, "--")) != NULL;) {
        size_t n = 2;
        while ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '-')
            n++;
        if (n > 2) {
            char roff[80] = "";
            size_t k = 0;
            for (size_t i = 0; i < n && k + 3 < sizeof roff; i++) {
                if (p[i] == '-')
                    roff[k++] = '\\';
                roff[k++] = p[i];
            }
            roff[k] = '\0';
            CHECK(&r, contains(man, roff), "the man page has %.*s", (int)n, p);
            nopts++;
        }
        p += n;
    }
    CHECK(&r, nopts >= 11, "--help names its options (%d)", nopts);
    /* man page's option items (".BI \-\-x" / ".B \-\-x") -> --help. */
    int items = 0;
    for (const char *p = man; (p = strstr(p, "\n.B")) != NULL; p++) {
        const char *q = p + 3;
        while (*q == 'I' || *q == 'R' || *q == ' ')
            q++;
        if (strncmp(q, "\\-\\-", 4) != 0)
            continue;
        char opt[64] = "--";
        size_t k = 2;
        for (q += 4; k + 1 < sizeof opt && ((*q >= 'a' && *q <= 'z') || (q[0] == '\\' && q[1] == '-'));) {
            if (*q == '\\') {
                opt[k++] = '-';
                q += 2;
            } else {
                opt[k++] = *q++;
            }
        }
        opt[k] = '\0';
        CHECK(&r, contains(r.out, opt), "--help has the man page's %s", opt);
        items++;
    }
    CHECK(&r, items >= 11, "the man page lists its options (%d)", items);
    CHECK(&r, contains(man, "\\fB\\-h\\fR") || contains(man, ".BR \\-h"), "the man page has -h");
    free(man);
    ran_free(&r);

    r = RUN_RAW("-h");
    CHECK(&r, r.status == 0 && contains(r.out, "usage: mcp-cli"), "-h");
    ran_free(&r);
    r = RUN_RAW("--version");
    char want[64];
    snprintf(want, sizeof want, "mcp-cli %s", mcp_version());
    CHECK(&r, r.status == 0 && !strncmp(r.out, want, strlen(want)), "--version");
    ran_free(&r);
}

/* ---- HTTP ---------------------------------------------------------------------------------- */

static int start_http_server(void)
{
    int p[2];
    if (pipe(p))
        return -1;
    g_http_pid = fork();
    if (g_http_pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(g_server, g_server, "--http", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    char line[300] = "";
    int ok = f && fgets(line, sizeof line, f) && sscanf(line, "listening on %255s", g_url) == 1;
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

static void stop_http_server(void)
{
    if (g_http_pid > 0) {
        kill(g_http_pid, SIGTERM);
        waitpid(g_http_pid, NULL, 0);
    }
}

/* Reads one HTTP request (head and Content-Length body) from `fd` into `log`. */
static void read_request(int fd, char *log, size_t cap)
{
    char buf[8192];
    size_t got = 0;
    long body = -1;
    char *head_end = NULL;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 5000) <= 0)
            break;
        ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        if (!head_end && (head_end = strstr(buf, "\r\n\r\n")) != NULL) {
            const char *cl = strcasestr(buf, "\r\ncontent-length:");
            body = cl ? strtol(cl + 17, NULL, 10) : 0;
        }
        if (head_end && (long)(got - (size_t)(head_end + 4 - buf)) >= body)
            break;
        if (got == sizeof buf - 1)
            break;
    }
    size_t used = strlen(log);
    snprintf(log + used, cap - used, "%s", buf);
}

/*
 * --header and --token against a bare socket that answers 401: both are
 * sent, the token appears nowhere in mcp-cli's output or transcript, and
 * the refusal exits 3 with the challenge in the message.
 */
static void http_headers_and_token(void)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 8) ||
        getsockname(ls, (struct sockaddr *)&a, &alen)) {
        CHECK(NULL, 0, "cannot listen: %s", strerror(errno));
        return;
    }
    char url[100], transcript_path[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", ntohs(a.sin_port));
    path_in_work(transcript_path, sizeof transcript_path, "token.jsonl");
    unlink(transcript_path);
    const char *words[] = {"--url",        url,       "--header",     "X-Trace: abc123", "--header",
                           "X-Other: two", "--token", "s3cr3t-T0ken", "--transcript",    transcript_path,
                           "tools",        NULL};
    ran r;
    memset(&r, 0, sizeof r);
    snprintf(r.what, sizeof r.what, "--url %s --header ... --token ... tools", url);
    pid_t pid = spawn_cli(words, 11);
    static char log[65536];
    log[0] = '\0';
    int status = 0, done = 0, requests = 0;
    for (int waited = 0; !done && waited < 120000; waited += 100) {
        struct pollfd pf = {ls, POLLIN, 0};
        if (poll(&pf, 1, 100) > 0) {
            int fd = accept(ls, NULL, NULL);
            if (fd >= 0) {
                read_request(fd, log, sizeof log);
                requests++;
                static const char resp[] = "HTTP/1.1 401 Unauthorized\r\n"
                                           "WWW-Authenticate: Bearer realm=\"test\", error=\"invalid_token\"\r\n"
                                           "Content-Length: 0\r\nConnection: close\r\n\r\n";
                ssize_t w = write(fd, resp, sizeof resp - 1);
                (void)w;
                close(fd);
            }
        }
        done = waitpid(pid, &status, WNOHANG) == pid;
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(ls);
    collect_status(&r, pid, 1, status);
    CHECK(&r, requests >= 1, "mcp-cli reached the socket");
    CHECK(&r, strcasestr(log, "\r\nAuthorization: Bearer s3cr3t-T0ken\r\n") != NULL, "the bearer token is sent");
    CHECK(&r, strstr(log, "\r\nX-Trace: abc123\r\n") && strstr(log, "\r\nX-Other: two\r\n"), "both headers are sent");
    CHECK(&r, r.status == 3, "401 exits 3");
    CHECK(&r, !contains(r.out, "s3cr3t") && !contains(r.err, "s3cr3t"), "the token is never printed");
    char *t = slurp(transcript_path);
    CHECK(&r, !contains(t, "s3cr3t"), "the token is not in the transcript");
    free(t);
    ran_free(&r);
}

/* libmcp loads libcurl on first use: where libcurl.so.4 cannot be loaded
 * (here an empty file of that name first on the library path), an HTTP
 * client fails to connect with a message saying so, and nothing crashes. */
static void no_libcurl(void)
{
    char dir[600], lib[700];
    path_in_work(dir, sizeof dir, "nocurl");
    mkdir(dir, 0755);
    snprintf(lib, sizeof lib, "%s/libcurl.so.4", dir);
    FILE *f = fopen(lib, "w");
    if (f)
        fclose(f);
    const char *old = getenv("LD_LIBRARY_PATH");
    char *saved = old ? strdup(old) : NULL;
    char path[1400];
    snprintf(path, sizeof path, "%s%s%s", dir, saved ? ":" : "", saved ? saved : "");
    setenv("LD_LIBRARY_PATH", path, 1);
    ran r = RUN("tools");
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    free(saved);
    CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "libcurl could not be loaded"),
          "without a loadable libcurl: exit 3 naming libcurl");
    ran_free(&r);
}

static void http_mode(void)
{
    founding();
    rpc_errors();
    typing();
    lists_and_reads();
    eras();
    transcript();
    pretty();
    elicitation();
    http_headers_and_token();
    ran r = RUN_RAW("--url", "http://127.0.0.1:9/mcp", "tools");
    CHECK(&r, r.status == 3 && r.out[0] == '\0' && contains(r.err, "cannot connect"), "connection refused exits 3");
    ran_free(&r);
    no_libcurl();
}

/* ---- mcp-server-aml ---------------------------------------------------------------------- */

#ifdef AML_TEST_HOOKS /* the server's test hooks (MCP_TEST_HOOKS, docs/testing.md) */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The demo server answers while it builds its bank: discover does not wait
 * for it, a tool call does. AML_TEST_DEMO_DELAY_MS is a test hook of
 * mcp-server-aml that makes the bank that many milliseconds slower to
 * build; here 20 s, four times mcp-cli's discover timeout (5 s), after
 * which a server that waited for its bank would be asked to initialize
 * instead. The whole run (mcp-cli and the server starting under ASan,
 * discover, the server's exit) takes a fraction of a second on a quiet
 * machine; the limit, 3 s (10 s under valgrind), leaves room for a loaded
 * one and still fails a server that waits for its bank.
 */
static void aml_bank_later(void)
{
    setenv("AML_TEST_DEMO_DELAY_MS", "20000", 1);
    double t0 = now_s();
    ran r = RUN("discover");
    double took = now_s() - t0, limit = g_nlauncher ? 10.0 : 3.0;
    CHECK(&r, r.status == 0 && !strcmp(str_at(&r, "/protocolVersion"), "2026-07-28"),
          "aml: discover while the bank is built");
    CHECK(&r, took < limit, "aml: discover answered in %.2f s (limit %.0f s) while the bank takes 20 s more", took,
          limit);
    printf("aml: discover while the bank is built: %.2f s\n", took);
    ran_free(&r);
    setenv("AML_TEST_DEMO_DELAY_MS", "1500", 1);
    t0 = now_s();
    r = RUN("call", "listCases");
    took = now_s() - t0;
    CHECK(&r, r.status == 0 && contains(str_at(&r, "/content/0/text"), "of 28 matching cases") && took >= 1.5,
          "aml: listCases waits for the bank (%.2f s, the bank 1.5 s more) and finds its 28 cases", took);
    ran_free(&r);
    unsetenv("AML_TEST_DEMO_DELAY_MS");
}
#endif

static void aml_mode(void)
{
    ran r = RUN("call", "assessTypology");
    CHECK(&r,
          r.status == 1 && mcp_json_bool(at(&r, "/isError")) &&
              contains(str_at(&r, "/content/0/text"), "/caseId: required property missing"),
          "aml: without caseId a tool error naming /caseId");
    ran_free(&r);

    r = RUN("--protocol", "2025-06-18", "call", "assessTypology");
    CHECK(&r,
          r.status == 2 && mcp_json_int(at(&r, "/code")) == -32602 &&
              contains(r.out, "/caseId: required property missing"),
          "aml: 2025-06-18 -32602 with the violation");
    ran_free(&r);

    /* A demo case id, from the server itself. */
    r = RUN("call", "listCases");
    CHECK(&r, r.status == 0, "aml: listCases");
    char id[64] = "";
    const char *text = str_at(&r, "/content/0/text");
    const mcp_json *sc = at(&r, "/structuredContent/cases/0/caseId");
    if (mcp_json_str(sc, NULL))
        snprintf(id, sizeof id, "%s", mcp_json_str(sc, NULL));
    else if ((text = strstr(text, "CASE-")) != NULL)
        snprintf(id, sizeof id, "%.*s", (int)strspn(text, "CASE-0123456789"), text);
    CHECK(&r, id[0] != '\0', "aml: a demo case id");
    printf("aml: demo case %s\n", id);
    ran_free(&r);
    if (!id[0])
        return;

    char arg[100];
    snprintf(arg, sizeof arg, "caseId=%s", id);
    r = RUN("call", "assessTypology", arg);
    CHECK(&r, r.status == 0 && !mcp_json_bool(at(&r, "/isError")) && at(&r, "/content/0/text"),
          "aml: assessTypology %s exits 0", id);
    ran_free(&r);
    r = RUN("--protocol", "2025-06-18", "call", "assessTypology", arg);
    CHECK(&r, r.status == 0, "aml: the same under 2025-06-18");
    ran_free(&r);
    r = RUN("call", "assessTypology", "caseId=CASE-99999999");
    CHECK(&r, r.status == 1 && contains(str_at(&r, "/content/0/text"), "CASE-99999999"),
          "aml: unknown case is a tool error");
    ran_free(&r);
    r = RUN("call", "noSuchTool");
    CHECK(&r, r.status == 2 && mcp_json_int(at(&r, "/code")) == -32602, "aml: unknown tool -32602");
    ran_free(&r);
    r = RUN("discover");
    CHECK(&r,
          r.status == 0 && !strcmp(str_at(&r, "/protocolVersion"), "2026-07-28") &&
              mcp_json_str(at(&r, "/serverInfo/name"), NULL),
          "aml: discover");
    ran_free(&r);
#ifdef AML_TEST_HOOKS
    aml_bank_later();
#else
    printf("aml: discover while the bank is built: skipped (mcp-server-aml built without MCP_TEST_HOOKS)\n");
#endif
    r = RUN("tools");
    CHECK(&r, r.status == 0 && mcp_json_len(at(&r, "/tools")) > 3, "aml: tools");
    ran_free(&r);
    r = RUN("resources");
    CHECK(&r, r.status == 0, "aml: resources");
    ran_free(&r);
    r = RUN("templates");
    CHECK(&r, r.status == 0 && mcp_json_len(at(&r, "/resourceTemplates")) >= 1, "aml: templates");
    ran_free(&r);
    r = RUN("prompts");
    CHECK(&r, r.status == 0, "aml: prompts");
    ran_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: test_cli stdio|http|aml MCP-CLI SERVER MAN-PAGE WORKDIR [LAUNCHER...]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_mode = argv[1];
    g_cli = argv[2];
    g_server = argv[3];
    g_man = argv[4];
    g_work = argv[5];
    g_launcher = argv + 6;
    g_nlauncher = argc - 6;
    mkdir(g_work, 0755);
    if (strcmp(g_mode, "stdio") == 0) {
        founding();
        rpc_errors();
        typing();
        lists_and_reads();
        eras();
        transcript();
        pretty();
        elicitation();
        progress_and_time_limits();
        usage_errors();
        connection_errors();
        help_and_man();
    } else if (strcmp(g_mode, "http") == 0) {
        if (start_http_server()) {
            CHECK(NULL, 0, "mcp-test-server --http did not say where it listens");
        } else {
            http_mode();
        }
        stop_http_server();
    } else if (strcmp(g_mode, "aml") == 0) {
        aml_mode();
    } else {
        fprintf(stderr, "test_cli: unknown mode %s\n", g_mode);
        return 2;
    }
    printf("test_cli: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
