/*
 * Money trails and case graphs (engine/trail.c, engine/draw.c): a hand-built
 * chain with a branch that happened before the money arrived (not followed
 * forward), hop limits, backward trails, minAmount/minShare, folding of
 * the smallest counterparties with what was folded; case graphs of the
 * demo bank drawn as PNG (signature, IHDR size range), SVG (names every
 * focus account), DOT, Cytoscape JSON and GraphML, byte-identical when
 * drawn twice; a 2,000-transaction case drawn within the time bound.
 */
#include "amltest.h"
#include "engine/trail.h"
#include "tools/tools.h"

#include <pthread.h>

#include <time.h>

/*
 * A -> B (day 1, $9,000), B -> C (day 2, $8,000), C -> D (day 3, $7,000),
 * B -> E (day 0, $5,000: before the money from A arrived), X -> A (day 0),
 * A -> S01..S15 (day 1, $10 + n each: small fan-out).
 */
static aml_store *chain_store(void)
{
    fx f;
    fx_begin(&f);
    fx_cust(&f, "C1", "Alice Trail", "individual", "clerk", 5000, 500, 0);
    fx_acct(&f, "A", "C1", -400, "CA", "US", NULL);
    const char *ext[] = {"B", "C", "D", "E", "X"};
    for (int i = 0; i < 5; i++)
        fx_acct(&f, ext[i], NULL, 0, NULL, i == 2 ? "IR" : "US", ext[i]);
    fx_tx(&f, "T-XA", 0, 9, "X", "A", 9500, "wire", NULL, NULL, NULL);
    fx_tx(&f, "T-BE", 0, 10, "B", "E", 5000, "wire", NULL, NULL, NULL);
    fx_tx(&f, "T-AB", 1, 10, "A", "B", 9000, "wire", NULL, NULL, NULL);
    fx_tx(&f, "T-BC", 2, 10, "B", "C", 8000, "wire", NULL, NULL, NULL);
    fx_tx(&f, "T-CD", 3, 10, "C", "D", 7000, "wire", NULL, NULL, NULL);
    for (int i = 1; i <= 15; i++) {
        char id[8], ref[16];
        snprintf(id, sizeof id, "S%02d", i);
        snprintf(ref, sizeof ref, "T-S%02d", i);
        fx_acct(&f, id, NULL, 0, NULL, "US", id);
        fx_tx(&f, ref, 1, 11, "A", id, 10 + i, "ach", NULL, NULL, NULL);
    }
    fx_case(&f, "CASE-T", 0, 5, "A");
    return fx_end(&f);
}

static int find_node(const aml_trail *t, const char *id)
{
    for (size_t i = 0; i < t->nnodes; i++)
        if (!strcmp(t->nodes[i].id, id))
            return (int)i;
    return -1;
}

static int has_edge(const aml_trail *t, const char *a, const char *b)
{
    int x = find_node(t, a), y = find_node(t, b);
    for (size_t i = 0; i < t->nedges; i++)
        if (t->edges[i].src == x && t->edges[i].dst == y)
            return 1;
    return 0;
}

static void trace(aml_store *s, const char *from, unsigned dir, int hops, aml_trail *t)
{
    int64_t start = aml_account_no(s, from);
    aml_trail_opts o;
    memset(&o, 0, sizeof o);
    o.starts = &start;
    o.nstarts = 1;
    o.direction = dir;
    o.max_hops = hops;
    aml_err err = {{0}};
    if (aml_trail_build(s, &o, t, &err))
        fprintf(stderr, "trail: %s\n", err.msg);
}

