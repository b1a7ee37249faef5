/*
 * The MCP tools of mcp-server-aml (see tools.h and docs/aml.md).
 *
 * Every handler: borrows a connection for the whole call (store/pool.h;
 * reads run in parallel with other calls', writing sections hold the
 * write lock, the audit append included), computes the SHA-256 of its arguments
 * re-encoded as compact JSON, does its work, sets structuredContent plus a
 * readable text block, and appends an audit entry (caller, tool, time,
 * argument digest, result digest, outcome) to the hash-chained log. A
 * caseId that does not exist is a tool error naming it; a case matching
 * nothing is a normal result that says so.
 */
#include "tools/tools.h"
#include "engine/sar.h"
#include "tools/filing.h"
#include "tools/workflow.h"

#include <stdlib.h>
#include <string.h>

static const aml_tool_scope scopes[] = {
    {"listCases", "aml.read"},
    {"listTypologies", "aml.read"},
    {"assessTypology", "aml.assess"},
    {"assessCase", "aml.assess"},
    {"draftSar", "aml.sar"},
    {"traceFunds", "aml.read"},
    {"caseGraph", "aml.read"},
    {"assignCase", "aml.review"},
    {"closeCase", "aml.review"},
    {"reviewClosure", "aml.approve"},
    {"suppressAlert", "aml.review"},
    {"screenEntity", "aml.read"},
    {"screenCase", "aml.assess"},
    {"dismissScreeningHit", "aml.assess"},
    {"runScan", "aml.assess"},
    {"importTransactions", "aml.assess"},
    {"resource:aml://cases/{caseId}", "aml.read"},
    {"resource:aml://typologies", "aml.read"},
    {"resource:aml://cases/{caseId}/graph.{format}", "aml.read"},
    {"resource:ui://aml/case-view", "aml.read"},
    {"prompt:sar_review", "aml.sar"},
    {NULL, NULL},
};

const aml_tool_scope *aml_tool_scopes(void)
{
    return scopes;
}

/* The scope a tool ("listCases"), resource ("resource:URI") or prompt ("prompt:NAME") needs. */
static const char *scope_for(const char *what)
{
    for (const aml_tool_scope *s = scopes; s->tool; s++)
        if (!strcmp(s->tool, what))
            return s->scope;
    return NULL;
}

const char *aml_app_actor(const aml_app *app, const char *subject)
{
    if (subject && subject[0])
        return subject;
    return app->actor ? app->actor : "unknown";
}

void aml_args_sha256(const mcp_json *args, char out[65])
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    if (args)
        mcp_jw_value(&w, args);
    aml_sha256_hex(b.data ? b.data : "{}", b.data ? b.len : 2, out);
    mcp_buf_cleanup(&b);
}

int aml_call_lost(aml_store *s, int64_t resets, int stored, char *msg, size_t n)
{
    if (aml_store_resets(s) == resets)
        return 0;
    snprintf(msg, n,
             "The connection to the case store was lost during this call (%s). Nothing partial was returned%s; "
             "call again: the next call runs on a new connection.",
             aml_errmsg(s), stored ? " or stored" : "");
    return 1;
}

/* ---- per-call context ---------------------------------------------------------------- */

typedef struct ctx {
    aml_app *app;
    aml_store *s;                        /* the call's connection */
    int writing;                         /* the write lock is held */
    mcp_call *call;
    char req_sha[65];
    char case_id[AML_CASE_ID_MAX + 1]; /* a case that exists, for the audit row */
    mcp_buf out;                         /* structured JSON */
    mcp_jw w;
    mcp_buf text;                        /* the readable block */
    int failed;                          /* mcp_call_error was used */
    char detail[160];
    int64_t resets;                      /* the connection's resets when the call began (aml_store_resets) */
} ctx;

static void ctx_begin(ctx *c, aml_app *app, mcp_call *call, const mcp_json *args)
{
    memset(c, 0, sizeof *c);
    c->app = app;
    c->call = call;
    aml_args_sha256(args, c->req_sha);
    mcp_buf_init(&c->out, 0);
    mcp_jw_init(&c->w, &c->out);
    mcp_buf_init(&c->text, 0);
    c->s = aml_app_acquire(app);
    c->resets = aml_store_resets(c->s);
}

/* Takes the write lock for the rest of the call, before its first write. */
static void ctx_write(ctx *c)
{
    if (!c->writing)
        aml_app_write_lock(c->app, c->s);
    c->writing = 1;
}

/* Cuts s to at most n bytes on a UTF-8 boundary, into out. */
static void utf8_cut(const char *s, size_t n, char *out, size_t cap)
{
    size_t l = strlen(s);
    if (l > n)
        l = n;
    while (l > 0 && (s[l] & 0xC0) == 0x80)
        l--;
    if (l >= cap)
        l = cap - 1;
    memcpy(out, s, l);
    out[l] = '\0';
}

static mcp_status tool_error(ctx *c, const char *msg)
{
    c->failed = 1;
    return mcp_call_error(c->call, "%s", msg);
}

/*
 * 1 (with the tool error sent) when the connection to the case store was lost since the call began: what
 * the call read may be partial (a failed read can look like no rows), so it is neither returned nor stored.
 */
static int ctx_lost(ctx *c)
{
    char msg[400];
    if (c->failed || !aml_call_lost(c->s, c->resets, 1, msg, sizeof msg))
        return 0;
    snprintf(c->detail, sizeof c->detail, "connection lost");
    tool_error(c, msg);
    return 1;
}

const char *aml_audit_detail(const char *detail, const char *traceparent, char *buf, size_t cap)
{
    if (!traceparent)
        return detail;
    snprintf(buf, cap, "%s%straceparent=%s", detail ? detail : "", detail && detail[0] ? " " : "", traceparent);
    return buf;
}

