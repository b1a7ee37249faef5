/*
 * Unit tests for option and definition structs across library versions
 * (include/mcp/base.h, "Option structs and the ABI"): the _sized entry
 * points with the size of an older header, of a newer header that left its
 * new fields zero, of a newer header that set them, and with size 0.
 *
 * An "older header" is simulated with the smallest size a struct ever had
 * (its 0.1.0 size, MCP__V0_* in src/util/abi.h) and garbage in the memory
 * past it; while a struct has not grown that is its full size, so the
 * fields that must take their defaults are checked on made-up structs
 * through the helper itself (test_helper_*).
 */
#include "mcp/mcp.h"
#include "util/abi.h"
#include "testlib.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define GARBAGE 0xA5
#define TAIL 24 /* bytes a "newer header" adds */

/* A struct as a newer header would have it: the known part, then TAIL more bytes. */
#define NEWER(type)                                                                                          \
    struct {                                                                                                 \
        type s;                                                                                              \
        unsigned char tail[TAIL];                                                                            \
    }
#define NEWER_SIZE(type) (sizeof(type) + TAIL)

static const char *const UNKNOWN_FIELDS = "has fields this libmcp " MCP_VERSION_STRING
                                          " does not know: update libmcp";

/* The message of an UNSUPPORTED size names the struct. */
static int names_struct(const mcp_error *e, const char *type)
{
    char want[160];
    snprintf(want, sizeof want, "%s %s", type, UNKNOWN_FIELDS);
    return strcmp(e->message, want) == 0 && e->status == MCP_ERR_UNSUPPORTED;
}

/* ---- the helper on made-up structs ---------------------------------------- */

/* Release 1 of a made-up struct, and release 2 with two fields more. */
typedef struct v1_opts {
    int a;
    const char *b;
} v1_opts;

typedef struct v2_opts {
    int a;
    const char *b;
    unsigned c;
    double d;
} v2_opts;

#define V1_MIN MCP__SIZE_THROUGH(v1_opts, b)

static void test_helper_older_header(void)
{
    /* A v1 caller: its struct, then whatever its stack holds. */
    unsigned char mem[sizeof(v2_opts)];
    memset(mem, GARBAGE, sizeof mem);
    v1_opts old;
    memset(&old, 0, sizeof old);
    old.a = 7;
    old.b = "bee";
    memcpy(mem, &old, sizeof old);
    v2_opts got;
    memset(&got, GARBAGE, sizeof got);
    mcp_error e;
    mcp_error_clear(&e);
    T_OK(mcp__opts_in(&got, sizeof got, mem, sizeof(v1_opts), V1_MIN, "v2_opts", &e));
    T_EQ_INT(got.a, 7);
    T_EQ_STR(got.b, "bee");
    T_EQ_INT(got.c, 0);  /* the fields v1 lacks: defaults, not the garbage */
    T_EQ_DBL(got.d, 0.0);
    T_EQ_INT(e.status, MCP_OK);

    /* A binding that packs the struct: through the last v1 field only. */
    memset(&got, GARBAGE, sizeof got);
    T_OK(mcp__opts_in(&got, sizeof got, mem, V1_MIN, V1_MIN, "v2_opts", &e));
    T_EQ_INT(got.a, 7);
    T_EQ_INT(got.c, 0);

    /* No struct: all defaults, whatever the size says. */
    memset(&got, GARBAGE, sizeof got);
    T_OK(mcp__opts_in(&got, sizeof got, NULL, 0, V1_MIN, "v2_opts", &e));
    T_EQ_INT(got.a, 0);
    T_NULL(got.b);
    T_EQ_INT(got.c, 0);
}

static void test_helper_newer_header(void)
{
    /* A v2 caller against a v1 library. */
    v2_opts newer;
    memset(&newer, 0, sizeof newer);
    newer.a = 3;
    newer.b = "x";
    v1_opts got;
    mcp_error e;
    mcp_error_clear(&e);
    T_OK(mcp__opts_in(&got, sizeof got, &newer, sizeof newer, V1_MIN, "v1_opts", &e)); /* new fields zero */
    T_EQ_INT(got.a, 3);
    T_EQ_STR(got.b, "x");

    newer.d = 1.5;
    T_STATUS(mcp__opts_in(&got, sizeof got, &newer, sizeof newer, V1_MIN, "v1_opts", &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "v1_opts"));
    T_TRUE(e.offset >= offsetof(v2_opts, d) && e.offset < sizeof(v2_opts)); /* a byte of d */
    T_EQ_INT(got.a, 3); /* the known fields were copied all the same */

    mcp_error_clear(&e);
    newer.d = 0;
    newer.c = 1;
    T_STATUS(mcp__opts_in(&got, sizeof got, &newer, sizeof newer, V1_MIN, "v1_opts", &e), MCP_ERR_UNSUPPORTED);
    T_EQ_SIZE(e.offset, offsetof(v2_opts, c));
}

