/*
 * The case workflow with four eyes (docs/aml.md, "Case workflow"):
 *   - over stdio, with the principal from --actor: analyst-a assigns and
 *     requests closure, analyst-a's review is refused naming the rule (and
 *     audited "denied"), analyst-b's approval closes the case; a rejection
 *     needs a comment and sends the case back; confirmed_suspicious needs the
 *     sarId of a SAR draft of the case; listCases filters by state, assignee,
 *     disposition and overdue; every step is an audit row and a case_events
 *     row, case_events refuses UPDATE, the audit chain verifies;
 *   - over HTTP with authorization (the test authorization server on
 *     loopback), with tokens of two subjects: closeCase needs aml.review,
 *     reviewClosure needs aml.approve (403 naming it), the same subject is
 *     refused by the four-eyes rule even with both scopes, another subject
 *     approves; the audit log names the subjects.
 *
 * usage: aml_workflow PATH-TO-mcp-server-aml WORKDIR
 */
#include "clirun.h"
#include "test_as.h"
#include "tools/tools.h"

static int g_passed, g_failed;

/* Not testlib's per-test accounting: the HTTP server keeps caches across checks (as in aml_auth.c). */
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            g_passed++;                                                                                                \
        } else {                                                                                                       \
            g_failed++;                                                                                                \
            printf("FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                                                    \
        }                                                                                                              \
    } while (0)

static char db[700];

/* One tools/call over stdio as `actor`: is_error, the text, and the structured content as JSON (malloc). */
typedef struct call_out {
    int ok;       /* a response arrived */
    int is_error; /* isError */
    char text[1200];
    char *structured;
} call_out;

static call_out call_as(const char *actor, const char *tool, const char *args)
{
    call_out o;
    memset(&o, 0, sizeof o);
    const char *calls[] = {tool, args, NULL};
    char *in = cr_session(calls);
    const char *serve[] = {"--db", db, "--actor", actor, NULL};
    cr_ran r = cr_run(serve, in);
    free(in);
    mcp_json_doc *d = cr_response(r.out, 2);
    if (d) {
        const char *t = "";
        const mcp_json *res = cr_result(d, &o.is_error, &t);
        o.ok = 1;
        snprintf(o.text, sizeof o.text, "%s", t ? t : "");
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        if (mcp_json_get(res, "structuredContent"))
            mcp_jw_value(&w, mcp_json_get(res, "structuredContent"));
        o.structured = aml_strndup(b.data ? b.data : "", b.len);
        mcp_buf_cleanup(&b);
        mcp_json_doc_free(d);
    }
    cr_free(&r);
    return o;
}

static void out_free(call_out *o)
{
    free(o->structured);
}

/* count(*) of a query with one text parameter. */
static long count_of(const char *sql, const char *p)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, AML_OPEN_READONLY, &err))
        return -1;
    aml_st *st;
    long n = -1;
    if ((st = aml_prepare(s, sql)) != NULL) {
        aml_bind_text(st, 1, p);
        if (aml_step(st) == AML_ROW)
            n = aml_col_int(st, 0);
        aml_finalize(st);
    }
    aml_store_close(s);
    return n;
}

static long total_of(const char *actor, const char *args)
{
    call_out o = call_as(actor, "listCases", args);
    const char *t = strstr(o.structured ? o.structured : "", "\"total\":");
    long n = t ? strtol(t + 8, NULL, 10) : -1;
    out_free(&o);
    return n;
}

