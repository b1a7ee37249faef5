/*
 * Unit tests for the client core through a scripted in-memory transport:
 * what goes on the wire (the 2026-07-28 _meta, Mcp-Name and Mcp-Param-*
 * header values, legacy initialize), x-mcp-header validation, the -32022
 * retry, input_required rounds, and what callers get back.
 *
 * The transport answers each request synchronously from a script (a
 * function of the method and the request), from inside send(), so every
 * test is deterministic.
 */
#include "client/client_internal.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SENT 64

typedef struct sent {
    char *frame;
    char *method;
    char *name;          /* Mcp-Name, or NULL */
    char *headers[16];   /* Mcp-Param-* lines */
    int nheaders;
    char *version;
    int modern;
    uint64_t id;
} sent;

typedef struct fake {
    mcp__ctransport base;
    /* Returns the response frame for a request (malloc'ed), or NULL for none. */
    char *(*script)(struct fake *f, const sent *s, const mcp_json *req);
    sent log[MAX_SENT];
    int n;
    int calls;           /* scripted state */
    int readied;
} fake;

static char *dupz(const char *s)
{
    return s ? strdup(s) : NULL;
}

static mcp_status fake_send(mcp__ctransport *t, const mcp__out *o)
{
    fake *f = (fake *)t;
    if (f->n == MAX_SENT)
        return MCP_ERR_CLOSED;
    sent *s = &f->log[f->n++];
    memset(s, 0, sizeof *s);
    s->frame = strndup(o->frame, o->len);
    s->method = dupz(o->method);
    s->name = dupz(o->name);
    for (const char *const *h = o->param_headers; h && *h && s->nheaders < 16; h++)
        s->headers[s->nheaders++] = strdup(*h);
    s->version = dupz(o->version);
    s->modern = o->modern;
    s->id = o->id;
    if (o->kind != MCP_RPC_REQUEST)
        return MCP_OK;
    mcp_json_doc *doc;
    if (mcp_json_parse(&doc, o->frame, o->len, NULL, NULL) != MCP_OK)
        return MCP_OK;
    char *answer = f->script(f, s, mcp_json_doc_root(doc));
    mcp_json_doc_free(doc);
    if (answer) {
        mcp__client_on_frame(f->base.client, answer, strlen(answer));
        free(answer);
    }
    return MCP_OK;
}

static int fake_cancel(mcp__ctransport *t, uint64_t id, int modern)
{
    (void)t;
    (void)id;
    (void)modern;
    return 0;
}

static void fake_ready(mcp__ctransport *t, const char *version, int modern)
{
    (void)version;
    (void)modern;
    ((fake *)t)->readied = 1;
}

static void fake_close(mcp__ctransport *t)
{
    (void)t; /* the test owns and frees the log */
}

static const mcp__ctransport_ops g_fake_ops = {fake_send, fake_cancel, fake_ready, fake_close};

static void fake_free(fake *f)
{
    for (int i = 0; i < f->n; i++) {
        free(f->log[i].frame);
        free(f->log[i].method);
        free(f->log[i].name);
        for (int k = 0; k < f->log[i].nheaders; k++)
            free(f->log[i].headers[k]);
        free(f->log[i].version);
    }
}

/* "{"jsonrpc":"2.0","id":<id>,<tail>}" */
static char *answer(const mcp_json *req, const char *tail)
{
    char *out = malloc(strlen(tail) + 64);
    sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%lld,%s}", (long long)mcp_json_int(mcp_json_get(req, "id")), tail);
    return out;
}

static const char *g_tools;

static char *modern_script(fake *f, const sent *s, const mcp_json *req)
{
    (void)f;
    if (!strcmp(s->method, "server/discover"))
        return answer(req, "\"result\":{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
                           "\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":"
                           "{\"name\":\"scripted\",\"version\":\"2\"}}}");
    if (!strcmp(s->method, "tools/list"))
        return answer(req, g_tools);
    if (!strcmp(s->method, "tools/call"))
        return answer(req, "\"result\":{\"content\":[],\"resultType\":\"complete\"}");
    return answer(req, "\"error\":{\"code\":-32601,\"message\":\"nope\"}");
}

