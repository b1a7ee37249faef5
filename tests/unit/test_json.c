/* Unit tests for the JSON parser, read access and streaming writer. */
#include "mcp/json.h"
#include "testlib.h"

#include <math.h>

static mcp_json_doc *parse_ok(const char *text)
{
    mcp_json_doc *doc = NULL;
    mcp_error err;
    mcp_status st = mcp_json_parse(&doc, text, strlen(text), NULL, &err);
    if (st) {
        fprintf(stderr, "  parse failed: %s\n", err.message);
        return NULL;
    }
    return doc;
}

static mcp_status parse_st(const char *text, size_t len, const mcp_json_parse_opts *o, mcp_error *err)
{
    mcp_json_doc *doc = NULL;
    mcp_status st = mcp_json_parse(&doc, text, len, o, err);
    mcp_json_doc_free(doc);
    return st;
}

#define PARSE_FAILS(lit) T_STATUS(parse_st(lit, sizeof(lit) - 1, NULL, NULL), MCP_ERR_PARSE)
#define PARSE_OK(lit) T_STATUS(parse_st(lit, sizeof(lit) - 1, NULL, NULL), MCP_OK)

static void test_scalars(void)
{
    mcp_json_doc *d = parse_ok(" null ");
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_NULL);
    mcp_json_doc_free(d);
    d = parse_ok("true");
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_BOOL);
    T_EQ_INT(mcp_json_bool(mcp_json_doc_root(d)), 1);
    mcp_json_doc_free(d);
    d = parse_ok("\t\r\nfalse\n");
    T_EQ_INT(mcp_json_bool(mcp_json_doc_root(d)), 0);
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_BOOL);
    mcp_json_doc_free(d);
    T_EQ_INT(mcp_json_typeof(NULL), MCP_JSON_NONE);
    T_EQ_STR(mcp_json_type_name(MCP_JSON_REAL), "number");
}

static void test_integers(void)
{
    static const struct {
        const char *text;
        int64_t want;
    } cases[] = {
        {"0", 0},
        {"-0", 0},
        {"42", 42},
        {"-17", -17},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"1000000000000000000", 1000000000000000000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_json_doc *d = parse_ok(cases[i].text);
        T_NOT_NULL(d);
        const mcp_json *v = mcp_json_doc_root(d);
        T_EQ_INT(mcp_json_typeof(v), MCP_JSON_INT);
        T_EQ_INT(mcp_json_int(v), cases[i].want);
        size_t n;
        const char *t = mcp_json_num_text(v, &n);
        T_EQ_SIZE(n, strlen(cases[i].text));
        T_EQ_MEM(t, cases[i].text, n);
        mcp_json_doc_free(d);
    }
    /* Out of int64 range: a real, with the text kept. */
    mcp_json_doc *d = parse_ok("9223372036854775808");
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_REAL);
    T_EQ_DBL(mcp_json_number(mcp_json_doc_root(d)), 9223372036854775808.0);
    mcp_json_doc_free(d);
    d = parse_ok("-9223372036854775809");
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_REAL);
    mcp_json_doc_free(d);
    d = parse_ok("123456789012345678901234567890");
    T_EQ_INT(mcp_json_typeof(mcp_json_doc_root(d)), MCP_JSON_REAL);
    T_EQ_DBL(mcp_json_number(mcp_json_doc_root(d)), 123456789012345678901234567890.0);
    mcp_json_doc_free(d);
}

