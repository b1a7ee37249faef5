/*
 * Fund-flow tools of mcp-server-aml (docs/aml.md, "Money trails and case
 * graphs"): traceFunds (a hop-limited money trail from one account),
 * caseGraph (the case's fund flow drawn by Graphviz, as an image block
 * plus the graph as structuredContent) and the resource template
 * aml://cases/{caseId}/graph.{format} (svg, png, dot, cyjs, graphml).
 *
 * Like the other tools: a connection for the whole call, an audit entry
 * per call (argument and result digests), unknown ids as tool errors.
 */
#include "engine/trail.h"
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

/* tools/case_view.html, embedded by apps/aml/CMakeLists.txt. */
extern const unsigned char aml_case_view_html[];

typedef struct gctx {
    aml_app *app;
    aml_store *s; /* the call's connection */
    mcp_call *call;
    char req_sha[65], resp_sha[65];
    int64_t resets;        /* the connection's resets when the call began (aml_store_resets) */
    char case_id[AML_CASE_ID_MAX + 1];
    const char *outcome;
    char detail[160];
} gctx;

static void gctx_begin(gctx *c, aml_app *app, mcp_call *call, const mcp_json *args)
{
    memset(c, 0, sizeof *c);
    c->app = app;
    c->call = call;
    c->outcome = "ok";
    aml_args_sha256(args, c->req_sha);
    c->s = aml_app_acquire(app);
    c->resets = aml_store_resets(c->s);
}

static mcp_status gctx_end(gctx *c, mcp_status st)
{
    char action[64];
    snprintf(action, sizeof action, "tool.%s", mcp_call_tool_name(c->call));
    const char *subject = mcp_call_subject(c->call);
    aml_audit_entry e = {aml_app_actor(c->app, subject),
                         action,
                         c->case_id[0] ? c->case_id : NULL,
                         c->req_sha,
                         c->resp_sha[0] ? c->resp_sha : NULL,
                         st == MCP_OK ? c->outcome : "error",
                         c->detail[0] ? c->detail : NULL};
    char dt[AML_AUDIT_DETAIL_MAX];
    e.detail = aml_audit_detail(e.detail, mcp_call_trace(c->call, NULL), dt, sizeof dt);
    aml_err err;
    aml_app_write_lock(c->app, c->s);
    if (aml_audit_append(c->s, &e, &err))
        mcp_call_log(c->call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(c->app);
    aml_app_release(c->app, c->s);
    return st;
}

static mcp_status gfail(gctx *c, const char *msg)
{
    c->outcome = "error";
    return mcp_call_error(c->call, "%s", msg);
}

/*
 * 1, with the tool error in *st, when the connection to the case store was lost since the call began: a
 * read that failed may have looked like no rows, so the trail may be partial and is not sent.
 */
static int glost(gctx *c, mcp_status *st)
{
    char msg[400];
    if (!aml_call_lost(c->s, c->resets, 0, msg, sizeof msg))
        return 0;
    snprintf(c->detail, sizeof c->detail, "connection lost");
    *st = gfail(c, msg);
    return 1;
}

/* Sends the trail as structuredContent (its digest is the audited result). */
static mcp_status send_structured(gctx *c, const aml_trail *t)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_trail_write(t, &w);
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK) {
        aml_sha256_hex(b.data, b.len, c->resp_sha);
        st = mcp_call_structured(c->call, b.data, b.len);
    }
    mcp_buf_cleanup(&b);
    return st;
}

static mcp_status send_text(gctx *c, const aml_trail *t, const char *extra)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    aml_trail_text(t, &b);
    if (extra)
        aml_buf_puts(&b, extra);
    mcp_status st = b.data ? mcp_call_text(c->call, b.data, NULL) : MCP_ERR_NOMEM;
    mcp_buf_cleanup(&b);
    return st;
}

/* ---- traceFunds --------------------------------------------------------------------------- */

