/*
 * JSON-RPC transcript runner. Each folder under the data directory is one
 * case: `in.jsonl` holds frames sent to a fixture server connection (one
 * per line), `out.jsonl` the frames it must send back, in order. Frames are
 * compared as JSON values; in expected frames the string "<any>" matches
 * any value. An optional `options` file holds words that change the
 * server: `protocol-errors` (invalid arguments as -32602).
 *
 * After each input frame the runner waits until the connection is idle,
 * or waits for the client's answer to a question it sent, or 300 ms pass
 * (which lets a test cancel a slow call), so the order of answers is
 * deterministic. An input frame that answers a question is held, while a
 * call runs, until the server has asked it (up to 10 s): on a loaded
 * machine the handler may ask later than 300 ms after its call arrived.
 *
 * usage: transcripts DATA_DIR [--record]
 *   --record writes each case's actual frames to out.jsonl (for a new case;
 *   read every line before committing it).
 */
#include "../fixture/fixture.h"
#include "server/server_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct capture {
    pthread_mutex_t mu;  /* guards the fields below */
    char **frames;       /* frames sent by the server */
    size_t n;            /* how many */
    size_t cap;          /* capacity */
} capture;

static mcp_status capture_send(const char *frame, size_t len, void *ud)
{
    capture *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->frames = realloc(c->frames, c->cap * sizeof *c->frames);
    }
    c->frames[c->n] = malloc(len + 1);
    memcpy(c->frames[c->n], frame, len);
    c->frames[c->n][len] = '\0';
    c->n++;
    pthread_mutex_unlock(&c->mu);
    return MCP_OK;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int idle(mcp_conn *c)
{
    pthread_mutex_lock(&c->mu);
    int r = c->in_flight == 0 && c->running == 0;
    pthread_mutex_unlock(&c->mu);
    return r;
}

/* 1 when a question the server asked (any id when `id` < 0) awaits its answer. */
static int asking(mcp_conn *c, int64_t id)
{
    pthread_mutex_lock(&c->mu);
    const mcp__ask *q = c->asks;
    while (q && (q->done || (id >= 0 && q->id != id)))
        q = q->next;
    pthread_mutex_unlock(&c->mu);
    return q != NULL;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits (by the clock, not by counting sleeps, which a loaded machine
 * stretches) until the connection is idle or, with `or_asking`, until a
 * question awaits the client's answer. */
static void wait_idle(mcp_conn *c, long max_ms, int or_asking)
{
    uint64_t until = now_ms() + (uint64_t)max_ms;
    while (!idle(c) && !(or_asking && asking(c, -1)) && now_ms() < until)
        sleep_ms(2);
}

/* The id of the question `frame` answers (a response with an integer id), or -1. */
static int64_t answers_id(const char *frame, size_t len)
{
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, frame, len, NULL, NULL))
        return -1;
    const mcp_json *root = mcp_json_doc_root(d);
    const mcp_json *id = mcp_json_get(root, "id");
    int64_t r = -1;
    if (!mcp_json_get(root, "method") && (mcp_json_get(root, "result") || mcp_json_get(root, "error")) &&
        mcp_json_typeof(id) == MCP_JSON_INT)
        r = mcp_json_int(id);
    mcp_json_doc_free(d);
    return r;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    p[got] = '\0';
    fclose(f);
    return p;
}

/* JSON equality where the expected string "<any>" matches anything. */
static int matches(const mcp_json *want, const mcp_json *got)
{
    if (mcp_json_str_eq(want, "<any>"))
        return got != NULL;
    if (mcp_json_typeof(want) == MCP_JSON_OBJECT && mcp_json_typeof(got) == MCP_JSON_OBJECT) {
        if (mcp_json_len(want) != mcp_json_len(got))
            return 0;
        for (size_t i = 0; i < mcp_json_len(want); i++) {
            size_t kl;
            const char *k = mcp_json_key_at(want, i, &kl);
            if (!matches(mcp_json_value_at(want, i), mcp_json_getn(got, k, kl)))
                return 0;
        }
        return 1;
    }
    if (mcp_json_typeof(want) == MCP_JSON_ARRAY && mcp_json_typeof(got) == MCP_JSON_ARRAY) {
        if (mcp_json_len(want) != mcp_json_len(got))
            return 0;
        for (size_t i = 0; i < mcp_json_len(want); i++)
            if (!matches(mcp_json_at(want, i), mcp_json_at(got, i)))
                return 0;
        return 1;
    }
    return mcp_json_equal(want, got);
}

