/*
 * The tools through the library, on the sans-I/O connection: the founding
 * pair (assessTypology without caseId is isError naming /caseId under
 * 2025-11-25 and -32602 under 2025-06-18; with a case id it returns
 * content), unknown ids, no-match results, pagination, resources and the
 * sar_review prompt, byte-identical repeated assessments, hostile input in
 * every string argument (nothing changes, the server keeps serving), and
 * one audit entry per call with an intact chain, naming the call's trace.
 */
#include "amltest.h"
#include "tools/tools.h"

#include <pthread.h>
#include <time.h>

#include "mcppair.h"

/* The bank of these tests. */
static int setup(void)
{
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 5;
    o.customers = 60;
    o.days = 120;
    o.instances = 1;
    o.lookalikes = 1;
    return pair_serve(&o, "test-client");
}

/* A digest of the data the tools must never change. */
static void data_digest(char *out)
{
    static const char *const tables[] = {
        "SELECT * FROM customers ORDER BY 1", "SELECT * FROM accounts ORDER BY 1",
        "SELECT * FROM account_parties ORDER BY 1, 2, 3", "SELECT * FROM transactions ORDER BY 1",
        "SELECT case_id, title, status, priority, origin, opened_at, detection_date, window_from, window_to "
        "FROM cases ORDER BY 1",
        "SELECT * FROM case_accounts ORDER BY 1, 2", "SELECT * FROM jurisdiction_lists ORDER BY 1, 2, 3",
        "SELECT * FROM fx_rates ORDER BY 1, 2", "SELECT name, sql FROM sqlite_schema ORDER BY 1", NULL};
    aml_sha256 h;
    aml_sha256_init(&h);
    aml_store_lock(store);
    for (int t = 0; tables[t]; t++) {
        aml_st *st;
        if ((st = aml_prepare(store, tables[t])) == NULL)
            continue;
        while (aml_step(st) == AML_ROW)
            for (int c = 0; c < aml_col_count(st); c++) {
                const char *v = aml_col_null(st, c) ? "<null>" : aml_col_text(st, c);
                aml_sha256_update(&h, v, strlen(v));
                aml_sha256_update(&h, "|", 1);
            }
        aml_finalize(st);
    }
    aml_store_unlock(store);
    aml_sha256_final(&h, out);
}

