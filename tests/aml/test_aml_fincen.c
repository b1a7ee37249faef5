/*
 * FinCEN SAR batch XML (engine/fincen.h): the draft of every case of the
 * demo bank that warrants one validates against EFL_SARXBatchSchema.xsd 1.2
 * (libxml2) with its counts, SeqNums, party roles, amounts, dates,
 * categories and narrative blocks right; missing filer details are listed
 * and refuse the XML; filer values are checked; a narrative is cut into
 * blocks on character boundaries and refused over 17,000 characters;
 * markup in names is escaped; and the validator itself rejects a broken
 * batch (so a pass means something).
 */
#include "amltest.h"
#include "engine/fincen.h"
#include "engine/sar.h"
#include "store/config.h"
#include "xsdcheck.h"

/* The draftSar JSON of a case, built as the tool builds it. */
static int draft_of(aml_store *s, const char *case_id, mcp_buf *json, int *file_sar)
{
    aml_case c;
    aml_err err = {{0}};
    if (aml_case_load(s, case_id, &c, &err))
        return -1;
    aml_params p;
    aml_params_default(&p);
    aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
    aml_assessment a;
    int rc = aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, &err);
    if (!rc) {
        aml_recommendation r;
        aml_recommend(s, &c, &a, &r);
        *file_sar = !strcmp(r.action, "file_sar");
        mcp_jw w;
        mcp_jw_init(&w, json);
        mcp_buf text;
        mcp_buf_init(&text, 0);
        rc = aml_assessment_record(s, &c, &a, &r, "test", &err) ||
             aml_sar_build(s, &c, &a, &r, "test", &w, &text, &err) || mcp_jw_finish(&w) != MCP_OK;
        mcp_buf_cleanup(&text);
        aml_assessment_free(&a);
    }
    aml_case_free(&c);
    if (rc)
        fprintf(stderr, "draft %s: %s\n", case_id, err.msg);
    return rc ? -1 : 0;
}

/* What the XML says against what the JSON draft says: amount, dates, subjects, categories. @return mismatches. */
static int agrees(const char *xml, size_t n, const mcp_json *draft)
{
    xmlDocPtr doc = xsd_parse(xml, n);
    if (!doc)
        return 1;
    int bad = 0;
    const mcp_json *act = mcp_json_get(draft, "suspiciousActivity");
    bad += xsd_eval(doc, "number(//fc2:TotalSuspiciousAmountText)") !=
           (double)mcp_json_int(mcp_json_get(act, "amountInvolvedUsd"));
    char *from = xsd_string(doc, "//fc2:SuspiciousActivityFromDateText");
    const char *jf = mcp_json_str(mcp_json_get(act, "dateFrom"), NULL);
    bad += !jf || strlen(from) != 8 || strncmp(from, jf, 4) || strncmp(from + 4, jf + 5, 2) ||
           strncmp(from + 6, jf + 8, 2);
    free(from);
    bad += xsd_eval(doc, "count(/fc2:EFilingBatchXML/fc2:Activity/fc2:Party[fc2:ActivityPartyTypeCode='33'])") !=
           (double)mcp_json_len(mcp_json_get(draft, "subjects"));
    const mcp_json *cats = mcp_json_get(act, "categories");
    bad += xsd_eval(doc, "count(//fc2:SuspiciousActivityClassification)") != (double)mcp_json_len(cats);
    for (size_t i = 0; i < mcp_json_len(cats); i++) {
        char q[200];
        snprintf(q, sizeof q,
                 "count(//fc2:SuspiciousActivityClassification[fc2:SuspiciousActivitySubtypeID='%lld' and "
                 "fc2:SuspiciousActivityTypeID='%lld'])",
                 (long long)mcp_json_int(mcp_json_get(mcp_json_at(cats, i), "subtypeCode")),
                 (long long)mcp_json_int(mcp_json_get(mcp_json_at(cats, i), "typeCode")));
        bad += xsd_eval(doc, q) != 1;
    }
    /* The narrative blocks put together are the draft's narrative with its line breaks as spaces. */
    char *all = xsd_string(doc, "concat((//fc2:ActivityNarrativeText)[1], (//fc2:ActivityNarrativeText)[2], "
                                "(//fc2:ActivityNarrativeText)[3], (//fc2:ActivityNarrativeText)[4], "
                                "(//fc2:ActivityNarrativeText)[5])");
    const char *nt = mcp_json_str(mcp_json_get(mcp_json_get(draft, "narrative"), "text"), NULL);
    size_t k = 0;
    int space = 0;
    for (const char *p = nt ? nt : ""; *p; p++) {
        if (*p == '\n' || *p == ' ') {
            space = k > 0;
            continue;
        }
        if (space && all[k++] != ' ')
            bad++;
        space = 0;
        if (all[k++] != *p) {
            bad++;
            break;
        }
    }
    bad += all[k] != '\0';
    free(all);
    xmlFreeDoc(doc);
    return bad;
}