static void test_reals(void)
{
    static const struct {
        const char *text;
        double want;
    } cases[] = {
        {"1.5", 1.5},
        {"-0.25", -0.25},
        {"1e2", 100.0},
        {"1E+2", 100.0},
        {"1e-2", 0.01},
        {"0.1", 0.1},
        {"3.141592653589793", 3.141592653589793},
        {"1.7976931348623157e308", 1.7976931348623157e308},
        {"5e-324", 5e-324},
        {"2.2250738585072014e-308", 2.2250738585072014e-308},
        {"123456789012345678e-5", 123456789012345678e-5},
        {"0.000000000000000000000000000001", 1e-30},
        {"1.00000000000000011102230246251565404236316680908203125", 1.0}, /* a tie: to even */
        {"1.00000000000000011102230246251565404236316680908203126", 1.0000000000000002},
        {"100.0", 100.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_json_doc *d = parse_ok(cases[i].text);
        T_NOT_NULL(d);
        const mcp_json *v = mcp_json_doc_root(d);
        T_EQ_INT(mcp_json_typeof(v), MCP_JSON_REAL);
        T_EQ_DBL(mcp_json_number(v), cases[i].want);
        T_EQ_INT(mcp_json_int(v), 0);
        mcp_json_doc_free(d);
    }
    /* Beyond the double range: accepted, +/-HUGE_VAL, text kept. */
    mcp_json_doc *d = parse_ok("[1e999,-1e999,1e-999]");
    const mcp_json *r = mcp_json_doc_root(d);
    T_TRUE(isinf(mcp_json_number(mcp_json_at(r, 0))) && mcp_json_number(mcp_json_at(r, 0)) > 0);
    T_TRUE(isinf(mcp_json_number(mcp_json_at(r, 1))) && mcp_json_number(mcp_json_at(r, 1)) < 0);
    T_EQ_DBL(mcp_json_number(mcp_json_at(r, 2)), 0.0);
    mcp_json_doc_free(d);
}

static void test_bad_numbers(void)
{
    PARSE_FAILS("01");
    PARSE_FAILS("-");
    PARSE_FAILS("+1");
    PARSE_FAILS("1.");
    PARSE_FAILS(".5");
    PARSE_FAILS("1e");
    PARSE_FAILS("1e+");
    PARSE_FAILS("0x10");
    PARSE_FAILS("NaN");
    PARSE_FAILS("Infinity");
    PARSE_FAILS("-Infinity");
    PARSE_FAILS("1.5.2");
    PARSE_FAILS("[-01]");
    PARSE_FAILS("[1 2]");
}

static void test_strings(void)
{
    mcp_json_doc *d = parse_ok("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u20ac\\ud83d\\ude00\"");
    size_t n;
    const char *s = mcp_json_str(mcp_json_doc_root(d), &n);
    const char want[] = "a\"b\\c/d\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    T_EQ_SIZE(n, sizeof want - 1);
    T_EQ_MEM(s, want, n);
    T_EQ_INT(s[n], 0);
    mcp_json_doc_free(d);

    /* Escaped NUL is kept; the length says where the string ends. */
    d = parse_ok("\"a\\u0000b\"");
    s = mcp_json_str(mcp_json_doc_root(d), &n);
    T_EQ_SIZE(n, 3);
    T_EQ_MEM(s, "a\0b", 3);
    mcp_json_doc_free(d);

    /* Lone surrogates decode to U+FFFD. */
    d = parse_ok("[\"\\ud800\",\"\\udc00x\",\"\\ud800\\u0041\"]");
    const mcp_json *r = mcp_json_doc_root(d);
    T_TRUE(mcp_json_str_eq(mcp_json_at(r, 0), "\xef\xbf\xbd"));
    T_TRUE(mcp_json_str_eq(mcp_json_at(r, 1), "\xef\xbf\xbdx"));
    T_TRUE(mcp_json_str_eq(mcp_json_at(r, 2), "\xef\xbf\xbd" "A"));
    mcp_json_doc_free(d);

    /* Raw UTF-8 of every length, and long ASCII runs that take the fast path. */
    d = parse_ok("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 0123456789abcdefghijklmnopqrstuvwxyz\\n0123456789abcdef\"");
    s = mcp_json_str(mcp_json_doc_root(d), &n);
    T_EQ_SIZE(n, 9 + 1 + 36 + 1 + 16);
    mcp_json_doc_free(d);
    PARSE_OK("\"\xf4\x8f\xbf\xbf\"");
    PARSE_OK("\"\xed\x9f\xbf\"");
}

static void test_bad_strings(void)
{
    PARSE_FAILS("\"abc");
    PARSE_FAILS("\"a\nb\"");
    PARSE_FAILS("\"\t\"");
    PARSE_FAILS("\"\\x41\"");
    PARSE_FAILS("\"\\u12\"");
    PARSE_FAILS("\"\\u12G4\"");
    PARSE_FAILS("'single'");
    PARSE_FAILS("\"\\\"");
    PARSE_FAILS("\"\xc0\xaf\"");         /* overlong '/' */
    PARSE_FAILS("\"\xe0\x80\xaf\"");     /* overlong */
    PARSE_FAILS("\"\xed\xa0\x80\"");     /* UTF-8-encoded surrogate */
    PARSE_FAILS("\"\xf4\x90\x80\x80\""); /* above U+10FFFF */
    PARSE_FAILS("\"\xf5\x80\x80\x80\"");
    PARSE_FAILS("\"\x80\"");
    PARSE_FAILS("\"\xc3\"");
    PARSE_FAILS("\"\xe2\x82\"");
    PARSE_FAILS("\"\xff\"");
    /* A raw NUL inside a string or outside. */
    T_STATUS(parse_st("\"a\0b\"", 5, NULL, NULL), MCP_ERR_PARSE);
    T_STATUS(parse_st("1\0", 2, NULL, NULL), MCP_ERR_PARSE);
}

static void test_structure_errors(void)
{
    PARSE_FAILS("");
    PARSE_FAILS("   ");
    PARSE_FAILS("[1,]");
    PARSE_FAILS("{\"a\":1,}");
    PARSE_FAILS("[1");
    PARSE_FAILS("{\"a\":1");
    PARSE_FAILS("{\"a\" 1}");
    PARSE_FAILS("{a:1}");
    PARSE_FAILS("{1:1}");
    PARSE_FAILS("[1]]");
    PARSE_FAILS("{}}");
    PARSE_FAILS("tru");
    PARSE_FAILS("nul");
    PARSE_FAILS("truex");
    PARSE_FAILS("[1] [2]");
    PARSE_FAILS("/* c */ 1");
    PARSE_FAILS("1 // c");
    PARSE_FAILS("\xef\xbb\xbf{}");
    PARSE_FAILS("[\x0c]"); /* form feed is not JSON whitespace */
    PARSE_FAILS("[,1]");
    PARSE_FAILS("{,}");
    PARSE_FAILS("{\"a\":}");

    mcp_error err;
    T_STATUS(parse_st("[1, 2,]", 7, NULL, &err), MCP_ERR_PARSE);
    T_EQ_SIZE(err.offset, 6);
    T_EQ_INT(err.rpc_code, -32700);
    T_EQ_INT(err.status, MCP_ERR_PARSE);
    T_TRUE(strstr(err.message, "byte 6") != NULL);
    T_STATUS(parse_st("{\"k\": tru }", 11, NULL, &err), MCP_ERR_PARSE);
    T_EQ_SIZE(err.offset, 6);
    T_TRUE(strstr(err.message, "literal") != NULL);
}

static void test_arrays_objects(void)
{
    mcp_json_doc *d = parse_ok("{\"a\": [1, \"two\", {\"three\": 3}, []], \"b\": {}, \"\": null}");
    const mcp_json *r = mcp_json_doc_root(d);
    T_EQ_INT(mcp_json_typeof(r), MCP_JSON_OBJECT);
    T_EQ_SIZE(mcp_json_len(r), 3);
    const mcp_json *a = mcp_json_get(r, "a");
    T_EQ_SIZE(mcp_json_len(a), 4);
    T_EQ_INT(mcp_json_int(mcp_json_at(a, 0)), 1);
    T_TRUE(mcp_json_str_eq(mcp_json_at(a, 1), "two"));
    T_EQ_INT(mcp_json_int(mcp_json_get(mcp_json_at(a, 2), "three")), 3);
    T_EQ_INT(mcp_json_typeof(mcp_json_at(a, 3)), MCP_JSON_ARRAY);
    T_EQ_SIZE(mcp_json_len(mcp_json_at(a, 3)), 0);
    T_NULL(mcp_json_at(a, 4));
    T_EQ_INT(mcp_json_typeof(mcp_json_get(r, "b")), MCP_JSON_OBJECT);
    T_EQ_INT(mcp_json_typeof(mcp_json_get(r, "")), MCP_JSON_NULL);
    T_NULL(mcp_json_get(r, "missing"));
    T_NULL(mcp_json_get(a, "a"));      /* not an object */
    T_NULL(mcp_json_get(NULL, "a"));   /* chaining through NULL */
    T_NULL(mcp_json_at(r, 0));         /* not an array */
    size_t kl;
    T_EQ_STR(mcp_json_key_at(r, 0, &kl), "a");
    T_EQ_SIZE(kl, 1);
    T_EQ_STR(mcp_json_key_at(r, 1, NULL), "b");
    T_EQ_STR(mcp_json_key_at(r, 2, &kl), "");
    T_EQ_SIZE(kl, 0);
    T_NULL(mcp_json_key_at(r, 3, NULL));
    T_TRUE(mcp_json_value_at(r, 0) == a);
    mcp_json_doc_free(d);
}

static void test_big_object_lookup(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "key%d", i);
        mcp_jw_key(&w, key);
        mcp_jw_int(&w, i);
    }
    mcp_jw_object_end(&w);
    T_OK(mcp_jw_finish(&w));
    mcp_json_doc *d;
    T_OK(mcp_json_parse(&d, b.data, b.len, NULL, NULL));
    const mcp_json *r = mcp_json_doc_root(d);
    T_EQ_SIZE(mcp_json_len(r), 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "key%d", i);
        T_EQ_INT(mcp_json_int(mcp_json_get(r, key)), i);
        T_EQ_STR(mcp_json_key_at(r, (size_t)i, NULL), key);
    }
    T_NULL(mcp_json_get(r, "key5000"));
    T_NULL(mcp_json_get(r, "key"));
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&b);
}