static mcp_status start(fake *f, mcp_client **c, const char *version, const char *caps)
{
    f->base.ops = &g_fake_ops;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "unit";
    o.version = "9.9";
    o.protocol_version = version;
    o.capabilities = caps;
    o.discover_timeout_ms = 200;
    mcp_status st = mcp__client_new(c, &o, NULL);
    if (st != MCP_OK)
        return st;
    mcp__client_attach(*c, &f->base);
    st = mcp__client_handshake(*c, NULL);
    if (st != MCP_OK) {
        mcp_client_close(*c);
        *c = NULL;
    }
    return st;
}

static const char *find_header(const sent *s, const char *prefix)
{
    for (int i = 0; i < s->nheaders; i++)
        if (!strncmp(s->headers[i], prefix, strlen(prefix)))
            return s->headers[i];
    return NULL;
}

static void test_modern_meta_and_headers(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.script = modern_script;
    g_tools = "\"result\":{\"tools\":[{\"name\":\"test_custom_headers\",\"inputSchema\":{\"type\":\"object\","
              "\"properties\":{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
              "\"priority\":{\"type\":\"integer\",\"x-mcp-header\":\"Priority\"},"
              "\"verbose\":{\"type\":\"boolean\",\"x-mcp-header\":\"Verbose\"},"
              "\"empty_val\":{\"type\":\"string\",\"x-mcp-header\":\"EmptyVal\"},"
              "\"method_val\":{\"type\":\"string\",\"x-mcp-header\":\"Method\"},"
              "\"non_ascii\":{\"type\":\"string\",\"x-mcp-header\":\"NonAscii\"},"
              "\"padded\":{\"type\":\"string\",\"x-mcp-header\":\"Whitespace\"},"
              "\"internal\":{\"type\":\"string\",\"x-mcp-header\":\"InternalSpace\"},"
              "\"crlf\":{\"type\":\"string\",\"x-mcp-header\":\"CrLf\"},"
              "\"float_val\":{\"type\":\"number\"},\"query\":{\"type\":\"string\"}}}},"
              "{\"name\":\"bad_number\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"number\","
              "\"x-mcp-header\":\"Score\"}}}},"
              "{\"name\":\"bad_dup\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
              "\"x-mcp-header\":\"MyField\"},\"b\":{\"type\":\"string\",\"x-mcp-header\":\"myfield\"}}}},"
              "{\"name\":\"bad_space\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
              "\"x-mcp-header\":\"My Region\"}}}},"
              "{\"name\":\"bad_empty\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
              "\"x-mcp-header\":\"\"}}}}],\"resultType\":\"complete\"}";
    mcp_client *c;
    T_OK(start(&f, &c, NULL, "{\"elicitation\":{}}"));
    T_TRUE(mcp_client_is_modern(c));
    T_TRUE(f.readied);
    T_TRUE(mcp_json_str_eq(mcp_json_get(mcp_client_server_info(c), "name"), "scripted"));
    mcp_response *r;
    T_OK(mcp_client_list_tools(c, &r, NULL));
    const mcp_json *tools = mcp_json_get(mcp_response_result(r), "tools");
    T_EQ_SIZE(mcp_json_len(tools), 1); /* the four invalid tools are dropped */
    mcp_response_free(r);
    T_OK(mcp_client_call_tool(c, "test_custom_headers",
                              "{\"region\":\"us-west1\",\"priority\":42,\"verbose\":false,\"empty_val\":\"\","
                              "\"method_val\":\"test-method\",\"non_ascii\":\"Hello, \xe4\xb8\x96\xe7\x95\x8c\","
                              "\"padded\":\" padded \",\"internal\":\"us west 1\",\"crlf\":\"a\\r\\nb\","
                              "\"float_val\":3.5,\"query\":\"SELECT 1\"}",
                              NULL, &r, NULL));
    mcp_response_free(r);
    const sent *s = &f.log[f.n - 1];
    T_EQ_STR(s->method, "tools/call");
    T_EQ_STR(s->name, "test_custom_headers");
    T_EQ_STR(s->version, "2026-07-28");
    T_TRUE(s->modern);
    T_EQ_STR(find_header(s, "Mcp-Param-Region:"), "Mcp-Param-Region: us-west1");
    T_EQ_STR(find_header(s, "Mcp-Param-Priority:"), "Mcp-Param-Priority: 42");
    T_EQ_STR(find_header(s, "Mcp-Param-Verbose:"), "Mcp-Param-Verbose: false");
    T_EQ_STR(find_header(s, "Mcp-Param-EmptyVal:"), "Mcp-Param-EmptyVal: ");
    T_EQ_STR(find_header(s, "Mcp-Param-Method:"), "Mcp-Param-Method: test-method");
    T_EQ_STR(find_header(s, "Mcp-Param-NonAscii:"), "Mcp-Param-NonAscii: =?base64?SGVsbG8sIOS4lueVjA==?=");
    T_EQ_STR(find_header(s, "Mcp-Param-Whitespace:"), "Mcp-Param-Whitespace: =?base64?IHBhZGRlZCA=?=");
    T_EQ_STR(find_header(s, "Mcp-Param-InternalSpace:"), "Mcp-Param-InternalSpace: us west 1");
    T_EQ_STR(find_header(s, "Mcp-Param-CrLf:"), "Mcp-Param-CrLf: =?base64?YQ0KYg==?=");
    T_EQ_INT(s->nheaders, 9);
    /* The body: the caller's arguments and _meta kept, ours added. */
    mcp_json_doc *d;
    T_OK(mcp_json_parse(&d, s->frame, strlen(s->frame), NULL, NULL));
    const mcp_json *meta = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "params"), "_meta");
    T_TRUE(mcp_json_str_eq(mcp_json_get(meta, "io.modelcontextprotocol/protocolVersion"), "2026-07-28"));
    T_NOT_NULL(mcp_json_get(mcp_json_get(meta, "io.modelcontextprotocol/clientCapabilities"), "elicitation"));
    T_TRUE(mcp_json_str_eq(mcp_json_get(mcp_json_get(meta, "io.modelcontextprotocol/clientInfo"), "name"), "unit"));
    mcp_json_doc_free(d);
    /* A caller's own _meta members are kept beside ours. */
    T_OK(mcp_client_request(c, "tools/call", "{\"name\":\"x\",\"_meta\":{\"mine\":1}}", NULL, &r, NULL));
    mcp_response_free(r);
    s = &f.log[f.n - 1];
    T_TRUE(strstr(s->frame, "\"_meta\":{\"mine\":1,\"io.modelcontextprotocol/protocolVersion\"") != NULL);
    /* A null argument sends no header. */
    T_OK(mcp_client_call_tool(c, "test_custom_headers", "{\"region\":\"us-east1\",\"verbose\":null}", NULL, &r, NULL));
    mcp_response_free(r);
    s = &f.log[f.n - 1];
    T_EQ_INT(s->nheaders, 1);
    T_EQ_STR(s->headers[0], "Mcp-Param-Region: us-east1");
    /* Every modern request carries the _meta; discover too. */
    for (int i = 0; i < f.n; i++)
        T_TRUE(strstr(f.log[i].frame, "\"io.modelcontextprotocol/clientInfo\"") != NULL);
    mcp_client_close(c);
    fake_free(&f);
}