static void test_demo_cases_validate(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_demo_store(&s, &err), 0);
    aml_st *st = aml_stmt(s, "SELECT case_id FROM cases ORDER BY case_id");
    char ids[64][AML_CASE_ID_MAX + 1];
    int n = 0;
    while (n < 64 && aml_step(st) == AML_ROW)
        snprintf(ids[n++], sizeof ids[0], "%s", aml_col_text(st, 0));
    aml_reset(st);
    int drafts = 0, valid = 0, file_sars = 0, file_sar_valid = 0, disagree = 0;
    char first_why[700] = "";
    for (int i = 0; i < n; i++) {
        mcp_buf json, xml;
        mcp_buf_init(&json, 0);
        mcp_buf_init(&xml, 0);
        int fs = 0;
        T_EQ_INT(draft_of(s, ids[i], &json, &fs), 0);
        mcp_json_doc *d = NULL;
        mcp_json_parse(&d, json.data, json.len, NULL, NULL);
        const mcp_json *root = mcp_json_doc_root(d);
        file_sars += fs;
        if (mcp_json_str_eq(mcp_json_get(root, "status"), "draft")) {
            drafts++;
            aml_err xe = {{0}};
            int rc = aml_fincen_xml(s, json.data, json.len, FX_BASE + 400 * AML_DAY, &xml, &xe);
            char why[300] = "";
            if (rc == 0 && xsd_check_batch(xml.data, xml.len, why) == 0) {
                valid++;
                file_sar_valid += fs;
                disagree += agrees(xml.data, xml.len, root) != 0;
            } else if (!first_why[0]) {
                snprintf(first_why, sizeof first_why, "%s: %s", ids[i], rc ? xe.msg : why);
            }
        } else {
            /* A case that does not warrant a SAR gets no XML. */
            aml_err xe = {{0}};
            T_EQ_INT(aml_fincen_xml(s, json.data, json.len, aml_now(), &xml, &xe), -1);
            T_TRUE(strstr(xe.msg, "does not warrant") != NULL);
        }
        mcp_json_doc_free(d);
        mcp_buf_cleanup(&json);
        mcp_buf_cleanup(&xml);
    }
    printf("FinCEN XML: %d demo cases, %d drafts (%d recommended file_sar), %d validate against "
           "EFL_SARXBatchSchema 1.2, %d disagree with their JSON draft%s%s\n",
           n, drafts, file_sars, valid, disagree, first_why[0] ? "; first failure: " : "", first_why);
    T_TRUE(drafts >= AML_GEN_NTYP);
    T_TRUE(file_sars > 0);
    T_EQ_INT(valid, drafts);
    T_EQ_INT(file_sar_valid, file_sars);
    T_EQ_INT(disagree, 0);
    aml_store_close(s);
}