static void test_duplicates(void)
{
    /* Small object (linear scan) and large object (hash index). */
    const char *small = "{\"a\":1,\"b\":2,\"a\":3}";
    mcp_json_doc *d = parse_ok(small);
    const mcp_json *r = mcp_json_doc_root(d);
    T_EQ_INT(mcp_json_int(mcp_json_get(r, "a")), 3);
    T_EQ_SIZE(mcp_json_len(r), 3);
    T_EQ_INT(mcp_json_int(mcp_json_value_at(r, 0)), 1);
    mcp_json_doc_free(d);

    const char *big = "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,"
                      "\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":10,\"k3\":33,\"k11\":11}";
    d = parse_ok(big);
    r = mcp_json_doc_root(d);
    T_EQ_INT(mcp_json_int(mcp_json_get(r, "k3")), 33);
    T_EQ_INT(mcp_json_int(mcp_json_get(r, "k11")), 11);
    T_EQ_SIZE(mcp_json_len(r), 13);
    mcp_json_doc_free(d);

    mcp_json_parse_opts o = {0, 0, MCP_JSON_REJECT_DUPLICATES};
    mcp_error err;
    T_STATUS(parse_st(small, strlen(small), &o, &err), MCP_ERR_PARSE);
    T_TRUE(strstr(err.message, "duplicate") != NULL);
    T_STATUS(parse_st(big, strlen(big), &o, NULL), MCP_ERR_PARSE);
    T_STATUS(parse_st("{\"a\":{\"a\":1},\"b\":[{\"a\":1}]}", 27, &o, NULL), MCP_OK);
}

