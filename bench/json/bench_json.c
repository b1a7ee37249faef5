/*
 * JSON parse and write throughput: libmcp against jansson and cJSON, in
 * one run, on MCP-shaped inputs:
 *   (a) a tools/call request,
 *   (b) a tools/list response with 50 tools and their schemas,
 *   (c) a 1 MiB tools/call result carrying a base64 image,
 *   (d) the largest valid (y_) files of JSONTestSuite, as one workload.
 * "parse" is text -> document -> free; "write" is document -> compact text
 * in a fresh buffer -> free. Each figure is the best of several timed
 * rounds. Ratios are libmcp over the faster of the two peers.
 *
 * usage: bench_json [JSONTestSuite/test_parsing dir]
 */
#include <mcp/mcp.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct input {
    const char *name; /* label */
    char **docs;      /* documents of the workload */
    size_t *lens;     /* their lengths */
    size_t n;         /* number of documents */
    size_t bytes;     /* total bytes */
} input;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile size_t g_sink; /* keeps results observable */

/* ---- the operations, one per library ------------------------------------ */

static int mcp_parse_all(const input *in)
{
    for (size_t i = 0; i < in->n; i++) {
        mcp_json_doc *d;
        if (mcp_json_parse(&d, in->docs[i], in->lens[i], NULL, NULL) != MCP_OK)
            return 0;
        g_sink += mcp_json_len(mcp_json_doc_root(d));
        mcp_json_doc_free(d);
    }
    return 1;
}

static int jansson_parse_all(const input *in)
{
    for (size_t i = 0; i < in->n; i++) {
        json_error_t e;
        json_t *j = json_loadb(in->docs[i], in->lens[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        if (!j)
            return 0;
        g_sink += json_is_object(j) ? json_object_size(j) : 1;
        json_decref(j);
    }
    return 1;
}

static int cjson_parse_all(const input *in)
{
    for (size_t i = 0; i < in->n; i++) {
        cJSON *j = cJSON_ParseWithLength(in->docs[i], in->lens[i]);
        if (!j)
            return 0;
        g_sink += (size_t)cJSON_GetArraySize(j);
        cJSON_Delete(j);
    }
    return 1;
}

/* Parsed forms kept for the write benchmarks. */
typedef struct parsed {
    mcp_json_doc **mcp;
    json_t **jansson;
    cJSON **cjson;
} parsed;

static int mcp_write_all(const input *in, const parsed *p)
{
    for (size_t i = 0; i < in->n; i++) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        if (mcp_jw_value(&w, mcp_json_doc_root(p->mcp[i])) != MCP_OK)
            return 0;
        g_sink += b.len;
        mcp_buf_cleanup(&b);
    }
    return 1;
}

static int jansson_write_all(const input *in, const parsed *p)
{
    for (size_t i = 0; i < in->n; i++) {
        char *s = json_dumps(p->jansson[i], JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s)
            return 0;
        g_sink += strlen(s);
        free(s);
    }
    return 1;
}

static int cjson_write_all(const input *in, const parsed *p)
{
    for (size_t i = 0; i < in->n; i++) {
        char *s = cJSON_PrintUnformatted(p->cjson[i]);
        if (!s)
            return 0;
        g_sink += strlen(s);
        cJSON_free(s);
    }
    return 1;
}

/* ---- timing -------------------------------------------------------------- */

typedef int (*parse_fn)(const input *);
typedef int (*write_fn)(const input *, const parsed *);

/* Best seconds per pass over the workload, over ROUNDS rounds of >= 0.1 s. */
#define ROUNDS 5
static double time_parse(parse_fn f, const input *in)
{
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        long iters = 0;
        double t0 = now(), t;
        do {
            if (!f(in))
                return -1;
            iters++;
            t = now();
        } while (t - t0 < 0.1);
        double per = (t - t0) / (double)iters;
        if (per < best)
            best = per;
    }
    return best;
}

static double time_write(write_fn f, const input *in, const parsed *p)
{
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        long iters = 0;
        double t0 = now(), t;
        do {
            if (!f(in, p))
                return -1;
            iters++;
            t = now();
        } while (t - t0 < 0.1);
        double per = (t - t0) / (double)iters;
        if (per < best)
            best = per;
    }
    return best;
}

/* ---- inputs -------------------------------------------------------------- */

static input one(const char *name, char *text)
{
    input in;
    in.name = name;
    in.docs = malloc(sizeof *in.docs);
    in.lens = malloc(sizeof *in.lens);
    in.docs[0] = text;
    in.lens[0] = strlen(text);
    in.n = 1;
    in.bytes = in.lens[0];
    return in;
}

