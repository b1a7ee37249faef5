/*
 * mcp-cli's pieces that need no server: key=value typing of tool, prompt
 * and completion arguments (apps/cli/args.c) and the --pretty layout
 * (apps/cli/pretty.c), including every allocation failing in turn.
 */
#include "cli.h"
#include "testlib.h"

/* Builds the object for `words` and compares it with `want` (NULL: must fail). */
static void expect_object(cli_arg_mode mode, int n, char *const *words, const char *want)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    char msg[200];
    mcp_status st = cli_build_object(&b, words, n, mode, msg, sizeof msg);
    if (want) {
        T_OK(st);
        T_EQ_STR(b.data, want);
    } else {
        T_STATUS(st, MCP_ERR_INVALID_ARG);
        T_TRUE(msg[0] != '\0');
        T_EQ_SIZE(b.len, 0);
    }
    mcp_buf_cleanup(&b);
}

static void test_typed_values(void)
{
    char *w[] = {"n=5", "name=Ada", "flag=true", "off=false", "nothing=null", "f=1.50e3", "neg=-2"};
    expect_object(CLI_ARGS_TYPED, 7, w,
                  "{\"n\":5,\"name\":\"Ada\",\"flag\":true,\"off\":false,\"nothing\":null,\"f\":1.50e3,\"neg\":-2}");
}

static void test_typed_json_values(void)
{
    char *w[] = {"ids=[\"C-1\",2]", "o={\"a\":{}}", "s=\"5\"", "sp= 7 "};
    expect_object(CLI_ARGS_TYPED, 4, w, "{\"ids\":[\"C-1\",2],\"o\":{\"a\":{}},\"s\":\"5\",\"sp\":7}");
}

/* What is not JSON on its own stays the literal string. */
static void test_typed_strings(void)
{
    char *w[] = {"caseId=C-1", "zip=007", "empty=", "eq=a=b", "half={\"a\"", "word=True", "nan=NaN", "u=caf\xc3\xa9"};
    expect_object(CLI_ARGS_TYPED, 8, w,
                  "{\"caseId\":\"C-1\",\"zip\":\"007\",\"empty\":\"\",\"eq\":\"a=b\",\"half\":\"{\\\"a\\\"\","
                  "\"word\":\"True\",\"nan\":\"NaN\",\"u\":\"caf\xc3\xa9\"}");
}

static void test_strings_mode(void)
{
    char *w[] = {"caseId=5", "flag=true", "tone=\"plain\""};
    expect_object(CLI_ARGS_STRINGS, 3, w, "{\"caseId\":\"5\",\"flag\":\"true\",\"tone\":\"\\\"plain\\\"\"}");
}

static void test_whole_object(void)
{
    char *w2[] = {"{\"caseId\": \"C-1\", \"typologies\": [\"T01\"]}"};
    expect_object(CLI_ARGS_TYPED, 1, w2, "{\"caseId\":\"C-1\",\"typologies\":[\"T01\"]}");
    char *empty[] = {"{}"};
    expect_object(CLI_ARGS_TYPED, 1, empty, "{}");
    /* In strings mode a '{' word is an ordinary (bad) word. */
    expect_object(CLI_ARGS_STRINGS, 1, empty, NULL);
}

static void test_no_words(void)
{
    expect_object(CLI_ARGS_TYPED, 0, NULL, "{}");
    expect_object(CLI_ARGS_STRINGS, 0, NULL, "{}");
}

static void test_usage_errors(void)
{
    char *no_eq[] = {"a=1", "oops"};
    expect_object(CLI_ARGS_TYPED, 2, no_eq, NULL);
    char *empty_key[] = {"=1"};
    expect_object(CLI_ARGS_TYPED, 1, empty_key, NULL);
    char *twice[] = {"a=1", "b=2", "a=3"};
    expect_object(CLI_ARGS_TYPED, 3, twice, NULL);
    expect_object(CLI_ARGS_STRINGS, 3, twice, NULL);
    char *bad_json[] = {"{\"a\":"};
    expect_object(CLI_ARGS_TYPED, 1, bad_json, NULL);
    char *not_object[] = {"{\"a\":1} x"};
    expect_object(CLI_ARGS_TYPED, 1, not_object, NULL);
    char *object_and_more[] = {"{\"a\":1}", "b=2"};
    expect_object(CLI_ARGS_TYPED, 2, object_and_more, NULL);
    char *bad_utf8[] = {"k=\xff"};
    expect_object(CLI_ARGS_TYPED, 1, bad_utf8, NULL);
}

/* A failing call leaves what the buffer already held. */
static void test_failure_keeps_buffer(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_OK(mcp_buf_append(&b, "x", 1));
    char *w[] = {"a=1", "a=2"};
    char msg[100];
    T_STATUS(cli_build_object(&b, w, 2, CLI_ARGS_TYPED, msg, sizeof msg), MCP_ERR_INVALID_ARG);
    T_EQ_STR(b.data, "x");
    T_TRUE(strstr(msg, "twice") != NULL);
    mcp_buf_cleanup(&b);
}

static void test_build_nomem(void)
{
    char *w[] = {"n=5", "ids=[1,2,{\"x\":null}]", "name=Ada"};
    mcp_buf b;
    mcp_status st;
    char msg[100];
    T_NOMEM_LOOP(
        st,
        {
            mcp_buf_init(&b, 0);
            st = cli_build_object(&b, w, 3, CLI_ARGS_TYPED, msg, sizeof msg);
            if (st)
                mcp_buf_cleanup(&b);
        },
        {
            T_EQ_STR(b.data, "{\"n\":5,\"ids\":[1,2,{\"x\":null}],\"name\":\"Ada\"}");
            mcp_buf_cleanup(&b);
        });
    char *whole[] = {"{\"a\":[1,2,3],\"b\":\"c\"}"};
    T_NOMEM_LOOP(
        st,
        {
            mcp_buf_init(&b, 0);
            st = cli_build_object(&b, whole, 1, CLI_ARGS_TYPED, msg, sizeof msg);
            if (st)
                mcp_buf_cleanup(&b);
        },
        {
            T_EQ_STR(b.data, "{\"a\":[1,2,3],\"b\":\"c\"}");
            mcp_buf_cleanup(&b);
        });
}