/* A date argument: 0 when absent, -1 when not a date; `end` moves it to the day's last second. */
static int date_arg(const mcp_json *args, const char *key, int end, int64_t *out)
{
    size_t n;
    const char *s = mcp_json_str(mcp_json_get(args, key), &n);
    *out = 0;
    if (!s)
        return 0;
    if (aml_parse_time(s, n, out, NULL))
        return -1;
    if (end)
        *out = aml_day_start(*out) + AML_DAY - 1;
    return 0;
}

static int trace_opts(gctx *c, const mcp_json *args, aml_trail_opts *o, int64_t *start)
{
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(args, "accountId"), &n);
    char msg[256];
    memset(o, 0, sizeof *o);
    *start = id && n < 128 && !memchr(id, '\0', n) ? aml_account_no(c->s, id) : 0;
    if (!*start) {
        snprintf(msg, sizeof msg, "Unknown accountId '%.64s': no such account. Account ids appear in listCases "
                 "(focusAccounts) and in assessCase evidence.", id ? id : "");
        snprintf(c->detail, sizeof c->detail, "unknown account");
        gfail(c, msg);
        return -1;
    }
    const char *dir = mcp_json_str(mcp_json_get(args, "direction"), NULL);
    o->direction = !dir || !strcmp(dir, "both") ? AML_TRAIL_BOTH
                   : !strcmp(dir, "forward")    ? AML_TRAIL_FORWARD
                                                : AML_TRAIL_BACKWARD;
    o->max_hops = mcp_json_get(args, "maxHops") ? (int)mcp_json_int(mcp_json_get(args, "maxHops")) : 3;
    o->max_nodes = mcp_json_get(args, "maxNodes") ? (int)mcp_json_int(mcp_json_get(args, "maxNodes")) : 60;
    o->max_edges = 3 * o->max_nodes;
    if (date_arg(args, "from", 0, &o->from) || date_arg(args, "to", 1, &o->to)) {
        gfail(c, "from/to must be real calendar dates (YYYY-MM-DD).");
        return -1;
    }
    if (o->to && o->from > o->to) {
        gfail(c, "from is after to: give a window whose start is on or before its end.");
        return -1;
    }
    const mcp_json *ma = mcp_json_get(args, "minAmount"), *ms = mcp_json_get(args, "minShare");
    if (ma && ms) {
        gfail(c, "Give minAmount or minShare, not both.");
        return -1;
    }
    o->min_amount = ma ? (int64_t)(mcp_json_number(ma) * 100.0 + 0.5) : 0;
    o->min_share = ms ? mcp_json_number(ms) : 0;
    o->starts = start;
    o->nstarts = 1;
    return 0;
}

static mcp_status trace_funds(mcp_call *call, const mcp_json *args, void *ud)
{
    gctx c;
    gctx_begin(&c, ud, call, args);
    aml_trail_opts o;
    int64_t start;
    if (trace_opts(&c, args, &o, &start))
        return gctx_end(&c, MCP_OK);
    aml_trail t;
    aml_err err = {{0}};
    mcp_status st = MCP_OK;
    if (aml_trail_build(c.s, &o, &t, &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "The trail could not be traced: %s", err.msg);
        st = gfail(&c, msg);
    } else if (!glost(&c, &st)) {
        if ((st = send_structured(&c, &t)) == MCP_OK)
            st = send_text(&c, &t, NULL);
        snprintf(c.detail, sizeof c.detail, "%zu nodes, %zu edges, %zu folds", t.nnodes, t.nedges, t.nfolds);
    }
    aml_trail_free(&t);
    return gctx_end(&c, st);
}

/* ---- caseGraph ------------------------------------------------------------------------------ */

