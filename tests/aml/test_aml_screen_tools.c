/*
 * The screening tools through the library (sans-I/O connection):
 * screenEntity before any list is loaded (isError saying how to load
 * one), after loading (the index is rebuilt on a new list version), its
 * yente-shaped result with explanations, unknown lists and empty names
 * as tool errors; screenCase on a case whose subject is a listed person
 * and whose counterparty is named in Cyrillic: findings kept with their
 * evidence; dismissScreeningHit: the audit log keeps who and why, and the
 * dismissed hit is no longer a match nor a new finding.
 */
#include "amltest.h"
#include "screen/lists.h"
#include "tools/tools.h"

#include <pthread.h>
#include <time.h>

#define DATA AML_SCREENING_DATA
#define PTR(r, p) mcp_json_pointer((r), (p), strlen(p))

#include "mcppair.h"

/* The bank of these tests. */
static int setup(void)
{
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 11;
    o.customers = 40;
    o.days = 90;
    o.instances = 1;
    o.lookalikes = 0;
    return pair_serve(&o, "analyst-1");
}

static void exec(const char *sql)
{
    aml_err err;
    aml_store_lock(store);
    aml_exec(store, sql, &err);
    aml_store_unlock(store);
}

static int is_error(mcp_json_doc *d)
{
    return mcp_json_bool(mcp_json_get(result(d), "isError"));
}

static const mcp_json *sc(mcp_json_doc *d)
{
    return mcp_json_get(result(d), "structuredContent");
}

