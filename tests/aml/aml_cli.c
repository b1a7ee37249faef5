/*
 * The mcp-server-aml binary: serving the demo store over stdio (the
 * founding pair in 2025-11-25 and 2025-06-18), a clear error at start for
 * an unusable or damaged database file, `audit verify` on an intact and a
 * tampered store, imports reporting bad rows with their line, `gen`
 * determinism, `scan`, `assess`, and usage errors.
 *
 * usage: aml_cli PATH-TO-mcp-server-aml WORKDIR
 */
#include "amltest.h"
#include "clirun.h"

#include <sqlite3.h>

typedef cr_ran ran;

/* Runs the binary with args (NULL-terminated; args[0], the program's name, is skipped) and `input` on stdin. */
static ran run(const char *const *args, const char *input)
{
    return cr_run(args + 1, input);
}

static char *session_input(const char *version, const char *const *calls)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    aml_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
                       "\"capabilities\":{},\"clientInfo\":{\"name\":\"cli-test\",\"version\":\"1\"}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
                   version);
    for (int i = 0; calls[i]; i++)
        aml_buf_printf(&b, "%s\n", calls[i]);
    char *s = aml_strndup(b.data, b.len);
    mcp_buf_cleanup(&b);
    return s;
}

static void test_stdio_founding_pair(void)
{
    static const char *const calls[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"assessTypology\","
        "\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"assessTypology\","
        "\"arguments\":{\"caseId\":\"CASE-0001\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}",
        NULL};
    const char *args[] = {"", NULL};
    char *in = session_input(MCP_PROTOCOL_2025_11_25, calls);
    ran r = run(args, in);
    free(in);
    T_EQ_INT(r.status, 0);
    mcp_json_doc *d2 = cr_response(r.out, 2), *d3 = cr_response(r.out, 3), *d4 = cr_response(r.out, 4);
    const mcp_json *r2 = mcp_json_get(mcp_json_doc_root(d2), "result");
    int iserr = mcp_json_bool(mcp_json_get(r2, "isError"));
    const char *t2 = mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(r2, "content"), 0), "text"), NULL);
    const mcp_json *r3 = mcp_json_get(mcp_json_doc_root(d3), "result");
    int content = mcp_json_len(mcp_json_get(r3, "content")) > 0 && mcp_json_get(r3, "structuredContent") &&
                  !mcp_json_bool(mcp_json_get(r3, "isError"));
    size_t ntools = mcp_json_len(mcp_json_get(mcp_json_get(mcp_json_doc_root(d4), "result"), "tools"));
    int has_caseid = t2 && strstr(t2, "/caseId") != NULL;
    mcp_json_doc_free(d2);
    mcp_json_doc_free(d3);
    mcp_json_doc_free(d4);
    cr_free(&r);
    T_TRUE(iserr);
    T_TRUE(has_caseid);
    T_TRUE(content);
    T_TRUE(ntools >= 7); /* the five case tools, traceFunds and caseGraph (others may join) */

    in = session_input(MCP_PROTOCOL_2025_06_18, calls);
    r = run(args, in);
    free(in);
    d2 = cr_response(r.out, 2);
    int code = (int)mcp_json_int(mcp_json_get(mcp_json_get(mcp_json_doc_root(d2), "error"), "code"));
    mcp_json_doc_free(d2);
    cr_free(&r);
    T_EQ_INT(code, -32602);
}

static void test_bad_database_at_start(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/garbage.db", cr_dir);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 4096; i++)
        fputc(i * 31 & 0xff, f);
    fclose(f);
    const char *args[] = {"", "--db", path, NULL};
    ran r = run(args, "");
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "not a usable case store") != NULL);
    T_TRUE(strstr(r.out, "jsonrpc") == NULL);
    cr_free(&r);
    /* A real store damaged in the middle. */
    char good[700];
    snprintf(good, sizeof good, "%s/damaged.db", cr_dir);
    const char *gen[] = {"", "gen", "--seed", "2", "--customers", "30", "--days", "60", "--instances", "1",
                         "--db", good, NULL};
    r = run(gen, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    struct stat sb;
    stat(good, &sb);
    f = fopen(good, "r+b");
    fseek(f, sb.st_size / 2, SEEK_SET);
    for (int i = 0; i < 8192; i++)
        fputc(0x5A, f);
    fclose(f);
    const char *serve[] = {"", "--db", good, NULL};
    r = run(serve, "");
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "damaged") != NULL || strstr(r.err, "malformed") != NULL);
    fprintf(stderr, "  (expected) %s", r.err);
    cr_free(&r);
    const char *missing[] = {"", "--db", "/nonexistent/dir/x.db", NULL};
    r = run(missing, "");
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "/nonexistent/dir/x.db") != NULL);
    cr_free(&r);
    unlink(path);
    unlink(good);
}