/* Contract failures are expected here; keep their diagnostics out of the log. */
static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static int g_record;

static int run_case(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/in.jsonl", dir, name);
    char *in = read_text(path);
    snprintf(path, sizeof path, "%s/%s/out.jsonl", dir, name);
    char *out = read_text(path);
    snprintf(path, sizeof path, "%s/%s/options", dir, name);
    char *options = read_text(path);
    if (in && g_record) {
        free(out);
        out = strdup("");
    }
    if (!in || !out) {
        printf("FAIL %s: missing in.jsonl or out.jsonl\n", name);
        free(in);
        free(out);
        free(options);
        return 0;
    }
    mcp_server_opts o;
    fixture_opts(&o);
    o.workers = 2;
    o.log = quiet;
    if (options && strstr(options, "protocol-errors"))
        o.invalid_args_protocol_error = 1;
    if (options && strstr(options, "page-size "))
        o.page_size = (unsigned)atoi(strstr(options, "page-size ") + 10);
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &o, &err) || fixture_register(srv, &err)) {
        printf("FAIL %s: fixture: %s\n", name, err.message);
        return 0;
    }
    capture cap = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
    mcp_conn *conn;
    mcp_conn_new(&conn, srv, capture_send, &cap);
    for (char *line = in; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len && line[len - 1] == '\r')
            len--;
        if (len) {
            int64_t answers = answers_id(line, len);
            for (uint64_t until = now_ms() + 10000; answers >= 0 && !asking(conn, answers) && !idle(conn) &&
                                                 now_ms() < until;)
                sleep_ms(2);
            mcp_conn_recv(conn, line, len);
            wait_idle(conn, 300, 1);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    wait_idle(conn, 10000, 0);
    mcp_conn_close(conn, 1000);
    mcp_conn_free(conn);
    mcp_server_free(srv);

    if (g_record) {
        snprintf(path, sizeof path, "%s/%s/out.jsonl", dir, name);
        FILE *f = fopen(path, "w");
        for (size_t k = 0; f && k < cap.n; k++)
            fprintf(f, "%s\n", cap.frames[k]);
        if (f)
            fclose(f);
    }
    int ok = 1;
    size_t i = 0;
    for (char *line = out, *nl; *line; line = nl + 1, i++) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (!*line) {
            i--;
            if (!nl)
                break;
            continue;
        }
        mcp_json_doc *want = NULL, *got = NULL;
        if (mcp_json_parse(&want, line, strlen(line), NULL, &err)) {
            printf("FAIL %s: out.jsonl line %zu is not JSON: %s\n", name, i + 1, err.message);
            ok = 0;
        } else if (i >= cap.n) {
            printf("FAIL %s: frame %zu missing; expected %s\n", name, i + 1, line);
            ok = 0;
        } else if (mcp_json_parse(&got, cap.frames[i], strlen(cap.frames[i]), NULL, NULL) ||
                   !matches(mcp_json_doc_root(want), mcp_json_doc_root(got))) {
            printf("FAIL %s: frame %zu\n  want %s\n  got  %s\n", name, i + 1, line, cap.frames[i]);
            ok = 0;
        }
        mcp_json_doc_free(want);
        mcp_json_doc_free(got);
        if (!nl)
            break;
    }
    for (size_t k = i; k < cap.n; k++) {
        printf("FAIL %s: unexpected frame %zu: %s\n", name, k + 1, cap.frames[k]);
        ok = 0;
    }
    if (ok)
        printf("ok %s (%zu frames)\n", name, cap.n);
    for (size_t k = 0; k < cap.n; k++)
        free(cap.frames[k]);
    free(cap.frames);
    free(in);
    free(out);
    free(options);
    return ok;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: transcripts DATA_DIR [--record]\n");
        return 2;
    }
    g_record = argc > 2 && strcmp(argv[2], "--record") == 0;
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "transcripts: cannot open %s\n", argv[1]);
        return 2;
    }
    char *names[1024];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 1024)
        if (de->d_name[0] != '.')
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (run_case(argv[1], names[i]))
            passed++;
        else
            failed++;
        free(names[i]);
    }
    printf("transcripts: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
