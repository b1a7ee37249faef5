/*
 * Extensions (SEP-1724) in the server: capabilities.extensions declared in
 * both eras, extension metadata on tools and resources only for clients
 * that declared the extension, extension-only resources listed to them
 * alone, a static resource's extension metadata in its read contents, and
 * handlers reading the client's declared settings and MIME types. MCP Apps
 * (io.modelcontextprotocol/ui) is the example throughout.
 */
#include "mcp/mcp.h"
#include "testlib.h"

#include <pthread.h>
#include <time.h>

typedef struct inbox {
    pthread_mutex_t mu;
    char *frames[64];
    int n;
} inbox;

static mcp_status keep(const char *f, size_t len, void *ud)
{
    inbox *b = ud;
    pthread_mutex_lock(&b->mu);
    if (b->n < 64) {
        b->frames[b->n] = malloc(len + 1);
        memcpy(b->frames[b->n], f, len);
        b->frames[b->n][len] = '\0';
        b->n++;
    }
    pthread_mutex_unlock(&b->mu);
    return MCP_OK;
}

/* Sends `req` and returns the answer with id `id` (caller frees). */
static mcp_json_doc *ask(mcp_conn *c, inbox *b, int id, const char *req)
{
    mcp_conn_recv(c, req, strlen(req));
    char needle[32];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    for (int t = 0; t < 5000; t++) {
        pthread_mutex_lock(&b->mu);
        for (int i = 0; i < b->n; i++)
            if (b->frames[i] && strstr(b->frames[i], needle)) {
                mcp_json_doc *d = NULL;
                mcp_json_parse(&d, b->frames[i], strlen(b->frames[i]), NULL, NULL);
                free(b->frames[i]);
                b->frames[i] = NULL;
                pthread_mutex_unlock(&b->mu);
                return d;
            }
        pthread_mutex_unlock(&b->mu);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Says whether the client will show the view. */
static mcp_status show(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    const mcp_json *ui = mcp_call_client_extension(call, MCP_EXT_UI);
    return mcp_call_textf(call, "%s", mcp_client_extension_has_mime_type(ui, MCP_UI_MIME_TYPE) ? "view" : "text");
}

static mcp_server *app_server(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.workers = 1;
    o.extensions = "{\"" MCP_EXT_UI "\":{}}";
    mcp_server *srv = NULL;
    if (mcp_server_new(&srv, &o, NULL))
        return NULL;
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = "show";
    t.handler = show;
    t.meta = "{\"owner\":\"tests\"}";
    t.extension = MCP_EXT_UI;
    t.extension_meta = "{\"ui\":{\"resourceUri\":\"ui://t/view\"}}";
    mcp_resource_def r;
    memset(&r, 0, sizeof r);
    r.uri = "ui://t/view";
    r.name = "view";
    r.mime_type = MCP_UI_MIME_TYPE;
    r.size = -1;
    r.text = "<!doctype html><title>v</title>";
    r.extension = MCP_EXT_UI;
    r.extension_meta = "{\"ui\":{\"csp\":{\"connectDomains\":[]},\"prefersBorder\":true}}";
    if (mcp_server_add_tool(srv, &t, NULL) || mcp_server_add_resource(srv, &r, NULL)) {
        mcp_server_free(srv);
        return NULL;
    }
    return srv;
}

static const char with_ui[] = "{\"extensions\":{\"" MCP_EXT_UI "\":{\"mimeTypes\":[\"" "text/html;profile=mcp-app" "\"]}}}";

static void legacy_session(int declare)
{
    mcp_server *srv = app_server();
    T_NOT_NULL(srv);
    inbox b;
    memset(&b, 0, sizeof b);
    pthread_mutex_init(&b.mu, NULL);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, keep, &b));
    char req[512];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
             "\"capabilities\":%s,\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
             declare ? with_ui : "{}");
    mcp_json_doc *d = ask(c, &b, 1, req);
    const mcp_json *caps = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "capabilities");
    T_TRUE(mcp_json_typeof(mcp_json_get(mcp_json_get(caps, "extensions"), MCP_EXT_UI)) == MCP_JSON_OBJECT);
    mcp_json_doc_free(d);
    const char *inited = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcp_conn_recv(c, inited, strlen(inited));
    d = ask(c, &b, 2, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    const mcp_json *tool = mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "tools"), 0);
    const mcp_json *meta = mcp_json_get(tool, "_meta");
    T_TRUE(mcp_json_str_eq(mcp_json_get(meta, "owner"), "tests")); /* the plain _meta, for everyone */
    T_EQ_INT(mcp_json_str_eq(mcp_json_get(mcp_json_get(meta, "ui"), "resourceUri"), "ui://t/view"), declare);
    mcp_json_doc_free(d);
    d = ask(c, &b, 3, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}");
    const mcp_json *res = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "resources");
    T_EQ_INT((int)mcp_json_len(res), declare);
    if (declare)
        T_TRUE(mcp_json_bool(mcp_json_get(mcp_json_get(mcp_json_get(mcp_json_at(res, 0), "_meta"), "ui"),
                                          "prefersBorder")));
    mcp_json_doc_free(d);
    d = ask(c, &b, 4, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":\"ui://t/view\"}}");
    const mcp_json *ct = mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "contents"), 0);
    T_TRUE(mcp_json_str_eq(mcp_json_get(ct, "mimeType"), MCP_UI_MIME_TYPE));
    T_TRUE(mcp_json_typeof(mcp_json_get(mcp_json_get(mcp_json_get(ct, "_meta"), "ui"), "csp")) == MCP_JSON_OBJECT);
    mcp_json_doc_free(d);
    d = ask(c, &b, 5, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"show\"}}");
    const mcp_json *txt = mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"),
                                                                 "content"), 0), "text");
    T_TRUE(mcp_json_str_eq(txt, declare ? "view" : "text"));
    mcp_json_doc_free(d);
    mcp_conn_close(c, 1000);
    mcp_conn_free(c);
    mcp_server_free(srv);
    for (int i = 0; i < b.n; i++)
        free(b.frames[i]);
    pthread_mutex_destroy(&b.mu);
}

