/*
 * Filing through the binary: `gen --db` carries a demo filer, so `sar
 * --format fincen-xml --out` writes a batch that validates for every case
 * that warrants a SAR (and refuses the others); `config unset` of filer
 * details makes both `sar` and draftSar (stdio, format fincen-xml) refuse
 * with the list of what is missing; `config set` checks values; with the
 * details back, draftSar returns the XML as an embedded application/xml
 * resource that validates; the audit chain verifies.
 *
 * usage: aml_filing PATH-TO-mcp-server-aml WORKDIR
 */
#include "clirun.h"
#include "xsdcheck.h"

static char db[700];
static char warranted[AML_CASE_ID_MAX + 1]; /* a case whose SAR XML was written */

static void test_gen_and_sar_cli(void)
{
    snprintf(db, sizeof db, "%s/filing.db", cr_dir);
    unlink(db);
    const char *g[] = {"gen", "--seed", "20260728", "--customers", "60", "--days", "120", "--instances", "1",
                       "--lookalikes", "1", "--db", db, NULL};
    cr_ran r = cr_run(g, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, db, AML_OPEN_READONLY, &err), 0);
    char ids[64][AML_CASE_ID_MAX + 1];
    int n = 0;
    aml_st *st = aml_stmt(s, "SELECT case_id FROM cases ORDER BY case_id");
    while (n < 64 && aml_step(st) == AML_ROW)
        snprintf(ids[n++], sizeof ids[0], "%s", aml_col_text(st, 0));
    aml_reset(st);
    aml_store_close(s);
    int written = 0, valid = 0, refused = 0, other = 0;
    char first[400] = "";
    for (int i = 0; i < n; i++) {
        char out[800];
        snprintf(out, sizeof out, "%s/%s.xml", cr_dir, ids[i]);
        const char *a[] = {"sar", "--db", db, ids[i], "--format", "fincen-xml", "--out", out, NULL};
        r = cr_run(a, NULL);
        if (r.status == 0) {
            written++;
            if (!warranted[0])
                snprintf(warranted, sizeof warranted, "%s", ids[i]);
            char *x = rb_slurp(out), why[300] = "";
            if (xsd_check_batch(x, strlen(x), why) == 0)
                valid++;
            else if (!first[0])
                snprintf(first, sizeof first, "%s: %s", ids[i], why);
            free(x);
        } else if (r.status == 1 && strstr(r.err, "does not warrant")) {
            refused++;
        } else {
            other++;
        }
        unlink(out);
        cr_free(&r);
    }
    printf("sar --format fincen-xml over %d cases: %d written, %d validate, %d not warranted, %d other%s%s\n", n,
           written, valid, refused, other, first[0] ? "; first failure " : "", first);
    T_TRUE(written >= AML_GEN_NTYP);
    T_EQ_INT(valid, written);
    T_EQ_INT(written + refused, n);
    /* JSON to stdout by default. */
    const char *j[] = {"sar", "--db", db, warranted, NULL};
    r = cr_run(j, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "\"sarDraftId\"") != NULL);
    cr_free(&r);
}

