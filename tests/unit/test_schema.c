/* Unit tests for the JSON Schema compiler and validator. */
#include "mcp/json.h"
#include "mcp/schema.h"
#include "testlib.h"

static mcp_json_doc *parse(const char *text)
{
    mcp_json_doc *doc = NULL;
    mcp_error err;
    if (mcp_json_parse(&doc, text, strlen(text), NULL, &err) != MCP_OK) {
        fprintf(stderr, "  parse failed: %s: %s\n", err.message, text);
        return NULL;
    }
    return doc;
}

/* Compiles `schema_text` (doc freed right away: the schema must not need it). */
static mcp_status compile(mcp_schema **s, const char *schema_text, const mcp_schema_opts *o,
                          mcp_error *err)
{
    mcp_json_doc *d = parse(schema_text);
    if (!d)
        return MCP_ERR_PARSE;
    mcp_status st = mcp_schema_new(s, mcp_json_doc_root(d), o, err);
    mcp_json_doc_free(d);
    return st;
}

/* Validates text against a compiled schema with mcp_schema_check. */
static mcp_status check(const mcp_schema *s, const char *text, mcp_error *err)
{
    mcp_json_doc *d = parse(text);
    if (!d)
        return MCP_ERR_PARSE;
    mcp_status st = mcp_schema_check(s, mcp_json_doc_root(d), err);
    mcp_json_doc_free(d);
    return st;
}

static const char *TOOL_SCHEMA =
    "{\"type\":\"object\","
    " \"properties\":{"
    "   \"caseId\":{\"type\":\"string\",\"pattern\":\"^C-[0-9]+$\"},"
    "   \"amount\":{\"type\":\"number\",\"minimum\":0,\"multipleOf\":0.01},"
    "   \"party\":{\"$ref\":\"#/$defs/party\"},"
    "   \"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"wire\",\"cash\"]},\"uniqueItems\":true}"
    " },"
    " \"required\":[\"caseId\"],"
    " \"additionalProperties\":false,"
    " \"$defs\":{\"party\":{\"type\":\"object\",\"required\":[\"name\"],"
    "   \"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1}}}}}";

