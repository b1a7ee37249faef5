/*
 * A deliberately scripted stdio "server" for the client tests: it answers
 * in random order after random delays and misbehaves on request (dies,
 * closes its stdout, writes garbage, answers ids never sent), things a
 * real libmcp server never does. It speaks just enough MCP for that.
 *
 * usage: client-fake-server [--legacy-only | --silent-discover] [--banner]
 *
 * Tools (tools/call name):
 *   jitter {tag, max}  answers text <tag> after 0..max ms, from 8 workers
 *   hang               never answers
 *   die                writes "dying" to stderr and exits with status 3
 *   close              closes its stdout and keeps reading
 *   garbage            writes a line that is not JSON
 *   wrongid            answers with an id the client never sent
 *   goodout / badout   structuredContent that matches / breaks the outputSchema
 *   mrtr               (2026-07-28) input_required, then checks the retry
 *   cancels            text: how many notifications/cancelled arrived
 */
#include <mcp/mcp.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;
static int g_cancels;
static int g_legacy_only, g_silent_discover;

static void emit(const char *s, size_t n)
{
    pthread_mutex_lock(&g_out);
    fwrite(s, 1, n, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&g_out);
}

/* Writes {"jsonrpc":"2.0","id":<id>,"result":<result>} */
static void reply(const mcp_json *id, const char *result)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "jsonrpc");
    mcp_jw_string(&w, "2.0");
    mcp_jw_key(&w, "id");
    mcp_jw_value(&w, id);
    mcp_jw_key(&w, "result");
    mcp_jw_raw(&w, result, strlen(result));
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        emit(b.data, b.len);
    mcp_buf_cleanup(&b);
}

static void reply_error(const mcp_json *id, int code, const char *message)
{
    char r[512];
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_value(&w, id);
    mcp_jw_finish(&w);
    snprintf(r, sizeof r, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":\"%s\"}}",
             b.data ? b.data : "null", code, message);
    mcp_buf_cleanup(&b);
    emit(r, strlen(r));
}

static void text_result(const mcp_json *id, const char *text)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "content");
    mcp_jw_array_begin(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, "text");
    mcp_jw_key(&w, "text");
    mcp_jw_string(&w, text);
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        reply(id, b.data);
    mcp_buf_cleanup(&b);
}

/* ---- jitter workers ---- */

typedef struct job {
    struct job *next;
    mcp_json_doc *doc; /* the request */
    long ms;
} job;

static pthread_mutex_t g_qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_qcv = PTHREAD_COND_INITIALIZER;
static job *g_head, *g_tail;

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_qmu);
        while (!g_head)
            pthread_cond_wait(&g_qcv, &g_qmu);
        job *j = g_head;
        g_head = j->next;
        if (!g_head)
            g_tail = NULL;
        pthread_mutex_unlock(&g_qmu);
        struct timespec ts = {0, j->ms * 1000000L};
        nanosleep(&ts, NULL);
        const mcp_json *root = mcp_json_doc_root(j->doc);
        const char *tag = mcp_json_str(mcp_json_get(mcp_json_get(mcp_json_get(root, "params"), "arguments"), "tag"), NULL);
        text_result(mcp_json_get(root, "id"), tag ? tag : "");
        mcp_json_doc_free(j->doc);
        free(j);
    }
    return NULL;
}