static void test_missing_filer(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    mcp_buf m;
    mcp_buf_init(&m, 0);
    int required = 0;
    for (const aml_filer_key *k = aml_filer_keys(); k->key; k++)
        required += k->required;
    T_EQ_INT(aml_filer_missing(s, 1, &m), required);
    for (const aml_filer_key *k = aml_filer_keys(); k->key; k++)
        if (k->required)
            T_TRUE(strstr(m.data, k->key) != NULL);
    mcp_buf_cleanup(&m);
    /* The XML is refused with the list, before anything is written. */
    static const char draft[] = "{\"status\":\"draft\",\"subjects\":[],\"suspiciousActivity\":{\"amountInvolvedUsd\":1,"
                                "\"dateFrom\":\"2025-01-01\",\"dateTo\":\"2025-01-02\",\"categories\":[]},"
                                "\"narrative\":{\"text\":\"x\"}}";
    mcp_buf xml;
    mcp_buf_init(&xml, 0);
    T_EQ_INT(aml_fincen_xml(s, draft, strlen(draft), aml_now(), &xml, &err), 1);
    T_TRUE(strstr(err.msg, "filer.name") && strstr(err.msg, "filer.transmitter.tcc"));
    T_EQ_SIZE(xml.len, 0);
    /* All but the TIN: only the TIN is named. */
    T_EQ_INT(aml_filer_set_demo(s, &err), 0);
    T_EQ_INT(aml_config_unset(s, "filer.tin", &err), 0);
    mcp_buf_init(&m, 0);
    T_EQ_INT(aml_filer_missing(s, 1, &m), 1);
    T_TRUE(strstr(m.data, "filer.tin") != NULL);
    T_TRUE(strstr(m.data, "filer.name") == NULL);
    mcp_buf_cleanup(&m);
    T_EQ_INT(aml_fincen_xml(s, draft, strlen(draft), aml_now(), &xml, &err), 1);
    T_TRUE(strstr(err.msg, "filer.tin") != NULL);
    /* The demo filer does not overwrite an operator's own: filer.name is set, so nothing changes. */
    T_EQ_INT(aml_filer_set_demo(s, &err), 0);
    char v[64];
    T_EQ_INT(aml_config_get(s, "filer.tin", v, sizeof v), 0);
    T_EQ_INT(aml_config_set(s, "filer.tin", "123456789", "test", &err), 0);
    T_EQ_INT(aml_fincen_xml(s, draft, strlen(draft), aml_now(), &xml, &err), 0);
    mcp_buf_cleanup(&xml);
    aml_store_close(s);
}

static void test_filer_check(void)
{
    char msg[300];
    T_EQ_INT(aml_filer_check("filer.tin", "12345678", msg, sizeof msg), -1);
    T_TRUE(strstr(msg, "filer.tin") != NULL);
    T_EQ_INT(aml_filer_check("filer.tin", "12-3456789", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.tin", "123456789", msg, sizeof msg), 0);
    T_EQ_INT(aml_filer_check("filer.regulator", "bafin", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.regulator", "fdic", msg, sizeof msg), 0);
    T_EQ_INT(aml_filer_check("filer.address.state", "ny", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.address.zip", "1234", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.address.zip", "123456789", msg, sizeof msg), 0);
    T_EQ_INT(aml_filer_check("filer.contact.phone", "555-0100", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.name", " Leading space", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.name", "Line\nbreak", msg, sizeof msg), -1);
    T_EQ_INT(aml_filer_check("filer.name", "First Bank & Trust", msg, sizeof msg), 0);
    T_EQ_INT(aml_filer_check("filer.nmae", "x", msg, sizeof msg), -1);
    T_TRUE(strstr(msg, "unknown") != NULL);
}

/* A synthetic draft with one entity subject named `name` and a narrative of `chars` characters. */
static char *synthetic(const char *name, size_t chars)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "status");
    mcp_jw_string(&w, "draft");
    mcp_jw_key(&w, "sarDraftId");
    mcp_jw_string(&w, "sar_X_v1");
    mcp_jw_key(&w, "subjects");
    mcp_jw_array_begin(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "customerId");
    mcp_jw_string(&w, "NOPE");
    mcp_jw_key(&w, "entityOrIndividual");
    mcp_jw_string(&w, "entity");
    mcp_jw_key(&w, "entityName");
    mcp_jw_string(&w, name);
    mcp_jw_key(&w, "relationshipToInstitution");
    mcp_jw_string(&w, "customer");
    mcp_jw_key(&w, "roleInTransaction");
    mcp_jw_string(&w, "payee_receiver");
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "suspiciousActivity");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "amountInvolvedUsd");
    mcp_jw_int(&w, 12345);
    mcp_jw_key(&w, "dateFrom");
    mcp_jw_string(&w, "2025-01-02");
    mcp_jw_key(&w, "dateTo");
    mcp_jw_string(&w, "2025-02-03");
    mcp_jw_key(&w, "categories");
    static const char cats[] = "[{\"typeCode\":1,\"subtypeCode\":114},{\"typeCode\":8,\"subtypeCode\":824}]";
    mcp_jw_raw(&w, cats, strlen(cats));
    mcp_jw_object_end(&w);
    /* Two-byte characters and paragraph breaks, so a cut by bytes or a kept line break would show. */
    mcp_buf t;
    mcp_buf_init(&t, 0);
    for (size_t i = 0; i < chars; i++)
        aml_buf_puts(&t, i % 97 == 96 ? "\n" : i % 3 ? "e" : "\xc3\xa9");
    mcp_jw_key(&w, "narrative");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "text");
    mcp_jw_stringn(&w, t.data, t.len);
    mcp_jw_object_end(&w);
    mcp_jw_object_end(&w);
    mcp_buf_cleanup(&t);
    return mcp_jw_finish(&w) == MCP_OK ? b.data : NULL;
}