/* ---- --pretty ------------------------------------------------------------------------ */

static void expect_pretty(const char *json, const char *want)
{
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, json, strlen(json), NULL, NULL));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = cli_json_pretty(&b, mcp_json_doc_root(doc));
    mcp_json_doc_free(doc);
    if (st)
        mcp_buf_cleanup(&b);
    T_OK(st);
    T_EQ_STR(b.data, want);
    /* The layout reads back as the same value. */
    mcp_json_doc *back, *orig;
    T_OK(mcp_json_parse(&back, b.data, b.len, NULL, NULL));
    T_OK(mcp_json_parse(&orig, json, strlen(json), NULL, NULL));
    int same = mcp_json_equal(mcp_json_doc_root(back), mcp_json_doc_root(orig));
    mcp_json_doc_free(back);
    mcp_json_doc_free(orig);
    mcp_buf_cleanup(&b);
    T_TRUE(same);
}

static void test_pretty_scalars(void)
{
    expect_pretty("null", "null");
    expect_pretty("true", "true");
    expect_pretty("false", "false");
    expect_pretty(" 1.50e3 ", "1.50e3");
    expect_pretty("-0", "-0");
    expect_pretty("\"a\\\"b\\\\c\\n\\u0001\\u00e9\"", "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"");
}

static void test_pretty_containers(void)
{
    expect_pretty("{}", "{}");
    expect_pretty("[]", "[]");
    expect_pretty("[1]", "[\n  1\n]");
    expect_pretty("{\"a\":1,\"b\":[true,{}],\"c\":{\"d\":[]}}",
                  "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    {}\n  ],\n  \"c\": {\n    \"d\": []\n  }\n}");
    expect_pretty("[[[\"x\"]]]", "[\n  [\n    [\n      \"x\"\n    ]\n  ]\n]");
    expect_pretty("{\"k\\u0000\\t\":\"v\"}", "{\n  \"k\\u0000\\t\": \"v\"\n}");
}

/* Duplicate keys are shown as they came, in document order. */
static void test_pretty_duplicates(void)
{
    const char *json = "{\"a\":1,\"a\":2}";
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, json, strlen(json), NULL, NULL));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = cli_json_pretty(&b, mcp_json_doc_root(doc));
    mcp_json_doc_free(doc);
    T_OK(st);
    T_EQ_STR(b.data, "{\n  \"a\": 1,\n  \"a\": 2\n}");
    mcp_buf_cleanup(&b);
}

static void test_pretty_deep(void)
{
    /* As deep as the parser allows by default: recursion stays bounded. */
    char json[2 * 256 + 1];
    for (int i = 0; i < 256; i++) {
        json[i] = '[';
        json[256 + i] = ']';
    }
    json[512] = '\0';
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, json, 512, NULL, NULL));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = cli_json_pretty(&b, mcp_json_doc_root(doc));
    mcp_json_doc_free(doc);
    T_OK(st);
    /* 255 nested non-empty arrays around one [] -> 2*255 newlines. */
    size_t lines = 0;
    for (size_t i = 0; i < b.len; i++)
        lines += b.data[i] == '\n';
    mcp_buf_cleanup(&b);
    T_EQ_SIZE(lines, 510);
}

static void test_pretty_compact_switch(void)
{
    const char *json = "{ \"a\" : [ 1 , 2 ] }";
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, json, strlen(json), NULL, NULL));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = cli_json_write(&b, mcp_json_doc_root(doc), 0);
    if (st == MCP_OK)
        T_EQ_STR(b.data, "{\"a\":[1,2]}");
    mcp_buf_reset(&b);
    mcp_status st2 = cli_json_write(&b, mcp_json_doc_root(doc), 1);
    mcp_json_doc_free(doc);
    T_OK(st);
    T_OK(st2);
    T_EQ_STR(b.data, "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
    mcp_buf_cleanup(&b);
    mcp_buf_init(&b, 0);
    T_STATUS(cli_json_pretty(&b, NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(cli_json_write(&b, NULL, 0), MCP_ERR_INVALID_ARG);
    mcp_buf_cleanup(&b);
}

static void test_pretty_nomem(void)
{
    const char *json = "{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"b\"}]}";
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, json, strlen(json), NULL, NULL));
    mcp_buf b;
    mcp_status st;
    T_NOMEM_LOOP(
        st,
        {
            mcp_buf_init(&b, 0);
            st = cli_json_pretty(&b, mcp_json_doc_root(doc));
            if (st)
                mcp_buf_cleanup(&b);
        },
        {
            T_TRUE(strncmp(b.data, "{\n  \"tools\": [\n    {\n      \"name\": \"a\",", 38) == 0);
            mcp_buf_cleanup(&b);
        });
    mcp_json_doc_free(doc);
}

TEST_MAIN(TEST(test_typed_values), TEST(test_typed_json_values), TEST(test_typed_strings), TEST(test_strings_mode),
          TEST(test_whole_object), TEST(test_no_words), TEST(test_usage_errors), TEST(test_failure_keeps_buffer),
          TEST(test_build_nomem), TEST(test_pretty_scalars), TEST(test_pretty_containers), TEST(test_pretty_duplicates),
          TEST(test_pretty_deep), TEST(test_pretty_compact_switch), TEST(test_pretty_nomem))