static void test_forward_in_time(void)
{
    aml_store *s = chain_store();
    T_TRUE(s != NULL);
    aml_trail t;
    trace(s, "A", AML_TRAIL_FORWARD, 3, &t);
    T_TRUE(has_edge(&t, "A", "B"));
    T_TRUE(has_edge(&t, "B", "C"));
    T_TRUE(has_edge(&t, "C", "D"));
    T_TRUE(!has_edge(&t, "B", "E")); /* paid before A's money arrived */
    T_TRUE(find_node(&t, "X") < 0);   /* forward only */
    T_EQ_INT(t.hops_reached, 3);
    int c = find_node(&t, "D");
    T_TRUE(c >= 0 && (t.nodes[c].flags & AML_FLAG_FATF_CALL));
    int a = find_node(&t, "A");
    T_TRUE(a >= 0 && !strcmp(t.nodes[a].holder, "Alice Trail") && (t.nodes[a].flags & AML_FLAG_IN_CASE));
    /* 15 small counterparties: 12 kept (fan cap), 3 folded with their totals */
    T_EQ_INT((int)t.nfolds, 1);
    T_EQ_INT(t.folds[0].accounts, 4); /* B takes one of the 12 slots */
    T_EQ_INT((int)t.folds[0].count, 4);
    T_EQ_INT((int)t.folds[0].usd, (11 + 12 + 13 + 14) * 100);
    T_TRUE(find_node(&t, "fold:A:out") >= 0);
    T_TRUE(find_node(&t, "S15") >= 0 && find_node(&t, "S01") < 0); /* the smallest were folded */
    aml_trail_free(&t);
    trace(s, "A", AML_TRAIL_FORWARD, 2, &t);
    T_TRUE(has_edge(&t, "B", "C") && !has_edge(&t, "C", "D"));
    aml_trail_free(&t);
    trace(s, "D", AML_TRAIL_BACKWARD, 6, &t);
    T_TRUE(has_edge(&t, "C", "D") && has_edge(&t, "B", "C") && has_edge(&t, "A", "B") && has_edge(&t, "X", "A"));
    T_TRUE(find_node(&t, "E") < 0);
    aml_trail_free(&t);
    aml_store_close(s);
}

static void test_minimums(void)
{
    aml_store *s = chain_store();
    T_TRUE(s != NULL);
    int64_t start = aml_account_no(s, "A");
    aml_trail_opts o;
    memset(&o, 0, sizeof o);
    o.starts = &start;
    o.nstarts = 1;
    o.direction = AML_TRAIL_FORWARD;
    o.min_amount = 100000; /* $1,000 */
    aml_trail t;
    aml_err err = {{0}};
    T_EQ_INT(aml_trail_build(s, &o, &t, &err), 0);
    T_EQ_INT((int)t.nfolds, 0);
    T_TRUE(has_edge(&t, "A", "B") && find_node(&t, "S15") < 0);
    aml_trail_free(&t);
    o.min_amount = 0;
    o.min_share = 0.5; /* B gets 9000 of A's 9,000 + 255 */
    T_EQ_INT(aml_trail_build(s, &o, &t, &err), 0);
    T_TRUE(has_edge(&t, "A", "B") && find_node(&t, "S15") < 0 && has_edge(&t, "C", "D"));
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_trail_write(&t, &w);
    T_EQ_INT(mcp_jw_finish(&w), MCP_OK);
    T_TRUE(strstr(b.data, "\"txnId\":\"T-AB\"") != NULL);
    mcp_buf_cleanup(&b);
    aml_trail_free(&t);
    aml_store_close(s);
}

/* ---- drawings ------------------------------------------------------------------------------ */

static aml_store *demo;

static const char *demo_case(const char *typology)
{
    static char id[AML_CASE_ID_MAX + 1];
    aml_err err = {{0}};
    if (!demo && aml_demo_store(&demo, &err))
        return NULL;
    aml_st *st = aml_stmt(demo, "SELECT case_id FROM case_typologies WHERE typology_id = ? ORDER BY 1 LIMIT 1");
    aml_bind_text(st, 1, typology);
    id[0] = '\0';
    if (aml_step(st) == AML_ROW)
        snprintf(id, sizeof id, "%s", aml_col_text(st, 0));
    aml_reset(st);
    return id[0] ? id : NULL;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_png(void)
{
    const char *id = demo_case("T07_CYCLE");
    T_TRUE(id != NULL);
    aml_trail t;
    aml_err err = {{0}};
    T_EQ_INT(aml_case_graph(demo, id, &t, &err), 0);
    T_TRUE(t.matched & (1u << AML_T07));
    mcp_buf a, b;
    mcp_buf_init(&a, 0);
    mcp_buf_init(&b, 0);
    T_EQ_INT(aml_draw(&t, AML_DRAW_PNG, &a, &err), 0);
    T_EQ_INT(aml_draw(&t, AML_DRAW_PNG, &b, &err), 0);
    const unsigned char *p = (const unsigned char *)a.data;
    T_TRUE(a.len > 33 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8) && !memcmp(p + 12, "IHDR", 4));
    uint32_t wpx = be32(p + 16), hpx = be32(p + 20);
    printf("  PNG %ux%u, %zu bytes\n", wpx, hpx, a.len);
    T_TRUE(wpx >= 300 && wpx <= 1600 && hpx >= 200 && hpx <= 1100); /* size="16,11" at 96 dpi */
    T_TRUE(a.len > 5000 && a.len < 2000000);
    T_TRUE(a.len == b.len && !memcmp(a.data, b.data, a.len)); /* deterministic */
    mcp_buf_cleanup(&a);
    mcp_buf_cleanup(&b);
    aml_trail_free(&t);
}