static const char *some_case(const char *kind, int matched)
{
    static char id[80];
    id[0] = '\0';
    aml_store_lock(store);
    aml_st *st;
    st = aml_prepare(store, "SELECT case_id, typology_id FROM gt_instances WHERE kind = ? ORDER BY case_id");
    aml_bind_text(st, 1, kind);
    while (aml_step(st) == AML_ROW && !id[0]) {
        const char *cid = aml_col_text(st, 0);
        aml_store_unlock(store);
        aml_assessment a;
        int ok = run_case(store, cid, NULL, AML_ALL_TYPOLOGIES, &a) == 0;
        aml_store_lock(store);
        if (ok && (a.matched > 0) == matched)
            snprintf(id, sizeof id, "%s", cid);
        if (ok)
            aml_assessment_free(&a);
    }
    aml_finalize(st);
    aml_store_unlock(store);
    return id;
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_founding_pair_2025_11_25(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    mcp_json_doc *d = call(&s, "assessTypology", "{}");
    T_NOT_NULL(d);
    T_TRUE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    T_TRUE(strstr(first_text(d), "/caseId") != NULL);
    const mcp_json *v = mcp_json_at(mcp_json_get(mcp_json_get(result(d), "_meta"), "validationErrors"), 0);
    T_EQ_STR(mcp_json_str(mcp_json_get(v, "keyword"), NULL), "required");
    mcp_json_doc_free(d);
    const char *cid = some_case("injected", 1);
    T_TRUE(cid[0]);
    char args[128];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", cid);
    d = call(&s, "assessTypology", args);
    T_NOT_NULL(d);
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    T_TRUE(strstr(first_text(d), cid) != NULL);
    const mcp_json *sc = mcp_json_get(result(d), "structuredContent");
    T_EQ_SIZE(mcp_json_len(mcp_json_get(sc, "findings")), AML_NTYP);
    T_EQ_STR(mcp_json_str(mcp_json_get(sc, "outcome"), NULL), "typologies_matched");
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_founding_pair_2025_06_18(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_06_18), 0);
    mcp_json_doc *d = call(&s, "assessTypology", "{}");
    T_NOT_NULL(d);
    const mcp_json *e = mcp_json_get(mcp_json_doc_root(d), "error");
    T_EQ_INT(mcp_json_int(mcp_json_get(e, "code")), -32602);
    mcp_json_doc_free(d);
    const char *cid = some_case("injected", 1);
    char args[128];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"typologies\":[\"T01\",\"T08_LAYERING\"]}", cid);
    d = call(&s, "assessTypology", args);
    T_NOT_NULL(d);
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    T_EQ_SIZE(mcp_json_len(mcp_json_get(mcp_json_get(result(d), "structuredContent"), "findings")), 2);
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_unknown_and_no_match(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    static const char *const tools[] = {"assessTypology", "assessCase", "draftSar"};
    for (int i = 0; i < 3; i++) {
        mcp_json_doc *d = call(&s, tools[i], "{\"caseId\":\"CASE-9999\"}");
        T_NOT_NULL(d);
        T_TRUE(mcp_json_bool(mcp_json_get(result(d), "isError")));
        T_TRUE(strstr(first_text(d), "CASE-9999") != NULL);
        mcp_json_doc_free(d);
    }
    const char *quiet_case = some_case("lookalike", 0);
    T_TRUE(quiet_case[0]);
    char args[128];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", quiet_case);
    mcp_json_doc *d = call(&s, "assessCase", args);
    T_NOT_NULL(d);
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    T_TRUE(strstr(first_text(d), "No typology matched") != NULL);
    const mcp_json *sc = mcp_json_get(result(d), "structuredContent");
    T_EQ_SIZE(mcp_json_len(mcp_json_get(sc, "matchedTypologies")), 0);
    const char *action = mcp_json_str(mcp_json_get(mcp_json_get(sc, "recommendation"), "action"), NULL);
    T_TRUE(action && (strcmp(action, "close") == 0 || strcmp(action, "monitor") == 0));
    mcp_json_doc_free(d);
    d = call(&s, "draftSar", args);
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    T_EQ_STR(mcp_json_str(mcp_json_get(mcp_json_get(result(d), "structuredContent"), "status"), NULL), "not_warranted");
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_assess_case_and_sar(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    const char *cid = some_case("injected", 1);
    char args[128];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", cid);
    mcp_json_doc *a = call(&s, "assessCase", args), *b = call(&s, "assessCase", args);
    T_NOT_NULL(a);
    T_NOT_NULL(b);
    const mcp_json *sa = mcp_json_get(result(a), "structuredContent"), *sb = mcp_json_get(result(b), "structuredContent");
    T_TRUE(mcp_json_equal(sa, sb)); /* same data, same parameters: same result */
    T_TRUE(mcp_json_len(mcp_json_get(sa, "matchedTypologies")) > 0);
    const mcp_json *sar = mcp_json_get(sa, "sar");
    T_EQ_INT(mcp_json_typeof(mcp_json_get(sar, "dueDate")), MCP_JSON_STRING);
    T_NOT_NULL(mcp_json_get(mcp_json_get(sa, "recommendation"), "reasons"));
    mcp_json_doc_free(a);
    mcp_json_doc_free(b);
    mcp_json_doc *d = call(&s, "draftSar", args);
    const mcp_json *sc = mcp_json_get(result(d), "structuredContent");
    T_EQ_STR(mcp_json_str(mcp_json_get(sc, "status"), NULL), "draft");
    T_TRUE(mcp_json_bool(mcp_json_get(sc, "humanReviewRequired")));
    T_TRUE(mcp_json_len(mcp_json_get(sc, "evidenceCited")) > 0);
    mcp_json_doc_free(d);
    /* Parameter overrides change the result; invalid ones are tool errors. */
    snprintf(args, sizeof args, "{\"caseId\":\"%s\",\"parameters\":{\"T05\":{\"exitHours\":0}}}", cid);
    d = call(&s, "assessCase", args);
    T_TRUE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    mcp_json_doc_free(d);
    close_session(&s);
}

/* The connection's round trips to the database server so far (0 on SQLite). */
static int64_t round_trips(void)
{
    aml_store_lock(store);
    int64_t n = aml_store_round_trips(store);
    aml_store_unlock(store);
    return n;
}

/*
 * assessCase's round trips to PostgreSQL (issue 18): each call reads its
 * evidence rows, account ids and the banks of a fan's counterparties in a
 * few statements, and writes its findings and their evidence in two,
 * instead of one round trip per row. The first call prepares the statements; the
 * others run on a warm connection, as a server's do. On SQLite: none.
 */
static void test_assess_round_trips(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    char ids[9][80];
    int n = 0;
    aml_store_lock(store);
    aml_st *st = aml_prepare(store, "SELECT case_id FROM cases ORDER BY case_id");
    while (st && n < 9 && aml_step(st) == AML_ROW)
        snprintf(ids[n++], sizeof ids[0], "%s", aml_col_text(st, 0));
    aml_finalize(st);
    aml_store_unlock(store);
    T_EQ_INT(n, 9);
    int64_t most = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        char args[128];
        snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", ids[i]);
        int64_t before = round_trips();
        mcp_json_doc *d = call(&s, "assessCase", args);
        int64_t used = round_trips() - before;
        T_NOT_NULL(d);
        T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
        mcp_json_doc_free(d);
        if (i == 0)
            continue; /* it prepared the statements */
        most = used > most ? used : most;
        sum += used;
    }
    printf("  assessCase round trips on %s: at most %lld, mean %.1f per call (%d calls)\n",
           aml_store_backend(store) == AML_BACKEND_PG ? "PostgreSQL" : "SQLite", (long long)most,
           (double)sum / (n - 1), n - 1);
    close_session(&s);
    if (aml_store_backend(store) == AML_BACKEND_PG)
        T_TRUE(most > 0 && most <= 40);
    else
        T_EQ_INT(most, 0);
}

