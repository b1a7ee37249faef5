/*
 * Interop: libmcp's client against real servers from npm (pinned in
 * tests/interop/package.json):
 *   - the official TypeScript SDK as a server (sdk_server.mjs: McpServer);
 *   - @modelcontextprotocol/server-everything, the reference test server.
 * Over stdio and Streamable HTTP (the SDK server with sessions and
 * stateless, server-everything's streamableHttp mode), each check
 * asserting what the client hands back.
 *
 * usage: client_peers INTEROP_DIR    (run through run.sh, which installs
 *        the pinned packages first)
 * Each check prints "ok NAME" or "FAIL NAME: why"; the last line is
 * "client_peers: N passed, M failed".
 */
#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int g_passed, g_failed;
static char g_dir[1024];

#define CHECK(name, cond, ...)                                                                                         \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            g_passed++;                                                                                                \
            printf("ok %s\n", name);                                                                                   \
        } else {                                                                                                       \
            g_failed++;                                                                                                \
            printf("FAIL %s: ", name);                                                                                 \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static const char *text0(const mcp_response *r)
{
    const char *t = mcp_json_str(
        mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "content"), 0), "text"), NULL);
    return t ? t : "";
}

static int progress_steps;

static void on_progress(double progress, double total, const char *message, void *ud)
{
    (void)ud;
    /* server-everything sends no message; the SDK server sends "step N". */
    if (total == 3 && progress == progress_steps + 1 && (!message || !strncmp(message, "step ", 5)))
        progress_steps++;
}

/* Answers the three kinds of input the servers ask for. */
static mcp_status on_input(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w, char *msg,
                           size_t cap, void *ud)
{
    (void)c;
    (void)params;
    (void)msg;
    (void)cap;
    (void)ud;
    if (!strcmp(method, "elicitation/create")) {
        mcp_jw_key(w, "action");
        mcp_jw_string(w, "accept");
        mcp_jw_key(w, "content");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "name");
        mcp_jw_string(w, "Ada");
        mcp_jw_object_end(w);
        return MCP_OK;
    }
    if (!strcmp(method, "roots/list")) {
        mcp_jw_key(w, "roots");
        mcp_jw_array_begin(w);
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "uri");
        mcp_jw_string(w, "file:///cases");
        mcp_jw_key(w, "name");
        mcp_jw_string(w, "cases");
        mcp_jw_object_end(w);
        mcp_jw_array_end(w);
        return MCP_OK;
    }
    if (!strcmp(method, "sampling/createMessage")) {
        mcp_jw_key(w, "role");
        mcp_jw_string(w, "assistant");
        mcp_jw_key(w, "content");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "type");
        mcp_jw_string(w, "text");
        mcp_jw_key(w, "text");
        mcp_jw_string(w, "Paris");
        mcp_jw_object_end(w);
        mcp_jw_key(w, "model");
        mcp_jw_string(w, "interop-model");
        mcp_jw_key(w, "stopReason");
        mcp_jw_string(w, "endTurn");
        return MCP_OK;
    }
    return MCP_ERR_UNSUPPORTED;
}

static mcp_client *connect_node(const char *what, const char *script, const char *arg, const char *version)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", g_dir, script);
    const char *argv[] = {"node", path, arg, NULL};
    mcp_stdio_client_opts so;
    memset(&so, 0, sizeof so);
    so.argv = argv;
    so.stderr_mode = MCP_STDERR_CAPTURE;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "libmcp-interop";
    o.version = "1.0.0";
    o.protocol_version = version;
    o.capabilities = "{\"elicitation\":{},\"roots\":{\"listChanged\":true},\"sampling\":{}}";
    o.on_input = on_input;
    o.timeout_ms = 20000;
    o.connect_timeout_ms = 20000;
    mcp_client *c = NULL;
    mcp_error err;
    char name[128];
    snprintf(name, sizeof name, "%s.connect", what);
    mcp_status st = mcp_client_connect_stdio(&c, &o, &so, &err);
    CHECK(name, st == MCP_OK, "%s: %s", mcp_status_name(st), err.message);
    return st == MCP_OK ? c : NULL;
}