/* Sends the result, audits the call and releases the store. */
static mcp_status ctx_end(ctx *c, mcp_status st)
{
    char resp[65] = "";
    const char *outcome = "ok";
    if (st == MCP_OK)
        ctx_lost(c);
    if (st == MCP_OK && !c->failed) {
        if (mcp_jw_finish(&c->w) != MCP_OK) {
            st = MCP_ERR_INTERNAL;
        } else {
            aml_sha256_hex(c->out.data, c->out.len, resp);
            st = mcp_call_structured(c->call, c->out.data, c->out.len);
            if (st == MCP_OK)
                st = mcp_call_text(c->call, c->text.data ? c->text.data : "", NULL);
        }
    }
    if (st != MCP_OK || c->failed)
        outcome = "error";
    aml_audit_entry e;
    char action[64];
    snprintf(action, sizeof action, "tool.%s", mcp_call_tool_name(c->call));
    e.actor = aml_app_actor(c->app, mcp_call_subject(c->call));
    e.action = action;
    e.case_id = c->case_id[0] ? c->case_id : NULL;
    e.request_sha256 = c->req_sha;
    e.response_sha256 = resp[0] ? resp : NULL;
    e.outcome = outcome;
    char dt[AML_AUDIT_DETAIL_MAX];
    e.detail = aml_audit_detail(c->detail[0] ? c->detail : NULL, mcp_call_trace(c->call, NULL), dt, sizeof dt);
    aml_err err;
    ctx_write(c);
    if (aml_audit_append(c->s, &e, &err))
        mcp_call_log(c->call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(c->app);
    aml_app_release(c->app, c->s);
    mcp_buf_cleanup(&c->out);
    mcp_buf_cleanup(&c->text);
    return st;
}

/* Loads the case named by args.caseId, or reports the tool error. @return 0 when loaded. */
static int load_case(ctx *c, const mcp_json *args, aml_case *cs)
{
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(args, "caseId"), &n);
    char shown[80];
    utf8_cut(id ? id : "", 64, shown, sizeof shown);
    if (!id || n == 0 || n > AML_CASE_ID_MAX || memchr(id, '\0', n)) {
        char msg[256];
        snprintf(msg, sizeof msg, "Unknown caseId '%s%s': no such case. Use listCases to find case ids.", shown,
                 n > 64 ? "..." : "");
        snprintf(c->detail, sizeof c->detail, "unknown case");
        tool_error(c, msg);
        return -1;
    }
    aml_err err = {{0}};
    int rc = aml_case_load(c->s, id, cs, &err);
    if (rc > 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "Unknown caseId '%s': no such case. Use listCases to find case ids.", shown);
        snprintf(c->detail, sizeof c->detail, "unknown case");
        tool_error(c, msg);
        return -1;
    }
    if (rc < 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "The case store could not be read: %s", err.msg);
        tool_error(c, msg);
        return -1;
    }
    snprintf(c->case_id, sizeof c->case_id, "%s", cs->case_id);
    return 0;
}

static int params_from(ctx *c, const mcp_json *args, aml_params *p)
{
    aml_params_default(p);
    aml_err err = {{0}};
    if (aml_params_apply(p, mcp_json_get(args, "parameters"), &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "Invalid parameters: %s. See listTypologies for names, units and ranges.", err.msg);
        tool_error(c, msg);
        return -1;
    }
    return 0;
}

/* ---- listCases ------------------------------------------------------------------------------ */

static const char *opt_str(const mcp_json *args, const char *key)
{
    return mcp_json_str(mcp_json_get(args, key), NULL);
}

static mcp_status list_cases(mcp_call *call, const mcp_json *args, void *ud)
{
    ctx c;
    ctx_begin(&c, ud, call, args);
    aml_case_filter f;
    memset(&f, 0, sizeof f);
    f.status = opt_str(args, "status");
    f.risk_level = opt_str(args, "riskLevel");
    const char *typ = opt_str(args, "typology");
    if (typ) {
        int t = aml_typology_index(typ, strlen(typ));
        f.typology = t >= 0 ? aml_catalog()[t].id : typ;
    }
    f.opened_from = opt_str(args, "openedFrom");
    f.opened_to = opt_str(args, "openedTo");
    f.state = opt_str(args, "state");
    f.assignee = opt_str(args, "assignee");
    f.disposition = opt_str(args, "disposition");
    f.overdue = mcp_json_bool(mcp_json_get(args, "overdue"));
    f.limit = (int)mcp_json_int(mcp_json_get(args, "limit"));
    if (!f.limit)
        f.limit = 20;
    char after[AML_CASE_ID_MAX + 1];
    const char *cur = opt_str(args, "cursor");
    if (cur) {
        if (aml_cursor_decode(cur, after, sizeof after)) {
            tool_error(&c, "Invalid cursor: pass the nextCursor value of a previous listCases result unchanged.");
            return ctx_end(&c, MCP_OK);
        }
        f.after = after;
    }
    int64_t t;
    if ((f.opened_from && aml_parse_time(f.opened_from, strlen(f.opened_from), &t, NULL)) ||
        (f.opened_to && aml_parse_time(f.opened_to, strlen(f.opened_to), &t, NULL))) {
        tool_error(&c, "openedFrom/openedTo must be real calendar dates (YYYY-MM-DD).");
        return ctx_end(&c, MCP_OK);
    }
    int count = 0;
    char next[300];
    aml_err err = {{0}};
    if (aml_cases_list(c.s, &c.w, &f, &count, next, sizeof next, &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "The case store could not be read: %s", err.msg);
        tool_error(&c, msg);
        return ctx_end(&c, MCP_OK);
    }
    /* The readable block, from the JSON just written. */
    mcp_json_doc *d;
    if (mcp_jw_status(&c.w) == MCP_OK && mcp_json_parse(&d, c.out.data, c.out.len, NULL, NULL) == MCP_OK) {
        const mcp_json *root = mcp_json_doc_root(d), *cases = mcp_json_get(root, "cases");
        aml_buf_printf(&c.text, "%d of %lld matching cases%s\n", count, (long long)mcp_json_int(mcp_json_get(root, "total")),
                       count ? ":" : ".");
        for (size_t i = 0; i < mcp_json_len(cases); i++) {
            const mcp_json *k = mcp_json_at(cases, i);
            const mcp_json *risk = mcp_json_get(k, "riskLevel");
            aml_buf_printf(&c.text, "- %s [%s] risk %s, opened %s: %s\n", mcp_json_str(mcp_json_get(k, "caseId"), NULL),
                           mcp_json_str(mcp_json_get(k, "status"), NULL),
                           mcp_json_typeof(risk) == MCP_JSON_STRING ? mcp_json_str(risk, NULL) : "not assessed",
                           mcp_json_str(mcp_json_get(k, "openedAt"), NULL), mcp_json_str(mcp_json_get(k, "title"), NULL));
        }
        if (next[0])
            aml_buf_printf(&c.text, "More cases: call listCases again with cursor \"%s\".\n", next);
        mcp_json_doc_free(d);
    }
    snprintf(c.detail, sizeof c.detail, "%d cases", count);
    return ctx_end(&c, MCP_OK);
}