/* Ends the server's sessions with PostgreSQL after `ms` (pg_terminate_backend, waiting until they are gone). */
static void *end_sessions_later(void *arg)
{
    long ms = *(const long *)arg;
    sleep_ms(ms);
    pgt_exec("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'mcp-server-aml'");
    return NULL;
}

static int64_t case_assessments(const char *cid)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT assessment_id) FROM assessments WHERE case_id = '%s' AND kind = 'case'",
             cid);
    return count(sql);
}

/*
 * Calls `tool` with `args` 8 times, the database server ending the session at points spread from the
 * call's start to after its end: each answer is the undisturbed one (`want`) or a tool error naming the
 * lost connection, none hangs, and the call after each loss runs on a new connection and succeeds.
 */
static void lose_during(session *s, const char *tool, const char *args, const mcp_json *want, long took)
{
    int lost = 0, ok = 0;
    for (int i = 0; i < 8; i++) {
        long delay = took * i / 6;
        pthread_t th;
        T_EQ_INT(pthread_create(&th, NULL, end_sessions_later, &delay), 0);
        mcp_json_doc *d = call(s, tool, args);
        pthread_join(th, NULL);
        T_NOT_NULL(d);
        if (d && mcp_json_bool(mcp_json_get(result(d), "isError"))) {
            lost++;
            if (!strstr(first_text(d), "onnection"))
                printf("  %s call %d: %s\n", tool, i, first_text(d));
            T_TRUE(strstr(first_text(d), "onnection") != NULL);
        } else if (d) {
            ok++;
            T_TRUE(mcp_json_equal(want, mcp_json_get(result(d), "structuredContent")));
        }
        mcp_json_doc_free(d);
        d = call(s, tool, args); /* a new connection */
        T_NOT_NULL(d);
        if (d && mcp_json_bool(mcp_json_get(result(d), "isError")))
            printf("  %s call %d after the loss: %s\n", tool, i, first_text(d));
        T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
        T_TRUE(mcp_json_equal(want, mcp_json_get(result(d), "structuredContent")));
        mcp_json_doc_free(d);
    }
    printf("  sessions ended during 8 %s calls of %ld ms: %d answered with a tool error, %d in full\n", tool, took,
           lost, ok);
}