static void test_helper_bad_sizes(void)
{
    v1_opts src = {1, "y"}, got;
    mcp_error e;
    mcp_error_clear(&e);
    T_STATUS(mcp__opts_in(&got, sizeof got, &src, 0, V1_MIN, "v1_opts", &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "v1_opts") != NULL);
    T_EQ_INT(got.a, 0);
    T_STATUS(mcp__opts_in(&got, sizeof got, &src, V1_MIN - 1, V1_MIN, "v1_opts", NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp__opts_in(&got, sizeof got, &src, sizeof(int), V1_MIN, "v1_opts", NULL), MCP_ERR_INVALID_ARG);
}

/* ---- JSON and JSON-RPC ----------------------------------------------------- */

static void test_json_parse(void)
{
    static const char deep[] = "[[[1]]]", flat[] = "[[1]]";
    mcp_json_doc *doc = NULL;
    mcp_error e;

    /* (a) the oldest header's size, garbage after it */
    NEWER(mcp_json_parse_opts) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_json_parse_opts);
    b.s.max_depth = 2;
    T_STATUS(mcp_json_parse_sized(&doc, deep, strlen(deep), &b.s, MCP__V0_mcp_json_parse_opts, &e), MCP_ERR_LIMIT);
    T_OK(mcp_json_parse_sized(&doc, flat, strlen(flat), &b.s, MCP__V0_mcp_json_parse_opts, &e));
    mcp_json_doc_free(doc);

    /* (b) a newer header with its new fields zero: accepted, options honoured */
    memset(&b, 0, sizeof b);
    b.s.max_depth = 2;
    T_STATUS(mcp_json_parse_sized(&doc, deep, strlen(deep), &b.s, NEWER_SIZE(mcp_json_parse_opts), &e),
             MCP_ERR_LIMIT);
    T_OK(mcp_json_parse_sized(&doc, flat, strlen(flat), &b.s, NEWER_SIZE(mcp_json_parse_opts), &e));
    mcp_json_doc_free(doc);

    /* (c) a newer header that set a new field */
    b.tail[5] = 1;
    doc = NULL;
    mcp_error_clear(&e);
    T_STATUS(mcp_json_parse_sized(&doc, flat, strlen(flat), &b.s, NEWER_SIZE(mcp_json_parse_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_json_parse_opts"));
    T_EQ_SIZE(e.offset, sizeof(mcp_json_parse_opts) + 5);
    T_NULL(doc);

    /* (d) size 0, or less than any release had */
    T_STATUS(mcp_json_parse_sized(&doc, flat, strlen(flat), &b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_json_parse_opts") != NULL);
    T_STATUS(mcp_json_parse_sized(&doc, flat, strlen(flat), &b.s, MCP__V0_mcp_json_parse_opts - 1, &e),
             MCP_ERR_INVALID_ARG);
    T_NULL(doc);

    /* No options: the size does not matter. */
    T_OK(mcp_json_parse_sized(&doc, flat, strlen(flat), NULL, 0, &e));
    mcp_json_doc_free(doc);
    /* The macro passes this header's size. */
    mcp_json_parse_opts o = {0};
    o.max_depth = 2;
    T_STATUS(mcp_json_parse(&doc, deep, strlen(deep), &o, &e), MCP_ERR_LIMIT);
}

static void test_rpc_decode(void)
{
    static const char frame[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    mcp_rpc_msg m;
    mcp_error e;
    NEWER(mcp_json_parse_opts) b;
    memset(&b, 0, sizeof b);
    T_OK(mcp_rpc_decode_sized(&m, frame, strlen(frame), &b.s, NEWER_SIZE(mcp_json_parse_opts), &e));
    T_TRUE(mcp_rpc_method_is(&m, "ping"));
    mcp_rpc_msg_cleanup(&m);
    b.tail[TAIL - 1] = 0x80;
    T_STATUS(mcp_rpc_decode_sized(&m, frame, strlen(frame), &b.s, NEWER_SIZE(mcp_json_parse_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_json_parse_opts"));
    T_STATUS(mcp_rpc_decode_sized(&m, frame, strlen(frame), &b.s, 0, &e), MCP_ERR_INVALID_ARG);
}

/* ---- schema ------------------------------------------------------------------ */

static void test_schema_new(void)
{
    mcp_json_doc *doc;
    static const char text[] = "{\"type\":\"string\",\"format\":\"date\"}";
    T_OK(mcp_json_parse(&doc, text, strlen(text), NULL, NULL));
    mcp_json_doc *bad;
    T_OK(mcp_json_parse(&bad, "\"2024-13-45\"", 12, NULL, NULL));
    mcp_schema *s = NULL;
    mcp_error e;

    /* (a) */
    NEWER(mcp_schema_opts) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_schema_opts);
    b.s.flags = MCP_SCHEMA_FORMAT_ASSERT;
    T_OK(mcp_schema_new_sized(&s, mcp_json_doc_root(doc), &b.s, MCP__V0_mcp_schema_opts, &e));
    T_STATUS(mcp_schema_check(s, mcp_json_doc_root(bad), NULL), MCP_ERR_INVALID); /* the flag was read */
    mcp_schema_free(s);

    /* (b) */
    memset(&b, 0, sizeof b);
    b.s.flags = MCP_SCHEMA_FORMAT_ASSERT;
    T_OK(mcp_schema_new_sized(&s, mcp_json_doc_root(doc), &b.s, NEWER_SIZE(mcp_schema_opts), &e));
    T_STATUS(mcp_schema_check(s, mcp_json_doc_root(bad), NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);

    /* (c) */
    s = NULL;
    b.tail[0] = 1;
    T_STATUS(mcp_schema_new_sized(&s, mcp_json_doc_root(doc), &b.s, NEWER_SIZE(mcp_schema_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_schema_opts"));
    T_NULL(s);

    /* (d) */
    T_STATUS(mcp_schema_new_sized(&s, mcp_json_doc_root(doc), &b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_NULL(s);
    mcp_json_doc_free(doc);
    mcp_json_doc_free(bad);
}

/* ---- allocator -------------------------------------------------------------- */

static void test_set_allocator(void)
{
    /* testlib's counting allocator is installed; re-install it in the
     * sizes of other headers and check that allocations are still counted. */
    NEWER(mcp_allocator) b;
    memset(&b, 0, sizeof b);
    b.s.malloc_fn = t_malloc;
    b.s.realloc_fn = t_realloc;
    b.s.free_fn = t_free;
    T_OK(mcp_set_allocator_sized(&b.s, NEWER_SIZE(mcp_allocator))); /* (b) */
    b.tail[3] = 9;
    T_STATUS(mcp_set_allocator_sized(&b.s, NEWER_SIZE(mcp_allocator)), MCP_ERR_UNSUPPORTED); /* (c) */
    T_STATUS(mcp_set_allocator_sized(&b.s, 0), MCP_ERR_INVALID_ARG);                         /* (d) */
    memset(b.tail, GARBAGE, sizeof b.tail);
    T_OK(mcp_set_allocator_sized(&b.s, MCP__V0_mcp_allocator)); /* (a) */
    long live = t_live;
    void *p = mcp_malloc(16);
    T_EQ_INT(t_live, live + 1); /* still the counting allocator: no failed call replaced it */
    mcp_free(p);
}

/* ---- server: a connection that records what it sends ----------------------- */

typedef struct sink {
    pthread_mutex_t mu;
    char text[65536];
    size_t len;
} sink;

static sink g_sink = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static mcp_status sink_send(const char *frame, size_t len, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&g_sink.mu);
    if (g_sink.len + len + 2 < sizeof g_sink.text) {
        memcpy(g_sink.text + g_sink.len, frame, len);
        g_sink.len += len;
        g_sink.text[g_sink.len++] = '\n';
        g_sink.text[g_sink.len] = '\0';
    }
    pthread_mutex_unlock(&g_sink.mu);
    return MCP_OK;
}

static void sink_reset(void)
{
    pthread_mutex_lock(&g_sink.mu);
    g_sink.len = 0;
    g_sink.text[0] = '\0';
    pthread_mutex_unlock(&g_sink.mu);
}

/* Waits up to 5 s for `needle` in what the server sent. */
static int sink_has(const char *needle)
{
    for (int i = 0; i < 2500; i++) {
        pthread_mutex_lock(&g_sink.mu);
        int found = strstr(g_sink.text, needle) != NULL;
        pthread_mutex_unlock(&g_sink.mu);
        if (found)
            return 1;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static void send_line(mcp_conn *c, const char *line)
{
    mcp_conn_recv(c, line, strlen(line));
}

static void initialize(mcp_conn *c)
{
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void test_server_new(void)
{
    mcp_server *srv = NULL;
    mcp_error e;

    /* (a) the oldest header's size, garbage after it; the options are read */
    NEWER(mcp_server_opts) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_server_opts);
    b.s.name = "abi-old";
    b.s.workers = 1;
    b.s.log = quiet;
    T_OK(mcp_server_new_sized(&srv, &b.s, MCP__V0_mcp_server_opts, &e));
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, sink_send, NULL));
    sink_reset();
    initialize(c);
    T_TRUE(sink_has("\"name\":\"abi-old\""));
    mcp_conn_free(c);
    mcp_server_free(srv);

    /* (b) a newer header with its new fields zero */
    memset(&b, 0, sizeof b);
    b.s.name = "abi-new";
    b.s.workers = 1;
    b.s.log = quiet;
    srv = NULL;
    T_OK(mcp_server_new_sized(&srv, &b.s, NEWER_SIZE(mcp_server_opts), &e));
    T_OK(mcp_conn_new(&c, srv, sink_send, NULL));
    sink_reset();
    initialize(c);
    T_TRUE(sink_has("\"name\":\"abi-new\""));
    mcp_conn_free(c);
    mcp_server_free(srv);

    /* (c) a newer header that set a new field: refused, nothing created */
    srv = NULL;
    b.tail[TAIL / 2] = 0x01;
    T_STATUS(mcp_server_new_sized(&srv, &b.s, NEWER_SIZE(mcp_server_opts), &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_server_opts"));
    T_NULL(srv);

    /* (d) */
    T_STATUS(mcp_server_new_sized(&srv, &b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_server_opts") != NULL);
    T_STATUS(mcp_server_new_sized(&srv, &b.s, sizeof(void *), &e), MCP_ERR_INVALID_ARG);
    T_NULL(srv);
    /* No options: any size. */
    T_OK(mcp_server_new_sized(&srv, NULL, 0, &e));
    mcp_server_free(srv);
}

static mcp_server *quiet_server(void)
{
    mcp_server_opts o = {0};
    o.workers = 1;
    o.log = quiet;
    mcp_server *srv = NULL;
    return mcp_server_new(&srv, &o, NULL) == MCP_OK ? srv : NULL;
}

static int g_freed;
static void count_free(void *p)
{
    (void)p;
    g_freed++;
}

static mcp_status echo_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_call_text(call, "echo", NULL);
}

static void test_add_tool(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    mcp_error e;
    NEWER(mcp_tool_def) b;

    /* (a) */
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_tool_def);
    b.s.name = "old_tool";
    b.s.handler = echo_tool;
    T_OK(mcp_server_add_tool_sized(srv, &b.s, MCP__V0_mcp_tool_def, &e));

    /* (b) */
    memset(&b, 0, sizeof b);
    b.s.name = "new_tool";
    b.s.handler = echo_tool;
    b.s.flags = MCP_TOOL_UNLISTED;
    T_OK(mcp_server_add_tool_sized(srv, &b.s, NEWER_SIZE(mcp_tool_def), &e));

    /* (c) refused, and user_data_free still runs once: ownership passed */
    b.s.name = "newest_tool";
    b.s.user_data_free = count_free;
    b.tail[1] = 0xff;
    g_freed = 0;
    T_STATUS(mcp_server_add_tool_sized(srv, &b.s, NEWER_SIZE(mcp_tool_def), &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_tool_def"));
    T_EQ_INT(g_freed, 1);

    /* (d) the definition is not read at all */
    g_freed = 0;
    T_STATUS(mcp_server_add_tool_sized(srv, &b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_tool_def") != NULL);
    T_EQ_INT(g_freed, 0);

    /* What was registered, with the flags each was given. */
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, sink_send, NULL));
    sink_reset();
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    T_TRUE(sink_has("\"id\":2"));
    T_TRUE(strstr(g_sink.text, "\"old_tool\"") != NULL);
    T_TRUE(strstr(g_sink.text, "\"new_tool\"") == NULL); /* unlisted */
    T_TRUE(strstr(g_sink.text, "newest_tool") == NULL);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"new_tool\"}}");
    T_TRUE(sink_has("\"id\":3,\"result\""));
    mcp_conn_free(c);
    mcp_server_free(srv);
}

static mcp_status static_read(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    (void)vars;
    (void)ud;
    return mcp_read_text(rd, uri, "text/plain", "hi");
}

static void test_add_resource(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    mcp_error e;
    NEWER(mcp_resource_def) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_resource_def);
    b.s.uri = "test://old";
    b.s.name = "old";
    b.s.handler = static_read;
    T_OK(mcp_server_add_resource_sized(srv, &b.s, MCP__V0_mcp_resource_def, &e)); /* (a) */
    memset(&b, 0, sizeof b);
    b.s.uri = "test://new";
    b.s.name = "new";
    b.s.text = "static";
    T_OK(mcp_server_add_resource_sized(srv, &b.s, NEWER_SIZE(mcp_resource_def), &e)); /* (b) */
    b.s.uri = "test://newest";
    b.s.user_data_free = count_free;
    b.tail[TAIL - 1] = 2;
    g_freed = 0;
    T_STATUS(mcp_server_add_resource_sized(srv, &b.s, NEWER_SIZE(mcp_resource_def), &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_resource_def")); /* (c) */
    T_EQ_INT(g_freed, 1);
    g_freed = 0;
    T_STATUS(mcp_server_add_resource_sized(srv, &b.s, 0, &e), MCP_ERR_INVALID_ARG); /* (d) */
    T_EQ_INT(g_freed, 0);
    T_OK(mcp_server_remove_resource(srv, "test://old"));
    T_OK(mcp_server_remove_resource(srv, "test://new"));
    T_STATUS(mcp_server_remove_resource(srv, "test://newest"), MCP_ERR_NOT_FOUND);
    mcp_server_free(srv);
}

static mcp_status hello_prompt(mcp_prompt *p, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_prompt_text(p, MCP_ROLE_USER, "hello");
}

/* Writes prompt arguments into `raw` with the stride `size` (a binding's
 * layout); the bytes past each argument's known part are left as they are. */
static void pack_args(unsigned char *raw, size_t size, const mcp_prompt_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(raw + i * size, &args[i], MCP__V0_mcp_prompt_arg);
}

static void test_add_prompt(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    mcp_error e;
    const mcp_prompt_arg args[3] = {{"first", NULL, "one", 1}, {"second", "Second", NULL, 0}, {"third", NULL, NULL, 1}};
    unsigned char raw[3 * (sizeof(mcp_prompt_arg) + TAIL)];

    /* (a) an array packed with the oldest element size (without the
     * trailing padding this header's sizeof has), garbage after it */
    memset(raw, GARBAGE, sizeof raw);
    pack_args(raw, MCP__V0_mcp_prompt_arg, args, 3);
    NEWER(mcp_prompt_def) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_prompt_def);
    b.s.name = "old_prompt";
    b.s.handler = hello_prompt;
    b.s.args = (const mcp_prompt_arg *)(void *)raw;
    b.s.nargs = 3;
    T_OK(mcp_server_add_prompt_sized(srv, &b.s, MCP__V0_mcp_prompt_def, MCP__V0_mcp_prompt_arg, &e));

    /* (b) definition and elements from a newer header, new fields zero */
    memset(raw, 0, sizeof raw);
    pack_args(raw, sizeof(mcp_prompt_arg) + TAIL, args, 3);
    memset(&b, 0, sizeof b);
    b.s.name = "new_prompt";
    b.s.handler = hello_prompt;
    b.s.args = (const mcp_prompt_arg *)(void *)raw;
    b.s.nargs = 3;
    T_OK(mcp_server_add_prompt_sized(srv, &b.s, NEWER_SIZE(mcp_prompt_def), sizeof(mcp_prompt_arg) + TAIL, &e));

    /* (c) the third element sets a field this library does not know */
    b.s.name = "newest_prompt";
    b.s.user_data_free = count_free;
    raw[2 * (sizeof(mcp_prompt_arg) + TAIL) + sizeof(mcp_prompt_arg) + 4] = 1;
    g_freed = 0;
    T_STATUS(mcp_server_add_prompt_sized(srv, &b.s, NEWER_SIZE(mcp_prompt_def), sizeof(mcp_prompt_arg) + TAIL, &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_prompt_arg"));
    T_EQ_INT(g_freed, 1);
    /* ... and the definition itself */
    b.tail[0] = 1;
    g_freed = 0;
    T_STATUS(mcp_server_add_prompt_sized(srv, &b.s, NEWER_SIZE(mcp_prompt_def), sizeof(mcp_prompt_arg), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_prompt_def"));
    T_EQ_INT(g_freed, 1);

    /* (d) size 0 for the definition, or for its elements when there are some */
    b.tail[0] = 0;
    g_freed = 0;
    T_STATUS(mcp_server_add_prompt_sized(srv, &b.s, 0, sizeof(mcp_prompt_arg), &e), MCP_ERR_INVALID_ARG);
    T_EQ_INT(g_freed, 0);
    T_STATUS(mcp_server_add_prompt_sized(srv, &b.s, sizeof b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_prompt_arg") != NULL);
    T_EQ_INT(g_freed, 1); /* the definition was good: registration failed */
    b.s.nargs = 0;
    b.s.args = NULL;
    b.s.name = "no_args";
    b.s.user_data_free = NULL;
    T_OK(mcp_server_add_prompt_sized(srv, &b.s, sizeof b.s, 0, &e)); /* no elements: their size is not read */

    /* Both registered prompts declare the three arguments, in order. */
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, sink_send, NULL));
    sink_reset();
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\"}");
    T_TRUE(sink_has("\"id\":2"));
    const char *p = strstr(g_sink.text, "\"old_prompt\"");
    T_NOT_NULL(p);
    T_NOT_NULL(strstr(g_sink.text, "\"new_prompt\""));
    T_NULL(strstr(g_sink.text, "newest_prompt"));
    for (int k = 0; k < 2; k++) {
        const char *f = strstr(p, "\"first\""), *s = strstr(p, "\"second\""), *t = strstr(p, "\"third\"");
        T_TRUE(f && s && t && f < s && s < t);
        T_NOT_NULL(strstr(p, "\"title\":\"Second\""));
        p = strstr(g_sink.text, "\"new_prompt\"");
    }
    /* A required argument is required. */
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"old_prompt\","
                 "\"arguments\":{\"first\":\"1\"}}}");
    T_TRUE(sink_has("\"id\":3,\"error\""));
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"new_prompt\","
                 "\"arguments\":{\"first\":\"1\",\"third\":\"3\"}}}");
    T_TRUE(sink_has("\"id\":4,\"result\""));
    mcp_conn_free(c);
    mcp_server_free(srv);
}

/* ---- annotations, from inside a handler ---------------------------------- */

static mcp_status g_ann[5];

static mcp_status annotated_tool(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    NEWER(mcp_annotations) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_annotations);
    b.s.audience = MCP_AUDIENCE_USER;
    b.s.priority = 0.25;
    g_ann[0] = mcp_call_text_sized(call, "old", &b.s, MCP__V0_mcp_annotations); /* (a) */
    memset(b.tail, 0, sizeof b.tail);
    b.s.priority = 0.5;
    g_ann[1] = mcp_call_resource_text_sized(call, "test://r", "text/plain", "new", &b.s,
                                            NEWER_SIZE(mcp_annotations)); /* (b) */
    b.tail[7] = 1;
    g_ann[2] = mcp_call_image_sized(call, "x", 1, "image/png", &b.s, NEWER_SIZE(mcp_annotations)); /* (c) */
    g_ann[3] = mcp_call_resource_link_sized(call, "test://l", "l", NULL, NULL, &b.s, 0);          /* (d) */
    g_ann[4] = mcp_call_audio_sized(call, "x", 1, "audio/wav", NULL, 0); /* no annotations: any size */
    return MCP_OK;
}

static void test_annotations(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    mcp_tool_def t = {0};
    t.name = "annotated";
    t.handler = annotated_tool;
    t.flags = MCP_TOOL_NONBLOCKING;
    T_OK(mcp_server_add_tool(srv, &t, NULL));
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, sink_send, NULL));
    sink_reset();
    initialize(c);
    send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"annotated\"}}");
    T_TRUE(sink_has("\"id\":5,\"result\""));
    T_OK(g_ann[0]);
    T_OK(g_ann[1]);
    T_STATUS(g_ann[2], MCP_ERR_UNSUPPORTED);
    T_STATUS(g_ann[3], MCP_ERR_INVALID_ARG);
    T_OK(g_ann[4]);
    T_NOT_NULL(strstr(g_sink.text, "\"annotations\":{\"audience\":[\"user\"],\"priority\":0.25}"));
    T_NOT_NULL(strstr(g_sink.text, "\"priority\":0.5"));
    T_NULL(strstr(g_sink.text, "image/png")); /* the refused blocks left nothing */
    T_NULL(strstr(g_sink.text, "test://l"));
    T_NOT_NULL(strstr(g_sink.text, "audio/wav"));
    mcp_conn_free(c);
    mcp_server_free(srv);
}

/* ---- auth --------------------------------------------------------------------- */

static void test_auth(void)
{
    mcp_auth *a = NULL;
    mcp_error e;
    NEWER(mcp_auth_opts) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_auth_opts);
    b.s.introspection_url = "http://127.0.0.1:9/introspect";
    b.s.client_id = "rs";
    b.s.client_secret = "secret";
    T_OK(mcp_auth_new_sized(&a, &b.s, MCP__V0_mcp_auth_opts, &e)); /* (a) */
    mcp_auth_free(a);
    memset(b.tail, 0, sizeof b.tail);
    a = NULL;
    T_OK(mcp_auth_new_sized(&a, &b.s, NEWER_SIZE(mcp_auth_opts), &e)); /* (b) */
    mcp_auth_free(a);
    a = NULL;
    b.tail[2] = 3;
    T_STATUS(mcp_auth_new_sized(&a, &b.s, NEWER_SIZE(mcp_auth_opts), &e), MCP_ERR_UNSUPPORTED); /* (c) */
    T_TRUE(names_struct(&e, "mcp_auth_opts"));
    T_STATUS(mcp_auth_new_sized(&a, &b.s, 0, &e), MCP_ERR_INVALID_ARG); /* (d) */
    T_NULL(a);

    /* Writing into the caller's options: a size that holds the fields written. */
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    int used = 0;
    T_OK(mcp_auth_parse_arg_sized(&o, MCP__V0_mcp_auth_opts, "--auth-issuer=https://as", NULL, &used));
    T_EQ_STR(o.issuers, "https://as");
    T_OK(mcp_auth_parse_arg_sized(&b.s, NEWER_SIZE(mcp_auth_opts), "--auth-scopes", "a b", &used));
    T_EQ_INT(used, 2);
    T_EQ_STR(b.s.scopes_supported, "a b");
    T_EQ_INT(b.tail[2], 3); /* the bytes it does not know are left alone */
    T_STATUS(mcp_auth_parse_arg_sized(&o, 0, "--auth-issuer=x", NULL, &used), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_auth_parse_arg_sized(&o, MCP__V0_mcp_auth_opts - 1, "--auth-issuer=x", NULL, &used),
             MCP_ERR_INVALID_ARG);
}

/* ---- transports ---------------------------------------------------------------- */

static void test_stdio_serve(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    NEWER(mcp_stdio_opts) b;
    for (int round = 0; round < 2; round++) {
        /* (a) the oldest size, garbage after it; (b) a newer header, zero
         * tail. The input ends at once: serving returns MCP_OK. */
        int p[2];
        T_TRUE(pipe(p) == 0);
        close(p[1]);
        int devnull = open("/dev/null", O_WRONLY);
        T_TRUE(devnull > 2);
        memset(&b, round ? 0 : GARBAGE, sizeof b);
        memset(&b.s, 0, MCP__V0_mcp_stdio_opts);
        b.s.in_fd = p[0];
        b.s.out_fd = devnull;
        b.s.grace_ms = 10;
        T_OK(mcp_stdio_serve_sized(srv, &b.s, round ? NEWER_SIZE(mcp_stdio_opts) : MCP__V0_mcp_stdio_opts));
        close(p[0]);
        close(devnull);
    }
    /* Refused before anything is read. */
    b.tail[0] = 1;
    T_STATUS(mcp_stdio_serve_sized(srv, &b.s, NEWER_SIZE(mcp_stdio_opts)), MCP_ERR_UNSUPPORTED); /* (c) */
    T_STATUS(mcp_stdio_serve_sized(srv, &b.s, 0), MCP_ERR_INVALID_ARG);                         /* (d) */
    mcp_server_free(srv);
}

static void test_http_server(void)
{
    mcp_server *srv = quiet_server();
    T_NOT_NULL(srv);
    mcp_error e;
    mcp_http_server *hs = NULL;
    NEWER(mcp_http_opts) b;
    memset(&b, GARBAGE, sizeof b);
    memset(&b.s, 0, MCP__V0_mcp_http_opts);
    b.s.host = "127.0.0.1";
    b.s.path = "/old";
    b.s.threads = 1;
    T_OK(mcp_http_server_start_sized(&hs, srv, &b.s, MCP__V0_mcp_http_opts, &e)); /* (a) */
    T_TRUE(mcp_http_server_port(hs) > 0);
    mcp_http_server_stop(hs, 0);
    memset(&b, 0, sizeof b);
    b.s.threads = 1;
    hs = NULL;
    T_OK(mcp_http_server_start_sized(&hs, srv, &b.s, NEWER_SIZE(mcp_http_opts), &e)); /* (b) */
    mcp_http_server_stop(hs, 0);
    hs = NULL;
    b.tail[TAIL - 2] = 4;
    T_STATUS(mcp_http_server_start_sized(&hs, srv, &b.s, NEWER_SIZE(mcp_http_opts), &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_http_opts")); /* (c) */
    T_STATUS(mcp_http_serve_sized(srv, &b.s, NEWER_SIZE(mcp_http_opts), &e), MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_http_opts"));
    T_STATUS(mcp_http_server_start_sized(&hs, srv, &b.s, 0, &e), MCP_ERR_INVALID_ARG); /* (d) */
    T_STATUS(mcp_http_serve_sized(srv, &b.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_NULL(hs);
    mcp_server_free(srv);

    /* Writing into the caller's options. */
    char host[64];
    T_OK(mcp_http_parse_listen_sized("0.0.0.0:8080", &b.s, NEWER_SIZE(mcp_http_opts), host, sizeof host));
    T_EQ_STR(b.s.host, "0.0.0.0");
    T_EQ_INT(b.s.port, 8080);
    T_EQ_INT(b.tail[TAIL - 2], 4);
    T_OK(mcp_http_parse_listen_sized("9090", &b.s, MCP__V0_mcp_http_opts, host, sizeof host));
    T_EQ_INT(b.s.port, 9090);
    T_STATUS(mcp_http_parse_listen_sized("9090", &b.s, 0, host, sizeof host), MCP_ERR_INVALID_ARG);
}

/* ---- client: options are checked before anything is started ------------------ */

static void test_client(void)
{
    mcp_client *c = NULL;
    mcp_error e;
    const char *argv[] = {"/nonexistent/mcp-server", NULL};
    NEWER(mcp_client_opts) co;
    NEWER(mcp_stdio_client_opts) so;
    memset(&co, 0, sizeof co);
    memset(&so, 0, sizeof so);
    so.s.argv = argv;
    co.tail[0] = 1;
    T_STATUS(mcp_client_connect_stdio_sized(&c, &co.s, NEWER_SIZE(mcp_client_opts), &so.s,
                                            NEWER_SIZE(mcp_stdio_client_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_client_opts"));
    co.tail[0] = 0;
    so.tail[1] = 1;
    T_STATUS(mcp_client_connect_stdio_sized(&c, &co.s, NEWER_SIZE(mcp_client_opts), &so.s,
                                            NEWER_SIZE(mcp_stdio_client_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_stdio_client_opts"));
    T_STATUS(mcp_client_connect_stdio_sized(&c, &co.s, 0, &so.s, sizeof so.s, &e), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_client_connect_stdio_sized(&c, &co.s, sizeof co.s, &so.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_stdio_client_opts") != NULL);
    /* Sizes accepted, then the command fails to start: the options went through. */
    so.tail[1] = 0;
    T_STATUS(mcp_client_connect_stdio_sized(&c, &co.s, NEWER_SIZE(mcp_client_opts), &so.s,
                                            NEWER_SIZE(mcp_stdio_client_opts), &e),
             MCP_ERR_IO);
    T_NULL(c);

    /* HTTP, with the OAuth options the HTTP options point to. */
    NEWER(mcp_http_client_opts) ho;
    NEWER(mcp_oauth_opts) oo;
    memset(&ho, 0, sizeof ho);
    memset(&oo, 0, sizeof oo);
    ho.s.url = "ftp://example.invalid/mcp"; /* refused after the sizes */
    ho.s.oauth = &oo.s;
    oo.tail[5] = 1;
    T_STATUS(mcp_client_connect_http_sized(&c, NULL, 0, &ho.s, NEWER_SIZE(mcp_http_client_opts),
                                           NEWER_SIZE(mcp_oauth_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_oauth_opts"));
    T_STATUS(mcp_client_connect_http_sized(&c, NULL, 0, &ho.s, sizeof ho.s, 0, &e), MCP_ERR_INVALID_ARG);
    T_TRUE(strstr(e.message, "mcp_oauth_opts") != NULL);
    oo.tail[5] = 0;
    ho.tail[0] = 1;
    T_STATUS(mcp_client_connect_http_sized(&c, NULL, 0, &ho.s, NEWER_SIZE(mcp_http_client_opts),
                                           NEWER_SIZE(mcp_oauth_opts), &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_http_client_opts"));
    ho.tail[0] = 0;
    T_STATUS(mcp_client_connect_http_sized(&c, NULL, 0, &ho.s, NEWER_SIZE(mcp_http_client_opts),
                                           NEWER_SIZE(mcp_oauth_opts), &e),
             MCP_ERR_INVALID_ARG); /* sizes fine; the URL is not http(s) */
    T_TRUE(strstr(e.message, "opts") == NULL);
    T_NULL(c);

    /* Per-request options: checked first, even before the client. */
    NEWER(mcp_request_opts) ro;
    memset(&ro, 0, sizeof ro);
    ro.tail[TAIL - 1] = 1;
    mcp_response *r = NULL;
    T_STATUS(mcp_client_request_sized(NULL, "ping", NULL, &ro.s, NEWER_SIZE(mcp_request_opts), &r, &e),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(names_struct(&e, "mcp_request_opts"));
    T_STATUS(mcp_client_call_tool_sized(NULL, "t", NULL, &ro.s, NEWER_SIZE(mcp_request_opts), &r, &e),
             MCP_ERR_UNSUPPORTED);
    T_STATUS(mcp_client_request_async_sized(NULL, "ping", NULL, &ro.s, NEWER_SIZE(mcp_request_opts), NULL, NULL,
                                            NULL),
             MCP_ERR_UNSUPPORTED);
    T_STATUS(mcp_client_request_sized(NULL, "ping", NULL, &ro.s, 0, &r, &e), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_client_call_tool_sized(NULL, "t", NULL, &ro.s, 0, &r, &e), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_client_request_async_sized(NULL, "ping", NULL, &ro.s, 0, NULL, NULL, NULL), MCP_ERR_INVALID_ARG);
    ro.tail[TAIL - 1] = 0;
    T_STATUS(mcp_client_request_sized(NULL, "ping", NULL, &ro.s, NEWER_SIZE(mcp_request_opts), &r, &e),
             MCP_ERR_INVALID_ARG); /* accepted; no client */
    T_TRUE(strstr(e.message, "opts") == NULL);
    T_NULL(r);
}

/* The macros pass the size of the header the caller compiled with. */
static void test_macros_pass_sizeof(void)
{
    mcp_json_parse_opts o = {0};
    o.max_depth = 1;
    mcp_json_doc *doc = NULL;
    T_STATUS(mcp_json_parse(&doc, "[[1]]", 5, &o, NULL), MCP_ERR_LIMIT);
    T_TRUE(sizeof(mcp_server_opts) >= MCP__V0_mcp_server_opts);
    T_TRUE(sizeof(mcp_prompt_arg) >= MCP__V0_mcp_prompt_arg);
}

TEST_MAIN(
    TEST(test_helper_older_header),
    TEST(test_helper_newer_header),
    TEST(test_helper_bad_sizes),
    TEST(test_json_parse),
    TEST(test_rpc_decode),
    TEST(test_schema_new),
    TEST(test_set_allocator),
    TEST(test_server_new),
    TEST(test_add_tool),
    TEST(test_add_resource),
    TEST(test_add_prompt),
    TEST(test_annotations),
    TEST(test_auth),
    TEST(test_stdio_serve),
    TEST(test_http_server),
    TEST(test_client),
    TEST(test_macros_pass_sizeof))