static void test_audit_verify(void)
{
    char db[700];
    snprintf(db, sizeof db, "%s/audit.db", cr_dir);
    const char *gen[] = {"", "gen", "--seed", "3", "--customers", "30", "--days", "60", "--instances", "1",
                         "--db", db, NULL};
    ran r = run(gen, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    static const char *const calls[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"listCases\",\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"assessCase\","
        "\"arguments\":{\"caseId\":\"CASE-0001\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"assessCase\","
        "\"arguments\":{\"caseId\":\"nope\"}}}",
        NULL};
    char *in = session_input(MCP_PROTOCOL_2025_11_25, calls);
    const char *serve[] = {"", "--db", db, "--actor", "analyst-7", NULL};
    r = run(serve, in);
    free(in);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    const char *verify[] = {"", "audit", "verify", "--db", db, NULL};
    r = run(verify, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "intact") != NULL);
    fputs(r.out, stdout);
    cr_free(&r);
    /* Tamper with the second entry directly in the file. */
    sqlite3 *h;
    T_EQ_INT(sqlite3_open(db, &h), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(h, "DROP TRIGGER audit_no_update; UPDATE audit_log SET actor = 'someone-else' WHERE seq = 2",
                          NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(h);
    r = run(verify, NULL);
    T_EQ_INT(r.status, 1);
    T_TRUE(strstr(r.out, "BROKEN at seq 2") != NULL);
    fputs(r.out, stdout);
    cr_free(&r);
    unlink(db);
}

static void test_gen_deterministic(void)
{
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/a.csv", cr_dir);
    snprintf(b, sizeof b, "%s/b.csv", cr_dir);
    snprintf(c, sizeof c, "%s/c.csv", cr_dir);
    const char *g1[] = {"", "gen", "--seed", "4", "--customers", "25", "--days", "40", "--out", a, NULL};
    const char *g2[] = {"", "gen", "--seed", "4", "--customers", "25", "--days", "40", "--out", b, NULL};
    const char *g3[] = {"", "gen", "--seed", "5", "--customers", "25", "--days", "40", "--out", c, NULL};
    ran r = run(g1, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    r = run(g2, NULL);
    cr_free(&r);
    r = run(g3, NULL);
    cr_free(&r);
    char *x = rb_slurp(a), *y = rb_slurp(b), *z = rb_slurp(c);
    int same = strcmp(x, y) == 0, differs = strcmp(x, z) != 0, big = strlen(x) > 10000;
    free(x);
    free(y);
    free(z);
    T_TRUE(same);
    T_TRUE(differs);
    T_TRUE(big);
    unlink(b);
    unlink(c);
    /* Import the file, scan, assess. */
    char db[700];
    snprintf(db, sizeof db, "%s/imp.db", cr_dir);
    const char *imp[] = {"", "import", "--db", db, "--format", "native", a, NULL};
    r = run(imp, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "imported") != NULL);
    cr_free(&r);
    const char *scan[] = {"", "scan", "--db", db, NULL};
    r = run(scan, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "cases opened") != NULL);
    cr_free(&r);
    r = run(scan, NULL);
    T_TRUE(strstr(r.out, "0 accounts evaluated") != NULL);
    cr_free(&r);
    const char *assess[] = {"", "assess", "--db", db, "CASE-0001", NULL};
    r = run(assess, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "\"assessmentId\"") != NULL);
    cr_free(&r);
    unlink(a);
    unlink(db);
}