static void test_missing_filer_refused(void)
{
    const char *u1[] = {"config", "unset", "--db", db, "filer.tin", NULL};
    const char *u2[] = {"config", "unset", "--db", db, "filer.contact.phone", NULL};
    cr_ran r = cr_run(u1, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    r = cr_run(u2, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    char out[800];
    snprintf(out, sizeof out, "%s/refused.xml", cr_dir);
    unlink(out);
    const char *a[] = {"sar", "--db", db, warranted, "--format", "fincen-xml", "--out", out, NULL};
    r = cr_run(a, NULL);
    T_EQ_INT(r.status, 1);
    T_TRUE(strstr(r.err, "filer.tin") && strstr(r.err, "filer.contact.phone") && strstr(r.err, "2 filer details"));
    T_TRUE(access(out, F_OK) != 0);
    cr_free(&r);
    /* The tool: an isError result naming both, and the JSON draft still available. */
    char a1[200], a2[200];
    snprintf(a1, sizeof a1, "{\"caseId\":\"%s\",\"format\":\"fincen-xml\"}", warranted);
    snprintf(a2, sizeof a2, "{\"caseId\":\"%s\"}", warranted);
    const char *const calls[] = {"draftSar", a1, "draftSar", a2, NULL};
    char *in = cr_session(calls);
    const char *serve[] = {"--db", db, "--actor", "analyst-1", NULL};
    r = cr_run(serve, in);
    free(in);
    mcp_json_doc *d2 = cr_response(r.out, 2), *d3 = cr_response(r.out, 3);
    int e2 = 0, e3 = 1;
    const char *t2 = "", *t3 = "";
    T_NOT_NULL(d2);
    T_NOT_NULL(d3);
    cr_result(d2, &e2, &t2);
    cr_result(d3, &e3, &t3);
    T_TRUE(e2);
    T_TRUE(strstr(t2, "filer.tin") && strstr(t2, "filer.contact.phone") && strstr(t2, "config set"));
    T_FALSE(e3);
    mcp_json_doc_free(d2);
    mcp_json_doc_free(d3);
    cr_free(&r);
    /* Values are checked before they are stored. */
    const char *bad[] = {"config", "set", "--db", db, "filer.tin", "12-345", NULL};
    r = cr_run(bad, NULL);
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "filer.tin") != NULL);
    cr_free(&r);
    const char *s1[] = {"config", "set", "--db", db, "filer.tin", "123456789", NULL};
    const char *s2[] = {"config", "set", "--db", db, "filer.contact.phone", "2125550100", NULL};
    r = cr_run(s1, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    r = cr_run(s2, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    const char *l[] = {"config", "list", "--db", db, "filer.", NULL};
    r = cr_run(l, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "filer.tin = 123456789") != NULL);
    cr_free(&r);
}

static void test_tool_returns_xml_resource(void)
{
    char a1[200];
    snprintf(a1, sizeof a1, "{\"caseId\":\"%s\",\"format\":\"fincen-xml\"}", warranted);
    const char *const calls[] = {"draftSar", a1, NULL};
    char *in = cr_session(calls);
    const char *serve[] = {"--db", db, NULL};
    cr_ran r = cr_run(serve, in);
    free(in);
    mcp_json_doc *d = cr_response(r.out, 2);
    T_NOT_NULL(d);
    int e = 1;
    const char *t = "";
    const mcp_json *res = cr_result(d, &e, &t);
    T_FALSE(e);
    const mcp_json *content = mcp_json_get(res, "content"), *xmlres = NULL;
    for (size_t i = 0; i < mcp_json_len(content); i++)
        if (mcp_json_str_eq(mcp_json_get(mcp_json_at(content, i), "type"), "resource"))
            xmlres = mcp_json_get(mcp_json_at(content, i), "resource");
    T_NOT_NULL(xmlres);
    T_TRUE(mcp_json_str_eq(mcp_json_get(xmlres, "mimeType"), "application/xml"));
    size_t n = 0;
    const char *x = mcp_json_str(mcp_json_get(xmlres, "text"), &n);
    char why[300] = "";
    T_EQ_INT(xsd_check_batch(x ? x : "", n, why), 0);
    if (why[0])
        fprintf(stderr, "%s\n", why);
    /* The operator's TIN, not the demo one, is in the batch. */
    T_TRUE(x && strstr(x, "<fc2:PartyIdentificationNumberText>123456789<") != NULL);
    T_TRUE(mcp_json_get(res, "structuredContent") != NULL);
    mcp_json_doc_free(d);
    cr_free(&r);
    const char *v[] = {"audit", "verify", "--db", db, NULL};
    r = cr_run(v, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_gen_and_sar_cli), TEST(test_missing_filer_refused),
                                   TEST(test_tool_returns_xml_resource)};
    if (argc < 2) {
        fprintf(stderr, "usage: aml_filing PATH-TO-mcp-server-aml [WORKDIR]\n");
        printf("aml_filing: 0 passed, 1 failed\n");
        return 1;
    }
    cr_bin = argv[1];
    scratch_dir(argc > 2 ? argv[2] : "/tmp/aml-filing", cr_dir, sizeof cr_dir);
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    cr_cleanup();
    char p[800];
    snprintf(p, sizeof p, "%s/refused.xml", cr_dir);
    unlink(p);
    unlink(db);
    rmdir(cr_dir);
    return rc;
}
