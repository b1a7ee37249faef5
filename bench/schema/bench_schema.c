/*
 * JSON Schema validation throughput of libmcp, on the cases in
 * bench/schema/cases/ (the same files bench/schema/peer.mjs gives ajv and
 * @cfworker/json-schema; bench/schema/run.sh runs both and prints ratios):
 *   (a) tool      a typical tool input schema (5 properties, required,
 *                 enum, pattern, additionalProperties: false);
 *   (b) composed  a large tool input schema built from $ref, allOf, oneOf
 *                 and unevaluatedProperties, with a 20-transaction report.
 * Each case has a valid and an invalid instance, measured two ways:
 *   check  mcp_schema_check: yes/no, stops at the first violation;
 *   full   mcp_schema_validate without flags: every violation, as a report
 *          (the report is built and freed in the timed loop).
 * The schema is compiled and the instance parsed before timing: the figure
 * is validations per second of an already parsed value. Each figure is the
 * best of several timed rounds.
 *
 * usage: bench_schema CASES_DIR
 * Output: comment lines start with '#'; each figure is one line
 *   libmcp CASE INSTANCE MODE VALIDATIONS_PER_SECOND VIOLATIONS
 */
#include <mcp/mcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 7
#define ROUND_SECONDS 0.1

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile size_t g_sink; /* keeps results observable */

static mcp_json_doc *load(const char *dir, const char *name, const char *what)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.json", dir, name, what);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_schema: cannot open %s\n", path);
        exit(1);
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    mcp_json_doc *doc = NULL;
    mcp_error err;
    if (!buf || mcp_json_parse(&doc, buf, n, NULL, &err) != MCP_OK) {
        fprintf(stderr, "bench_schema: %s: %s\n", path, buf ? err.message : "out of memory");
        exit(1);
    }
    free(buf);
    return doc;
}

/* One validation in each mode; returns the status. */
static mcp_status do_check(const mcp_schema *s, const mcp_json *v)
{
    return mcp_schema_check(s, v, NULL);
}

static mcp_status do_full(const mcp_schema *s, const mcp_json *v)
{
    mcp_schema_result *r = NULL;
    mcp_status st = mcp_schema_validate(s, v, 0, &r, NULL);
    if (r)
        g_sink += r->count;
    mcp_schema_result_free(r);
    return st;
}

typedef mcp_status (*op_fn)(const mcp_schema *, const mcp_json *);

/*
 * Best validations per second over ROUNDS rounds. Iterations run in
 * batches sized so that reading the clock costs nothing measurable.
 */
static double measure(op_fn f, const mcp_schema *s, const mcp_json *v, mcp_status want)
{
    long batch = 1;
    for (;;) {
        double t0 = now();
        for (long i = 0; i < batch; i++)
            if (f(s, v) != want) {
                fprintf(stderr, "bench_schema: unexpected validation result\n");
                exit(1);
            }
        if (now() - t0 >= 0.002 || batch >= (1L << 30))
            break;
        batch *= 2;
    }
    double best = 0;
    for (int r = 0; r < ROUNDS; r++) {
        long iters = 0;
        double t0 = now(), t;
        do {
            for (long i = 0; i < batch; i++)
                g_sink += (size_t)f(s, v);
            iters += batch;
            t = now();
        } while (t - t0 < ROUND_SECONDS);
        double rate = (double)iters / (t - t0);
        if (rate > best)
            best = rate;
    }
    return best;
}

static void run_case(const char *dir, const char *name)
{
    mcp_json_doc *sd = load(dir, name, "schema");
    mcp_schema *s = NULL;
    mcp_error err;
    if (mcp_schema_new(&s, mcp_json_doc_root(sd), NULL, &err) != MCP_OK) {
        fprintf(stderr, "bench_schema: %s: %s\n", name, err.message);
        exit(1);
    }
    mcp_json_doc_free(sd);
    static const char *const which[] = {"valid", "invalid"};
    for (int w = 0; w < 2; w++) {
        mcp_json_doc *d = load(dir, name, which[w]);
        const mcp_json *v = mcp_json_doc_root(d);
        mcp_status want = w == 0 ? MCP_OK : MCP_ERR_INVALID;
        mcp_schema_result *r = NULL;
        if (mcp_schema_validate(s, v, 0, &r, &err) != want) {
            fprintf(stderr, "bench_schema: %s.%s: unexpected result (%s)\n", name, which[w],
                    err.message);
            exit(1);
        }
        size_t nviol = r ? r->count : 0;
        for (size_t i = 0; i < nviol; i++)
            printf("# %s.%s: %s\n", name, which[w], r->errors[i].message);
        mcp_schema_result_free(r);
        printf("libmcp %s %s check %.0f %d\n", name, which[w], measure(do_check, s, v, want),
               w == 0 ? 0 : 1);
        printf("libmcp %s %s full %.0f %zu\n", name, which[w], measure(do_full, s, v, want), nviol);
        fflush(stdout);
        mcp_json_doc_free(d);
    }
    mcp_schema_free(s);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_schema CASES_DIR\n");
        return 2;
    }
    printf("# bench_schema: libmcp %s; best of %d rounds of %.1f s\n", mcp_version(), ROUNDS,
           ROUND_SECONDS);
    run_case(argv[1], "tool");
    run_case(argv[1], "composed");
    return 0;
}
