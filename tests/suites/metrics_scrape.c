/*
 * suite.metrics: mcp-test-server with --http and --metrics; calls that end
 * in each way (ok, tool error, invalid arguments, unknown tool, time
 * limit) over Streamable HTTP, then a scrape with libcurl whose text is
 * parsed strictly as the Prometheus text exposition format 0.0.4:
 * HELP/TYPE lines (one each, before the samples, HELP escapes), one group
 * per family, metric and label names, label value escapes, values, no
 * duplicate series, histogram buckets rising in `le` and in count with
 * +Inf equal to _count and a _sum. Then the counted calls are checked.
 * Last, scrapes taken while five clients keep calling: each parses, the
 * counts only rise, and the last one counts every call.
 *
 * usage: metrics_scrape PATH-TO-mcp-test-server
 */
#include "mcp/mcp.h"

#include <curl/curl.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "http_testlib.h"


/* ---- the exposition parser ------------------------------------------------- */

#define MAXL 16
#define MAXS 4096
#define MAXF 256

typedef struct sample {
    char name[160];
    int nl;                 /* labels */
    char lk[MAXL][64];      /* label names */
    char lv[MAXL][256];     /* label values, unescaped */
    double v;
} sample;

typedef struct family {
    char name[128];
    char type[16];
    char help[512];         /* unescaped */
    int has_help, has_type, has_samples, closed;
} family;

typedef struct expo {
    sample s[MAXS];
    int ns;
    family f[MAXF];
    int nf;
    char err[300];          /* the first violation, "" when none */
} expo;

static int bad(expo *e, int line, const char *why)
{
    if (!e->err[0])
        snprintf(e->err, sizeof e->err, "line %d: %s", line, why);
    return -1;
}

static int name_ok(const char *s, size_t n, int label)
{
    if (!n || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || (s[i] == ':' && !label)))
            return 0;
    return 1;
}

static family *fam(expo *e, const char *name)
{
    for (int i = 0; i < e->nf; i++)
        if (!strcmp(e->f[i].name, name))
            return &e->f[i];
    return NULL;
}

/* The family a sample name belongs to, by the suffixes its type allows. */
static family *fam_of_sample(expo *e, const char *name)
{
    family *f = fam(e, name);
    if (f && strcmp(f->type, "histogram") && strcmp(f->type, "summary"))
        return f;
    static const char *const suf[] = {"_bucket", "_sum", "_count"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(name), k = strlen(suf[i]);
        if (n > k && !strcmp(name + n - k, suf[i])) {
            char base[128];
            snprintf(base, sizeof base, "%.*s", (int)(n - k), name);
            family *g = fam(e, base);
            if (g && (!strcmp(g->type, "histogram") || (!strcmp(g->type, "summary") && i)))
                return g;
        }
    }
    return NULL;
}