static void test_stdio_four_eyes(void)
{
    snprintf(db, sizeof db, "%s/workflow.db", cr_dir);
    unlink(db);
    const char *g[] = {"gen", "--seed", "20260728", "--customers", "60", "--days", "120", "--instances", "1",
                       "--lookalikes", "1", "--db", db, NULL};
    cr_ran r = cr_run(g, NULL);
    CHECK(r.status == 0);
    cr_free(&r);
    long overdue0 = total_of("x", "{\"overdue\":true,\"limit\":1}");
    CHECK(overdue0 > 0);

    call_out o = call_as("analyst-a", "assignCase", "{\"caseId\":\"CASE-0003\",\"assignee\":\"analyst-a\"}");
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"state\":\"in_review\""));
    out_free(&o);
    CHECK(total_of("x", "{\"assignee\":\"analyst-a\"}") == 1);
    o = call_as("analyst-a", "closeCase",
                "{\"caseId\":\"CASE-0003\",\"disposition\":\"false_positive\",\"rationale\":\"Payroll to "
                "long-standing employees; matches the KYC profile.\"}");
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"state\":\"pending_approval\""));
    CHECK(strstr(o.structured, "\"closureRequestedBy\":\"analyst-a\"") != NULL);
    out_free(&o);
    CHECK(total_of("x", "{\"state\":\"pending_approval\"}") == 1);
    /* Four eyes: the requester cannot approve. */
    o = call_as("analyst-a", "reviewClosure", "{\"caseId\":\"CASE-0003\",\"approve\":true}");
    CHECK(o.ok && o.is_error && strstr(o.text, "Four-eyes rule") && strstr(o.text, "analyst-a"));
    out_free(&o);
    CHECK(count_of("SELECT count(*) FROM audit_log WHERE action = 'tool.reviewClosure' AND outcome = 'denied' AND "
                   "actor = ?",
                   "analyst-a") == 1);
    /* Another principal can. */
    o = call_as("analyst-b", "reviewClosure", "{\"caseId\":\"CASE-0003\",\"approve\":true,\"comment\":\"Agreed.\"}");
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"state\":\"closed\"") &&
          strstr(o.structured, "\"closureReviewedBy\":\"analyst-b\"") && strstr(o.structured, "\"overdue\":false"));
    out_free(&o);
    CHECK(total_of("x", "{\"status\":\"any\",\"state\":\"closed\",\"disposition\":\"false_positive\"}") == 1);
    CHECK(total_of("x", "{\"overdue\":true,\"limit\":1}") == overdue0 - 1);
    /* A closed case stays closed. */
    o = call_as("analyst-b", "assignCase", "{\"caseId\":\"CASE-0003\",\"assignee\":\"analyst-b\"}");
    CHECK(o.ok && o.is_error && strstr(o.text, "closed"));
    out_free(&o);
    CHECK(count_of("SELECT count(*) FROM case_events WHERE case_id = ?", "CASE-0003") == 3);
    CHECK(count_of("SELECT count(*) FROM audit_log WHERE case_id = ? AND action IN ('tool.assignCase', "
                   "'tool.closeCase', 'tool.reviewClosure')",
                   "CASE-0003") == 5); /* assign, request, the refused review, approval, the refused re-assign */
}

static char g_case[AML_CASE_ID_MAX + 1] = "CASE-0002", g_sar[128] = "";

/* A case of the store that matches a typology (it warrants a SAR draft), found with the engine. */
static void pick_warranted_case(void)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, AML_OPEN_READONLY, &err))
        return;
    aml_st *q;
    char ids[64][AML_CASE_ID_MAX + 1];
    int n = 0;
    if ((q = aml_prepare(s, "SELECT case_id FROM cases ORDER BY case_id")) != NULL) {
        while (n < 64 && aml_step(q) == AML_ROW)
            snprintf(ids[n++], sizeof ids[0], "%s", aml_col_text(q, 0));
        aml_finalize(q);
    }
    aml_params p;
    aml_params_default(&p);
    for (int i = 0; i < n; i++) {
        aml_case c;
        if (aml_case_load(s, ids[i], &c, &err))
            continue;
        aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
        aml_assessment a;
        int ran = aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, &err) == 0;
        int hit = ran && a.matched;
        if (ran)
            aml_assessment_free(&a);
        aml_case_free(&c);
        if (hit) {
            snprintf(g_case, sizeof g_case, "%s", ids[i]);
            break;
        }
    }
    aml_store_close(s);
}

/* s with CASE-0002 read as the warranted case and sar_CASE-0002_v1 as its SAR draft id (one at a time). */
static const char *sub(const char *s)
{
    static char out[2048];
    size_t o = 0;
    while (*s && o + 200 < sizeof out) {
        if (!strncmp(s, "sar_CASE-0002_v1", 16)) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", g_sar);
            s += 16;
        } else if (!strncmp(s, "CASE-0002", 9)) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", g_case);
            s += 9;
        } else {
            out[o++] = *s++;
        }
    }
    out[o] = '\0';
    return out;
}