/* ---- listTypologies ---------------------------------------------------------------------------- */

static mcp_status list_typologies(mcp_call *call, const mcp_json *args, void *ud)
{
    ctx c;
    ctx_begin(&c, ud, call, args);
    aml_catalog_write(&c.w);
    const aml_typology_def *cat = aml_catalog();
    aml_buf_printf(&c.text, "Typology catalog %s (%d typologies; defaults and sources in structuredContent):\n",
                   AML_CATALOG_VERSION, AML_NTYP);
    for (int t = 0; t < AML_NTYP; t++)
        aml_buf_printf(&c.text, "- %s: %s (SAR %d/%d %s)\n", cat[t].id, cat[t].name, cat[t].type_code,
                       cat[t].subtype_code, cat[t].subtype);
    return ctx_end(&c, MCP_OK);
}

/* ---- assessments ------------------------------------------------------------------------------------ */

static void findings_text(mcp_buf *t, const aml_assessment *a)
{
    const aml_typology_def *cat = aml_catalog();
    for (int k = 0; k < AML_NTYP; k++) {
        if (!(a->mask & (1u << k)))
            continue;
        const aml_finding *f = &a->f[k];
        if (f->status == AML_MATCHED)
            aml_buf_printf(t, "- %s MATCHED (score %d): %s\n", cat[k].id, f->score, f->explanation);
        else if (f->status == AML_NOT_EVALUABLE)
            aml_buf_printf(t, "- %s not evaluable: %s\n", cat[k].id, f->explanation);
        else
            aml_buf_printf(t, "- %s not matched: %s\n", cat[k].id, f->explanation);
    }
}

static int run_assessment(ctx *c, const aml_case *cs, const aml_params *p, unsigned mask, const char *kind,
                          aml_assessment *a)
{
    aml_err err = {{0}};
    aml_case_spec spec = {cs->case_id, cs->accts, cs->naccts, cs->from, cs->to, NULL};
    if (aml_engine_run(c->s, &spec, p, mask, kind, a, &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "The assessment could not run: %s", err.msg);
        tool_error(c, msg);
        return -1;
    }
    return 0;
}

static void requested_json(unsigned mask, char *out, size_t n)
{
    if (mask == AML_ALL_TYPOLOGIES) {
        snprintf(out, n, "[\"*\"]");
        return;
    }
    size_t k = (size_t)snprintf(out, n, "[");
    for (int t = 0; t < AML_NTYP && k < n; t++)
        if (mask & (1u << t))
            k += (size_t)snprintf(out + k, n - k, "%s\"%s\"", k > 1 ? "," : "", aml_catalog()[t].id);
    if (k < n)
        snprintf(out + k, n - k, "]");
}

static mcp_status assess_common(mcp_call *call, const mcp_json *args, void *ud, int whole_case)
{
    ctx c;
    ctx_begin(&c, ud, call, args);
    aml_case cs;
    aml_params p;
    if (load_case(&c, args, &cs))
        return ctx_end(&c, MCP_OK);
    if (params_from(&c, args, &p)) {
        aml_case_free(&cs);
        return ctx_end(&c, MCP_OK);
    }
    unsigned mask = AML_ALL_TYPOLOGIES;
    const mcp_json *sel = mcp_json_get(args, "typologies");
    if (!whole_case && mcp_json_typeof(sel) == MCP_JSON_ARRAY && mcp_json_len(sel)) {
        mask = 0;
        for (size_t i = 0; i < mcp_json_len(sel); i++) {
            size_t n;
            const char *id = mcp_json_str(mcp_json_at(sel, i), &n);
            int t = id ? aml_typology_index(id, n) : -1;
            if (t < 0) {
                tool_error(&c, "Unknown typology in 'typologies'; see listTypologies for ids.");
                aml_case_free(&cs);
                return ctx_end(&c, MCP_OK);
            }
            mask |= 1u << t;
        }
    }
    const char *kind = whole_case ? "case" : "typology";
    aml_assessment a;
    if (run_assessment(&c, &cs, &p, mask, kind, &a)) {
        aml_case_free(&cs);
        return ctx_end(&c, MCP_OK);
    }
    aml_recommendation r;
    aml_recommend(c.s, &cs, &a, &r);
    aml_assessment_write(c.s, &c.w, &cs, &a, kind, whole_case ? &r : NULL);
    if (mcp_jw_status(&c.w) == MCP_OK && !ctx_lost(&c)) {
        char req[512];
        requested_json(mask, req, sizeof req);
        aml_err err = {{0}};
        /* The stored copy is the exact result the client gets. Only this and the audit row write:
         * the assessment above ran without the write lock, in parallel with other calls. */
        ctx_write(&c);
        if (aml_assessment_store(c.s, &cs, &a, kind, req, c.app->actor, c.out.data, &err))
            mcp_call_log(call, MCP_LOG_WARNING, "aml", "assessment not stored: %s", err.msg);
    }
    char f[11], t[11];
    aml_fmt_date(cs.from, f);
    aml_fmt_date(cs.to, t);
    aml_buf_printf(&c.text, "Case %s, window %s to %s, assessment %s.\n", cs.case_id, f, t, a.assessment_id);
    if (a.matched)
        aml_buf_printf(&c.text, "Risk %s (score %d): %d of the evaluated typologies matched.\n", a.risk_level,
                       a.case_score, a.matched);
    else
        aml_buf_printf(&c.text, "No typology matched this case: the rules found nothing suspicious in its data.\n");
    if (whole_case) {
        aml_buf_printf(&c.text, "Recommendation: %s.\n", r.action);
        for (int i = 0; i < r.nreasons; i++)
            aml_buf_printf(&c.text, "  * %s\n", r.reasons[i]);
        if (r.due_date[0] && strcmp(r.action, "file_sar") == 0)
            aml_buf_printf(&c.text, "SAR filing deadline: %s (%d days from detection %s).\n", r.due_date, r.due_days,
                           cs.detection_date);
    }
    aml_buf_printf(&c.text, "Findings:\n");
    findings_text(&c.text, &a);
    snprintf(c.detail, sizeof c.detail, "%s: %s, score %d", kind, a.outcome, a.case_score);
    aml_assessment_free(&a);
    aml_case_free(&cs);
    return ctx_end(&c, MCP_OK);
}

static mcp_status assess_typology(mcp_call *call, const mcp_json *args, void *ud)
{
    return assess_common(call, args, ud, 0);
}