static void test_import_bad_row(void)
{
    char csv[700], db[700];
    snprintf(csv, sizeof csv, "%s/bad.csv", cr_dir);
    snprintf(db, sizeof db, "%s/bad.db", cr_dir);
    FILE *f = fopen(csv, "wb");
    fputs("# comment\n"
          "account,ACC-1,1,BANK-001,,checking,USD,active,2024-01-01,,,CA,US,\n"
          "txn,TX-1,2025-01-02T10:00:00Z,second,ACC-1,,5000,USD,cash,,,,,,,,,,\n"
          "txn,TX-2,2025-01-02T10:00:00Z,second,ACC-1,,5000,USD,teleport,,,,,,,,,,\n"
          "txn,TX-3,2025-01-03T10:00:00Z,second,,ACC-1,700,USD,cash,,,,,,,,,,\n",
          f);
    fclose(f);
    const char *imp[] = {"", "import", "--db", db, "--format", "native", csv, NULL};
    ran r = run(imp, NULL);
    T_EQ_INT(r.status, 1);
    T_TRUE(strstr(r.err, "bad.csv:4:") != NULL);
    T_TRUE(strstr(r.err, "teleport") != NULL);
    cr_free(&r);
    const char *skip[] = {"", "import", "--db", db, "--format", "native", "--skip-bad-rows", csv, NULL};
    r = run(skip, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "1 skipped") != NULL);
    T_TRUE(strstr(r.err, "bad.csv:4: skipped") != NULL);
    cr_free(&r);
    unlink(csv);
    unlink(db);
}

static void test_usage(void)
{
    const char *a1[] = {"", "--bogus", NULL};
    ran r = run(a1, NULL);
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "usage:") != NULL);
    cr_free(&r);
    const char *a2[] = {"", "--http", "not a port", NULL};
    r = run(a2, "");
    T_EQ_INT(r.status, 2);
    T_TRUE(strstr(r.err, "[HOST:]PORT") != NULL);
    cr_free(&r);
    const char *a3[] = {"", "import", "--db", "x.db", NULL};
    r = run(a3, NULL);
    T_EQ_INT(r.status, 2);
    cr_free(&r);
    const char *a4[] = {"", "--version", NULL};
    r = run(a4, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "mcp-server-aml") != NULL);
    cr_free(&r);
}

static void test_lists(void)
{
    char db[700];
    snprintf(db, sizeof db, "%s/lists.db", cr_dir);
    unlink(db);
    const char *imp[] = {"", "lists", "import", "--db", db, "--format", "ftm", "--list", "zala",
                         AML_SCREENING_DATA "/zala_entities.ftm.json", NULL};
    ran r = run(imp, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "list zala version 1: 17 entities") != NULL);
    cr_free(&r);
    const char *csv[] = {"", "lists", "import", "--db", db, "--format", "csv", "--list", "un",
                         AML_SCREENING_DATA "/positives_un_untreated.csv", NULL};
    r = run(csv, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "683 entities") != NULL);
    cr_free(&r);
    const char *wrong[] = {"", "lists", "import", "--db", db, "--format", "ftm", "--list", "un",
                           AML_SCREENING_DATA "/positives_un_untreated.csv", NULL};
    r = run(wrong, NULL);
    T_EQ_INT(r.status, 1);
    T_TRUE(strstr(r.err, "line 1: not JSON") != NULL);
    T_TRUE(strstr(r.err, "nothing imported") != NULL);
    cr_free(&r);
    const char *show[] = {"", "lists", "show", "--db", db, NULL};
    r = run(show, NULL);
    T_EQ_INT(r.status, 0);
    T_TRUE(strstr(r.out, "\"name\":\"un\",\"entities\":683") != NULL);
    T_TRUE(strstr(r.out, "\"file\":\"zala_entities.ftm.json\"") != NULL);
    cr_free(&r);
    const char *bad[] = {"", "lists", "import", "--db", db, "--list", "x", NULL};
    r = run(bad, NULL);
    T_EQ_INT(r.status, 2);
    cr_free(&r);
    const char *verify[] = {"", "audit", "verify", "--db", db, NULL};
    r = run(verify, NULL);
    T_EQ_INT(r.status, 0);
    cr_free(&r);
    unlink(db);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {TEST(test_stdio_founding_pair), TEST(test_bad_database_at_start),
                                   TEST(test_audit_verify),        TEST(test_gen_deterministic),
                                   TEST(test_import_bad_row),      TEST(test_usage),
                                   TEST(test_lists)};
    if (argc < 2) {
        fprintf(stderr, "usage: aml_cli PATH-TO-mcp-server-aml [WORKDIR]\n");
        printf("aml_cli: 0 passed, 1 failed\n");
        return 1;
    }
    cr_bin = argv[1];
    scratch_dir(argc > 2 ? argv[2] : "/tmp/aml-cli", cr_dir, sizeof cr_dir);
    int rc = t_run(__FILE__, cases, sizeof cases / sizeof cases[0]);
    cr_cleanup();
    rmdir(cr_dir);
    return rc;
}