/* The first request gets -32022 listing 2026-07-28: resent once, new id. */
static char *reject_first_script(fake *f, const sent *s, const mcp_json *req)
{
    if (f->calls++ == 0)
        return answer(req, "\"error\":{\"code\":-32022,\"message\":\"Unsupported protocol version\","
                           "\"data\":{\"supported\":[\"2026-07-28\"],\"requested\":\"2026-07-28\"}}");
    return modern_script(f, s, req);
}

static void test_unsupported_version_retry(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.script = reject_first_script;
    mcp_client *c;
    T_OK(start(&f, &c, NULL, NULL));
    T_TRUE(mcp_client_is_modern(c));
    T_EQ_INT(f.n, 2);
    T_TRUE(f.log[0].id != f.log[1].id);
    T_EQ_STR(f.log[1].method, "server/discover");
    mcp_client_close(c);
    fake_free(&f);
}

static char *old_only_script(fake *f, const sent *s, const mcp_json *req)
{
    (void)f;
    (void)s;
    return answer(req, "\"error\":{\"code\":-32022,\"message\":\"Unsupported protocol version\","
                       "\"data\":{\"supported\":[\"2027-01-01\"]}}");
}

static void test_modern_error_does_not_fall_back(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.script = old_only_script;
    mcp_client *c;
    T_STATUS(start(&f, &c, NULL, NULL), MCP_ERR_UNSUPPORTED);
    T_EQ_INT(f.n, 1); /* no initialize after a modern error */
    fake_free(&f);
}