static mcp_status assess_case(mcp_call *call, const mcp_json *args, void *ud)
{
    return assess_common(call, args, ud, 1);
}

/* ---- draftSar ---------------------------------------------------------------------------------------- */

static mcp_status draft_sar(mcp_call *call, const mcp_json *args, void *ud)
{
    ctx c;
    ctx_begin(&c, ud, call, args);
    aml_case cs;
    if (load_case(&c, args, &cs))
        return ctx_end(&c, MCP_OK);
    int xml = mcp_json_str_eq(mcp_json_get(args, "format"), "fincen-xml");
    if (xml && aml_fincen_refuse_missing(c.s, c.call, c.detail, sizeof c.detail)) {
        c.failed = 1;
        aml_case_free(&cs);
        return ctx_end(&c, MCP_OK);
    }
    aml_params p;
    aml_params_default(&p);
    aml_assessment a;
    if (run_assessment(&c, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a)) {
        aml_case_free(&cs);
        return ctx_end(&c, MCP_OK);
    }
    aml_recommendation r;
    aml_recommend(c.s, &cs, &a, &r);
    aml_err err = {{0}};
    /* The SAR cites a stored assessment. */
    ctx_write(&c);
    if (aml_assessment_record(c.s, &cs, &a, &r, c.app->actor, &err) ||
        aml_sar_build(c.s, &cs, &a, &r, c.app->actor, &c.w, &c.text, &err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "The SAR draft could not be built: %s", err.msg[0] ? err.msg : "internal error");
        tool_error(&c, msg);
    } else {
        snprintf(c.detail, sizeof c.detail, "sar draft for %s", a.matched ? "matched case" : "no-match case");
        char uri[128], desc[160];
        snprintf(uri, sizeof uri, "aml://cases/%s/graph.svg", cs.case_id);
        snprintf(desc, sizeof desc, "Fund-flow picture of case %s for the reviewer (caseGraph)", cs.case_id);
        if (a.matched)
            mcp_call_resource_link(call, uri, "case-graph", desc, "image/svg+xml", NULL);
        if (xml && aml_fincen_attach(c.s, c.call, c.out.data, c.out.len, &c.text, c.detail, sizeof c.detail))
            c.failed = 1;
    }
    aml_assessment_free(&a);
    aml_case_free(&cs);
    return ctx_end(&c, MCP_OK);
}

/* ---- schemas ------------------------------------------------------------------------------------------ */

static void typology_enum(mcp_jw *w)
{
    mcp_jw_key(w, "enum");
    mcp_jw_array_begin(w);
    for (int t = 0; t < AML_NTYP; t++) {
        mcp_jw_string(w, aml_catalog()[t].id);
        mcp_jw_string(w, aml_catalog()[t].code);
    }
    mcp_jw_array_end(w);
}

static void case_id_prop(mcp_jw *w)
{
    mcp_jw_key(w, "caseId");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "string");
    mcp_jw_key(w, "minLength");
    mcp_jw_int(w, 1);
    mcp_jw_key(w, "maxLength");
    mcp_jw_int(w, 128);
    mcp_jw_key(w, "description");
    mcp_jw_string(w, "The case to work on, e.g. CASE-0001 (see listCases).");
    mcp_jw_object_end(w);
}

/* Input schema of the assessment tools and draftSar. */
static char *input_schema(int with_typologies, int with_params, int with_format)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, "object");
    mcp_jw_key(&w, "properties");
    mcp_jw_object_begin(&w);
    case_id_prop(&w);
    if (with_typologies) {
        mcp_jw_key(&w, "typologies");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "type");
        mcp_jw_string(&w, "array");
        mcp_jw_key(&w, "description");
        mcp_jw_string(&w, "Only these typologies (ids or codes); all when absent.");
        mcp_jw_key(&w, "minItems");
        mcp_jw_int(&w, 1);
        mcp_jw_key(&w, "maxItems");
        mcp_jw_int(&w, 2 * AML_NTYP);
        mcp_jw_key(&w, "uniqueItems");
        mcp_jw_bool(&w, 1);
        mcp_jw_key(&w, "items");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "type");
        mcp_jw_string(&w, "string");
        typology_enum(&w);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
    }
    if (with_params) {
        mcp_jw_key(&w, "parameters");
        aml_params_schema_write(&w);
    }
    if (with_format)
        aml_fincen_format_prop(&w);
    mcp_jw_object_end(&w);
    mcp_jw_key(&w, "required");
    mcp_jw_array_begin(&w);
    mcp_jw_string(&w, "caseId");
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "additionalProperties");
    mcp_jw_bool(&w, 0);
    mcp_jw_object_end(&w);
    return mcp_jw_finish(&w) == MCP_OK ? b.data : (mcp_buf_cleanup(&b), (char *)NULL);
}

static const char list_cases_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"status\":{\"type\":\"string\",\"enum\":[\"active\",\"any\",\"open\",\"in_review\",\"escalated\","
    "\"closed_no_action\",\"sar_filed\"],\"description\":\"active (default) = open, in_review and escalated\"},"
    "\"riskLevel\":{\"type\":\"string\",\"enum\":[\"low\",\"medium\",\"high\",\"unassessed\"]},"
    "\"typology\":{\"type\":\"string\",\"description\":\"cases whose latest assessment matched this typology\","
    "\"maxLength\":64},"
    "\"openedFrom\":{\"type\":\"string\",\"pattern\":\"^[0-9]{4}-[0-9]{2}-[0-9]{2}$\"},"
    "\"openedTo\":{\"type\":\"string\",\"pattern\":\"^[0-9]{4}-[0-9]{2}-[0-9]{2}$\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":\"page size, default 20\"},"
    "\"cursor\":{\"type\":\"string\",\"maxLength\":300,\"description\":\"nextCursor of the previous page\"},"
    "\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"in_review\",\"pending_approval\",\"closed\"],"
    "\"description\":\"workflow state (combine with status any for closed cases)\"},"
    "\"assignee\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128},"
    "\"disposition\":{\"type\":\"string\",\"enum\":[\"false_positive\",\"confirmed_suspicious\","
    "\"inconclusive\"]},"
    "\"overdue\":{\"type\":\"boolean\",\"description\":\"only cases past their SAR due date (30 days from "
    "detection, 60 without a suspect) and not closed\"}}}";