static void test_legacy_declared(void)
{
    legacy_session(1);
}

static void test_legacy_undeclared(void)
{
    legacy_session(0);
}

static void test_modern(void)
{
    mcp_server *srv = app_server();
    T_NOT_NULL(srv);
    inbox b;
    memset(&b, 0, sizeof b);
    pthread_mutex_init(&b.mu, NULL);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, keep, &b));
    char req[1024];
#define MODERN(caps) "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
                     "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
    mcp_json_doc *d = ask(c, &b, 1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{"
                                    MODERN("{}") "}}");
    const mcp_json *caps = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "capabilities");
    T_TRUE(mcp_json_typeof(mcp_json_get(mcp_json_get(caps, "extensions"), MCP_EXT_UI)) == MCP_JSON_OBJECT);
    mcp_json_doc_free(d);
    for (int declare = 0; declare < 2; declare++) {
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                 "\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
                 10 + declare, declare ? with_ui : "{}");
        d = ask(c, &b, 10 + declare, req);
        const mcp_json *tool = mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "tools"), 0);
        T_EQ_INT(mcp_json_get(mcp_json_get(tool, "_meta"), "ui") != NULL, declare);
        mcp_json_doc_free(d);
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"show\",\"_meta\":{"
                 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                 "\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
                 20 + declare, declare ? with_ui : "{}");
        d = ask(c, &b, 20 + declare, req);
        const mcp_json *txt = mcp_json_get(mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"),
                                                                     "content"), 0), "text");
        T_TRUE(mcp_json_str_eq(txt, declare ? "view" : "text"));
        mcp_json_doc_free(d);
    }
    mcp_conn_close(c, 1000);
    mcp_conn_free(c);
    mcp_server_free(srv);
    for (int i = 0; i < b.n; i++)
        free(b.frames[i]);
    pthread_mutex_destroy(&b.mu);
}

static void test_bad_json(void)
{
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.extensions = "[\"not an object\"]";
    mcp_server *srv = NULL;
    T_TRUE(mcp_server_new(&srv, &o, NULL) != MCP_OK);
    T_NULL(srv);
    T_EQ_INT(mcp_client_extension_has_mime_type(NULL, MCP_UI_MIME_TYPE), 0);
}

TEST_MAIN(TEST(test_legacy_declared), TEST(test_legacy_undeclared), TEST(test_modern), TEST(test_bad_json))