static char *legacy_script(fake *f, const sent *s, const mcp_json *req)
{
    (void)f;
    if (!strcmp(s->method, "server/discover"))
        return answer(req, "\"error\":{\"code\":-32600,\"message\":\"Server not initialized\"}");
    if (!strcmp(s->method, "initialize"))
        return answer(req, "\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                           "\"serverInfo\":{\"name\":\"old\",\"version\":\"1\"}}");
    if (!strcmp(s->method, "tools/call"))
        return answer(req, "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"isError\":true}");
    return answer(req, "\"result\":{}");
}

static void test_legacy_fallback(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.script = legacy_script;
    mcp_client *c;
    T_OK(start(&f, &c, NULL, "{\"roots\":{}}"));
    T_FALSE(mcp_client_is_modern(c));
    T_EQ_STR(mcp_client_protocol_version(c), "2025-06-18");
    T_EQ_INT(f.n, 3); /* discover, initialize, notifications/initialized */
    T_EQ_STR(f.log[1].method, "initialize");
    T_NULL(f.log[1].version); /* before a version is negotiated */
    T_TRUE(strstr(f.log[1].frame, "\"protocolVersion\":\"2025-11-25\"") != NULL);
    T_TRUE(strstr(f.log[1].frame, "\"clientInfo\":{\"name\":\"unit\",\"version\":\"9.9\"}") != NULL);
    T_TRUE(strstr(f.log[1].frame, "\"capabilities\":{\"roots\":{}}") != NULL);
    T_EQ_STR(f.log[2].method, "notifications/initialized");
    T_EQ_STR(f.log[2].version, "2025-06-18");
    mcp_response *r;
    T_OK(mcp_client_call_tool(c, "t", NULL, NULL, &r, NULL));
    T_TRUE(mcp_response_is_tool_error(r));
    mcp_response_free(r);
    const sent *s = &f.log[f.n - 1];
    T_FALSE(s->modern);
    T_NULL(s->name); /* no Mcp-Name in the legacy era */
    T_TRUE(strstr(s->frame, "io.modelcontextprotocol") == NULL);
    mcp_client_close(c);
    fake_free(&f);
}

/* input_required: the retry carries inputResponses, the exact requestState, a new id. */
static char *mrtr_script(fake *f, const sent *s, const mcp_json *req)
{
    if (strcmp(s->method, "tools/call") != 0)
        return modern_script(f, s, req);
    const mcp_json *params = mcp_json_get(req, "params");
    if (!mcp_json_get(params, "inputResponses"))
        return answer(req, "\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"r\":{\"method\":"
                           "\"roots/list\",\"params\":{}}},\"requestState\":\"opaque \\\"state\\\"\"}");
    const mcp_json *roots = mcp_json_get(mcp_json_get(mcp_json_get(params, "inputResponses"), "r"), "roots");
    int ok = mcp_json_len(roots) == 1 && mcp_json_str_eq(mcp_json_get(params, "requestState"), "opaque \"state\"");
    return answer(req, ok ? "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"good\"}],\"resultType\":\"complete\"}"
                          : "\"error\":{\"code\":-32602,\"message\":\"bad retry\"}");
}