/* A node server over HTTP: started here, stopped by stop_http(). */
typedef struct http_peer {
    pid_t pid;
    char url[256];
} http_peer;

/*
 * Starts `node SCRIPT ARGS...` and waits for "listening on URL" on its
 * stdout (sdk_server.mjs), or for the port it was given to accept
 * connections (server-everything prints its own banner on stderr).
 */
static int start_http(http_peer *hp, const char *script, const char *a1, const char *a2, unsigned port)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", g_dir, script);
    int fds[2];
    if (pipe(fds))
        return -1;
    hp->pid = fork();
    if (hp->pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(port ? null : fds[1], 1); /* server-everything chats on stdout */
        close(fds[0]);
        close(fds[1]);
        if (port) {
            char env[32];
            snprintf(env, sizeof env, "PORT=%u", port);
            putenv(env);
        }
        execlp("node", "node", path, a1, a2, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    hp->url[0] = '\0';
    if (!port) {
        FILE *f = fdopen(fds[0], "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "listening on %255s", hp->url) == 1)
                break;
        if (f)
            fclose(f);
    } else {
        close(fds[0]);
        /* Up to 30 s for node to listen (a cold start on a loaded machine
         * is slow); a peer that exited (port taken after all) is a failure. */
        for (int i = 0; i < 300 && !hp->url[0]; i++) {
            if (waitpid(hp->pid, NULL, WNOHANG) == hp->pid) {
                hp->pid = -1;
                break;
            }
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a;
            memset(&a, 0, sizeof a);
            a.sin_family = AF_INET;
            a.sin_port = htons((uint16_t)port);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
                snprintf(hp->url, sizeof hp->url, "http://127.0.0.1:%u/mcp", port);
            close(s);
            if (!hp->url[0])
                usleep(100000);
        }
    }
    return hp->url[0] ? 0 : -1;
}

static void stop_http(http_peer *hp)
{
    if (hp->pid > 0) {
        kill(hp->pid, SIGTERM);
        waitpid(hp->pid, NULL, 0);
    }
}

static mcp_client *connect_url(const char *what, const char *url, const char *version)
{
    mcp_http_client_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.url = url;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "libmcp-interop";
    o.version = "1.0.0";
    o.protocol_version = version;
    o.capabilities = "{\"elicitation\":{},\"roots\":{\"listChanged\":true},\"sampling\":{}}";
    o.on_input = on_input;
    o.timeout_ms = 20000;
    o.connect_timeout_ms = 20000;
    mcp_client *c = NULL;
    mcp_error err;
    char name[128];
    snprintf(name, sizeof name, "%s.connect", what);
    mcp_status st = mcp_client_connect_http(&c, &o, &ho, &err);
    CHECK(name, st == MCP_OK, "%s: %s", mcp_status_name(st), err.message);
    return st == MCP_OK ? c : NULL;
}

/*
 * The SDK's server, through `c`. `tag` names the checks; `stateless` says
 * the server keeps no session (it cannot ask the client for input then).
 */
static void sdk_checks(mcp_client *c, const char *tag, const char *version, int stateless);

static void sdk_server(const char *version)
{
    mcp_client *c = connect_node(version ? "sdk.forced" : "sdk", "sdk_server.mjs", NULL, version);
    if (!c)
        return;
    sdk_checks(c, version ? version : "dual", version, 0);
}

static void sdk_server_http(int stateless)
{
    http_peer hp;
    const char *tag = stateless ? "http_stateless" : "http";
    char n[64];
    snprintf(n, sizeof n, "sdk.%s.start", tag);
    int ok = start_http(&hp, "sdk_server.mjs", "--http", stateless ? "--stateless" : NULL, 0) == 0;
    CHECK(n, ok, "the SDK server did not start");
    if (ok) {
        snprintf(n, sizeof n, "sdk.%s", tag);
        mcp_client *c = connect_url(n, hp.url, NULL);
        if (c)
            sdk_checks(c, tag, NULL, stateless);
    }
    stop_http(&hp);
}

static void sdk_checks(mcp_client *c, const char *tag, const char *version, int stateless)
{
    char n[160];
    mcp_response *r;
    mcp_error err;
    /* The SDK 1.x server is legacy: the dual-era probe falls back to initialize. */
    snprintf(n, sizeof n, "sdk.%s.version", tag);
    CHECK(n, !mcp_client_is_modern(c) && !strcmp(mcp_client_protocol_version(c), version ? version : "2025-11-25"),
          "got %s", mcp_client_protocol_version(c));
    snprintf(n, sizeof n, "sdk.%s.server_info", tag);
    CHECK(n, mcp_json_str_eq(mcp_json_get(mcp_client_server_info(c), "name"), "sdk-reference"), "serverInfo");

    mcp_status st = mcp_client_list_tools(c, &r, &err);
    const mcp_json *tools = mcp_json_get(mcp_response_result(r), "tools");
    snprintf(n, sizeof n, "sdk.%s.tools_list", tag);
    CHECK(n, st == MCP_OK && mcp_json_len(tools) == 4, "%s, %zu tools", mcp_status_name(st), mcp_json_len(tools));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "add", "{\"a\":2,\"b\":3}", NULL, &r, &err);
    snprintf(n, sizeof n, "sdk.%s.call_structured", tag);
    CHECK(n, st == MCP_OK && !strcmp(text0(r), "5") &&
                 mcp_json_int(mcp_json_get(mcp_json_get(mcp_response_result(r), "structuredContent"), "sum")) == 5,
          "%s %s", mcp_status_name(st), err.message);
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "add", "{\"a\":\"x\"}", NULL, &r, &err);
    snprintf(n, sizeof n, "sdk.%s.invalid_arguments", tag);
    CHECK(n, (st == MCP_OK && mcp_response_is_tool_error(r)) || (st == MCP_ERR_PROTOCOL && err.rpc_code == -32602),
          "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "fail", NULL, NULL, &r, &err);
    snprintf(n, sizeof n, "sdk.%s.tool_error", tag);
    CHECK(n, st == MCP_OK && mcp_response_is_tool_error(r) && !strcmp(text0(r), "it failed"), "%s",
          mcp_status_name(st));
    mcp_response_free(r);

    progress_steps = 0;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = on_progress;
    st = mcp_client_call_tool(c, "count", NULL, &ro, &r, &err);
    snprintf(n, sizeof n, "sdk.%s.progress", tag);
    CHECK(n, st == MCP_OK && progress_steps == 3 && !strcmp(text0(r), "counted"), "%s, %d steps",
          mcp_status_name(st), progress_steps);
    mcp_response_free(r);

    if (!stateless) { /* asking the client needs a session */
        st = mcp_client_call_tool(c, "whoami", NULL, NULL, &r, &err);
        snprintf(n, sizeof n, "sdk.%s.elicitation", tag);
        CHECK(n, st == MCP_OK && !strcmp(text0(r), "hello Ada"), "%s '%s' %s", mcp_status_name(st), text0(r),
              err.message);
        mcp_response_free(r);
    }

    st = mcp_client_read_resource(c, "doc://readme", &r, &err);
    snprintf(n, sizeof n, "sdk.%s.read_resource", tag);
    CHECK(n, st == MCP_OK && mcp_json_str_eq(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "contents"), 0), "text"),
                                             "read me"),
          "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_read_resource(c, "case://42", &r, &err);
    snprintf(n, sizeof n, "sdk.%s.read_template", tag);
    CHECK(n, st == MCP_OK && mcp_json_str_eq(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "contents"), 0), "text"),
                                             "case 42"),
          "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_get_prompt(c, "review", "{\"caseId\":\"C-7\"}", &r, &err);
    const mcp_json *msg0 = mcp_json_at(mcp_json_get(mcp_response_result(r), "messages"), 0);
    snprintf(n, sizeof n, "sdk.%s.get_prompt", tag);
    CHECK(n, st == MCP_OK && mcp_json_str_eq(mcp_json_get(mcp_json_get(msg0, "content"), "text"), "Review C-7"), "%s",
          mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_complete(c, "{\"type\":\"ref/prompt\",\"name\":\"review\"}", "caseId", "C", NULL, &r, &err);
    const mcp_json *values = mcp_json_get(mcp_json_get(mcp_response_result(r), "completion"), "values");
    snprintf(n, sizeof n, "sdk.%s.complete", tag);
    CHECK(n, st == MCP_OK && mcp_json_len(values) == 2 && mcp_json_str_eq(mcp_json_at(values, 0), "C-1"), "%s",
          mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "nope", NULL, NULL, &r, &err);
    snprintf(n, sizeof n, "sdk.%s.unknown_tool", tag);
    CHECK(n, (st == MCP_ERR_PROTOCOL && err.rpc_code == -32602) || (st == MCP_OK && mcp_response_is_tool_error(r)),
          "%s %d", mcp_status_name(st), err.rpc_code);
    mcp_response_free(r);

    snprintf(n, sizeof n, "sdk.%s.ping", tag);
    st = mcp_client_ping(c, &err);
    CHECK(n, st == MCP_OK, "%s", mcp_status_name(st));
    mcp_client_close(c);
}