/* A value of one type or null, spelled with anyOf rather than a type array ("type": [T, "null"]): the same
 * instances validate, and clients that map tool schemas onto a single-type dialect accept it (the MCP Inspector's
 * --strict portability check warns about type arrays). */
#define OR_NULL(type) "{\"anyOf\":[{\"type\":\"" type "\"},{\"type\":\"null\"}]}"

static const char list_cases_out[] =
    "{\"type\":\"object\",\"required\":[\"cases\",\"total\"],\"properties\":{"
    "\"cases\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"caseId\",\"title\",\"status\",\"openedAt\",\"window\",\"riskLevel\",\"focusAccounts\","
    "\"matchedTypologies\"],\"properties\":{"
    "\"caseId\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},"
    "\"priority\":" OR_NULL("string") ",\"origin\":" OR_NULL("string") ","
    "\"openedAt\":{\"type\":\"string\"},\"detectionDate\":" OR_NULL("string") ","
    "\"window\":{\"type\":\"object\",\"required\":[\"from\",\"to\"]},"
    "\"riskLevel\":{\"enum\":[\"low\",\"medium\",\"high\",null]},\"caseScore\":" OR_NULL("integer") ","
    "\"focusAccounts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"matchedTypologies\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}},"
    "\"total\":{\"type\":\"integer\",\"minimum\":0},\"nextCursor\":{\"type\":\"string\"}}}";

static const char empty_in[] = "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

static const char list_typologies_out[] =
    "{\"type\":\"object\",\"required\":[\"catalogVersion\",\"typologies\"],\"properties\":{"
    "\"catalogVersion\":{\"type\":\"string\"},\"engineVersion\":{\"type\":\"string\"},"
    "\"typologies\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"summary\","
    "\"defaultParams\",\"parameters\",\"sarCategory\",\"sources\"],\"properties\":{"
    "\"id\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"},\"summary\":{\"type\":\"string\"},"
    "\"defaultParams\":{\"type\":\"object\"},\"parameters\":{\"type\":\"array\"},"
    "\"sarCategory\":{\"type\":\"object\",\"required\":[\"typeCode\",\"subtypeCode\"]},"
    "\"sources\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"title\",\"url\"]}}}}}}}";

#define FINDING_SCHEMA                                                                                        \
    "{\"type\":\"object\",\"required\":[\"typologyId\",\"status\",\"score\",\"explanation\",\"metrics\","     \
    "\"params\",\"evidence\"],\"properties\":{"                                                              \
    "\"typologyId\":{\"type\":\"string\"},"                                                                  \
    "\"status\":{\"enum\":[\"matched\",\"not_matched\",\"not_evaluable\"]},"                                \
    "\"score\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100},"                                        \
    "\"explanation\":{\"type\":\"string\"},\"metrics\":{\"type\":\"object\"},\"params\":{\"type\":\"object\"}," \
    "\"missingInputs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                                \
    "\"evidence\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"txnId\",\"role\","      \
    "\"bookedAt\",\"amountMinor\",\"currency\"]}}}}"

#define ASSESSMENT_PROPS                                                                                       \
    "\"assessmentId\":{\"type\":\"string\"},\"caseId\":{\"type\":\"string\"},"                                \
    "\"outcome\":{\"enum\":[\"typologies_matched\",\"no_typology_matched\",\"partial_not_evaluable\"]},"      \
    "\"caseScore\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100},"                                     \
    "\"riskLevel\":{\"enum\":[\"low\",\"medium\",\"high\"]},"                                                 \
    "\"window\":{\"type\":\"object\",\"required\":[\"from\",\"to\"]},"                                        \
    "\"subjects\":{\"type\":\"array\"},\"focusAccounts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}," \
    "\"engine\":{\"type\":\"object\",\"required\":[\"version\",\"catalogVersion\",\"paramsSha256\",\"dataSha256\"]}," \
    "\"summary\":{\"type\":\"string\"},"                                                                       \
    "\"matchedTypologies\":{\"type\":\"array\"},"                                                             \
    "\"findings\":{\"type\":\"array\",\"items\":" FINDING_SCHEMA "},"                                         \
    "\"caveats\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"

static const char assess_typology_out[] =
    "{\"type\":\"object\",\"required\":[\"assessmentId\",\"caseId\",\"outcome\",\"caseScore\",\"riskLevel\","
    "\"findings\"],\"properties\":{" ASSESSMENT_PROPS "}}";

static const char assess_case_out[] =
    "{\"type\":\"object\",\"required\":[\"assessmentId\",\"caseId\",\"outcome\",\"caseScore\",\"riskLevel\","
    "\"matchedTypologies\",\"recommendation\",\"sar\",\"findings\"],\"properties\":{" ASSESSMENT_PROPS ","
    "\"recommendation\":{\"type\":\"object\",\"required\":[\"action\",\"reasons\"],\"properties\":{"
    "\"action\":{\"enum\":[\"close\",\"monitor\",\"escalate\",\"file_sar\"]},"
    "\"reasons\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}},"
    "\"sar\":{\"type\":\"object\",\"required\":[\"detectionDate\",\"dueDate\",\"dueRule\"],\"properties\":{"
    "\"detectionDate\":" OR_NULL("string") ",\"dueDate\":" OR_NULL("string") ","
    "\"dueRule\":{\"type\":\"string\"},\"suspectIdentified\":{\"type\":\"boolean\"},"
    "\"amountInvolvedUsdMinor\":{\"type\":\"integer\"}}}}}";

static const char draft_sar_out[] =
    "{\"type\":\"object\",\"required\":[\"sarDraftId\",\"caseId\",\"assessmentId\",\"status\",\"confidentiality\","
    "\"humanReviewRequired\"],\"properties\":{"
    "\"sarDraftId\":{\"type\":\"string\"},\"caseId\":{\"type\":\"string\"},\"assessmentId\":{\"type\":\"string\"},"
    "\"status\":{\"enum\":[\"draft\",\"not_warranted\"]},\"confidentiality\":{\"type\":\"string\"},"
    "\"humanReviewRequired\":{\"const\":true},\"reason\":{\"type\":\"string\"},"
    "\"filing\":{\"type\":\"object\"},\"subjects\":{\"type\":\"array\"},\"suspiciousActivity\":{\"type\":\"object\"},"
    "\"narrative\":{\"type\":\"object\",\"required\":[\"text\",\"sections\",\"coverage\"],\"properties\":{"
    "\"text\":{\"type\":\"string\",\"maxLength\":17000},\"sections\":{\"type\":\"object\","
    "\"required\":[\"introduction\",\"body\",\"conclusion\"]},\"coverage\":{\"type\":\"object\"}}},"
    "\"attachmentCsv\":{\"type\":\"object\"},\"evidenceCited\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}";