static mcp_status give_roots(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w, char *msg,
                             size_t cap, void *ud)
{
    (void)c;
    (void)params;
    (void)msg;
    (void)cap;
    (void)ud;
    if (strcmp(method, "roots/list") != 0)
        return MCP_ERR_UNSUPPORTED;
    mcp_jw_key(w, "roots");
    mcp_jw_array_begin(w);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "uri");
    mcp_jw_string(w, "file:///cases");
    mcp_jw_object_end(w);
    mcp_jw_array_end(w);
    return MCP_OK;
}

static void test_input_required_round(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.base.ops = &g_fake_ops;
    f.script = mrtr_script;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.capabilities = "{\"roots\":{}}";
    o.on_input = give_roots;
    mcp_client *c;
    T_OK(mcp__client_new(&c, &o, NULL));
    mcp__client_attach(c, &f.base);
    T_OK(mcp__client_handshake(c, NULL));
    mcp_response *r;
    mcp_error err;
    mcp_status st = mcp_client_call_tool(c, "t", NULL, NULL, &r, &err);
    T_OK(st);
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "content"), 0), "text"), NULL),
             "good");
    mcp_response_free(r);
    T_TRUE(f.log[f.n - 1].id != f.log[f.n - 2].id);
    mcp_client_close(c);
    fake_free(&f);
}

/* A silent server: the request times out and its late answer is dropped. */
static char *silent_script(fake *f, const sent *s, const mcp_json *req)
{
    if (!strcmp(s->method, "tools/call"))
        return NULL;
    return modern_script(f, s, req);
}

static void test_timeout_and_late_answer(void)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.script = silent_script;
    mcp_client *c;
    T_OK(start(&f, &c, "2026-07-28", NULL));
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.timeout_ms = 50;
    mcp_response *r;
    mcp_error err;
    T_STATUS(mcp_client_call_tool(c, "t", NULL, &ro, &r, &err), MCP_ERR_TIMEOUT);
    T_NULL(r);
    uint64_t id = 0;
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.log[i].method, "tools/call"))
            id = f.log[i].id;
    T_TRUE(id > 0);
    char late[128];
    snprintf(late, sizeof late, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{}}", (unsigned long long)id);
    mcp__client_on_frame(c, late, strlen(late)); /* a tombstone: dropped, the client lives on */
    T_OK(mcp_client_list_tools(c, &r, NULL));
    mcp_response_free(r);
    mcp_client_close(c);
    fake_free(&f);
}

static void test_bad_options(void)
{
    mcp_client *c;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.protocol_version = "2099-01-01";
    mcp_error err;
    T_STATUS(mcp__client_new(&c, &o, &err), MCP_ERR_UNSUPPORTED);
    o.protocol_version = NULL;
    o.capabilities = "[1]";
    T_STATUS(mcp__client_new(&c, &o, &err), MCP_ERR_INVALID_ARG);
    mcp_client_close(NULL);
    T_STATUS(mcp_client_request(NULL, "x", NULL, NULL, NULL, &err), MCP_ERR_INVALID_ARG);
}

static void test_new_nomem(void)
{
    mcp_client *c = NULL;
    mcp_status st;
    T_NOMEM_LOOP(st, { st = mcp__client_new(&c, NULL, NULL); }, { mcp_client_close(c); });
}

/* The transcript holds what users typed: created owner-only (0600) whatever the umask. */
static void test_transcript_mode(void)
{
    char dir[] = "/tmp/mcp-client-transcript-XXXXXX";
    T_NOT_NULL(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    mode_t old = umask(022);
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.transcript_path = path;
    mcp_client *c = NULL;
    mcp_status st = mcp__client_new(&c, &o, NULL);
    umask(old);
    T_OK(st);
    mcp_client_close(c);
    struct stat sb;
    int rc = stat(path, &sb);
    unlink(path);
    rmdir(dir);
    T_EQ_INT(rc, 0);
    T_EQ_INT((int)(sb.st_mode & 0777), 0600);
}

TEST_MAIN(TEST(test_modern_meta_and_headers), TEST(test_unsupported_version_retry),
          TEST(test_modern_error_does_not_fall_back), TEST(test_legacy_fallback), TEST(test_input_required_round),
          TEST(test_timeout_and_late_answer), TEST(test_bad_options), TEST(test_new_nomem),
          TEST(test_transcript_mode))