static char *make_call(void)
{
    return strdup("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"assessTypology\","
                  "\"arguments\":{\"caseId\":\"CASE-2026-000123\",\"typologies\":[\"T01\",\"T03\",\"T07\"],"
                  "\"parameters\":{\"T01\":{\"threshold\":10000,\"windowDays\":30}}},\"_meta\":{\"progressToken\":"
                  "\"tok-42\",\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
}

static char *make_tools_list(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_id id = {MCP_RPC_ID_INT, 2, NULL, 0};
    mcp_rpc_begin_result(&w, &id);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "tools");
    mcp_jw_array_begin(&w);
    char buf[128];
    for (int i = 0; i < 50; i++) {
        mcp_jw_object_begin(&w);
        snprintf(buf, sizeof buf, "tool_number_%d", i);
        mcp_jw_key(&w, "name");
        mcp_jw_string(&w, buf);
        mcp_jw_key(&w, "title");
        snprintf(buf, sizeof buf, "Tool number %d", i);
        mcp_jw_string(&w, buf);
        mcp_jw_key(&w, "description");
        mcp_jw_string(&w, "Assesses a case against the selected typologies and returns findings "
                          "with evidence, metrics and a plain-language explanation.\nUse after listCases.");
        mcp_jw_key(&w, "inputSchema");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "type");
        mcp_jw_string(&w, "object");
        mcp_jw_key(&w, "properties");
        mcp_jw_object_begin(&w);
        static const char *props[] = {"caseId", "typologies", "from", "to", "limit"};
        for (int k = 0; k < 5; k++) {
            mcp_jw_key(&w, props[k]);
            mcp_jw_object_begin(&w);
            mcp_jw_key(&w, "type");
            mcp_jw_string(&w, k == 4 ? "integer" : k == 1 ? "array" : "string");
            mcp_jw_key(&w, "description");
            mcp_jw_string(&w, "A parameter of the tool, described for the model.");
            if (k == 4) {
                mcp_jw_key(&w, "minimum");
                mcp_jw_int(&w, 1);
                mcp_jw_key(&w, "maximum");
                mcp_jw_int(&w, 500);
            }
            if (k == 0) {
                mcp_jw_key(&w, "pattern");
                mcp_jw_string(&w, "^CASE-[0-9]{4}-[0-9]{6}$");
            }
            mcp_jw_object_end(&w);
        }
        mcp_jw_object_end(&w);
        mcp_jw_key(&w, "required");
        mcp_jw_array_begin(&w);
        mcp_jw_string(&w, "caseId");
        mcp_jw_array_end(&w);
        mcp_jw_key(&w, "additionalProperties");
        mcp_jw_bool(&w, 0);
        mcp_jw_object_end(&w);
        mcp_jw_key(&w, "annotations");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "readOnlyHint");
        mcp_jw_bool(&w, 1);
        mcp_jw_key(&w, "openWorldHint");
        mcp_jw_bool(&w, 0);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
    }
    mcp_jw_array_end(&w);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) != MCP_OK)
        abort();
    size_t n;
    char *p = mcp_buf_take(&b, &n);
    char *copy = strdup(p);
    mcp_free(p);
    return copy;
}

static char *make_image_result(void)
{
    size_t n = 786432; /* 768 KiB of bytes -> 1 MiB of base64 */
    unsigned char *bytes = malloc(n);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        bytes[i] = (unsigned char)(x >> 16);
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_id id = {MCP_RPC_ID_INT, 7, NULL, 0};
    mcp_rpc_begin_result(&w, &id);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "content");
    mcp_jw_array_begin(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, "image");
    mcp_jw_key(&w, "mimeType");
    mcp_jw_string(&w, "image/png");
    mcp_jw_key(&w, "data");
    mcp_jw_base64(&w, bytes, n);
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "isError");
    mcp_jw_bool(&w, 0);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) != MCP_OK)
        abort();
    free(bytes);
    char *p = mcp_buf_take(&b, NULL);
    char *copy = strdup(p);
    mcp_free(p);
    return copy;
}

typedef struct named {
    char name[4096]; /* file path */
    size_t size;    /* bytes */
} named;

static int by_size_desc(const void *a, const void *b)
{
    const named *x = a, *y = b;
    return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->name, y->name);
}