static void test_limits(void)
{
    char deep[1100];
    for (int i = 0; i < 256; i++)
        deep[i] = '[';
    for (int i = 0; i < 256; i++)
        deep[256 + i] = ']';
    T_STATUS(parse_st(deep, 512, NULL, NULL), MCP_OK);
    for (int i = 0; i < 257; i++)
        deep[i] = '[';
    for (int i = 0; i < 257; i++)
        deep[257 + i] = ']';
    mcp_error err;
    T_STATUS(parse_st(deep, 514, NULL, &err), MCP_ERR_LIMIT);
    T_EQ_SIZE(err.offset, 256);
    mcp_json_parse_opts o = {0, 2, 0};
    T_STATUS(parse_st("[[1]]", 5, &o, NULL), MCP_OK);
    T_STATUS(parse_st("[[[1]]]", 7, &o, NULL), MCP_ERR_LIMIT);
    T_STATUS(parse_st("{\"a\":{\"b\":{}}}", 14, &o, NULL), MCP_ERR_LIMIT);
    o.max_depth = 0;
    o.max_bytes = 4;
    T_STATUS(parse_st("1234", 4, &o, NULL), MCP_OK);
    T_STATUS(parse_st("12345", 5, &o, &err), MCP_ERR_LIMIT);
    T_TRUE(strstr(err.message, "limit") != NULL);
    o.max_bytes = MCP_JSON_LIMIT_MAX_BYTES + 1;
    T_STATUS(parse_st("1", 1, &o, NULL), MCP_ERR_INVALID_ARG);
    mcp_json_doc *d = NULL;
    T_STATUS(mcp_json_parse(NULL, "1", 1, NULL, NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_json_parse(&d, NULL, 1, NULL, NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_json_parse(&d, NULL, 0, NULL, NULL), MCP_ERR_PARSE);
    T_NULL(d);
}

static void test_pointer(void)
{
    mcp_json_doc *d = parse_ok("{\"a\":[10,{\"b/c\":1,\"d~e\":2}],\"\":3,\"x\":{\"\":4}}");
    const mcp_json *r = mcp_json_doc_root(d);
    T_TRUE(mcp_json_pointer(r, "", 0) == r);
    T_EQ_INT(mcp_json_int(mcp_json_pointer(r, "/a/0", 4)), 10);
    T_EQ_INT(mcp_json_int(mcp_json_pointer(r, "/a/1/b~1c", 9)), 1);
    T_EQ_INT(mcp_json_int(mcp_json_pointer(r, "/a/1/d~0e", 9)), 2);
    T_EQ_INT(mcp_json_int(mcp_json_pointer(r, "/", 1)), 3);
    T_EQ_INT(mcp_json_int(mcp_json_pointer(r, "/x/", 3)), 4);
    T_NULL(mcp_json_pointer(r, "a", 1));
    T_NULL(mcp_json_pointer(r, "/a/01", 5));
    T_NULL(mcp_json_pointer(r, "/a/2", 4));
    T_NULL(mcp_json_pointer(r, "/a/-", 4));
    T_NULL(mcp_json_pointer(r, "/a/1/b~2c", 9));
    T_NULL(mcp_json_pointer(r, "/nope", 5));
    mcp_json_doc_free(d);
}

static void test_equal(void)
{
    mcp_json_doc *d = parse_ok("[1, 1.0, 1e0, 2, \"1\", {\"a\":1,\"b\":[true,null]}, {\"b\":[true,null],\"a\":1.0},"
                               " {\"a\":1}, {\"a\":2,\"a\":1}, [], {}]");
    const mcp_json *r = mcp_json_doc_root(d);
    T_TRUE(mcp_json_equal(mcp_json_at(r, 0), mcp_json_at(r, 1)));
    T_TRUE(mcp_json_equal(mcp_json_at(r, 0), mcp_json_at(r, 2)));
    T_FALSE(mcp_json_equal(mcp_json_at(r, 0), mcp_json_at(r, 3)));
    T_FALSE(mcp_json_equal(mcp_json_at(r, 0), mcp_json_at(r, 4)));
    T_TRUE(mcp_json_equal(mcp_json_at(r, 5), mcp_json_at(r, 6)));
    T_FALSE(mcp_json_equal(mcp_json_at(r, 5), mcp_json_at(r, 7)));
    T_TRUE(mcp_json_equal(mcp_json_at(r, 7), mcp_json_at(r, 8))); /* last duplicate wins */
    T_FALSE(mcp_json_equal(mcp_json_at(r, 9), mcp_json_at(r, 10)));
    T_FALSE(mcp_json_equal(mcp_json_at(r, 0), NULL));
    mcp_json_doc_free(d);
}

/* ---- writer ------------------------------------------------------------- */

static void test_writer_basic(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "s");
    mcp_jw_string(&w, "a\"b\\c\n\x01\x1f/\xc3\xa9");
    mcp_jw_key(&w, "i");
    mcp_jw_int(&w, INT64_MIN);
    mcp_jw_key(&w, "d");
    mcp_jw_double(&w, 0.1);
    mcp_jw_key(&w, "arr");
    mcp_jw_array_begin(&w);
    mcp_jw_bool(&w, 1);
    mcp_jw_bool(&w, 0);
    mcp_jw_null(&w);
    mcp_jw_string(&w, NULL);
    mcp_jw_array_begin(&w);
    mcp_jw_array_end(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "nul");
    mcp_jw_stringn(&w, "x\0y", 3);
    mcp_jw_object_end(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\\u001f/\xc3\xa9\",\"i\":-9223372036854775808,"
                     "\"d\":0.1,\"arr\":[true,false,null,null,[],{}],\"nul\":\"x\\u0000y\"}");
    /* What we wrote parses back to the same values. */
    mcp_json_doc *d;
    T_OK(mcp_json_parse(&d, b.data, b.len, NULL, NULL));
    size_t n;
    const char *s = mcp_json_str(mcp_json_get(mcp_json_doc_root(d), "nul"), &n);
    T_EQ_SIZE(n, 3);
    T_EQ_MEM(s, "x\0y", 3);
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&b);
}