static void test_stdio_rules(void)
{
    /* confirmed_suspicious needs the sarId of a SAR draft of this case. */
    call_out o = call_as("analyst-a", "closeCase",
                         sub("{\"caseId\":\"CASE-0002\",\"disposition\":\"confirmed_suspicious\",\"rationale\":\"Structuring "
                         "confirmed by the branch.\"}"));
    CHECK(o.ok && o.is_error && strstr(o.text, "sarId"));
    out_free(&o);
    o = call_as("analyst-a", "closeCase",
                sub("{\"caseId\":\"CASE-0002\",\"disposition\":\"confirmed_suspicious\",\"rationale\":\"Structuring "
                "confirmed by the branch.\",\"sarId\":\"sar_CASE-0003_v1\"}"));
    CHECK(o.ok && o.is_error && strstr(o.text, sub("not a SAR draft of case CASE-0002")));
    out_free(&o);
    o = call_as("analyst-a", "draftSar", sub("{\"caseId\":\"CASE-0002\"}"));
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"status\":\"draft\""));
    const char *sid = strstr(o.structured ? o.structured : "", "\"sarDraftId\":\"");
    if (sid)
        snprintf(g_sar, sizeof g_sar, "%.*s", (int)strcspn(sid + 14, "\""), sid + 14);
    out_free(&o);
    o = call_as("analyst-a", "closeCase",
                sub("{\"caseId\":\"CASE-0002\",\"disposition\":\"confirmed_suspicious\",\"rationale\":\"Structuring "
                "confirmed by the branch.\",\"sarId\":\"sar_CASE-0002_v1\"}"));
    CHECK(o.ok && !o.is_error && strstr(o.structured, sub("\"sarId\":\"sar_CASE-0002_v1\"")));
    out_free(&o);
    /* A rejection needs a comment, and sends the case back to in_review. */
    o = call_as("analyst-b", "reviewClosure", sub("{\"caseId\":\"CASE-0002\",\"approve\":false}"));
    CHECK(o.ok && o.is_error && strstr(o.text, "comment"));
    out_free(&o);
    o = call_as("analyst-b", "reviewClosure",
                sub("{\"caseId\":\"CASE-0002\",\"approve\":false,\"comment\":\"Attach the branch statement.\"}"));
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"state\":\"in_review\""));
    out_free(&o);
    o = call_as("analyst-b", "reviewClosure", sub("{\"caseId\":\"CASE-0002\",\"approve\":true}"));
    CHECK(o.ok && o.is_error && strstr(o.text, "no closure request"));
    out_free(&o);
    o = call_as("analyst-a", "closeCase", "{\"caseId\":\"CASE-9999\",\"disposition\":\"inconclusive\","
                                          "\"rationale\":\"Not enough to go on.\"}");
    CHECK(o.ok && o.is_error && strstr(o.text, "Unknown caseId"));
    out_free(&o);
    /* suppressAlert: refused with the reason, then recorded with who, why and until when. */
    char acc[64] = "", until[11], args[600];
    aml_store *fs;
    aml_err ferr = {{0}};
    if (aml_store_open(&fs, db, AML_OPEN_READONLY, &ferr) == 0) {
        aml_st *q;
        if ((q = aml_prepare(fs, "SELECT a.account_id FROM case_accounts ca JOIN accounts a ON a.acct_no = "
                                       "ca.acct_no WHERE ca.case_id = ?1 LIMIT 1")) != NULL) {
            aml_bind_text(q, 1, g_case);
            if (aml_step(q) == AML_ROW)
                snprintf(acc, sizeof acc, "%s", aml_col_text(q, 0));
            aml_finalize(q);
        }
        aml_store_close(fs);
    }
    CHECK(acc[0] != '\0');
    aml_fmt_date(aml_now() + 30 * AML_DAY, until);
    snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"accountId\":\"%s\",\"typology\":\"T01\","
                                "\"until\":\"2020-01-01\",\"reason\":\"Owner's own takings, documented.\"}", g_case, acc);
    o = call_as("analyst-a", "suppressAlert", args);
    CHECK(o.ok && o.is_error && strstr(o.text, "until"));
    out_free(&o);
    snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"accountId\":\"%s\",\"typology\":\"T01\","
                                "\"until\":\"%s\",\"reason\":\"Owner's own takings, documented.\"}", g_case, acc, until);
    o = call_as("analyst-a", "suppressAlert", args);
    CHECK(o.ok && !o.is_error && strstr(o.structured, "\"suppressionId\"") && strstr(o.structured, until));
    out_free(&o);
    CHECK(count_of("SELECT count(*) FROM audit_log WHERE action = 'tool.suppressAlert' AND outcome = 'ok' AND "
                   "actor = 'analyst-a' AND detail LIKE '%until%' AND case_id = ?",
                   g_case) == 1);
    CHECK(count_of("SELECT count(*) FROM case_events WHERE action = 'suppress' AND actor = 'analyst-a' AND "
                   "detail LIKE '%own takings%' AND case_id = ?",
                   g_case) == 1);
    /* The history is append-only, and the chain verifies. */
    aml_store *s;
    aml_err err = {{0}};
    CHECK(aml_store_open(&s, db, 0, &err) == 0);
    CHECK(aml_exec(s, "UPDATE case_events SET actor = 'someone-else'", &err) != 0);
    CHECK(strstr(err.msg, "append-only") != NULL);
    aml_store_close(s);
    const char *v[] = {"audit", "verify", "--db", db, NULL};
    cr_ran r = cr_run(v, NULL);
    CHECK(r.status == 0);
    cr_free(&r);
}