/* HELP text: only \\ and \n are escapes. */
static int unescape_help(const char *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\') {
            if (++i >= n || (p[i] != '\\' && p[i] != 'n'))
                return -1;
            c = p[i] == 'n' ? '\n' : '\\';
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

static int parse_comment(expo *e, int ln, const char *p, size_t n, family **cur)
{
    int help = n > 7 && !strncmp(p, "# HELP ", 7), type = n > 7 && !strncmp(p, "# TYPE ", 7);
    if (!help && !type)
        return 0; /* an ordinary comment */
    const char *name = p + 7, *sp = memchr(name, ' ', n - 7);
    size_t nn = sp ? (size_t)(sp - name) : n - 7;
    if (!name_ok(name, nn, 0) || nn >= sizeof e->f[0].name)
        return bad(e, ln, "bad metric name in HELP/TYPE");
    char nm[128];
    snprintf(nm, sizeof nm, "%.*s", (int)nn, name);
    family *f = fam(e, nm);
    if (!f) {
        if (e->nf >= MAXF)
            return bad(e, ln, "too many families");
        f = &e->f[e->nf++];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%s", nm);
    }
    if (f->has_samples)
        return bad(e, ln, "HELP/TYPE after the family's samples");
    if (*cur && *cur != f)
        (*cur)->closed = 1;
    *cur = f;
    const char *rest = sp ? sp + 1 : p + n;
    size_t rn = (size_t)(p + n - rest);
    if (help) {
        if (f->has_help++)
            return bad(e, ln, "second HELP");
        if (unescape_help(rest, rn, f->help, sizeof f->help))
            return bad(e, ln, "bad escape in HELP");
        return 0;
    }
    if (f->has_type++)
        return bad(e, ln, "second TYPE");
    static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
    for (int i = 0; i < 5; i++)
        if (rn == strlen(types[i]) && !strncmp(rest, types[i], rn)) {
            snprintf(f->type, sizeof f->type, "%s", types[i]);
            return 0;
        }
    return bad(e, ln, "unknown TYPE");
}

/* {k="v",...}: label values allow the escapes \\, \" and \n only. */
static const char *parse_labels(expo *e, int ln, const char *p, const char *end, sample *s)
{
    p++; /* '{' */
    while (p < end && *p != '}') {
        const char *k = p;
        while (p < end && *p != '=')
            p++;
        if (p >= end || s->nl >= MAXL || !name_ok(k, (size_t)(p - k), 1) || (size_t)(p - k) >= 64)
            return bad(e, ln, "bad label name"), NULL;
        snprintf(s->lk[s->nl], 64, "%.*s", (int)(p - k), k);
        if (++p >= end || *p != '"')
            return bad(e, ln, "label value not quoted"), NULL;
        size_t o = 0;
        for (p++; p < end && *p != '"'; p++) {
            char c = *p;
            if (c == '\\') {
                if (++p >= end || (*p != '\\' && *p != '"' && *p != 'n'))
                    return bad(e, ln, "bad escape in a label value"), NULL;
                c = *p == 'n' ? '\n' : *p;
            }
            if (o + 1 >= sizeof s->lv[0])
                return bad(e, ln, "label value too long"), NULL;
            s->lv[s->nl][o++] = c;
        }
        if (p >= end)
            return bad(e, ln, "unterminated label value"), NULL;
        s->lv[s->nl][o] = '\0';
        for (int j = 0; j < s->nl; j++)
            if (!strcmp(s->lk[j], s->lk[s->nl]))
                return bad(e, ln, "label repeated"), NULL;
        s->nl++;
        p++;
        if (p < end && *p == ',')
            p++;
        else if (p >= end || *p != '}')
            return bad(e, ln, "expected , or }"), NULL;
    }
    if (p >= end)
        return bad(e, ln, "unterminated label set"), NULL;
    return p + 1;
}

static int parse_value(const char *p, size_t n, double *v)
{
    char t[64];
    if (!n || n >= sizeof t)
        return -1;
    snprintf(t, sizeof t, "%.*s", (int)n, p);
    if (!strcmp(t, "+Inf") || !strcmp(t, "-Inf") || !strcmp(t, "NaN")) {
        *v = t[0] == 'N' ? NAN : t[0] == '+' ? INFINITY : -INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(t, &end);
    return *end || errno || isnan(*v) || isinf(*v) ? -1 : 0;
}

static int same_series(const sample *a, const sample *b)
{
    if (strcmp(a->name, b->name) || a->nl != b->nl)
        return 0;
    for (int i = 0; i < a->nl; i++) {
        int found = 0;
        for (int j = 0; j < b->nl && !found; j++)
            found = !strcmp(a->lk[i], b->lk[j]) && !strcmp(a->lv[i], b->lv[j]);
        if (!found)
            return 0;
    }
    return 1;
}

static int parse_sample(expo *e, int ln, const char *p, size_t n, family **cur)
{
    const char *end = p + n, *q = p;
    if (e->ns >= MAXS)
        return bad(e, ln, "too many samples");
    sample *s = &e->s[e->ns];
    memset(s, 0, sizeof *s);
    while (q < end && *q != '{' && *q != ' ')
        q++;
    if (!name_ok(p, (size_t)(q - p), 0) || (size_t)(q - p) >= 128)
        return bad(e, ln, "bad sample name");
    snprintf(s->name, sizeof s->name, "%.*s", (int)(q - p), p);
    if (q < end && *q == '{' && !(q = parse_labels(e, ln, q, end, s)))
        return -1;
    if (q >= end || *q != ' ')
        return bad(e, ln, "no space before the value");
    q++;
    const char *sp = memchr(q, ' ', (size_t)(end - q));
    if (parse_value(q, sp ? (size_t)(sp - q) : (size_t)(end - q), &s->v))
        return bad(e, ln, "bad value");
    if (sp) { /* a timestamp: an integer */
        for (const char *t = sp + 1 + (sp[1] == '-'); t < end; t++)
            if (*t < '0' || *t > '9')
                return bad(e, ln, "bad timestamp");
    }
    family *f = fam_of_sample(e, s->name);
    if (!f || !f->has_type)
        return bad(e, ln, "sample of a family without TYPE");
    if (f->closed || (*cur && *cur != f))
        return bad(e, ln, "family's lines not in one group");
    *cur = f;
    f->has_samples = 1;
    for (int i = 0; i < e->ns; i++)
        if (same_series(&e->s[i], s))
            return bad(e, ln, "duplicate series");
    e->ns++;
    return 0;
}

/* 0 when `text` is a well-formed exposition; e->err says why not. */
static int parse_expo(expo *e, const char *text, size_t len)
{
    memset(e, 0, sizeof *e);
    if (!len || text[len - 1] != '\n')
        return bad(e, 0, "empty or no final newline");
    family *cur = NULL;
    int ln = 0;
    for (const char *p = text; p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = (size_t)(nl - p);
        ln++;
        if (memchr(p, '\r', n) || memchr(p, '\0', n))
            return bad(e, ln, "CR or NUL in a line");
        int r = !n ? bad(e, ln, "empty line") : p[0] == '#' ? parse_comment(e, ln, p, n, &cur)
                                                           : parse_sample(e, ln, p, n, &cur);
        if (r)
            return -1;
        p = nl + 1;
    }
    return 0;
}

static const char *label(const sample *s, const char *k)
{
    for (int i = 0; i < s->nl; i++)
        if (!strcmp(s->lk[i], k))
            return s->lv[i];
    return NULL;
}

/* Histogram rules for every series of every histogram family. */
static int check_histograms(expo *e)
{
    for (int fi = 0; fi < e->nf; fi++) {
        family *f = &e->f[fi];
        if (strcmp(f->type, "histogram"))
            continue;
        char bn[160], cn[160], sn[160];
        snprintf(bn, sizeof bn, "%s_bucket", f->name);
        snprintf(cn, sizeof cn, "%s_count", f->name);
        snprintf(sn, sizeof sn, "%s_sum", f->name);
        for (int i = 0; i < e->ns; i++) {
            sample *c = &e->s[i];
            if (strcmp(c->name, cn))
                continue;
            /* The buckets of c's label set, in the order written. */
            double prev_le = -INFINITY, prev_v = 0, inf_v = -1;
            int nb = 0, has_sum = 0;
            for (int j = 0; j < e->ns; j++) {
                sample *b = &e->s[j];
                sample tmp = *b;
                if (!strcmp(b->name, sn)) {
                    snprintf(tmp.name, sizeof tmp.name, "%s", cn);
                    has_sum |= same_series(&tmp, c);
                    continue;
                }
                if (strcmp(b->name, bn))
                    continue;
                const char *le = label(b, "le");
                if (!le) {
                    snprintf(e->err, sizeof e->err, "%s: a bucket without le", f->name);
                    return -1;
                }
                /* Compare without le. */
                tmp.nl = 0;
                for (int k = 0; k < b->nl; k++)
                    if (strcmp(b->lk[k], "le")) {
                        snprintf(tmp.lk[tmp.nl], 64, "%s", b->lk[k]);
                        snprintf(tmp.lv[tmp.nl++], 256, "%s", b->lv[k]);
                    }
                snprintf(tmp.name, sizeof tmp.name, "%s", cn);
                if (!same_series(&tmp, c))
                    continue;
                double lev;
                if (parse_value(le, strlen(le), &lev) || !(lev > prev_le) || b->v < prev_v) {
                    snprintf(e->err, sizeof e->err, "%s{le=%s}: buckets not rising (le or count)", f->name, le);
                    return -1;
                }
                prev_le = lev;
                prev_v = b->v;
                nb++;
                if (isinf(lev))
                    inf_v = b->v;
            }
            if (!nb || inf_v < 0 || inf_v != c->v || !has_sum) {
                snprintf(e->err, sizeof e->err, "%s: +Inf bucket %g vs count %g (%d buckets, sum %d)", f->name,
                         inf_v, c->v, nb, has_sum);
                return -1;
            }
        }
    }
    return 0;
}

/* The value of the sample `name` whose labels include every pair in kv (NULL-ended); -1 if none. */
static double value_of(const expo *e, const char *name, const char *const *kv)
{
    for (int i = 0; i < e->ns; i++) {
        if (strcmp(e->s[i].name, name))
            continue;
        int all = 1;
        for (int k = 0; kv && kv[k] && all; k += 2) {
            const char *v = label(&e->s[i], kv[k]);
            all = v && !strcmp(v, kv[k + 1]);
        }
        if (all)
            return e->s[i].v;
    }
    return -1;
}

/* ---- the parser must refuse what is malformed -------------------------------- */

static void test_parser_refuses(void)
{
    static expo e;
    static const char *const badtexts[] = {
        "x 1",                                                         /* no final newline */
        "# TYPE x counter\nx{a=\"\\t\"} 1\n",                           /* bad escape */
        "# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",               /* duplicate */
        "# TYPE x counter\nx 1\n# TYPE y gauge\ny 1\nx{a=\"2\"} 1\n",   /* two groups */
        "x 1\n",                                                       /* no TYPE */
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
        "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
        "# TYPE x counter\nx 1,5\n",
        "# HELP x a\\q\n# TYPE x counter\nx 1\n",
    };
    for (size_t i = 0; i < sizeof badtexts / sizeof badtexts[0]; i++) {
        int r = parse_expo(&e, badtexts[i], strlen(badtexts[i]));
        if (!r)
            r = check_histograms(&e);
        CHECK(r != 0, "the parser accepted malformed text %zu", i);
    }
    const char *good = "# HELP h d\\\\x\\n\n# TYPE h histogram\nh_bucket{a=\"q\\\"\",le=\"0.5\"} 1\n"
                       "h_bucket{a=\"q\\\"\",le=\"+Inf\"} 2\nh_sum{a=\"q\\\"\"} 0.7\nh_count{a=\"q\\\"\"} 2\n";
    CHECK(parse_expo(&e, good, strlen(good)) == 0 && check_histograms(&e) == 0, "good text refused: %s", e.err);
}

/* ---- the server ------------------------------------------------------------- */

typedef struct child {
    pid_t pid;
    FILE *out;
    char mcp_url[200];
    char metrics_url[200];
} child;

static int start_server(child *c, const char *exe)
{
    int p[2];
    if (pipe(p))
        return -1;
    c->pid = fork();
    if (c->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(exe, exe, "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    c->out = fdopen(p[0], "r");
    char line[300];
    c->mcp_url[0] = c->metrics_url[0] = '\0';
    while ((!c->mcp_url[0] || !c->metrics_url[0]) && fgets(line, sizeof line, c->out)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "listening on ", 13))
            snprintf(c->mcp_url, sizeof c->mcp_url, "%s", line + 13);
        else if (!strncmp(line, "metrics on ", 11))
            snprintf(c->metrics_url, sizeof c->metrics_url, "%s", line + 11);
    }
    return c->mcp_url[0] && c->metrics_url[0] ? 0 : -1;
}

static void stop_server(child *c)
{
    if (c->pid > 0) {
        kill(c->pid, SIGTERM);
        int status;
        waitpid(c->pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the server exited badly (%d)", status);
    }
    if (c->out)
        fclose(c->out);
}

typedef struct body {
    char *data;
    size_t len;
    char type[128];
} body;

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    body *b = ud;
    char *d = realloc(b->data, b->len + sz * n + 1);
    if (!d)
        return 0;
    memcpy(d + b->len, p, sz * n);
    b->len += sz * n;
    d[b->len] = '\0';
    b->data = d;
    return sz * n;
}

static long scrape(const char *url, body *b)
{
    memset(b, 0, sizeof *b);
    CURL *h = curl_easy_init();
    long code = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (curl_easy_perform(h) == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        char *ct = NULL;
        curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
        snprintf(b->type, sizeof b->type, "%s", ct ? ct : "");
    }
    curl_easy_cleanup(h);
    return code;
}

static void call(mcp_client *c, const char *tool, const char *args)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_client_call_tool(c, tool, args, NULL, &r, &err);
    mcp_response_free(r);
}

static mcp_client *connect_to(const char *url, const char *version)
{
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_ms = 20000;
    o.protocol_version = version;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = url;
    mcp_client *c = NULL;
    mcp_error err;
    mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
    CHECK(st == MCP_OK, "connect %s: %s", url, err.message);
    return st ? NULL : c;
}

/* Calls that end in five ways, over 2026-07-28 and over a legacy session. */
static void run_calls(mcp_client *c, mcp_client *legacy)
{
    if (!c || !legacy)
        return;
    call(legacy, "echo", "{\"text\":\"hi\"}");
    for (int i = 0; i < 2; i++)
        call(c, "echo", "{\"text\":\"hi\"}");
    call(c, "fail", "{}");
    call(c, "assessTypology", "{\"caseId\":\"nope\"}");
    call(c, "noSuchTool", "{}");
    call(c, "limited", "{\"ms\":400}");
}

/* Starts the fixture with --http and --metrics; 0 when both URLs are known (else stopped again). */
static int started(child *c, const char *exe)
{
    memset(c, 0, sizeof *c);
    CHECK(start_server(c, exe) == 0, "the server did not say where it listens");
    if (c->mcp_url[0] && c->metrics_url[0])
        return 0;
    stop_server(c);
    return -1;
}

static void test_scrape(const char *exe)
{
    child c;
    if (started(&c, exe))
        return;
    mcp_client *modern = connect_to(c.mcp_url, MCP_PROTOCOL_2026_07_28);
    mcp_client *legacy = connect_to(c.mcp_url, MCP_PROTOCOL_2025_11_25);
    run_calls(modern, legacy);
    usleep(500 * 1000); /* the timed-out handler finishes (the in-flight gauge) */
    body b;
    long code = scrape(c.metrics_url, &b);
    CHECK(code == 200, "scrape: HTTP %ld", code);
    CHECK(strstr(b.type, "text/plain") && strstr(b.type, "version=0.0.4"), "content type %s", b.type);
    static expo e;
    int r = b.data ? parse_expo(&e, b.data, b.len) : -1;
    CHECK(r == 0, "exposition: %s", e.err);
    if (r == 0) {
        CHECK(check_histograms(&e) == 0, "histograms: %s", e.err);
        const char *echo_ok[] = {"tool", "echo", "outcome", "ok", NULL};
        const char *fail_err[] = {"tool", "fail", "outcome", "tool_error", NULL};
        const char *inv[] = {"tool", "assessTypology", "outcome", "invalid_arguments", NULL};
        const char *unk[] = {"tool", "(unknown)", "outcome", "unknown_tool", NULL};
        const char *slow[] = {"tool", "limited", "outcome", "timed_out", NULL};
        const char *echo_h[] = {"tool", "echo", NULL};
        const char *note[] = {"note", "a \"quoted\" back\\slash\nnewline", NULL};
        CHECK(value_of(&e, "mcp_tool_calls_total", echo_ok) == 3, "echo ok %g", value_of(&e, "mcp_tool_calls_total", echo_ok));
        CHECK(value_of(&e, "mcp_tool_calls_total", fail_err) == 1, "fail tool_error");
        CHECK(value_of(&e, "mcp_tool_calls_total", inv) == 1, "assessTypology invalid_arguments");
        CHECK(value_of(&e, "mcp_tool_calls_total", unk) == 1, "unknown tool");
        CHECK(value_of(&e, "mcp_tool_calls_total", slow) == 1, "limited timed_out");
        CHECK(value_of(&e, "mcp_tool_call_duration_seconds_count", echo_h) == 3, "echo histogram count");
        CHECK(value_of(&e, "mcp_calls_in_flight", NULL) == 0, "in flight %g", value_of(&e, "mcp_calls_in_flight", NULL));
        CHECK(value_of(&e, "mcp_worker_queue_depth", NULL) == 0, "queue depth");
        CHECK(value_of(&e, "mcp_http_sessions", NULL) == 1, "sessions %g", value_of(&e, "mcp_http_sessions", NULL));
        CHECK(value_of(&e, "mcp_http_streams", NULL) >= 0, "streams gauge");
        CHECK(value_of(&e, "fixture_info", note) == 1, "the fixture's label value read back");
        family *fi = fam(&e, "fixture_info");
        CHECK(fi && !strcmp(fi->help, "The fixture's own metric; help with a \\ and a\nnewline."), "help read back");
        CHECK(fam(&e, "mcp_http_refusals_total") && fam(&e, "mcp_auth_failures_total"), "refusal families");
    }
    free(b.data);
    /* The legacy session ends (DELETE): the gauge follows. */
    mcp_client_close(legacy);
    mcp_client_close(modern);
    code = scrape(c.metrics_url, &b);
    r = code == 200 && b.data ? parse_expo(&e, b.data, b.len) : -1;
    CHECK(r == 0 && value_of(&e, "mcp_http_sessions", NULL) == 0, "sessions after DELETE %g",
          r ? -1 : value_of(&e, "mcp_http_sessions", NULL));
    free(b.data);
    char other[260];
    snprintf(other, sizeof other, "%.*s/other", (int)(strlen(c.metrics_url) - 8), c.metrics_url);
    code = scrape(other, &b);
    CHECK(code == 404, "another path: HTTP %ld", code);
    free(b.data);
    stop_server(&c);
}

/* ---- a scrape during a load run ------------------------------------------- */

#define LOAD_THREADS 4
#define LOAD_CALLS 300

typedef struct loader {
    pthread_t t;
    const char *url;
    int slow;    /* this one calls `limited` (200 ms): calls stay in flight */
    int made;    /* calls answered */
} loader;

static void *load_run(void *arg)
{
    loader *l = arg;
    mcp_client *c = connect_to(l->url, MCP_PROTOCOL_2026_07_28);
    for (int i = 0; c && i < (l->slow ? 10 : LOAD_CALLS); i++) {
        mcp_response *r = NULL;
        mcp_error err;
        if (mcp_client_call_tool(c, l->slow ? "limited" : "echo", l->slow ? "{\"ms\":200}" : "{\"text\":\"load\"}",
                                 NULL, &r, &err) == MCP_OK)
            l->made++;
        mcp_response_free(r);
    }
    mcp_client_close(c);
    return NULL;
}

/*
 * Scrapes while four clients call echo (300 calls each) and one keeps a
 * slow call in flight: every scrape parses, the echo count only rises,
 * some scrapes land mid-run and see calls in flight, and the last one
 * counts every call made.
 */
static void test_scrape_under_load(const char *exe)
{
    child c;
    if (started(&c, exe))
        return;
    loader l[LOAD_THREADS + 1];
    memset(l, 0, sizeof l);
    for (int i = 0; i <= LOAD_THREADS; i++) {
        l[i].url = c.mcp_url;
        l[i].slow = i == LOAD_THREADS;
        pthread_create(&l[i].t, NULL, load_run, &l[i]);
    }
    static expo e;
    const char *echo_ok[] = {"tool", "echo", "outcome", "ok", NULL};
    double last = 0;
    int scrapes = 0, bad_parse = 0, went_down = 0, mid = 0, in_flight_seen = 0;
    for (int k = 0; k < 400; k++) {
        body b;
        long code = scrape(c.metrics_url, &b);
        int r = code == 200 && b.data ? parse_expo(&e, b.data, b.len) : -1;
        free(b.data);
        scrapes++;
        if (r != 0) {
            bad_parse++;
            continue;
        }
        double n = value_of(&e, "mcp_tool_calls_total", echo_ok);
        n = n < 0 ? 0 : n;
        went_down += n < last;
        last = n;
        mid += n > 0 && n < LOAD_THREADS * LOAD_CALLS;
        in_flight_seen += value_of(&e, "mcp_calls_in_flight", NULL) > 0;
        if (n >= LOAD_THREADS * LOAD_CALLS)
            break;
        usleep(10 * 1000);
    }
    int made = 0;
    for (int i = 0; i <= LOAD_THREADS; i++) {
        pthread_join(l[i].t, NULL);
        made += l[i].slow ? 0 : l[i].made;
    }
    CHECK(made == LOAD_THREADS * LOAD_CALLS, "echo calls answered: %d", made);
    CHECK(bad_parse == 0, "%d of %d scrapes during the load did not parse: %s", bad_parse, scrapes, e.err);
    CHECK(went_down == 0, "the echo count went down %d times", went_down);
    CHECK(mid >= 2, "only %d scrapes landed mid-run", mid);
    CHECK(in_flight_seen >= 1, "no scrape saw a call in flight");
    body b;
    long code = scrape(c.metrics_url, &b);
    int r = code == 200 && b.data ? parse_expo(&e, b.data, b.len) : -1;
    CHECK(r == 0 && value_of(&e, "mcp_tool_calls_total", echo_ok) == made, "after the load: %g echo calls counted, %d made",
          r ? -1 : value_of(&e, "mcp_tool_calls_total", echo_ok), made);
    free(b.data);
    printf("metrics under load: %d scrapes, %d mid-run, %d saw calls in flight\n", scrapes, mid, in_flight_seen);
    stop_server(&c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: metrics_scrape MCP-TEST-SERVER\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    test_parser_refuses();
    test_scrape(argv[1]);
    test_scrape_under_load(argv[1]);
    curl_global_cleanup();
    return check_summary("metrics_scrape");
}