/* ---- resources and the sar_review prompt ---------------------------------------------------------------------- */

/* Audits a resource read or a prompt like a tool call. */
static void audit_other(aml_app *app, aml_store *s, const char *subject, const char *action, const char *case_id,
                        const char *what, int ok)
{
    char digest[65];
    aml_sha256_hex(what, strlen(what), digest);
    aml_audit_entry e = {aml_app_actor(app, subject), action, case_id, digest, NULL, ok ? "ok" : "error", NULL};
    aml_app_write_lock(app, s);
    aml_audit_append(s, &e, NULL);
    aml_app_write_unlock(app);
}

static mcp_status read_case(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    aml_app *app = ud;
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(vars, "caseId"), &n);
    if (!id || n == 0 || n > AML_CASE_ID_MAX)
        return MCP_ERR_NOT_FOUND;
    aml_store *s = aml_app_acquire(app);
    aml_case c;
    aml_err err = {{0}};
    int rc = aml_case_load(s, id, &c, &err);
    mcp_status st = MCP_OK;
    if (rc) {
        audit_other(app, s, mcp_principal_subject(mcp_read_principal(rd)), "resource.read", NULL, uri, 0);
        aml_app_release(app, s);
        return rc > 0 ? MCP_ERR_NOT_FOUND : MCP_ERR_INTERNAL;
    }
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_case_write(s, &w, &c);
    if (mcp_jw_finish(&w) != MCP_OK)
        st = MCP_ERR_INTERNAL;
    else
        st = mcp_read_text(rd, uri, "application/json", b.data);
    audit_other(app, s, mcp_principal_subject(mcp_read_principal(rd)), "resource.read", c.case_id, uri, st == MCP_OK);
    aml_app_release(app, s);
    mcp_buf_cleanup(&b);
    aml_case_free(&c);
    return st;
}

/* Completes case ids by prefix (for the template variable and the prompt argument). */
static mcp_status complete_case(mcp_completion *cmp, const char *argument, const char *value, const mcp_json *context,
                                void *ud)
{
    aml_app *app = ud;
    (void)context;
    if (strcmp(argument, "caseId") != 0)
        return MCP_OK;
    aml_store *s = aml_app_acquire(app);
    aml_st *st = aml_stmt(s, "SELECT case_id FROM cases WHERE substr(case_id, 1, length(?1)) = ?1 "
                                            "ORDER BY case_id LIMIT 100");
    if (st) {
        aml_bind_text(st, 1, value ? value : "");
        while (aml_step(st) == AML_ROW)
            mcp_completion_add(cmp, aml_col_text(st, 0));
        aml_reset(st);
    }
    aml_app_release(app, s);
    return MCP_OK;
}

static const char sar_review_text[] =
    "You are reviewing a draft Suspicious Activity Report for case %s before the Bank Secrecy Act officer decides "
    "whether to file it. The case record is attached.\n\n"
    "1. Call draftSar with caseId \"%s\" (and assessCase if you need the findings in full).\n"
    "2. Check that the narrative answers who, what, when, where, why and how, in an introduction, a chronological "
    "body and a conclusion, with individual dates and amounts.\n"
    "3. Check every amount, date, name and account in the narrative against the case data and the evidence "
    "transactions: nothing may be stated that the data does not hold. List any sentence that fails, with the fix.\n"
    "4. Check that there are no tables or undefined abbreviations in the narrative, that it stays under 17,000 "
    "characters, and that the transaction list is in the attachment.\n"
    "5. Check the filing deadline (30 calendar days from the detection date, 60 if no suspect is identified) and "
    "say how many days remain.\n"
    "6. Conclude: approve, revise (with the changes), or do not file (with the reason).\n\n"
    "The report and its existence are confidential (31 U.S.C. 5318(g)(2)): never address or disclose it to the "
    "subjects.";

static mcp_status sar_review(mcp_prompt *p, const mcp_json *args, void *ud)
{
    aml_app *app = ud;
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(args, "caseId"), &n);
    aml_store *s = aml_app_acquire(app);
    aml_case c;
    aml_err err = {{0}};
    int rc = id && n && n <= AML_CASE_ID_MAX ? aml_case_load(s, id, &c, &err) : 1;
    if (rc) {
        audit_other(app, s, mcp_principal_subject(mcp_prompt_principal(p)), "prompt.sar_review", NULL, id ? id : "", 0);
        aml_app_release(app, s);
        char shown[80], msg[200];
        utf8_cut(id ? id : "", 64, shown, sizeof shown);
        snprintf(msg, sizeof msg, "Unknown caseId '%s': no such case (see listCases).", shown);
        mcp_prompt_invalid(p, msg);
        return MCP_ERR_INVALID_ARG;
    }
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_case_write(s, &w, &c);
    audit_other(app, s, mcp_principal_subject(mcp_prompt_principal(p)), "prompt.sar_review", c.case_id, c.case_id, 1);
    aml_app_release(app, s);
    char *txt = aml_asprintf(sar_review_text, c.case_id, c.case_id);
    char uri[128], desc[160];
    snprintf(uri, sizeof uri, "aml://cases/%s", c.case_id);
    snprintf(desc, sizeof desc, "Review of the SAR draft for case %s", c.case_id);
    mcp_status st = mcp_jw_finish(&w) != MCP_OK || !txt ? MCP_ERR_NOMEM : MCP_OK;
    if (!st)
        st = mcp_prompt_description(p, desc);
    if (!st)
        st = mcp_prompt_text(p, MCP_ROLE_USER, txt);
    if (!st)
        st = mcp_prompt_resource_text(p, MCP_ROLE_USER, uri, "application/json", b.data);
    free(txt);
    mcp_buf_cleanup(&b);
    aml_case_free(&c);
    return st;
}