static void test_valid_and_invalid(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    T_OK(compile(&s, TOOL_SCHEMA, NULL, &err));
    T_OK(check(s, "{\"caseId\":\"C-12\",\"amount\":19.99,\"tags\":[\"wire\"]}", NULL));
    T_STATUS(check(s, "{}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.message, "/caseId: required property missing");
    T_EQ_STR(err.pointer, "");
    T_STATUS(check(s, "{\"caseId\":\"C-1\",\"amount\":1.001}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.pointer, "/amount");
    mcp_schema_free(s);
}

static void test_report(void)
{
    mcp_schema *s = NULL;
    T_OK(compile(&s, TOOL_SCHEMA, NULL, NULL));
    mcp_json_doc *d = parse("{\"amount\":\"x\",\"party\":{},\"tags\":[\"wire\",\"wire\"],\"zz\":1}");
    T_NOT_NULL(d);
    mcp_schema_result *r = NULL;
    mcp_error err;
    T_STATUS(mcp_schema_validate(s, mcp_json_doc_root(d), 0, &r, &err), MCP_ERR_INVALID);
    T_NOT_NULL(r);
    T_EQ_SIZE(r->count, 5);
    T_EQ_STR(r->errors[0].instance_path, "");
    T_EQ_STR(r->errors[0].keyword_path, "/required");
    T_EQ_STR(r->errors[0].message, "/caseId: required property missing");
    T_EQ_STR(r->errors[0].keyword, "required");
    T_EQ_STR(r->errors[1].instance_path, "/amount");
    T_EQ_STR(r->errors[1].keyword_path, "/properties/amount/type");
    T_EQ_STR(r->errors[1].message, "/amount: must be number, but is string");
    T_EQ_STR(r->errors[2].keyword_path, "/properties/party/$ref/required");
    T_EQ_STR(r->errors[2].message, "/party/name: required property missing");
    T_EQ_STR(r->errors[3].keyword_path, "/properties/tags/uniqueItems");
    T_EQ_STR(r->errors[4].instance_path, "/zz");
    T_EQ_STR(r->errors[4].keyword_path, "/additionalProperties");
    T_TRUE(strstr(r->errors[4].message, "allowed: caseId, amount, party, tags") != NULL);
    T_EQ_STR(err.message, r->errors[0].message);

    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    T_OK(mcp_schema_result_write(&w, r));
    T_OK(mcp_jw_finish(&w));
    mcp_json_doc *out = parse(b.data);
    T_NOT_NULL(out);
    const mcp_json *first = mcp_json_at(mcp_json_doc_root(out), 0);
    T_TRUE(mcp_json_str_eq(mcp_json_get(first, "instancePath"), ""));
    T_TRUE(mcp_json_str_eq(mcp_json_get(first, "keywordPath"), "/required"));
    T_TRUE(mcp_json_str_eq(mcp_json_get(first, "keyword"), "required"));
    T_TRUE(mcp_json_str_eq(mcp_json_get(first, "message"), "/caseId: required property missing"));
    T_EQ_SIZE(mcp_json_len(mcp_json_doc_root(out)), 5);
    mcp_json_doc_free(out);
    mcp_buf_cleanup(&b);
    mcp_schema_result_free(r);

    /* First-error mode keeps one violation. */
    T_STATUS(mcp_schema_validate(s, mcp_json_doc_root(d), MCP_SCHEMA_FIRST_ERROR, &r, NULL),
             MCP_ERR_INVALID);
    T_EQ_SIZE(r->count, 1);
    mcp_schema_result_free(r);
    /* Valid: no result. */
    mcp_json_doc *ok = parse("{\"caseId\":\"C-1\"}");
    r = (mcp_schema_result *)1;
    T_OK(mcp_schema_validate(s, mcp_json_doc_root(ok), 0, &r, NULL));
    T_NULL(r);
    mcp_json_doc_free(ok);
    mcp_json_doc_free(d);
    mcp_schema_free(s);
}

static void test_anyof_report(void)
{
    mcp_schema *s = NULL;
    T_OK(compile(&s, "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}", NULL, NULL));
    mcp_json_doc *d = parse("5");
    mcp_schema_result *r = NULL;
    T_STATUS(mcp_schema_validate(s, mcp_json_doc_root(d), 0, &r, NULL), MCP_ERR_INVALID);
    T_EQ_SIZE(r->count, 3);
    T_EQ_STR(r->errors[0].keyword_path, "/anyOf");
    T_EQ_STR(r->errors[1].keyword_path, "/anyOf/0/type");
    T_EQ_STR(r->errors[2].keyword_path, "/anyOf/1/type");
    mcp_schema_result_free(r);
    mcp_json_doc_free(d);
    mcp_schema_free(s);
}

static void test_dialects(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    /* draft-07: $ref overrides siblings; items array + additionalItems. */
    T_OK(compile(&s,
                 "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                 " \"definitions\":{\"n\":{\"type\":\"integer\"}},"
                 " \"properties\":{\"a\":{\"$ref\":\"#/definitions/n\",\"maximum\":1}},"
                 " \"items\":[{\"type\":\"string\"}],\"additionalItems\":false}",
                 NULL, &err));
    T_OK(check(s, "{\"a\":5}", NULL));
    T_STATUS(check(s, "{\"a\":\"x\"}", NULL), MCP_ERR_INVALID);
    T_OK(check(s, "[\"x\"]", NULL));
    T_STATUS(check(s, "[\"x\",1]", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    s = NULL;
    /* Without $schema the default dialect decides. */
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.default_dialect = MCP_SCHEMA_DIALECT_DRAFT7;
    T_OK(compile(&s, "{\"items\":[{\"type\":\"string\"}]}", &o, NULL));
    T_STATUS(check(s, "[1]", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    s = NULL;
    T_STATUS(compile(&s, "{\"$schema\":\"http://json-schema.org/draft-04/schema#\"}", NULL, &err),
             MCP_ERR_UNSUPPORTED);
    T_TRUE(strstr(err.message, "not supported") != NULL);
    T_NULL(s);
}

static void test_refs(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    T_STATUS(compile(&s, "{\"properties\":{\"a\":{\"$ref\":\"http://example.com/x.json\"}}}", NULL,
                     &err),
             MCP_ERR_SCHEMA);
    T_TRUE(strstr(err.message, "http://example.com/x.json") != NULL);
    T_EQ_STR(err.pointer, "/properties/a/$ref");
    T_STATUS(compile(&s, "{\"$ref\":\"#/$defs/missing\"}", NULL, &err), MCP_ERR_SCHEMA);
    T_NULL(s);

    /* Registry documents are copied: free the registry before validating. */
    mcp_schema_registry *reg = NULL;
    T_OK(mcp_schema_registry_new(&reg));
    mcp_json_doc *rd = parse("{\"$defs\":{\"id\":{\"type\":\"string\",\"maxLength\":3}}}");
    T_OK(mcp_schema_registry_add(reg, "https://example.com/common.json", mcp_json_doc_root(rd),
                                 NULL));
    T_STATUS(mcp_schema_registry_add(reg, "https://example.com/common.json#",
                                     mcp_json_doc_root(rd), NULL),
             MCP_ERR_EXISTS);
    mcp_json_doc_free(rd);
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.registry = reg;
    T_OK(compile(&s,
                 "{\"$id\":\"https://example.com/tool.json\","
                 " \"properties\":{\"id\":{\"$ref\":\"common.json#/$defs/id\"}}}",
                 &o, &err));
    mcp_schema_registry_free(reg);
    T_OK(check(s, "{\"id\":\"abc\"}", NULL));
    T_STATUS(check(s, "{\"id\":\"abcd\"}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.pointer, "/id");
    mcp_schema_free(s);

    /* Recursion. */
    T_OK(compile(&s, "{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}", NULL, NULL));
    T_OK(check(s, "[[[],[[]]]]", NULL));
    T_STATUS(check(s, "[[1]]", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
}

static void test_numbers(void)
{
    mcp_schema *s = NULL;
    T_OK(compile(&s, "{\"multipleOf\":0.01}", NULL, NULL));
    T_OK(check(s, "19.99", NULL));
    T_OK(check(s, "1e300", NULL));
    T_STATUS(check(s, "0.001", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    T_OK(compile(&s, "{\"multipleOf\":0.1}", NULL, NULL));
    T_OK(check(s, "0.3", NULL));
    mcp_schema_free(s);
    T_OK(compile(&s, "{\"multipleOf\":3}", NULL, NULL));
    T_OK(check(s, "9007199254740993", NULL)); /* 3 * 3002399751580331 */
    T_STATUS(check(s, "9007199254740994", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    T_OK(compile(&s, "{\"maximum\":9007199254740992}", NULL, NULL));
    T_STATUS(check(s, "9007199254740993", NULL), MCP_ERR_INVALID);
    T_OK(check(s, "9007199254740992.0", NULL));
    mcp_schema_free(s);
    T_OK(compile(&s, "{\"type\":\"integer\"}", NULL, NULL));
    T_OK(check(s, "1.0", NULL));
    T_STATUS(check(s, "1.5", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
}

static void test_strings_and_formats(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    T_OK(compile(&s, "{\"maxLength\":2,\"pattern\":\"^\\\\p{Letter}+$\"}", NULL, NULL));
    T_OK(check(s, "\"\\u00e9\\u00e9\"", NULL)); /* two code points, four bytes */
    T_STATUS(check(s, "\"abc\"", NULL), MCP_ERR_INVALID);
    T_STATUS(check(s, "\"1\"", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    T_STATUS(compile(&s, "{\"pattern\":\"(\"}", NULL, &err), MCP_ERR_SCHEMA);
    T_EQ_STR(err.pointer, "/pattern");

    /* format: annotation by default, assertion on request. */
    T_OK(compile(&s, "{\"format\":\"date\"}", NULL, NULL));
    T_OK(check(s, "\"2024-02-30\"", NULL));
    mcp_schema_free(s);
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.flags = MCP_SCHEMA_FORMAT_ASSERT;
    T_OK(compile(&s, "{\"format\":\"date\"}", &o, NULL));
    T_OK(check(s, "\"2024-02-29\"", NULL));
    T_STATUS(check(s, "\"2023-02-29\"", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.message, "(root): must be a valid date");
    mcp_schema_free(s);
    static const struct {
        const char *fmt, *good, *bad;
    } f[] = {
        {"date-time", "\"2024-01-01T23:59:60Z\"", "\"2024-01-01 10:00:00Z\""},
        {"time", "\"10:00:00+01:00\"", "\"10:00:00\""},
        {"duration", "\"P1DT2H\"", "\"P1D2H\""},
        {"email", "\"a.b@example.com\"", "\"a..b@example.com\""},
        {"hostname", "\"example.com\"", "\"-x.com\""},
        {"ipv4", "\"10.0.0.1\"", "\"10.0.0.01\""},
        {"ipv6", "\"::ffff:10.0.0.1\"", "\"1::2::3\""},
        {"uri", "\"https://x.org/a?b#c\"", "\"//x.org/a\""},
        {"uri-reference", "\"../a#b\"", "\"a b\""},
        {"uuid", "\"2eb8aa08-aa98-11ea-b4aa-73b441d16380\"", "\"2eb8aa08aa9811eab4aa73b441d16380\""},
        {"regex", "\"^a+$\"", "\"(?i)a\""},
        {"json-pointer", "\"/a~1b\"", "\"a\""},
        {"relative-json-pointer", "\"1/a\"", "\"01/a\""},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "{\"format\":\"%s\"}", f[i].fmt);
        T_OK(compile(&s, text, &o, NULL));
        T_OK(check(s, f[i].good, NULL));
        T_STATUS(check(s, f[i].bad, NULL), MCP_ERR_INVALID);
        mcp_schema_free(s);
    }
}

static void test_unevaluated(void)
{
    mcp_schema *s = NULL;
    T_OK(compile(&s,
                 "{\"allOf\":[{\"properties\":{\"a\":true}}],"
                 " \"anyOf\":[{\"properties\":{\"b\":true}},{\"properties\":{\"c\":true}}],"
                 " \"unevaluatedProperties\":false}",
                 NULL, NULL));
    T_OK(check(s, "{\"a\":1,\"b\":2,\"c\":3}", NULL));
    mcp_error err;
    T_STATUS(check(s, "{\"a\":1,\"d\":2}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.pointer, "/d");
    mcp_schema_free(s);
    /* More members than the inline bitset holds. */
    T_OK(compile(&s, "{\"patternProperties\":{\"^k\":true},\"unevaluatedProperties\":false}", NULL,
                 NULL));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_buf_append(&b, "{", 1);
    for (int i = 0; i < 600; i++) {
        char m[32];
        snprintf(m, sizeof(m), "%s\"k%d\":%d", i ? "," : "", i, i);
        mcp_buf_append(&b, m, strlen(m));
    }
    mcp_buf_append(&b, "}", 1);
    T_OK(check(s, b.data, NULL));
    mcp_buf_cleanup(&b);
    mcp_schema_free(s);
}

static void test_limits(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.max_depth = 2;
    T_STATUS(compile(&s, "{\"items\":{\"items\":{\"items\":{}}}}", &o, &err), MCP_ERR_LIMIT);
    memset(&o, 0, sizeof(o));
    o.max_nodes = 3;
    T_STATUS(compile(&s, "{\"allOf\":[{},{},{}]}", &o, &err), MCP_ERR_LIMIT);
    T_NULL(s);

    /* A schema that recurses on the same instance never terminates by itself. */
    T_OK(compile(&s, "{\"$ref\":\"#\"}", NULL, NULL));
    T_STATUS(check(s, "1", &err), MCP_ERR_LIMIT);
    T_TRUE(strstr(err.message, "deeper") != NULL);
    mcp_schema_free(s);

    memset(&o, 0, sizeof(o));
    o.max_steps = 10;
    T_OK(compile(&s, "{\"items\":{\"type\":\"integer\"}}", &o, NULL));
    T_OK(check(s, "[1,2,3]", NULL));
    T_STATUS(check(s, "[1,2,3,4,5,6,7,8,9,10,11,12]", &err), MCP_ERR_LIMIT);
    mcp_schema_free(s);

    /* Catastrophic backtracking hits the PCRE2 match limit. */
    T_OK(compile(&s, "{\"pattern\":\"^(a+)+$\"}", NULL, NULL));
    T_STATUS(check(s, "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\"", &err),
             MCP_ERR_LIMIT);
    mcp_schema_free(s);
}

/*
 * A flat tool schema whose property schemas are simple leaves: the fast
 * paths (the one-pass quiet check, the flat reporter, the single-block
 * report) must give exactly what the general evaluation gives.
 */
static const char *FLAT_SCHEMA =
    "{\"type\":\"object\",\"properties\":{"
    "\"id\":{\"type\":\"string\",\"pattern\":\"^TX-[0-9]{8}$\"},"
    "\"kind\":{\"enum\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\"]},"
    "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
    "\"x\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
    "\"s\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":3},"
    "\"f\":false,\"t\":true},"
    "\"required\":[\"id\",\"zz\"],\"additionalProperties\":false}";

static void test_flat_tool(void)
{
    mcp_schema *s = NULL;
    mcp_error err;
    T_OK(compile(&s, FLAT_SCHEMA, NULL, NULL));
    /* zz is required but not declared: additionalProperties rejects it. */
    T_STATUS(check(s, "{\"id\":\"TX-12345678\",\"zz\":0}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.pointer, "/zz");
    T_EQ_STR(err.message,
             "/zz: property \"zz\" is not allowed (allowed: id, kind, n, x, s, f, t)");
    /* A member fails before `required` is known to fail: required is reported. */
    T_STATUS(check(s, "{\"id\":\"TX-1\"}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.message, "/zz: required property missing");

    mcp_json_doc *d = parse("{\"id\":\"TX-1234567a\",\"kind\":\"k\",\"n\":11,\"x\":0,"
                            "\"s\":\"\\u00e9\",\"f\":1,\"t\":2,\"extra\":[]}");
    mcp_schema_result *r = NULL;
    T_STATUS(mcp_schema_validate(s, mcp_json_doc_root(d), 0, &r, &err), MCP_ERR_INVALID);
    T_NOT_NULL(r);
    static const char *const want[][4] = {
        {"", "/required", "required", "/zz: required property missing"},
        {"/id", "/properties/id/pattern", "pattern",
         "/id: must match the pattern \"^TX-[0-9]{8}$\""},
        {"/kind", "/properties/kind/enum", "enum",
         "/kind: must be one of: \"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"j\""},
        {"/n", "/properties/n/maximum", "maximum", "/n: must be <= 10, but is 11"},
        {"/x", "/properties/x/exclusiveMinimum", "exclusiveMinimum", "/x: must be > 0, but is 0"},
        {"/s", "/properties/s/minLength", "minLength",
         "/s: must be at least 2 characters long, but has 1"},
        {"/f", "/properties/f", "false", "/f: no value is allowed here (the schema is false)"},
        {"/extra", "/additionalProperties", "additionalProperties",
         "/extra: property \"extra\" is not allowed (allowed: id, kind, n, x, s, f, t)"}};
    T_EQ_SIZE(r->count, 8);
    for (size_t i = 0; i < 8 && i < r->count; i++) {
        T_EQ_STR(r->errors[i].instance_path, want[i][0]);
        T_EQ_STR(r->errors[i].keyword_path, want[i][1]);
        T_EQ_STR(r->errors[i].keyword, want[i][2]);
        T_EQ_STR(r->errors[i].message, want[i][3]);
    }
    T_EQ_STR(err.message, want[0][3]);
    mcp_schema_result_free(r);
    /* The report grows past the storage a call starts with (records, text):
       every allocation failure on the way is NOMEM without leaks. */
    mcp_json_doc *big = parse("{\"id\":1,\"kind\":2,\"n\":\"3\",\"x\":\"4\",\"s\":5,\"f\":6,"
                              "\"e1\":1,\"e2\":2,\"e3\":3,\"e4\":4,\"e5\":5,\"e6\":6,\"e7\":7}");
    mcp_status st;
    T_NOMEM_LOOP(st,
                 {
                     r = NULL;
                     st = mcp_schema_validate(s, mcp_json_doc_root(big), 0, &r, NULL);
                     if (st == MCP_ERR_INVALID)
                         st = MCP_OK;
                 },
                 {
                     T_TRUE(r && r->count == 14);
                     T_EQ_STR(r->errors[13].instance_path, "/e7");
                     mcp_schema_result_free(r);
                 });
    mcp_json_doc_free(big);
    mcp_json_doc_free(d);
    mcp_schema_free(s);

    /* The limits are met exactly where the general evaluation meets them. */
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.max_steps = 3; /* the root, a, a's pattern, then b: one too many */
    T_OK(compile(&s, "{\"properties\":{\"a\":{\"pattern\":\"^[a-z]{8}$\"},"
                     "\"b\":{\"pattern\":\"^[a-z]{8}$\"}}}",
                 &o, NULL));
    T_STATUS(check(s, "{\"a\":\"abcdefgh\",\"b\":\"abcdefgh\"}", &err), MCP_ERR_LIMIT);
    mcp_schema_free(s);
    o.max_steps = 4; /* a pattern's own step is counted, not checked */
    T_OK(compile(&s, "{\"properties\":{\"a\":{\"pattern\":\"^[a-z]{8}$\"},"
                     "\"b\":{\"pattern\":\"^[a-z]{8}$\"}}}",
                 &o, NULL));
    T_OK(check(s, "{\"a\":\"abcdefgh\",\"b\":\"abcdefgh\"}", NULL));
    mcp_schema_free(s);
    memset(&o, 0, sizeof(o));
    o.max_eval_depth = 1;
    T_OK(compile(&s, "{\"properties\":{\"a\":{\"type\":\"integer\"}}}", &o, NULL));
    T_STATUS(check(s, "{\"a\":1}", &err), MCP_ERR_LIMIT);
    T_OK(check(s, "{}", NULL));
    mcp_schema_free(s);

    /* Repeated keys: the last `properties` entry counts; any member satisfies `required`. */
    T_OK(compile(&s, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                     "\"a\":{\"type\":\"string\"}},\"required\":[\"a\",\"b\"]}",
                 NULL, NULL));
    T_STATUS(check(s, "{\"b\":1,\"a\":\"x\",\"a\":2}", &err), MCP_ERR_INVALID);
    T_EQ_STR(err.message, "/a: must be string, but is integer");
    T_OK(check(s, "{\"b\":1,\"a\":\"x\"}", NULL));
    mcp_schema_free(s);

    /* An escaped character can start a range in a class: [\\-m] is '\\' to 'm'. */
    T_OK(compile(&s, "{\"pattern\":\"^[\\\\\\\\-m]{3}$\"}", NULL, NULL));
    T_OK(check(s, "\"abc\"", NULL));
    T_STATUS(check(s, "\"xyz\"", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
}

static void test_args(void)
{
    mcp_schema *s = NULL;
    T_STATUS(mcp_schema_new(NULL, NULL, NULL, NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_schema_check(NULL, NULL, NULL), MCP_ERR_INVALID_ARG);
    T_STATUS(compile(&s, "[1]", NULL, NULL), MCP_ERR_SCHEMA);
    T_OK(compile(&s, "false", NULL, NULL));
    T_STATUS(check(s, "null", NULL), MCP_ERR_INVALID);
    mcp_schema_free(s);
    mcp_schema_free(NULL);
    mcp_schema_registry_free(NULL);
    mcp_schema_result_free(NULL);
}

/* Every allocation failure during compile and validate gives NOMEM and leaks nothing. */
static void test_nomem(void)
{
    mcp_json_doc *sd = parse(TOOL_SCHEMA);
    mcp_json_doc *rd = parse("{\"$id\":\"https://example.com/r.json\",\"type\":\"string\"}");
    mcp_json_doc *bad =
        parse("{\"amount\":-1,\"party\":{},\"tags\":[\"x\",\"x\"],\"zz\":1,\"caseId\":\"q\"}");
    mcp_schema_registry *reg = NULL;
    mcp_schema *s = NULL;
    mcp_status st;
    T_NOMEM_LOOP(st,
                 {
                     reg = NULL;
                     st = mcp_schema_registry_new(&reg);
                     if (!st) {
                         st = mcp_schema_registry_add(reg, "https://example.com/r.json",
                                                      mcp_json_doc_root(rd), NULL);
                         if (st) {
                             mcp_schema_registry_free(reg);
                             reg = NULL;
                         }
                     }
                 },
                 {});
    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.registry = reg;
    mcp_json_doc *withref = parse("{\"properties\":{\"r\":{\"$ref\":\"https://example.com/r.json\"},"
                                  "\"p\":{\"pattern\":\"^a\"}},\"unevaluatedProperties\":false}");
    T_NOMEM_LOOP(st, { st = mcp_schema_new(&s, mcp_json_doc_root(withref), &o, NULL); },
                 { mcp_schema_free(s); });
    T_NOMEM_LOOP(st, { st = mcp_schema_new(&s, mcp_json_doc_root(sd), NULL, NULL); }, {});
    mcp_schema_result *r = NULL;
    T_NOMEM_LOOP(st,
                 {
                     r = NULL;
                     st = mcp_schema_validate(s, mcp_json_doc_root(bad), 0, &r, NULL);
                     if (st == MCP_ERR_INVALID)
                         st = MCP_OK;
                 },
                 {
                     T_TRUE(r && r->count >= 4);
                     mcp_schema_result_free(r);
                 });
    mcp_error err;
    T_NOMEM_LOOP(st,
                 {
                     st = mcp_schema_check(s, mcp_json_doc_root(bad), &err);
                     if (st == MCP_ERR_INVALID)
                         st = MCP_OK;
                 },
                 {});
    mcp_schema_free(s);
    mcp_schema_registry_free(reg);
    mcp_json_doc_free(withref);
    mcp_json_doc_free(sd);
    mcp_json_doc_free(rd);
    mcp_json_doc_free(bad);
}

TEST_MAIN(TEST(test_valid_and_invalid), TEST(test_report), TEST(test_anyof_report),
          TEST(test_dialects), TEST(test_refs), TEST(test_numbers),
          TEST(test_strings_and_formats), TEST(test_unevaluated), TEST(test_limits),
          TEST(test_flat_tool), TEST(test_args), TEST(test_nomem))