static void test_writer_state_errors(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;

    mcp_jw_init(&w, &b); /* value where a key is due */
    mcp_jw_object_begin(&w);
    T_STATUS(mcp_jw_int(&w, 1), MCP_ERR_STATE);
    T_STATUS(mcp_jw_finish(&w), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* key inside an array */
    mcp_jw_array_begin(&w);
    T_STATUS(mcp_jw_key(&w, "k"), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* mismatched end */
    mcp_jw_array_begin(&w);
    T_STATUS(mcp_jw_object_end(&w), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* key without value, then end */
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "k");
    T_STATUS(mcp_jw_object_end(&w), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* two top-level values */
    mcp_jw_int(&w, 1);
    T_STATUS(mcp_jw_int(&w, 2), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* unclosed */
    mcp_jw_array_begin(&w);
    T_STATUS(mcp_jw_finish(&w), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* nothing written */
    T_STATUS(mcp_jw_finish(&w), MCP_ERR_STATE);

    mcp_jw_init(&w, &b); /* invalid UTF-8 and sticky status */
    mcp_jw_array_begin(&w);
    T_STATUS(mcp_jw_string(&w, "ok\xff"), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_jw_int(&w, 1), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_jw_status(&w), MCP_ERR_INVALID_ARG);

    mcp_jw_init(&w, &b);
    T_STATUS(mcp_jw_string(&w, "\xe2\x82"), MCP_ERR_INVALID_ARG); /* truncated at the end */
    mcp_jw_init(&w, &b);
    T_STATUS(mcp_jw_string(&w, "\xed\xa0\x80"), MCP_ERR_INVALID_ARG);
    mcp_jw_init(&w, &b);
    T_STATUS(mcp_jw_double(&w, NAN), MCP_ERR_INVALID_ARG);
    mcp_jw_init(&w, &b);
    T_STATUS(mcp_jw_double(&w, INFINITY), MCP_ERR_INVALID_ARG);

    mcp_jw_init(&w, &b); /* depth limit */
    for (unsigned i = 0; i < MCP_JW_MAX_DEPTH; i++)
        T_OK(mcp_jw_array_begin(&w));
    T_STATUS(mcp_jw_array_begin(&w), MCP_ERR_LIMIT);

    mcp_buf_cleanup(&b);

    /* Buffer max. */
    mcp_buf_init(&b, 8);
    mcp_jw_init(&w, &b);
    T_STATUS(mcp_jw_string(&w, "0123456789"), MCP_ERR_LIMIT);
    mcp_buf_cleanup(&b);
}

static void test_writer_doubles(void)
{
    static const double vals[] = {0.0, -0.0, 1.0, -1.5, 0.1, 1.0 / 3.0, 1e300, 5e-324,
                                  2.2250738585072014e-308, 123456789.125, 1e21, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        T_OK(mcp_jw_double(&w, vals[i]));
        mcp_json_doc *d;
        T_OK(mcp_json_parse(&d, b.data, b.len, NULL, NULL));
        T_EQ_DBL(mcp_json_number(mcp_json_doc_root(d)), vals[i]);
        mcp_json_doc_free(d);
        mcp_buf_cleanup(&b);
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_double(&w, 0.1);
    T_EQ_STR(b.data, "0.1"); /* the shortest form, not 0.10000000000000001 */
    mcp_buf_cleanup(&b);
}

static void test_writer_base64(void)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {{"", "\"\""},       {"f", "\"Zg==\""},         {"fo", "\"Zm8=\""},
                 {"foo", "\"Zm9v\""}, {"foob", "\"Zm9vYg==\""}, {"fooba", "\"Zm9vYmE=\""},
                 {"foobar", "\"Zm9vYmFy\""}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        T_OK(mcp_jw_base64(&w, cases[i].in, strlen(cases[i].in)));
        T_EQ_STR(b.data, cases[i].out);
        mcp_buf_cleanup(&b);
    }
    unsigned char bin[3] = {0xfb, 0xff, 0x00};
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    T_OK(mcp_jw_base64(&w, bin, 3));
    T_EQ_STR(b.data, "\"+/8A\"");
    mcp_buf_cleanup(&b);
}

static void test_splice_round_trip(void)
{
    /* Compact input with numbers in odd forms comes back byte for byte. */
    const char *in = "{\"a\":[1,-0,1.50,2E+3,1e999,12345678901234567890123],\"b\":\"x\\\"\\u0001\xc3\xa9\","
                     "\"c\":{\"d\":null,\"e\":true,\"f\":false},\"g\":[],\"h\":{}}";
    mcp_json_doc *d = parse_ok(in);
    T_NOT_NULL(d);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    T_OK(mcp_jw_value(&w, mcp_json_doc_root(d)));
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, in);
    mcp_json_doc_free(d);

    /* Splicing inside a container, and raw text. */
    d = parse_ok("[1,2]");
    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "v");
    mcp_jw_value(&w, mcp_json_doc_root(d));
    mcp_jw_key(&w, "r");
    mcp_jw_raw(&w, "{\"z\":0}", 7);
    mcp_jw_key(&w, "n");
    mcp_jw_value(&w, NULL);
    mcp_jw_object_end(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"v\":[1,2],\"r\":{\"z\":0},\"n\":null}");
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&b);
}

static void test_quote(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_OK(mcp_json_quote(&b, "tab\there", 8));
    T_EQ_STR(b.data, "\"tab\\there\"");
    T_STATUS(mcp_json_quote(&b, "\xc3", 1), MCP_ERR_INVALID_ARG);
    T_EQ_STR(b.data, "\"tab\\there\""); /* unchanged on failure */
    mcp_buf_cleanup(&b);
}

/* ---- failing allocator ---------------------------------------------------- */

/* A document that needs stack growth, frame growth and extra arena blocks. */
static char *make_big_doc(size_t *len)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_array_begin(&w);
    for (int i = 0; i < 40; i++)
        mcp_jw_array_begin(&w);
    for (int i = 0; i < 40; i++)
        mcp_jw_array_end(&w);
    mcp_jw_object_begin(&w);
    char key[16];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "k%d", i);
        mcp_jw_key(&w, key);
        mcp_jw_array_begin(&w);
        mcp_jw_int(&w, i);
        mcp_jw_double(&w, i + 0.5);
        mcp_jw_string(&w, "esc\"aped\n");
        mcp_jw_array_end(&w);
    }
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    if (mcp_jw_finish(&w))
        return NULL;
    return mcp_buf_take(&b, len);
}