static mcp_status register_resources(mcp_server *srv, aml_app *app, mcp_error *err)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_catalog_write(&w);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return MCP_ERR_NOMEM;
    }
    mcp_resource_def r;
    memset(&r, 0, sizeof r);
    r.uri = "aml://typologies";
    r.name = "typologies";
    r.title = "Typology catalog";
    r.description = "The typology catalog T01-T15 (the listTypologies result) as JSON.";
    r.mime_type = "application/json";
    r.size = (int64_t)b.len;
    r.text = b.data;
    r.scopes = scope_for("resource:aml://typologies");
    mcp_status st = mcp_server_add_resource(srv, &r, err);
    mcp_buf_cleanup(&b);
    if (st)
        return st;
    memset(&r, 0, sizeof r);
    r.uri_template = "aml://cases/{caseId}";
    r.name = "case";
    r.title = "AML case";
    r.description = "A case as JSON: status, window, focus accounts, subjects, risk level, matched typologies, its "
                    "assessments and SAR drafts.";
    r.mime_type = "application/json";
    r.size = -1;
    r.handler = read_case;
    r.complete = complete_case;
    r.user_data = app;
    r.scopes = scope_for("resource:aml://cases/{caseId}");
    if ((st = mcp_server_add_resource(srv, &r, err)))
        return st;
    static const mcp_prompt_arg args[] = {{"caseId", "Case", "The case whose SAR draft to review", 1}};
    mcp_prompt_def pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "sar_review";
    pd.title = "Review a SAR draft";
    pd.description = "Guides a review of the draftSar result for a case: five W's and how, facts against the data, "
                     "style, deadline, confidentiality; ends with approve / revise / do not file.";
    pd.args = args;
    pd.nargs = 1;
    pd.handler = sar_review;
    pd.complete = complete_case;
    pd.user_data = app;
    pd.scopes = scope_for("prompt:sar_review");
    return mcp_server_add_prompt(srv, &pd, err);
}

/* ---- registration ---------------------------------------------------------------------------------------- */

mcp_status aml_tools_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    char *assess_typology_in = input_schema(1, 1, 0), *assess_case_in = input_schema(0, 1, 0),
         *sar_in = input_schema(0, 0, 1);
    mcp_status st = MCP_ERR_NOMEM;
    if (!assess_typology_in || !assess_case_in || !sar_in)
        goto done;
    struct {
        const char *name, *title, *desc, *in, *out;
        mcp_tool_fn fn;
        int read_only;
    } defs[] = {
        {"listCases", "List cases",
         "Lists AML cases (default: the active ones: open, in review, escalated), newest work first by id, with their "
         "risk level and the typologies their latest assessment matched. Filters: status, riskLevel, typology, "
         "openedFrom/openedTo; paginated with cursor.",
         list_cases_in, list_cases_out, list_cases, 1},
        {"listTypologies", "List typologies",
         "The typology catalog T01-T15: id, name, description, parameters with defaults, units and sources, and the "
         "FinCEN SAR activity codes each maps to.",
         empty_in, list_typologies_out, list_typologies, 1},
        {"assessTypology", "Assess typologies on a case",
         "Evaluates typologies (all, or those in 'typologies') on the case's focus accounts and review window. Each "
         "finding: status matched / not_matched / not_evaluable (with the missing inputs), score 0-100, evidence "
         "transactions, metrics, the parameters used and a plain-language explanation. 'parameters' overrides "
         "defaults per typology. Deterministic; the assessment is recorded.",
         assess_typology_in, assess_typology_out, assess_typology, 0},
        {"assessCase", "Assess a case",
         "Assesses the whole case: risk score and level, matched typologies, a recommendation (close, monitor, "
         "escalate, file_sar) with reasons, and the SAR filing deadline from the detection date. The assessment is "
         "recorded and the case's risk level updated.",
         assess_case_in, assess_case_out, assess_case, 0},
        {"draftSar", "Draft a SAR",
         "Drafts a FinCEN-style Suspicious Activity Report for the case from its data and assessment: subject, "
         "activity period and amount, activity codes, and a narrative (introduction, body, conclusion) answering "
         "who, what, when, where, why and how, citing evidence transactions. A draft for human review; SAR "
         "information is confidential.",
         sar_in, draft_sar_out, draft_sar, 0},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        mcp_tool_def t;
        memset(&t, 0, sizeof t);
        t.name = defs[i].name;
        t.title = defs[i].title;
        t.description = defs[i].desc;
        t.input_schema = defs[i].in;
        t.output_schema = defs[i].out;
        t.read_only_hint = defs[i].read_only ? MCP_HINT_TRUE : MCP_HINT_FALSE;
        t.destructive_hint = MCP_HINT_FALSE;
        t.idempotent_hint = MCP_HINT_TRUE;
        t.open_world_hint = MCP_HINT_FALSE;
        t.handler = defs[i].fn;
        t.user_data = app;
        t.scopes = scope_for(defs[i].name);
        if (defs[i].fn == assess_case) { /* the case view shows the assessed case's fund flow */
            t.extension = MCP_EXT_UI;
            t.extension_meta = AML_CASE_VIEW_META;
        }
        if ((st = mcp_server_add_tool(srv, &t, err)) != MCP_OK)
            goto done;
    }
    if ((st = register_resources(srv, app, err)) != MCP_OK || (st = aml_graph_tools_register(srv, app, err)) != MCP_OK ||
        (st = aml_screen_tools_register(srv, app, err)) != MCP_OK)
        goto done;
    if ((st = aml_workflow_tools_register(srv, app, err)) != MCP_OK)
        goto done;
    if ((st = aml_jobs_tools_register(srv, app, err)) != MCP_OK)
        goto done;
    st = MCP_OK;
done:
    mcp_free(assess_typology_in);
    mcp_free(assess_case_in);
    mcp_free(sar_in);
    return st;
}

/* ---- serving ---------------------------------------------------------------------------------------------- */

static const char instructions[] =
    "Anti-money-laundering case work. Typical flow: listCases to find open cases; assessCase on one to get its "
    "risk, the matched typologies with evidence and a recommendation; assessTypology to test specific typologies "
    "or parameter overrides; draftSar to draft a Suspicious Activity Report when the recommendation is file_sar. "
    "Rule matches are indicators for human review. SAR information is confidential (31 U.S.C. 5318(g)(2)): never "
    "disclose it to the subjects.";

/*
 * Tool calls no handler saw (a missing scope, arguments the input schema
 * refuses, an unknown tool, malformed params, a full server) are audited
 * here, from libmcp's report of how each call ended: "denied" for a scope,
 * "error" with the reason for the rest. Calls a handler ran audit
 * themselves (ctx_end).
 */