/* Loads the case graph, or reports the tool error. @return 0 when loaded. */
static int case_graph_arg(gctx *c, const mcp_json *args, aml_trail *t)
{
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(args, "caseId"), &n);
    aml_err err = {{0}};
    int rc = id && n && n <= AML_CASE_ID_MAX && !memchr(id, '\0', n) ? aml_case_graph(c->s, id, t, &err) : 1;
    if (rc) {
        char msg[700];
        if (rc > 0)
            snprintf(msg, sizeof msg, "Unknown caseId '%.64s': no such case. Use listCases to find case ids.",
                     id ? id : "");
        else
            snprintf(msg, sizeof msg, "The case graph could not be built: %s", err.msg);
        snprintf(c->detail, sizeof c->detail, rc > 0 ? "unknown case" : "graph failed");
        gfail(c, msg);
        aml_trail_free(t);
        return -1;
    }
    snprintf(c->case_id, sizeof c->case_id, "%s", id);
    return 0;
}

static mcp_status case_graph(mcp_call *call, const mcp_json *args, void *ud)
{
    gctx c;
    gctx_begin(&c, ud, call, args);
    aml_trail t;
    if (case_graph_arg(&c, args, &t))
        return gctx_end(&c, MCP_OK);
    const char *fmt = mcp_json_str(mcp_json_get(args, "format"), NULL);
    int format = fmt && !strcmp(fmt, "svg") ? AML_DRAW_SVG : AML_DRAW_PNG;
    mcp_buf img;
    mcp_buf_init(&img, 0);
    aml_err err = {{0}};
    mcp_status st = MCP_OK;
    int64_t t0 = aml_mono_ns();
    if (glost(&c, &st)) {
        /* the tool error is sent */
    } else if (aml_draw(&t, format, &img, &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "The case graph could not be drawn: %s", err.msg);
        st = gfail(&c, msg);
    } else {
        st = mcp_call_image(call, img.data, img.len, aml_draw_mime(format), NULL);
        char uri[128], extra[256];
        snprintf(uri, sizeof uri, "aml://cases/%s/graph.svg", c.case_id);
        snprintf(extra, sizeof extra, "The picture is also the resource %s (graph.png, graph.dot, graph.cyjs and "
                 "graph.graphml too).\n", uri);
        if (st == MCP_OK)
            st = send_structured(&c, &t);
        if (st == MCP_OK)
            st = send_text(&c, &t, extra);
        snprintf(c.detail, sizeof c.detail, "%s %zu bytes, %zu nodes, %zu edges, %.1f ms", aml_draw_mime(format),
                 img.len, t.nnodes, t.nedges, (double)(aml_mono_ns() - t0) / 1e6);
    }
    mcp_buf_cleanup(&img);
    aml_trail_free(&t);
    return gctx_end(&c, st);
}

/* ---- aml://cases/{caseId}/graph.{format} --------------------------------------------------------- */

static mcp_status read_graph(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    aml_app *app = ud;
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(vars, "caseId"), &n);
    const char *fmt = mcp_json_str(mcp_json_get(vars, "format"), NULL);
    int format = fmt ? aml_draw_format(fmt) : -1;
    if (!id || n == 0 || n > AML_CASE_ID_MAX || format < 0)
        return MCP_ERR_NOT_FOUND;
    aml_store *s = aml_app_acquire(app);
    aml_trail t;
    aml_err err = {{0}};
    int rc = aml_case_graph(s, id, &t, &err);
    mcp_buf out;
    mcp_buf_init(&out, 0);
    mcp_status st = rc > 0 ? MCP_ERR_NOT_FOUND : rc < 0 ? MCP_ERR_INTERNAL : MCP_OK;
    if (st == MCP_OK && aml_draw(&t, format, &out, &err))
        st = MCP_ERR_INTERNAL;
    char digest[65];
    aml_sha256_hex(uri, strlen(uri), digest);
    const char *subject = mcp_principal_subject(mcp_read_principal(rd));
    aml_audit_entry e = {aml_app_actor(app, subject), "resource.read",
                         rc == 0 ? id : NULL, digest, NULL, st == MCP_OK ? "ok" : "error", NULL};
    aml_app_write_lock(app, s);
    aml_audit_append(s, &e, NULL);
    aml_app_write_unlock(app);
    aml_app_release(app, s);
    if (st == MCP_OK) {
        if (format == AML_DRAW_PNG)
            st = mcp_read_blob(rd, uri, aml_draw_mime(format), out.data, out.len);
        else
            st = mcp_read_text(rd, uri, aml_draw_mime(format), out.data);
    }
    mcp_buf_cleanup(&out);
    aml_trail_free(&t);
    return st;
}