/*
 * The database server ends the session during assessCase and caseGraph calls (PostgreSQL): see
 * lose_during; and no partial assessment is stored (the case keeps its one assessment id).
 */
static void test_connection_lost(void)
{
    if (aml_store_backend(store) != AML_BACKEND_PG)
        return; /* SQLite has no connection to lose */
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    const char *cid = some_case("injected", 1);
    char args[128];
    snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", cid);
    static const char *const tools[] = {"assessCase", "caseGraph"};
    for (int k = 0; k < 2; k++) {
        mcp_json_doc *base = call(&s, tools[k], args);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        mcp_json_doc *again = call(&s, tools[k], args);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long took = (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
        T_NOT_NULL(base);
        T_NOT_NULL(again);
        const mcp_json *want = base ? mcp_json_get(result(base), "structuredContent") : NULL;
        T_NOT_NULL(want);
        T_TRUE(mcp_json_equal(want, again ? mcp_json_get(result(again), "structuredContent") : NULL));
        mcp_json_doc_free(again);
        int64_t stored = case_assessments(cid);
        if (want)
            lose_during(&s, tools[k], args, want, took);
        T_EQ_INT(case_assessments(cid), stored);
        mcp_json_doc_free(base);
    }
    close_session(&s);
}

static void test_list_cases_pagination(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    int64_t total = count("SELECT count(*) FROM cases WHERE status IN ('open','in_review','escalated')");
    char args[512] = "{\"limit\":7}";
    int64_t seen = 0, pages = 0;
    char last[80] = "";
    for (;;) {
        mcp_json_doc *d = call(&s, "listCases", args);
        T_NOT_NULL(d);
        const mcp_json *sc = mcp_json_get(result(d), "structuredContent");
        T_EQ_INT(mcp_json_int(mcp_json_get(sc, "total")), total);
        const mcp_json *cases = mcp_json_get(sc, "cases");
        for (size_t i = 0; i < mcp_json_len(cases); i++) {
            const char *id = mcp_json_str(mcp_json_get(mcp_json_at(cases, i), "caseId"), NULL);
            T_TRUE(strcmp(id, last) > 0); /* ordered, no repeats across pages */
            snprintf(last, sizeof last, "%s", id);
            seen++;
        }
        pages++;
        const char *next = mcp_json_str(mcp_json_get(sc, "nextCursor"), NULL);
        if (!next) {
            mcp_json_doc_free(d);
            break;
        }
        snprintf(args, sizeof args, "{\"limit\":7,\"cursor\":\"%s\"}", next);
        mcp_json_doc_free(d);
    }
    T_EQ_INT(seen, total);
    T_TRUE(pages >= 2);
    /* Filters: a risk level, a status, dates. */
    mcp_json_doc *d = call(&s, "listCases", "{\"riskLevel\":\"unassessed\",\"openedFrom\":\"2000-01-01\","
                                             "\"openedTo\":\"2100-12-31\",\"status\":\"open\"}");
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    mcp_json_doc_free(d);
    d = call(&s, "listCases", "{\"openedFrom\":\"2025-02-30\"}");
    T_TRUE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    mcp_json_doc_free(d);
    d = call(&s, "listTypologies", "{}");
    T_EQ_SIZE(mcp_json_len(mcp_json_get(mcp_json_get(result(d), "structuredContent"), "typologies")), AML_NTYP);
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_resources_and_prompt(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    const char *cid = some_case("injected", 1);
    char frame[512];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":\"aml://cases/%s\"}}", cid);
    send_raw(&s, frame);
    mcp_json_doc *d = await(&s, 7);
    const mcp_json *c0 = mcp_json_at(mcp_json_get(result(d), "contents"), 0);
    T_TRUE(strstr(mcp_json_str(mcp_json_get(c0, "text"), NULL), cid) != NULL);
    mcp_json_doc_free(d);
    send_raw(&s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":\"aml://typologies\"}}");
    d = await(&s, 8);
    T_NOT_NULL(result(d));
    mcp_json_doc_free(d);
    send_raw(&s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":{\"uri\":\"aml://cases/NOPE\"}}");
    d = await(&s, 9);
    T_NOT_NULL(mcp_json_get(mcp_json_doc_root(d), "error"));
    mcp_json_doc_free(d);
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"prompts/get\",\"params\":{\"name\":\"sar_review\","
             "\"arguments\":{\"caseId\":\"%s\"}}}",
             cid);
    send_raw(&s, frame);
    d = await(&s, 10);
    T_EQ_SIZE(mcp_json_len(mcp_json_get(result(d), "messages")), 2);
    mcp_json_doc_free(d);
    close_session(&s);
}