static int has_tool(const mcp_json *tools, const char *name)
{
    for (size_t i = 0; i < mcp_json_len(tools); i++)
        if (mcp_json_str_eq(mcp_json_get(mcp_json_at(tools, i), "name"), name))
            return 1;
    return 0;
}

static void everything_checks(mcp_client *c, const char *tag);

/* "<tag>.<check>" in a static buffer (the test is single-threaded). */
static const char *nm(const char *tag, const char *check)
{
    static char b[128];
    snprintf(b, sizeof b, "%s.%s", tag, check);
    return b;
}

static void everything(void)
{
    mcp_client *c = connect_node("everything", "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
                                 "stdio", NULL);
    if (c)
        everything_checks(c, "everything");
}

/*
 * A port for a peer that takes a fixed one: below Linux's ephemeral range
 * (32768 and up), where ports bound to 0 by the tests running alongside
 * land, and free on every address right now.
 */
static unsigned free_port(unsigned from)
{
    for (unsigned p = from; p < 32768; p++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0)
            break;
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)p);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        int ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0;
        close(s);
        if (ok)
            return p;
    }
    return from;
}

/* server-everything's Streamable HTTP mode listens on $PORT. */
static void everything_http(void)
{
    http_peer hp;
    unsigned port = 20000 + (unsigned)(getpid() % 10000);
    int ok = 0;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) { /* a port taken meanwhile: another one */
        port = free_port(port + (unsigned)attempt * 7);
        ok = start_http(&hp, "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp",
                        NULL, port) == 0;
        if (!ok)
            stop_http(&hp);
    }
    CHECK("everything.http.start", ok, "server-everything did not listen on %u within 30 s (or exited)", port);
    mcp_client *c = ok ? connect_url("everything.http", hp.url, NULL) : NULL;
    if (c)
        everything_checks(c, "everything.http");
    stop_http(&hp);
}