static void test_screen_entity(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    mcp_json_doc *d = call(&s, "screenEntity", "{\"name\":\"ABDULHAI SALEK\"}");
    T_TRUE(is_error(d));
    T_TRUE(strstr(first_text(d), "lists import") != NULL);
    mcp_json_doc_free(d);
    aml_list_stats st;
    aml_err err = {{0}};
    aml_store_lock(store);
    int rc = aml_lists_import(store, "un", "csv", DATA "/positives_un_untreated.csv", &st, &err) ||
             aml_lists_import(store, "zala", "ftm", DATA "/zala_entities.ftm.json", &st, &err);
    aml_store_unlock(store);
    T_EQ_INT(rc, 0);
    d = call(&s, "screenEntity", "{\"name\":\"SALEK, ABDULHIA\",\"birthDate\":\"1965\",\"nationality\":\"af\"}");
    T_FALSE(is_error(d));
    const mcp_json *r = sc(d);
    T_TRUE(mcp_json_int(mcp_json_get(r, "total")) >= 1);
    T_TRUE(mcp_json_str_eq(PTR(r, "/results/0/caption"), "ABDULHAI SALEK"));
    T_TRUE(mcp_json_str_eq(PTR(r, "/results/0/list"), "un"));
    T_TRUE(mcp_json_str_eq(PTR(r, "/results/0/schema"), "Person"));
    T_TRUE(mcp_json_bool(PTR(r, "/results/0/match")));
    T_TRUE(mcp_json_str_eq(PTR(r, "/results/0/properties/birthDate/0"), "1965"));
    T_TRUE(mcp_json_str_eq(PTR(r, "/results/0/explanations/matched_name/query_normalized"), "abdulhia salek"));
    T_EQ_DBL(mcp_json_number(PTR(r, "/results/0/explanations/dob_mismatch/score")), 0);
    T_TRUE(mcp_json_number(PTR(r, "/results/0/explanations/name_jaro_winkler/score")) > 0.9);
    T_TRUE(strstr(first_text(d), "MATCH") != NULL);
    mcp_json_doc_free(d);
    /* Cyrillic query, Latin list name: found. */
    d = call(&s, "screenEntity", "{\"name\":\"Захаров Александр Вячеславович\",\"schema\":\"Person\"}");
    T_TRUE(mcp_json_str_eq(PTR(sc(d), "/results/0/list"), "zala"));
    mcp_json_doc_free(d);
    /* A made-up person: nothing. */
    d = call(&s, "screenEntity", "{\"name\":\"Patricia Lucas Wheeler\",\"birthDate\":\"2002-07-14\"}");
    T_FALSE(is_error(d));
    T_EQ_INT((int)mcp_json_int(mcp_json_get(sc(d), "matches")), 0);
    mcp_json_doc_free(d);
    d = call(&s, "screenEntity", "{\"name\":\"ABDULHAI SALEK\",\"lists\":[\"nope\"]}");
    T_TRUE(is_error(d));
    T_TRUE(strstr(first_text(d), "Unknown list 'nope'") != NULL);
    mcp_json_doc_free(d);
    d = call(&s, "screenEntity", "{\"name\":\"ABDULHAI SALEK\",\"lists\":[\"zala\"]}");
    T_EQ_INT((int)mcp_json_int(mcp_json_get(sc(d), "matches")), 0);
    mcp_json_doc_free(d);
    d = call(&s, "screenEntity", "{\"name\":\"-- \u2018\u2019 --\"}");
    T_TRUE(is_error(d));
    mcp_json_doc_free(d);
    d = call(&s, "screenEntity", "{\"name\":\"x\",\"threshold\":7}");
    T_TRUE(result(d) == NULL || is_error(d));
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_screen_case_and_dismiss(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    /* The first case's primary holder becomes a listed person; a counterparty gets a Cyrillic listed name. */
    char case_id[64] = "";
    aml_store_lock(store);
    aml_st *q;
    q = aml_prepare(store, "SELECT case_id FROM cases ORDER BY case_id LIMIT 1");
    if (aml_step(q) == AML_ROW)
        snprintf(case_id, sizeof case_id, "%s", aml_col_text(q, 0));
    aml_finalize(q);
    aml_store_unlock(store);
    T_TRUE(case_id[0] != 0);
    char sql[1024];
    snprintf(sql, sizeof sql,
             "UPDATE customers SET full_name = 'JANAN AGHA', date_of_birth = '1958-03-01', country = 'AF' "
             "WHERE customer_id = (SELECT p.customer_id FROM account_parties p JOIN case_accounts ca ON "
             "ca.acct_no = p.acct_no WHERE ca.case_id = '%s' ORDER BY p.customer_id LIMIT 1)",
             case_id);
    exec(sql);
    snprintf(sql, sizeof sql,
             "UPDATE accounts SET holder_name = 'Захаров Александр Вячеславович' WHERE acct_no = (SELECT "
             "CASE WHEN t.from_acct = ca.acct_no THEN t.to_acct ELSE t.from_acct END FROM transactions t JOIN "
             "case_accounts ca ON (t.from_acct = ca.acct_no OR t.to_acct = ca.acct_no) JOIN cases c ON "
             "c.case_id = ca.case_id JOIN accounts a ON a.acct_no = CASE WHEN t.from_acct = ca.acct_no THEN "
             "t.to_acct ELSE t.from_acct END WHERE ca.case_id = '%s' AND a.is_internal = 0 AND t.booked_at "
             "BETWEEN c.window_from AND c.window_to ORDER BY t.txn_no LIMIT 1)",
             case_id);
    exec(sql);
    char args[256];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", case_id);
    mcp_json_doc *d = call(&s, "screenCase", args);
    T_FALSE(is_error(d));
    const mcp_json *r = sc(d);
    int64_t found = mcp_json_int(mcp_json_get(r, "findings"));
    printf("screenCase %s: %lld parties, %lld findings\n", case_id, (long long)mcp_json_int(mcp_json_get(r, "screened")),
           (long long)found);
    T_TRUE(found >= 1);
    mcp_json_doc_free(d);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM screening_findings WHERE case_id = '%s' AND list_name = 'un' AND "
             "evidence LIKE '%%matched_name%%' AND created_by = 'analyst-1'", case_id);
    T_TRUE(count(sql) >= 1);
    /* Reviewed: not the listed JANAN AGHA. */
    aml_store_lock(store);
    q = aml_prepare(store, "SELECT entity_id FROM screening_findings WHERE list_name = 'un' ORDER BY score DESC LIMIT 1");
    char ent[64] = "";
    if (aml_step(q) == AML_ROW)
        snprintf(ent, sizeof ent, "%s", aml_col_text(q, 0));
    aml_finalize(q);
    aml_store_unlock(store);
    char dargs[512];
    snprintf(dargs, sizeof dargs, "{\"name\":\"Janan Agha\",\"list\":\"un\",\"entityId\":\"%s\",\"reason\":\"born "
             "1958 in another province; passport checked\"}", ent);
    d = call(&s, "dismissScreeningHit", dargs);
    T_FALSE(is_error(d));
    T_TRUE(mcp_json_str_eq(mcp_json_get(sc(d), "dismissedBy"), "analyst-1"));
    mcp_json_doc_free(d);
    T_EQ_INT((int)count("SELECT count(*) FROM audit_log WHERE action = 'tool.dismissScreeningHit' AND actor = "
                        "'analyst-1' AND detail LIKE '%passport checked%'"), 1);
    d = call(&s, "screenEntity", "{\"name\":\"JANAN AGHA\",\"birthDate\":\"1958\"}");
    T_TRUE(mcp_json_bool(PTR(sc(d), "/results/0/dismissed")));
    T_FALSE(mcp_json_bool(PTR(sc(d), "/results/0/match")));
    mcp_json_doc_free(d);
    d = call(&s, "screenCase", args);
    T_EQ_INT((int)mcp_json_int(mcp_json_get(sc(d), "findings")), (int)found - 1);
    mcp_json_doc_free(d);
    d = call(&s, "dismissScreeningHit", "{\"name\":\"x\",\"list\":\"un\",\"entityId\":\"no-such\",\"reason\":\"n/a\"}");
    T_TRUE(is_error(d));
    mcp_json_doc_free(d);
    d = call(&s, "screenCase", "{\"caseId\":\"CASE-9999\"}");
    T_TRUE(is_error(d));
    T_TRUE(strstr(first_text(d), "Unknown caseId") != NULL);
    mcp_json_doc_free(d);
    int64_t bad = 0;
    aml_err err;
    aml_store_lock(store);
    T_EQ_INT(aml_audit_verify(store, NULL, &bad, &err), 0);
    aml_store_unlock(store);
    close_session(&s);
}

int main(void)
{
    static const mcp_allocator a = {t_malloc, t_realloc, t_free, NULL};
    static const t_case cases[] = {TEST(test_screen_entity), TEST(test_screen_case_and_dismiss)};
    mcp_set_allocator(&a);
    if (setup()) {
        printf("test_aml_screen_tools: 0 passed, 1 failed\n");
        return 1;
    }
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    mcp_server_free(srv);
    aml_store_close(store);
    return rc;
}