static void test_hostile_input(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    char before[65], after[65];
    data_digest(before);
    int64_t audit0 = count("SELECT count(*) FROM audit_log");
    static const char *const hostile[] = {
        "'; DROP TABLE cases; --", "\\\" OR 1=1 --", "CASE-0001' OR '1'='1", "%", "_", "CASE-%", "\\\\",
        "\\u0000CASE-0001", "CASE-0001\\u0000'; DELETE FROM transactions; --", "\\u00e9\\u4e2d\\ud83d\\ude00",
        "<script>alert(1)</script>", "$(rm -rf /)", "../../etc/passwd", "c1.27293b2044524f50205441424c452063617365733b"};
    /* Oversized: 100,000 characters, and one over the schema's 128. */
    size_t big = 100000;
    char *huge = malloc(big + 1), *just_over = malloc(130);
    memset(huge, 'A', big);
    huge[big] = '\0';
    memset(just_over, 'B', 129);
    just_over[129] = '\0';
    int calls = 0, responses = 0;
    mcp_buf args;
    mcp_buf_init(&args, 0);
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0] + 2; i++) {
        const char *v = i < sizeof hostile / sizeof hostile[0] ? hostile[i] : i == sizeof hostile / sizeof hostile[0] ? huge : just_over;
        static const char *const templates[][2] = {
            {"assessTypology", "{\"caseId\":\"%s\"}"},
            {"assessCase", "{\"caseId\":\"%s\"}"},
            {"draftSar", "{\"caseId\":\"%s\"}"},
            {"assessTypology", "{\"caseId\":\"CASE-0001\",\"typologies\":[\"%s\"]}"},
            {"assessCase", "{\"caseId\":\"CASE-0001\",\"parameters\":{\"%s\":{}}}"},
            {"assessCase", "{\"caseId\":\"CASE-0001\",\"parameters\":{\"T01\":{\"%s\":1}}}"},
            {"listCases", "{\"status\":\"%s\"}"},
            {"listCases", "{\"riskLevel\":\"%s\"}"},
            {"listCases", "{\"typology\":\"%s\"}"},
            {"listCases", "{\"openedFrom\":\"%s\"}"},
            {"listCases", "{\"openedTo\":\"%s\"}"},
            {"listCases", "{\"cursor\":\"%s\"}"},
            {"listTypologies", "{\"%s\":1}"},
        };
        for (size_t t = 0; t < sizeof templates / sizeof templates[0]; t++) {
            mcp_buf_reset(&args);
            const char *tpl = templates[t][1];
            const char *pct = strstr(tpl, "%s");
            mcp_buf_append(&args, tpl, (size_t)(pct - tpl));
            aml_buf_puts(&args, v);
            aml_buf_puts(&args, pct + 2);
            mcp_json_doc *d = call(&s, templates[t][0], args.data);
            calls++;
            if (d && (result(d) || mcp_json_get(mcp_json_doc_root(d), "error")))
                responses++;
            mcp_json_doc_free(d);
        }
    }
    mcp_buf_cleanup(&args);
    free(huge);
    free(just_over);
    data_digest(after);
    T_EQ_INT(responses, calls);
    T_EQ_STR(before, after);
    /* Still serving, and every call that reached a handler was audited, chain intact. */
    mcp_json_doc *d = call(&s, "listTypologies", "{}");
    T_FALSE(mcp_json_bool(mcp_json_get(result(d), "isError")));
    mcp_json_doc_free(d);
    int64_t audit1 = count("SELECT count(*) FROM audit_log");
    T_TRUE(audit1 > audit0);
    int64_t bad = 0;
    aml_err err;
    aml_store_lock(store);
    int v = aml_audit_verify(store, NULL, &bad, &err);
    aml_store_unlock(store);
    T_EQ_INT(v, 0);
    printf("hostile input: %d calls, %d answered, data digest unchanged, %lld audit entries added\n", calls, responses,
           (long long)(audit1 - audit0));
    close_session(&s);
}