static void tools_list(const mcp_json *id)
{
    reply(id, "{\"tools\":["
              "{\"name\":\"jitter\",\"inputSchema\":{\"type\":\"object\"}},"
              "{\"name\":\"goodout\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":{\"type\":\"object\","
              "\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}},"
              "{\"name\":\"badout\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":{\"type\":\"object\","
              "\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}}"
              "],\"nextCursor\":\"page2\"}");
}

static void call(mcp_json_doc *doc)
{
    const mcp_json *root = mcp_json_doc_root(doc);
    const mcp_json *id = mcp_json_get(root, "id");
    const mcp_json *params = mcp_json_get(root, "params");
    const char *name = mcp_json_str(mcp_json_get(params, "name"), NULL);
    if (!name)
        name = "";
    if (!strcmp(name, "jitter")) {
        long max = (long)mcp_json_int(mcp_json_get(mcp_json_get(params, "arguments"), "max"));
        job *j = calloc(1, sizeof *j);
        j->doc = doc;
        j->ms = max > 0 ? rand() % (max + 1) : 0;
        pthread_mutex_lock(&g_qmu);
        if (g_tail)
            g_tail->next = j;
        else
            g_head = j;
        g_tail = j;
        pthread_cond_signal(&g_qcv);
        pthread_mutex_unlock(&g_qmu);
        return; /* the worker frees doc */
    }
    if (!strcmp(name, "hang")) {
        /* never answers */
    } else if (!strcmp(name, "die")) {
        fprintf(stderr, "dying on purpose\n");
        fflush(stderr);
        _exit(3);
    } else if (!strcmp(name, "close")) {
        pthread_mutex_lock(&g_out);
        fclose(stdout);
        close(1);
        /* keep the lock: nothing may write any more */
        mcp_json_doc_free(doc);
        return;
    } else if (!strcmp(name, "garbage")) {
        emit("this is not json", 16);
    } else if (!strcmp(name, "wrongid")) {
        const char *w = "{\"jsonrpc\":\"2.0\",\"id\":999999999,\"result\":{\"content\":[]}}";
        emit(w, strlen(w));
    } else if (!strcmp(name, "goodout")) {
        reply(id, "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"n\\\":1}\"}],\"structuredContent\":{\"n\":1}}");
    } else if (!strcmp(name, "badout")) {
        reply(id, "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":\"x\"}}");
    } else if (!strcmp(name, "cancels")) {
        char t[32];
        snprintf(t, sizeof t, "%d", __atomic_load_n(&g_cancels, __ATOMIC_SEQ_CST));
        text_result(id, t);
    } else if (!strcmp(name, "mrtr")) {
        static int64_t first_id = -1;
        const mcp_json *resp = mcp_json_get(params, "inputResponses");
        if (!resp) {
            first_id = mcp_json_int(id);
            reply(id, "{\"resultType\":\"input_required\",\"inputRequests\":{\"who\":{\"method\":\"elicitation/create\","
                      "\"params\":{\"mode\":\"form\",\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\","
                      "\"properties\":{\"name\":{\"type\":\"string\"}}}}}},\"requestState\":\"s\\u00e9-1\"}");
        } else {
            const char *who = mcp_json_str(mcp_json_get(mcp_json_get(mcp_json_get(resp, "who"), "content"), "name"), NULL);
            int state_ok = mcp_json_str_eq(mcp_json_get(params, "requestState"), "s\xc3\xa9-1");
            char t[128];
            snprintf(t, sizeof t, "ok %s state=%s newid=%s", who ? who : "?", state_ok ? "same" : "changed",
                     mcp_json_int(id) != first_id ? "yes" : "no");
            text_result(id, t);
        }
    } else {
        reply_error(id, -32602, "Unknown tool");
    }
    mcp_json_doc_free(doc);
}

int main(int argc, char **argv)
{
    int banner = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--legacy-only"))
            g_legacy_only = 1;
        else if (!strcmp(argv[i], "--silent-discover"))
            g_silent_discover = 1;
        else if (!strcmp(argv[i], "--banner"))
            banner = 1;
    }
    srand((unsigned)getpid());
    for (int i = 0; i < 8; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_detach(t);
    }
    if (banner)
        emit("Starting fake server v1...", 26);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        mcp_json_doc *doc;
        if (mcp_json_parse(&doc, line, (size_t)n, NULL, NULL) != MCP_OK)
            continue;
        const mcp_json *root = mcp_json_doc_root(doc);
        const mcp_json *id = mcp_json_get(root, "id");
        const char *method = mcp_json_str(mcp_json_get(root, "method"), NULL);
        if (!method) {
            mcp_json_doc_free(doc); /* a response to us: none expected */
            continue;
        }
        if (!id) {
            if (!strcmp(method, "notifications/cancelled"))
                __atomic_add_fetch(&g_cancels, 1, __ATOMIC_SEQ_CST);
            mcp_json_doc_free(doc);
            continue;
        }
        if (!strcmp(method, "server/discover")) {
            if (g_legacy_only)
                reply_error(id, -32601, "Method not found");
            else if (!g_silent_discover)
                reply(id, "{\"supportedVersions\":[\"2026-07-28\",\"2025-11-25\"],\"capabilities\":{\"tools\":{}},"
                          "\"serverInfo\":{\"name\":\"fake\",\"version\":\"0\"},\"resultType\":\"complete\"}");
        } else if (!strcmp(method, "initialize")) {
            reply(id, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                      "\"serverInfo\":{\"name\":\"fake-legacy\",\"version\":\"0\"},\"instructions\":\"be nice\"}");
        } else if (!strcmp(method, "tools/list")) {
            const char *cursor = mcp_json_str(mcp_json_get(mcp_json_get(root, "params"), "cursor"), NULL);
            if (cursor && !strcmp(cursor, "page2"))
                reply(id, "{\"tools\":[{\"name\":\"mrtr\",\"inputSchema\":{\"type\":\"object\"}}]}");
            else
                tools_list(id);
        } else if (!strcmp(method, "tools/call")) {
            call(doc);
            continue;
        } else {
            reply_error(id, -32601, "Method not found");
        }
        mcp_json_doc_free(doc);
    }
    free(line);
    return 0;
}