/* ---- schemas and registration ------------------------------------------------------------------------ */

#define DATE_PROP "{\"type\":\"string\",\"pattern\":\"^[0-9]{4}-[0-9]{2}-[0-9]{2}$\"}"

static const char trace_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"accountId\"],\"properties\":{"
    "\"accountId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128,"
    "\"description\":\"The account to start from, e.g. a case's focus account.\"},"
    "\"direction\":{\"enum\":[\"forward\",\"backward\",\"both\"],\"description\":\"forward: where the money went; "
    "backward: where it came from; both (default)\"},"
    "\"maxHops\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":6,\"description\":\"default 3\"},"
    "\"from\":" DATE_PROP ",\"to\":" DATE_PROP ","
    "\"minAmount\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1e12,"
    "\"description\":\"only flows of at least this many US dollars (not with minShare)\"},"
    "\"minShare\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1,"
    "\"description\":\"only flows carrying at least this share of their account's flow in that direction\"},"
    "\"maxNodes\":{\"type\":\"integer\",\"minimum\":5,\"maximum\":200,\"description\":\"node cap, default 60\"}}}";

#define TRAIL_OUT                                                                                                  \
    "{\"type\":\"object\",\"required\":[\"roots\",\"direction\",\"maxHops\",\"nodes\",\"edges\",\"folded\","        \
    "\"limits\"],\"properties\":{"                                                                                 \
    "\"title\":{\"type\":\"string\"},\"roots\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"              \
    "\"direction\":{\"enum\":[\"forward\",\"backward\",\"both\"]},\"maxHops\":{\"type\":\"integer\"},"              \
    "\"hopsReached\":{\"type\":\"integer\"},\"window\":{\"type\":\"object\"},"                                      \
    "\"nodes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\",\"kind\",\"label\","        \
    "\"hop\"],\"properties\":{\"id\":{\"type\":\"string\"},\"kind\":{\"enum\":[\"account\",\"folded\",\"cash\"]},"  \
    "\"label\":{\"type\":\"string\"},\"hop\":{\"type\":\"integer\"},\"focus\":{\"type\":\"boolean\"},"             \
    "\"holder\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},"                                          \
    "\"bank\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},"                                            \
    "\"country\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},"                                         \
    "\"riskFlags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                                          \
    "\"cases\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"accounts\":{\"type\":\"integer\"}}}},"       \
    "\"edges\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\",\"from\",\"to\","           \
    "\"amountUsdMinor\",\"count\",\"firstDate\",\"lastDate\",\"transactions\"],\"properties\":{"                   \
    "\"id\":{\"type\":\"string\"},\"from\":{\"type\":\"string\"},\"to\":{\"type\":\"string\"},"                    \
    "\"amountUsdMinor\":{\"type\":\"integer\"},\"count\":{\"type\":\"integer\"},"                                  \
    "\"firstDate\":{\"type\":\"string\"},\"lastDate\":{\"type\":\"string\"},"                                      \
    "\"typologies\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                                         \
    "\"transactions\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"txnId\",\"bookedAt\","    \
    "\"amountUsdMinor\"]}}}}},"                                                                                    \
    "\"matchedTypologies\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                                  \
    "\"folded\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"node\",\"at\",\"direction\","   \
    "\"accounts\",\"amountUsdMinor\",\"transactionCount\",\"reason\"]}},"                                         \
    "\"limits\":{\"type\":\"object\"}}}"