static void test_audit_every_call(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    int64_t a0 = count("SELECT count(*) FROM audit_log");
    mcp_json_doc *d = call(&s, "listTypologies", "{}");
    mcp_json_doc_free(d);
    d = call(&s, "assessCase", "{\"caseId\":\"CASE-9999\"}");
    mcp_json_doc_free(d);
    d = call(&s, "listCases", "{}");
    mcp_json_doc_free(d);
    T_EQ_INT(count("SELECT count(*) FROM audit_log") - a0, 3);
    T_EQ_INT(count("SELECT count(*) FROM audit_log WHERE action = 'tool.assessCase' AND outcome = 'error' "
                   "AND actor = 'test-client'"),
             count("SELECT count(*) FROM audit_log WHERE action = 'tool.assessCase' AND outcome = 'error'"));
    T_TRUE(count("SELECT count(*) FROM audit_log WHERE length(request_sha256) = 64") >= 3);
    close_session(&s);
}

/* A call's W3C traceparent ends its audit detail (hashed with the row); the chain stays intact. */
static void test_audit_names_trace(void)
{
    session s;
    T_EQ_INT(open_session(&s, MCP_PROTOCOL_2025_11_25), 0);
    send_raw(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"listCases\","
                 "\"arguments\":{},\"_meta\":{\"traceparent\":"
                 "\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}}}");
    mcp_json_doc_free(await(&s, 7));
    T_EQ_INT(count("SELECT count(*) FROM audit_log WHERE action = 'tool.listCases' AND detail LIKE "
                   "'% traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'"),
             1);
    int64_t bad = 0;
    aml_err err;
    aml_store_lock(store);
    T_EQ_INT(aml_audit_verify(store, NULL, &bad, &err), 0);
    aml_store_unlock(store);
    close_session(&s);
}

/* The server is shared by the tests: made once, after the counting allocator is in place. */
int main(void)
{
    static const mcp_allocator a = {t_malloc, t_realloc, t_free, NULL};
    static const t_case cases[] = {
        TEST(test_founding_pair_2025_11_25), TEST(test_founding_pair_2025_06_18), TEST(test_unknown_and_no_match),
        TEST(test_assess_case_and_sar),      TEST(test_list_cases_pagination),    TEST(test_resources_and_prompt),
        TEST(test_hostile_input),            TEST(test_audit_every_call),         TEST(test_audit_names_trace),
        TEST(test_assess_round_trips),      TEST(test_connection_lost)};
    mcp_set_allocator(&a);
    if (setup()) {
        printf("test_aml_mcp: 0 passed, 1 failed\n");
        return 1;
    }
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    mcp_server_free(srv);
    aml_store_close(store);
    return rc;
}