static void test_parse_nomem(void)
{
    size_t len;
    char *text = make_big_doc(&len);
    T_NOT_NULL(text);
    mcp_json_doc *doc = NULL;
    mcp_status st;
    T_NOMEM_LOOP(st, { st = mcp_json_parse(&doc, text, len, NULL, NULL); },
                 {
                     T_EQ_SIZE(mcp_json_len(mcp_json_at(mcp_json_doc_root(doc), 1)), 300);
                     mcp_json_doc_free(doc);
                 });
    mcp_free(text);
}

static void test_write_nomem(void)
{
    size_t len;
    char *text = make_big_doc(&len);
    T_NOT_NULL(text);
    mcp_json_doc *doc;
    T_OK(mcp_json_parse(&doc, text, len, NULL, NULL));
    mcp_buf b;
    mcp_status st;
    T_NOMEM_LOOP(st,
                 {
                     mcp_buf_init(&b, 0);
                     mcp_jw w;
                     mcp_jw_init(&w, &b);
                     mcp_jw_object_begin(&w);
                     mcp_jw_key(&w, "doc");
                     mcp_jw_value(&w, mcp_json_doc_root(doc));
                     mcp_jw_key(&w, "bin");
                     mcp_jw_base64(&w, text, 100);
                     mcp_jw_object_end(&w);
                     st = mcp_jw_finish(&w);
                     if (st)
                         mcp_buf_cleanup(&b);
                 },
                 {
                     T_TRUE(b.len > len);
                     mcp_buf_cleanup(&b);
                 });
    mcp_json_doc_free(doc);
    mcp_free(text);
}