/* Graphviz writes '-' in SVG text as "&#45;": back to plain text, in place. */
static void svg_unescape(mcp_buf *b)
{
    char *w = b->data;
    for (const char *r = b->data; *r;) {
        if (!strncmp(r, "&#45;", 5)) {
            *w++ = '-';
            r += 5;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    b->len = (size_t)(w - b->data);
}

static void test_svg_and_exports(void)
{
    static const char *const typs[] = {"T07_CYCLE", "T08_LAYERING", "T01_STRUCTURING", "T03_FAN_IN"};
    for (size_t k = 0; k < sizeof typs / sizeof typs[0]; k++) {
        const char *id = demo_case(typs[k]);
        T_TRUE(id != NULL);
        aml_case c;
        aml_err err = {{0}};
        T_EQ_INT(aml_case_load(demo, id, &c, &err), 0);
        aml_trail t;
        T_EQ_INT(aml_case_graph(demo, id, &t, &err), 0);
        mcp_buf svg, svg2, dot, cy, gml;
        mcp_buf_init(&svg, 0);
        mcp_buf_init(&svg2, 0);
        mcp_buf_init(&dot, 0);
        mcp_buf_init(&cy, 0);
        mcp_buf_init(&gml, 0);
        T_EQ_INT(aml_draw(&t, AML_DRAW_SVG, &svg, &err), 0);
        T_EQ_INT(aml_draw(&t, AML_DRAW_SVG, &svg2, &err), 0);
        T_EQ_INT(aml_draw(&t, AML_DRAW_DOT, &dot, &err), 0);
        T_EQ_INT(aml_draw(&t, AML_DRAW_CYTOSCAPE, &cy, &err), 0);
        T_EQ_INT(aml_draw(&t, AML_DRAW_GRAPHML, &gml, &err), 0);
        T_TRUE(svg.len == svg2.len && !memcmp(svg.data, svg2.data, svg.len));
        T_TRUE(strstr(svg.data, "<svg") && strstr(svg.data, "Legend"));
        svg_unescape(&svg);
        for (size_t i = 0; i < c.naccts; i++) {
            char acct[80];
            aml_account_id(demo, c.accts[i], acct, sizeof acct);
            T_TRUE(strstr(svg.data, acct) != NULL);
            T_TRUE(strstr(dot.data, acct) != NULL);
            T_TRUE(strstr(gml.data, acct) != NULL);
        }
        mcp_json_doc *d = NULL;
        T_EQ_INT(mcp_json_parse(&d, cy.data, cy.len, NULL, NULL), MCP_OK);
        const mcp_json *el = mcp_json_get(mcp_json_doc_root(d), "elements");
        T_EQ_INT((int)mcp_json_len(mcp_json_get(el, "nodes")), (int)t.nnodes);
        T_EQ_INT((int)mcp_json_len(mcp_json_get(el, "edges")), (int)t.nedges);
        const mcp_json *e0 = mcp_json_get(mcp_json_at(mcp_json_get(el, "edges"), 0), "data");
        T_TRUE(mcp_json_typeof(mcp_json_get(e0, "amountUsdMinor")) == MCP_JSON_INT);
        T_TRUE(mcp_json_typeof(mcp_json_get(e0, "source")) == MCP_JSON_STRING);
        mcp_json_doc_free(d);
        T_TRUE(strstr(gml.data, "<graphml") && strstr(gml.data, "</graphml>"));
        /* every evidence edge is drawn red */
        if (t.matched)
            T_TRUE(strstr(dot.data, "#d32f2f") != NULL);
        mcp_buf_cleanup(&svg);
        mcp_buf_cleanup(&svg2);
        mcp_buf_cleanup(&dot);
        mcp_buf_cleanup(&cy);
        mcp_buf_cleanup(&gml);
        aml_trail_free(&t);
        aml_case_free(&c);
    }
}

/* A case of 2,000 transactions: 40 counterparties x 25 each way round one account. */
static void test_big_case_time(void)
{
    fx f;
    fx_begin(&f);
    fx_cust(&f, "C1", "Busy Trader", "entity", "wholesale", 500000, 0, 0);
    fx_acct(&f, "HUB", "C1", -400, "CA", "US", NULL);
    int n = 0;
    for (int k = 0; k < 40; k++) {
        char id[16];
        snprintf(id, sizeof id, "CP%02d", k);
        fx_acct(&f, id, NULL, 0, NULL, "US", id);
        for (int j = 0; j < 25; j++) {
            char r1[24], r2[24];
            snprintf(r1, sizeof r1, "I%02d-%02d", k, j);
            snprintf(r2, sizeof r2, "O%02d-%02d", k, j);
            fx_tx(&f, r1, j, k % 20, id, "HUB", 100 + k * 7 + j, "wire", NULL, NULL, NULL);
            fx_tx(&f, r2, j + 1, k % 20, "HUB", id, 90 + k * 5 + j, "wire", NULL, NULL, NULL);
            n += 2;
        }
    }
    fx_case(&f, "CASE-BIG", 0, 30, "HUB");
    aml_store *s = fx_end(&f);
    T_TRUE(s != NULL);
    T_EQ_INT(n, 2000);
    aml_err err = {{0}};
    aml_trail t;
    mcp_buf png;
    mcp_buf_init(&png, 0);
    T_EQ_INT(aml_case_graph(s, "CASE-BIG", &t, &err), 0); /* warms Graphviz and SQLite */
    T_EQ_INT(aml_draw(&t, AML_DRAW_PNG, &png, &err), 0);
    aml_trail_free(&t);
    mcp_buf_cleanup(&png);
    mcp_buf_init(&png, 0);
    int64_t t0 = aml_mono_ns();
    T_EQ_INT(aml_case_graph(s, "CASE-BIG", &t, &err), 0);
    T_EQ_INT(aml_draw(&t, AML_DRAW_PNG, &png, &err), 0);
    double ms = (double)(aml_mono_ns() - t0) / 1e6;
    T_EQ_INT((int)t.nfolds, 2); /* 40 each way, 10 kept: the rest folded both ways */
    printf("  2,000-transaction case: %zu nodes, %zu edges, PNG %zu bytes in %.1f ms\n", t.nnodes, t.nedges, png.len,
           ms);
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
    T_TRUE(ms < 3000); /* sanitizer/debug build: the 300 ms bound is for release builds */
#else
    T_TRUE(ms < 300);
#endif
    mcp_buf_cleanup(&png);
    aml_trail_free(&t);
    aml_store_close(s);
}

/* ---- through MCP ------------------------------------------------------------------------------------ */

typedef struct inbox {
    pthread_mutex_t mu;
    char *frames[64];
    int n;
} inbox;

static mcp_status keep(const char *f, size_t len, void *ud)
{
    inbox *b = ud;
    pthread_mutex_lock(&b->mu);
    if (b->n < 64)
        b->frames[b->n++] = aml_strndup(f, len);
    pthread_mutex_unlock(&b->mu);
    return MCP_OK;
}

/* Sends a request and waits for the answer with that id (caller frees). */
static mcp_json_doc *ask(mcp_conn *c, inbox *b, int id, const char *method, const char *params)
{
    char *req = aml_asprintf("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method, params);
    mcp_conn_recv(c, req, strlen(req));
    free(req);
    char needle[32];
    snprintf(needle, sizeof needle, "\"id\":%d,", id);
    for (int t = 0; t < 20000; t++) {
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

static void test_mcp_tools(void)
{
    const char *id = demo_case("T07_CYCLE");
    T_TRUE(id != NULL);
    char case_id[AML_CASE_ID_MAX + 1];
    snprintf(case_id, sizeof case_id, "%s", id);
    aml_app app = {demo, "test", NULL, NULL, NULL};
    mcp_server *srv;
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 1;
    mcp_error e;
    T_OK(mcp_server_new(&srv, &so, &e));
    T_OK(aml_tools_register(srv, &app, &e));
    inbox b;
    memset(&b, 0, sizeof b);
    pthread_mutex_init(&b.mu, NULL);
    mcp_conn *c;
    T_OK(mcp_conn_new(&c, srv, keep, &b));
    mcp_json_doc *d = ask(c, &b, 1, "initialize", "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                                                  "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}");
    mcp_json_doc_free(d);
    char args[256];
    snprintf(args, sizeof args, "{\"name\":\"caseGraph\",\"arguments\":{\"caseId\":\"%s\"}}", case_id);
    d = ask(c, &b, 2, "tools/call", args);
    const mcp_json *r = mcp_json_get(mcp_json_doc_root(d), "result"), *img = mcp_json_at(mcp_json_get(r, "content"), 0);
    T_TRUE(mcp_json_str_eq(mcp_json_get(img, "type"), "image"));
    T_TRUE(mcp_json_str_eq(mcp_json_get(img, "mimeType"), "image/png"));
    T_TRUE(!strncmp(mcp_json_str(mcp_json_get(img, "data"), NULL), "iVBORw0KGgo", 11)); /* base64 of the signature */
    T_TRUE(mcp_json_len(mcp_json_get(mcp_json_get(r, "structuredContent"), "edges")) > 0);
    mcp_json_doc_free(d);
    d = ask(c, &b, 3, "tools/call", "{\"name\":\"traceFunds\",\"arguments\":{\"accountId\":\"NOPE\"}}");
    r = mcp_json_get(mcp_json_doc_root(d), "result");
    T_TRUE(mcp_json_bool(mcp_json_get(r, "isError")));
    mcp_json_doc_free(d);
    d = ask(c, &b, 4, "tools/call", "{\"name\":\"traceFunds\",\"arguments\":{\"accountId\":\"x\",\"maxHops\":7}}");
    r = mcp_json_get(mcp_json_doc_root(d), "result");
    T_TRUE(mcp_json_bool(mcp_json_get(r, "isError"))); /* the schema caps maxHops at 6 */
    mcp_json_doc_free(d);
    snprintf(args, sizeof args, "{\"uri\":\"aml://cases/%s/graph.svg\"}", case_id);
    d = ask(c, &b, 5, "resources/read", args);
    const mcp_json *ct = mcp_json_at(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "contents"), 0);
    T_TRUE(mcp_json_str_eq(mcp_json_get(ct, "mimeType"), "image/svg+xml"));
    T_TRUE(strstr(mcp_json_str(mcp_json_get(ct, "text"), NULL), "<svg") != NULL);
    mcp_json_doc_free(d);
    snprintf(args, sizeof args, "{\"name\":\"draftSar\",\"arguments\":{\"caseId\":\"%s\"}}", case_id);
    d = ask(c, &b, 6, "tools/call", args);
    int linked = 0;
    const mcp_json *content = mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "content");
    for (size_t i = 0; i < mcp_json_len(content); i++)
        linked |= mcp_json_str_eq(mcp_json_get(mcp_json_at(content, i), "type"), "resource_link") &&
                  strstr(mcp_json_str(mcp_json_get(mcp_json_at(content, i), "uri"), NULL), "/graph.svg");
    T_TRUE(linked);
    mcp_json_doc_free(d);
    mcp_conn_close(c, 2000);
    mcp_conn_free(c);
    mcp_server_free(srv);
    for (int i = 0; i < b.n; i++)
        free(b.frames[i]);
    pthread_mutex_destroy(&b.mu);
}

static void test_cleanup(void)
{
    aml_store_close(demo);
    demo = NULL;
}

TEST_MAIN(TEST(test_forward_in_time), TEST(test_minimums), TEST(test_png), TEST(test_svg_and_exports),
          TEST(test_big_case_time), TEST(test_mcp_tools), TEST(test_cleanup))