/* The largest y_ files that all three libraries accept. */
static int make_suite(const char *dir, input *in)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    static named files[512];
    size_t nf = 0;
    struct dirent *de;
    while ((de = readdir(d)) && nf < 512) {
        if (strncmp(de->d_name, "y_", 2) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        files[nf].size = (size_t)ftell(f);
        fclose(f);
        snprintf(files[nf].name, sizeof files[nf].name, "%s", path);
        nf++;
    }
    closedir(d);
    qsort(files, nf, sizeof files[0], by_size_desc);
    in->name = "(d) JSONTestSuite y_ largest 20";
    in->docs = malloc(20 * sizeof *in->docs);
    in->lens = malloc(20 * sizeof *in->lens);
    in->n = 0;
    in->bytes = 0;
    for (size_t i = 0; i < nf && in->n < 20; i++) {
        FILE *f = fopen(files[i].name, "rb");
        char *p = malloc(files[i].size + 1);
        size_t got = fread(p, 1, files[i].size, f);
        fclose(f);
        p[got] = '\0';
        input probe = {"", &p, &got, 1, got};
        if (!mcp_parse_all(&probe) || !jansson_parse_all(&probe) || !cjson_parse_all(&probe) ||
            memchr(p, '\0', got)) {
            free(p);
            continue;
        }
        in->docs[in->n] = p;
        in->lens[in->n] = got;
        in->bytes += got;
        in->n++;
    }
    return in->n > 0;
}

/* ---- report -------------------------------------------------------------- */

static double g_min_parse_ratio = 1e9, g_min_write_ratio = 1e9;

static void report(const char *what, const input *in, double tm, double tj, double tc)
{
    double mb = (double)in->bytes / (1024.0 * 1024.0);
    double best_peer = tj < tc ? tj : tc;
    double ratio = best_peer / tm;
    printf("  %-5s  libmcp %9.1f MB/s %11.0f docs/s | jansson %8.1f MB/s | cJSON %8.1f MB/s | "
           "libmcp/faster peer %.2fx\n",
           what, mb / tm, (double)in->n / tm, mb / tj, mb / tc, ratio);
    if (!strcmp(what, "parse") && ratio < g_min_parse_ratio)
        g_min_parse_ratio = ratio;
    if (!strcmp(what, "write") && ratio < g_min_write_ratio)
        g_min_write_ratio = ratio;
}

static void run(const input *in)
{
    printf("%s: %zu document(s), %zu bytes\n", in->name, in->n, in->bytes);
    double tm = time_parse(mcp_parse_all, in);
    double tj = time_parse(jansson_parse_all, in);
    double tc = time_parse(cjson_parse_all, in);
    if (tm < 0 || tj < 0 || tc < 0) {
        printf("  a library failed to parse this input\n");
        exit(1);
    }
    report("parse", in, tm, tj, tc);

    parsed p;
    p.mcp = malloc(in->n * sizeof *p.mcp);
    p.jansson = malloc(in->n * sizeof *p.jansson);
    p.cjson = malloc(in->n * sizeof *p.cjson);
    for (size_t i = 0; i < in->n; i++) {
        json_error_t e;
        mcp_json_parse(&p.mcp[i], in->docs[i], in->lens[i], NULL, NULL);
        p.jansson[i] = json_loadb(in->docs[i], in->lens[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        p.cjson[i] = cJSON_ParseWithLength(in->docs[i], in->lens[i]);
    }
    tm = time_write(mcp_write_all, in, &p);
    tj = time_write(jansson_write_all, in, &p);
    tc = time_write(cjson_write_all, in, &p);
    report("write", in, tm, tj, tc);
    for (size_t i = 0; i < in->n; i++) {
        mcp_json_doc_free(p.mcp[i]);
        json_decref(p.jansson[i]);
        cJSON_Delete(p.cjson[i]);
    }
    free(p.mcp);
    free(p.jansson);
    free(p.cjson);
}

int main(int argc, char **argv)
{
    printf("bench_json: libmcp %s, jansson %s, cJSON %s; best of %d rounds\n", mcp_version(),
           JANSSON_VERSION, cJSON_Version(), ROUNDS);
    input a = one("(a) tools/call request", make_call());
    input b = one("(b) tools/list result, 50 tools", make_tools_list());
    input c = one("(c) tools/call result, 1 MiB base64 image", make_image_result());
    run(&a);
    run(&b);
    run(&c);
    input d;
    if (argc > 1 && make_suite(argv[1], &d))
        run(&d);
    else
        printf("(d) skipped: pass the JSONTestSuite test_parsing directory\n");
    printf("minimum ratio over the faster peer: parse %.2fx, write %.2fx (target 2x)\n",
           g_min_parse_ratio, g_min_write_ratio);
    return 0;
}