static void test_narrative_blocks_and_escaping(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    T_EQ_INT(aml_filer_set_demo(s, &err), 0);
    const char *name = "Smith & Sons <Holdings> \"Ltd\"";
    char *j = synthetic(name, 17000);
    mcp_buf xml;
    mcp_buf_init(&xml, 0);
    T_EQ_INT(aml_fincen_xml(s, j, strlen(j), FX_BASE, &xml, &err), 0);
    char why[300] = "";
    T_EQ_INT(xsd_check_batch(xml.data, xml.len, why), 0);
    if (why[0])
        fprintf(stderr, "%s\n", why);
    xmlDocPtr doc = xsd_parse(xml.data, xml.len);
    T_NOT_NULL(doc);
    T_TRUE(xsd_eval(doc, "count(//fc2:ActivityNarrativeText)") == 5);
    T_TRUE(xsd_eval(doc, "string-length((//fc2:ActivityNarrativeText)[1])") == 4000);
    T_TRUE(xsd_eval(doc, "string-length((//fc2:ActivityNarrativeText)[5])") == 1000);
    char *back = xsd_string(doc, "//fc2:Party[fc2:ActivityPartyTypeCode='33']//fc2:RawEntityIndividualLastName");
    T_EQ_STR(back, name);
    free(back);
    xmlFreeDoc(doc);
    mcp_free(j);
    mcp_buf_cleanup(&xml);
    /* One character more is refused: the batch cannot hold it. */
    j = synthetic(name, 17001);
    mcp_buf_init(&xml, 0);
    T_EQ_INT(aml_fincen_xml(s, j, strlen(j), FX_BASE, &xml, &err), -1);
    T_TRUE(strstr(err.msg, "17000") != NULL);
    mcp_free(j);
    mcp_buf_cleanup(&xml);
    aml_store_close(s);
}

/* The validator rejects what it should: a repeated SeqNum, a missing narrative, a wrong namespace. */
static void test_schema_rejects_broken_batches(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    T_EQ_INT(aml_filer_set_demo(s, &err), 0);
    char *j = synthetic("Acme", 100);
    mcp_buf xml;
    mcp_buf_init(&xml, 0);
    T_EQ_INT(aml_fincen_xml(s, j, strlen(j), FX_BASE, &xml, &err), 0);
    char why[300];
    T_EQ_INT(xsd_check_batch(xml.data, xml.len, why), 0);
    char *x = aml_strndup(xml.data, xml.len);
    char *p = strstr(x, "SeqNum=\"2\"");
    T_NOT_NULL(p);
    p[8] = '1';
    T_TRUE(xsd_check_batch(x, strlen(x), why) > 0);
    free(x);
    x = aml_strndup(xml.data, xml.len);
    p = strstr(x, "<fc2:ActivityNarrativeInformation");
    char *e = strstr(x, "</fc2:ActivityNarrativeInformation>");
    T_TRUE(p && e);
    memmove(p, e + strlen("</fc2:ActivityNarrativeInformation>"), strlen(e + strlen("</fc2:ActivityNarrativeInformation>")) + 1);
    T_TRUE(xsd_check_batch(x, strlen(x), why) > 0);
    free(x);
    x = aml_strndup(xml.data, xml.len);
    p = strstr(x, "www.fincen.gov/base");
    p[4] = 'X';
    T_TRUE(xsd_check_batch(x, strlen(x), why) > 0);
    free(x);
    mcp_free(j);
    mcp_buf_cleanup(&xml);
    aml_store_close(s);
}

TEST_MAIN(TEST(test_demo_cases_validate), TEST(test_missing_filer), TEST(test_filer_check),
          TEST(test_narrative_blocks_and_escaping), TEST(test_schema_rejects_broken_batches))