static void audit_refused(const mcp_call_report *r, void *ud)
{
    aml_app *app = ud;
    const char *outcome = "error", *why;
    switch (r->outcome) {
    case MCP_CALL_FORBIDDEN: outcome = "denied"; why = "insufficient scope"; break;
    case MCP_CALL_INVALID_ARGUMENTS: why = "rejected: invalid arguments"; break;
    case MCP_CALL_UNKNOWN_TOOL: why = "rejected: unknown tool"; break;
    case MCP_CALL_MALFORMED: why = "rejected: malformed request"; break;
    case MCP_CALL_BUSY: why = "rejected: server busy"; break;
    default: return;
    }
    char tool[48], action[64], msg[120], detail[160], digest[65];
    utf8_cut(r->tool[0] ? r->tool : "?", 40, tool, sizeof tool);
    snprintf(action, sizeof action, "tool.%s", tool);
    utf8_cut(r->message ? r->message : "", 110, msg, sizeof msg);
    snprintf(detail, sizeof detail, "%s%s%s", why, msg[0] ? ": " : "", msg);
    aml_args_sha256(r->arguments, digest);
    char dt[AML_AUDIT_DETAIL_MAX];
    aml_audit_entry e = {aml_app_actor(app, r->principal ? mcp_principal_subject(r->principal) : NULL), action, NULL,
                         digest, NULL, outcome, aml_audit_detail(detail, r->traceparent, dt, sizeof dt)};
    aml_store *s = aml_app_acquire(app);
    aml_app_write_lock(app, s);
    aml_err err;
    if (aml_audit_append(s, &e, &err))
        fprintf(stderr, "mcp-server-aml: audit log write failed: %s\n", err.msg);
    aml_app_write_unlock(app);
    aml_app_release(app, s);
}

void aml_server_opts(mcp_server_opts *so, aml_app *app)
{
    memset(so, 0, sizeof *so);
    so->name = "mcp-server-aml";
    so->version = MCP_VERSION_STRING;
    so->title = "AML case work";
    so->instructions = instructions;
    so->on_call_end = audit_refused;
    so->on_call_end_user_data = app;
    so->extensions = "{\"" MCP_EXT_UI "\":{}}"; /* MCP Apps: the case view (graph_tools.c) */
}

/* --metrics: the app's collector and the listener; says where on stderr. */
static mcp_status start_metrics(mcp_server *srv, const char *spec, mcp_metrics_server **ms)
{
    mcp_error err;
    mcp_status st = aml_metrics_register(srv);
    if (st == MCP_OK && (st = mcp_metrics_server_start(ms, srv, spec, &err)) != MCP_OK)
        fprintf(stderr, "mcp-server-aml: --metrics %s: %s\n", spec, err.message);
    else if (st == MCP_OK)
        fprintf(stderr, "mcp-server-aml: Prometheus metrics at GET /metrics on port %u (--metrics %s)\n",
                mcp_metrics_server_port(*ms), spec);
    else
        fprintf(stderr, "mcp-server-aml: --metrics: %s\n", mcp_status_str(st));
    return st;
}

int aml_serve(aml_app *app, const aml_serve_opts *o)
{
    mcp_http_opts ho;
    char host[256];
    memset(&ho, 0, sizeof ho);
    if (o->http && mcp_http_parse_listen(o->http, &ho, host, sizeof host) != MCP_OK) {
        fprintf(stderr, "mcp-server-aml: --http takes [HOST:]PORT, e.g. 8080 or 127.0.0.1:8080\n");
        return 2;
    }
    ho.health_path = "/healthz"; /* for load balancers (docs/deploy.md) */
    ho.max_queue_bytes = o->max_queue_bytes;
    ho.max_replay_bytes = o->max_replay_bytes;
    ho.max_buffer_bytes = o->max_buffer_bytes;
    /* --trust-proxy ADDR[,ADDR...]: the list mcp_http_opts wants (checked when the server starts). */
    char proxy_buf[1024];
    const char *proxies[17];
    size_t np = 0;
    if (o->trust_proxy) {
        if (strlen(o->trust_proxy) >= sizeof proxy_buf) {
            fprintf(stderr, "mcp-server-aml: --trust-proxy: the list is too long\n");
            return 2;
        }
        snprintf(proxy_buf, sizeof proxy_buf, "%s", o->trust_proxy);
        char *save = NULL;
        for (char *t = strtok_r(proxy_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (np == 16) {
                fprintf(stderr, "mcp-server-aml: --trust-proxy takes at most 16 addresses\n");
                return 2;
            }
            proxies[np++] = t;
        }
        proxies[np] = NULL;
        ho.trusted_proxies = proxies;
    }
    mcp_server_opts so;
    aml_server_opts(&so, app);
    so.transcript_path = o->transcript;
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &so, &err) != MCP_OK) {
        fprintf(stderr, "mcp-server-aml: %s\n", err.message);
        return 1;
    }
    if (aml_tools_register(srv, app, &err) != MCP_OK) {
        fprintf(stderr, "mcp-server-aml: registering tools: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }
    mcp_metrics_server *ms = NULL;
    if (o->metrics && start_metrics(srv, o->metrics, &ms) != MCP_OK) {
        mcp_server_free(srv);
        return 2;
    }
    mcp_status st;
    mcp_auth *auth = NULL;
    if (o->auth) {
        mcp_auth_opts ao = *o->auth;
        if (!ao.scopes_supported)
            ao.scopes_supported = "aml.read aml.assess aml.sar aml.review aml.approve";
        if (mcp_auth_new(&auth, &ao, &err) != MCP_OK) {
            fprintf(stderr, "mcp-server-aml: authorization: %s\n", err.message);
            mcp_server_free(srv);
            return 2;
        }
        ho.auth = auth;
    }
    if (o->http) {
        st = mcp_http_serve(srv, &ho, &err); /* logs where it listens; SIGINT/SIGTERM stop it */
        if (st != MCP_OK)
            fprintf(stderr, "mcp-server-aml: --http %s: %s\n", o->http, err.message);
    } else {
        /* At end of input, calls in flight get a minute (libmcp's default is 5 s): a client that pipes its
         * calls and closes stdin waits for its answers, which may wait for the demo bank being built. */
        mcp_stdio_opts sto;
        memset(&sto, 0, sizeof sto);
        sto.grace_ms = AML_STDIO_GRACE_MS;
        st = mcp_stdio_serve(srv, &sto);
    }
    mcp_metrics_server_stop(ms);
    mcp_server_free(srv);
    mcp_auth_free(auth);
    return st == MCP_OK ? 0 : 1;
}