static void everything_checks(mcp_client *c, const char *tag)
{
    mcp_response *r;
    mcp_error err;
    mcp_status st = mcp_client_list_tools(c, &r, &err);
    const mcp_json *tools = mcp_json_get(mcp_response_result(r), "tools");
    CHECK(nm(tag, "tools_list"), st == MCP_OK && has_tool(tools, "echo") && has_tool(tools, "get-sum"),
          "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "echo", "{\"message\":\"hi\"}", NULL, &r, &err);
    CHECK(nm(tag, "echo"), st == MCP_OK && !strcmp(text0(r), "Echo: hi"), "%s '%s'", mcp_status_name(st),
          text0(r));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "get-sum", "{\"a\":2,\"b\":3}", NULL, &r, &err);
    CHECK(nm(tag, "get_sum"), st == MCP_OK && strstr(text0(r), "5"), "%s '%s'", mcp_status_name(st), text0(r));
    mcp_response_free(r);

    /* structuredContent checked against the listed outputSchema. */
    st = mcp_client_call_tool(c, "get-structured-content", "{\"location\":\"New York\"}", NULL, &r, &err);
    CHECK(nm(tag, "structured_content"),
          st == MCP_OK && mcp_json_get(mcp_json_get(mcp_response_result(r), "structuredContent"), "temperature"),
          "%s %s", mcp_status_name(st), err.message);
    mcp_response_free(r);

    progress_steps = 0;
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = on_progress;
    st = mcp_client_call_tool(c, "trigger-long-running-operation", "{\"duration\":1,\"steps\":3}", &ro, &r, &err);
    CHECK(nm(tag, "progress"), st == MCP_OK && progress_steps == 3, "%s, %d steps", mcp_status_name(st),
          progress_steps);
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "trigger-sampling-request", "{\"prompt\":\"Capital of France?\",\"maxTokens\":10}",
                              NULL, &r, &err);
    CHECK(nm(tag, "sampling"), st == MCP_OK && strstr(text0(r), "Paris"), "%s '%s'", mcp_status_name(st),
          text0(r));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "get-roots-list", NULL, NULL, &r, &err);
    CHECK(nm(tag, "roots"), st == MCP_OK && strstr(text0(r), "file:///cases"), "%s '%s'", mcp_status_name(st),
          text0(r));
    mcp_response_free(r);

    st = mcp_client_call_tool(c, "trigger-elicitation-request", NULL, NULL, &r, &err);
    CHECK(nm(tag, "elicitation"), st == MCP_OK && !mcp_response_is_tool_error(r), "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_list_resources(c, &r, &err);
    const mcp_json *res = mcp_json_get(mcp_response_result(r), "resources");
    CHECK(nm(tag, "resources_all_pages"), st == MCP_OK && mcp_json_len(res) >= 1, "%s %zu", mcp_status_name(st),
          mcp_json_len(res));
    const char *uri = mcp_json_str(mcp_json_get(mcp_json_at(res, 0), "uri"), NULL);
    mcp_response *rr = NULL;
    st = uri ? mcp_client_read_resource(c, uri, &rr, &err) : MCP_ERR_NOT_FOUND;
    CHECK(nm(tag, "read_resource"), st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(rr), "contents")) == 1,
          "%s", mcp_status_name(st));
    mcp_response_free(rr);
    mcp_response_free(r);

    st = mcp_client_list_resource_templates(c, &r, &err);
    CHECK(nm(tag, "templates"), st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(r), "resourceTemplates")) >= 1,
          "%s", mcp_status_name(st));
    mcp_response_free(r);

    st = mcp_client_get_prompt(c, "args-prompt", "{\"city\":\"Paris\"}", &r, &err);
    CHECK(nm(tag, "get_prompt"), st == MCP_OK && mcp_json_len(mcp_json_get(mcp_response_result(r), "messages")) >= 1,
          "%s %s", mcp_status_name(st), err.message);
    mcp_response_free(r);

    st = mcp_client_complete(c, "{\"type\":\"ref/prompt\",\"name\":\"completable-prompt\"}", "department", "E", NULL,
                             &r, &err);
    const mcp_json *values = mcp_json_get(mcp_json_get(mcp_response_result(r), "completion"), "values");
    CHECK(nm(tag, "complete"), st == MCP_OK && mcp_json_len(values) >= 1, "%s %s", mcp_status_name(st),
          err.message);
    mcp_response_free(r);

    st = mcp_client_ping(c, &err);
    CHECK(nm(tag, "ping"), st == MCP_OK, "%s", mcp_status_name(st));
    mcp_client_close(c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: client_peers INTEROP_DIR\n");
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    sdk_server(NULL);
    sdk_server("2025-06-18");
    sdk_server_http(0);
    sdk_server_http(1);
    everything();
    everything_http();
    printf("client_peers: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