/* ---- over HTTP with authorization ------------------------------------------------------------------------------- */

static tas *g_as;
static char g_url[256];

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

static mcp_client *client_for(const char *sub, const char *scope)
{
    char *claims = tas_claims(g_as, g_url, sub, scope, 600, 0, NULL);
    char *t = tas_sign(g_as, TAS_ES256, claims, 0);
    free(claims);
    mcp_http_client_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.url = g_url;
    ho.bearer_token = t;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "aml-workflow-test";
    o.log = quiet;
    mcp_client *c = NULL;
    mcp_error err;
    if (mcp_client_connect_http(&c, &o, &ho, &err) != MCP_OK)
        c = NULL;
    free(t);
    return c;
}

/* Calls a tool: MCP_OK with *is_error and the first text into text, or the status (403: MCP_ERR_AUTH). */
static mcp_status http_call(mcp_client *c, const char *tool, const char *args, int *is_error, char *text, size_t n)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &r, &err);
    text[0] = '\0';
    if (st != MCP_OK) {
        snprintf(text, n, "%s", err.message);
        return st;
    }
    *is_error = mcp_response_is_tool_error(r);
    const char *t = mcp_json_str(
        mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r), "content"), 0), "text"), NULL);
    snprintf(text, n, "%s", t ? t : "");
    mcp_response_free(r);
    return st;
}

static long actor_rows(aml_store *s, const char *action, const char *actor, const char *outcome)
{
    aml_st *st;
    long n = -1;
    if ((st = aml_prepare(s, "SELECT count(*) FROM audit_log WHERE action = ?1 AND actor = ?2 AND outcome = ?3")) != NULL) {
        aml_bind_text(st, 1, action);
        aml_bind_text(st, 2, actor);
        aml_bind_text(st, 3, outcome);
        if (aml_step(st) == AML_ROW)
            n = aml_col_int(st, 0);
        aml_finalize(st);
    }
    return n;
}