static const char trail_out[] = TRAIL_OUT;

static const char graph_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"caseId\"],\"properties\":{"
    "\"caseId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128,"
    "\"description\":\"The case to draw, e.g. CASE-0001 (see listCases).\"},"
    "\"format\":{\"enum\":[\"png\",\"svg\"],\"description\":\"png (default) or svg\"}}}";

static mcp_status add_tools(mcp_server *srv, aml_app *app, mcp_error *err)
{
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = "traceFunds";
    t.title = "Trace funds";
    t.description =
        "Follows the money from an account: forward (where it went), backward (where it came from) or both, up to "
        "maxHops transfers away (default 3, at most 6), each hop only counting transfers made after the money "
        "arrived (forward) or before it left (backward). Returns the flow graph: accounts with holder, bank, "
        "country and risk flags; aggregated flows with amount, count, first and last date and transaction ids. "
        "Bounded: the smallest counterparties beyond the caps are folded into 'n other accounts' nodes, listed in "
        "'folded'. minAmount (USD) or minShare drops small flows.";
    t.input_schema = trace_in;
    t.output_schema = trail_out;
    t.read_only_hint = MCP_HINT_TRUE;
    t.destructive_hint = MCP_HINT_FALSE;
    t.idempotent_hint = MCP_HINT_TRUE;
    t.open_world_hint = MCP_HINT_FALSE;
    t.handler = trace_funds;
    t.user_data = app;
    t.extension = MCP_EXT_UI;
    t.extension_meta = AML_CASE_VIEW_META;
    t.scopes = "aml.read";
    mcp_status st = mcp_server_add_tool(srv, &t, err);
    if (st)
        return st;
    t.name = "caseGraph";
    t.title = "Draw the case's fund flow";
    t.description =
        "Draws the case's fund flow as a picture (PNG by default, or SVG): the focus accounts highlighted, their "
        "counterparties and cash in the review window, amounts and dates on the flows, and the transfers a matched "
        "typology cited marked in red, with a legend. The same graph comes as structuredContent.";
    t.input_schema = graph_in;
    t.handler = case_graph;
    return mcp_server_add_tool(srv, &t, err);
}

mcp_status aml_graph_tools_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    mcp_status st = add_tools(srv, app, err);
    if (st)
        return st;
    mcp_resource_def r;
    memset(&r, 0, sizeof r);
    r.uri_template = "aml://cases/{caseId}/graph.{format}";
    r.name = "case-graph";
    r.title = "Case fund-flow graph";
    r.description = "The caseGraph drawing of a case: graph.svg, graph.png, or the graph as graph.dot (Graphviz), "
                    "graph.cyjs (Cytoscape JSON) or graph.graphml (GraphML).";
    r.size = -1;
    r.handler = read_graph;
    r.user_data = app;
    r.scopes = "aml.read";
    if ((st = mcp_server_add_resource(srv, &r, err)) != MCP_OK)
        return st;
    /* The MCP App: one self-contained document, no network (empty CSP domain lists). */
    memset(&r, 0, sizeof r);
    r.uri = AML_CASE_VIEW_URI;
    r.name = "case-view";
    r.title = "Case fund-flow view";
    r.description = "Interactive view of a case's fund flow or a money trail: pan, zoom, click an account or a flow "
                    "for its transactions and the findings citing them, a timeline, and traceFunds from any account.";
    r.mime_type = MCP_UI_MIME_TYPE;
    r.size = -1;
    r.text = (const char *)aml_case_view_html;
    r.extension = MCP_EXT_UI;
    r.extension_meta = "{\"ui\":{\"csp\":{\"connectDomains\":[],\"resourceDomains\":[],\"frameDomains\":[],"
                       "\"baseUriDomains\":[]},\"prefersBorder\":true}}";
    r.scopes = "aml.read";
    return mcp_server_add_resource(srv, &r, err);
}