/* Every real parses to exactly the double strtod gives (bit for bit), on
 * the fast paths (exponents up to 22, and beyond it while the mantissa
 * can absorb the excess) and the slow one alike. */
static void test_reals_against_strtod(void)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    char text[64];
    int mismatches = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int digits = 1 + (int)(x % 17);
        int point = (int)((x >> 8) % (unsigned)(digits + 1)); /* 0 = no fraction */
        long e = (long)((x >> 16) % 80) - 30;                 /* -30 .. 49 */
        size_t n = 0;
        if ((x >> 24) & 1)
            text[n++] = '-';
        uint64_t y = x >> 28;
        for (int k = 0; k < digits; k++) {
            text[n++] = (char)('0' + (k == 0 && digits > 1 ? 1 + y % 9 : y % 10));
            y = y / 10 ^ (x >> (k % 32));
            if (point && k + 1 == point && k + 1 < digits)
                text[n++] = '.';
        }
        n += (size_t)snprintf(text + n, sizeof text - n, "e%ld", e);
        mcp_json_doc *d = NULL;
        if (mcp_json_parse(&d, text, n, NULL, NULL) != MCP_OK) {
            T_FAIL_("cannot parse %s", text);
            continue;
        }
        double got = mcp_json_number(mcp_json_doc_root(d)), want = strtod(text, NULL);
        if (memcmp(&got, &want, sizeof got) != 0 && mismatches++ < 5)
            T_FAIL_("%s: %.17g, strtod says %.17g", text, got, want);
        mcp_json_doc_free(d);
    }
    T_EQ_INT(mismatches, 0);
    /* The extended fast path's edges, signed zeros included. */
    static const char *const edges[] = {"1e23", "1.0e+28", "9007199254740992e22", "9007199254740993e23",
                                        "900719925474099e23", "1e38", "1e39", "123e36", "0e30", "-0e25",
                                        "4.5e37", "999999999999999e23", "1e22", "10e22"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        mcp_json_doc *d = parse_ok(edges[i]);
        T_NOT_NULL(d);
        double got = mcp_json_number(mcp_json_doc_root(d)), want = strtod(edges[i], NULL);
        T_TRUE(memcmp(&got, &want, sizeof got) == 0);
        mcp_json_doc_free(d);
    }
}

TEST_MAIN(TEST(test_scalars), TEST(test_integers), TEST(test_reals), TEST(test_reals_against_strtod), TEST(test_bad_numbers),
          TEST(test_strings), TEST(test_bad_strings), TEST(test_structure_errors),
          TEST(test_arrays_objects), TEST(test_big_object_lookup), TEST(test_duplicates),
          TEST(test_limits), TEST(test_pointer), TEST(test_equal), TEST(test_writer_basic),
          TEST(test_writer_state_errors), TEST(test_writer_doubles), TEST(test_writer_base64),
          TEST(test_splice_round_trip), TEST(test_quote), TEST(test_parse_nomem),
          TEST(test_write_nomem))