static void test_http_two_subjects(void)
{
    aml_store *store;
    aml_err aerr = {{0}};
    CHECK(tas_start(&g_as, 1) == 0);
    CHECK(aml_demo_store(&store, &aerr) == 0);
    aml_app app = {store, "unused", NULL, NULL, NULL};
    mcp_server_opts so;
    aml_server_opts(&so, &app);
    so.log = quiet;
    mcp_error err;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.issuers = tas_issuer(g_as);
    ao.jwks_url = tas_jwks_url(g_as);
    ao.scopes_supported = "aml.read aml.assess aml.sar aml.review aml.approve";
    mcp_server *srv = NULL;
    mcp_auth *auth = NULL;
    mcp_http_server *hs = NULL;
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    int up = mcp_server_new(&srv, &so, &err) == MCP_OK && aml_tools_register(srv, &app, &err) == MCP_OK &&
             mcp_auth_new(&auth, &ao, &err) == MCP_OK;
    ho.auth = auth;
    up = up && mcp_http_server_start(&hs, srv, &ho, &err) == MCP_OK;
    CHECK(up);
    if (!up)
        return;
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%u/mcp", mcp_http_server_port(hs));
    mcp_client *alice = client_for("alice", "aml.read aml.review");
    mcp_client *alice2 = client_for("alice", "aml.read aml.review aml.approve");
    mcp_client *bob = client_for("bob", "aml.read aml.approve");
    CHECK(alice && alice2 && bob);
    int ie = 0;
    char text[1200];
    /* bob may approve but not request: closeCase needs aml.review. */
    CHECK(http_call(bob, "closeCase", "{\"caseId\":\"CASE-0004\",\"disposition\":\"inconclusive\",\"rationale\":"
                                      "\"Could not reach the customer.\"}",
                    &ie, text, sizeof text) == MCP_ERR_AUTH);
    CHECK(strstr(text, "insufficient_scope") != NULL);
    CHECK(http_call(alice, "closeCase", "{\"caseId\":\"CASE-0004\",\"disposition\":\"inconclusive\",\"rationale\":"
                                        "\"Could not reach the customer.\"}",
                    &ie, text, sizeof text) == MCP_OK);
    CHECK(!ie);
    /* alice's first token lacks aml.approve: 403 before any handler. */
    CHECK(http_call(alice, "reviewClosure", "{\"caseId\":\"CASE-0004\",\"approve\":true}", &ie, text, sizeof text) ==
          MCP_ERR_AUTH);
    CHECK(strstr(text, "insufficient_scope") != NULL);
    /* With aml.approve she is still the requester: the four-eyes rule. */
    CHECK(http_call(alice2, "reviewClosure", "{\"caseId\":\"CASE-0004\",\"approve\":true}", &ie, text,
                    sizeof text) == MCP_OK);
    CHECK(ie && strstr(text, "Four-eyes rule") && strstr(text, "'alice'"));
    CHECK(http_call(bob, "reviewClosure", "{\"caseId\":\"CASE-0004\",\"approve\":true}", &ie, text, sizeof text) ==
          MCP_OK);
    CHECK(!ie && strstr(text, "is now closed"));
    CHECK(actor_rows(store, "tool.closeCase", "alice", "ok") == 1);
    CHECK(actor_rows(store, "tool.closeCase", "bob", "denied") == 1);
    CHECK(actor_rows(store, "tool.reviewClosure", "alice", "denied") == 2);
    CHECK(actor_rows(store, "tool.reviewClosure", "bob", "ok") == 1);
    int64_t bad = 0;
    FILE *devnull = fopen("/dev/null", "w");
    CHECK(aml_audit_verify(store, devnull, &bad, NULL) == 0);
    fclose(devnull);
    /* The metadata offers the workflow scopes. */
    mcp_buf b;
    mcp_buf_init(&b, 0);
    CHECK(mcp_auth_metadata(auth, &b) == MCP_OK && strstr(b.data, "aml.approve"));
    mcp_buf_cleanup(&b);
    mcp_client_close(alice);
    mcp_client_close(alice2);
    mcp_client_close(bob);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
    mcp_auth_free(auth);
    aml_store_close(store);
    tas_stop(g_as);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: aml_workflow PATH-TO-mcp-server-aml [WORKDIR]\n");
        printf("aml_workflow: 0 passed, 1 failed\n");
        return 1;
    }
    (void)t_run; /* testlib comes with amltest.h; this program counts with CHECK */
    cr_bin = argv[1];
    scratch_dir(argc > 2 ? argv[2] : "/tmp/aml-workflow", cr_dir, sizeof cr_dir);
    test_stdio_four_eyes();
    pick_warranted_case();
    test_stdio_rules();
    test_http_two_subjects();
    cr_cleanup();
    unlink(db);
    char p[800];
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db);
    unlink(p);
    rmdir(cr_dir);
    printf("aml_workflow: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
