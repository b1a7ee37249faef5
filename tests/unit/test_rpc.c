/* Unit tests for JSON-RPC 2.0 decoding and encoding. */
#include "mcp/rpc.h"
#include "testlib.h"

static mcp_status decode(const char *text, mcp_rpc_msg *m, mcp_error *err)
{
    return mcp_rpc_decode(m, text, strlen(text), NULL, err);
}

static void test_request(void)
{
    mcp_rpc_msg m;
    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_REQUEST);
    T_EQ_INT(m.id.type, MCP_RPC_ID_INT);
    T_EQ_INT(m.id.num, 7);
    T_TRUE(mcp_rpc_method_is(&m, "tools/call"));
    T_FALSE(mcp_rpc_method_is(&m, "tools/cal"));
    T_TRUE(mcp_json_str_eq(mcp_json_get(m.params, "name"), "x"));
    mcp_rpc_msg_cleanup(&m);
    mcp_rpc_msg_cleanup(&m); /* twice is harmless */
    mcp_rpc_msg_cleanup(NULL);

    T_OK(decode("{\"method\":\"ping\",\"id\":\"abc\",\"jsonrpc\":\"2.0\"}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_REQUEST);
    T_EQ_INT(m.id.type, MCP_RPC_ID_STRING);
    T_EQ_STR(m.id.str, "abc");
    T_NULL(m.params);
    mcp_rpc_msg_cleanup(&m);

    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":-1,\"method\":\"m\",\"params\":[1]}", &m, NULL));
    T_EQ_INT(m.id.num, -1);
    T_EQ_INT(mcp_json_typeof(m.params), MCP_JSON_ARRAY);
    mcp_rpc_msg_cleanup(&m);
}

static void test_notification(void)
{
    mcp_rpc_msg m;
    T_OK(decode("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_NOTIFICATION);
    T_EQ_INT(m.id.type, MCP_RPC_ID_NONE);
    mcp_rpc_msg_cleanup(&m);
}

static void test_responses(void)
{
    mcp_rpc_msg m;
    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_RESULT);
    T_EQ_INT(mcp_json_typeof(m.result), MCP_JSON_OBJECT);
    mcp_rpc_msg_cleanup(&m);

    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":null}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_RESULT);
    T_EQ_INT(mcp_json_typeof(m.result), MCP_JSON_NULL);
    mcp_rpc_msg_cleanup(&m);

    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}", &m, NULL));
    T_EQ_INT(m.kind, MCP_RPC_ERROR);
    T_EQ_INT(m.id.type, MCP_RPC_ID_NULL);
    T_EQ_INT(m.error_code, -32700);
    T_EQ_STR(m.error_message, "Parse error");
    T_NULL(m.error_data);
    mcp_rpc_msg_cleanup(&m);

    T_OK(decode("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":\"bad\",\"data\":[1]}}", &m, NULL));
    T_EQ_INT(m.error_code, -32602);
    T_EQ_INT(mcp_json_typeof(m.error_data), MCP_JSON_ARRAY);
    mcp_rpc_msg_cleanup(&m);
}

/* Each invalid message: its status, code, and the id to answer with. */
static void test_invalid(void)
{
    static const struct {
        const char *text;
        mcp_status st;
        int code;
        const char *id;
    } cases[] = {
        {"not json", MCP_ERR_PARSE, -32700, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"", MCP_ERR_PARSE, -32700, ""},
        {"", MCP_ERR_PARSE, -32700, ""},
        {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_ERR_INVALID_MSG, -32600, ""},
        {"[]", MCP_ERR_INVALID_MSG, -32600, ""},
        {"42", MCP_ERR_INVALID_MSG, -32600, ""},
        {"\"str\"", MCP_ERR_INVALID_MSG, -32600, ""},
        {"null", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"id\":1,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":2.0,\"id\":\"a\",\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, "\"a\""},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"s\"}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":{}}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"}}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":\"m\"}}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}", MCP_ERR_INVALID_MSG, -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"result\":{}}", MCP_ERR_INVALID_MSG, -32600, ""},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"q\\\"uote\",\"method\":7}", MCP_ERR_INVALID_MSG, -32600, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_rpc_msg m;
        memset(&m, 0x5a, sizeof m);
        mcp_error err;
        mcp_status st = decode(cases[i].text, &m, &err);
        if (st != cases[i].st || err.rpc_code != cases[i].code || strcmp(err.id, cases[i].id) != 0)
            T_FAIL_("case %zu %s: got %s %d id '%s'", i, cases[i].text, mcp_status_name(st), err.rpc_code, err.id);
        T_TRUE(err.message[0] != '\0');
        T_EQ_INT(((unsigned char *)&m)[0], 0x5a); /* a failed call leaves out untouched */
    }
}

static void test_encode(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_rpc_id id = {MCP_RPC_ID_INT, 5, NULL, 0};

    mcp_jw_init(&w, &b);
    mcp_rpc_begin_result(&w, &id);
    mcp_jw_object_begin(&w);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");

    mcp_rpc_id sid = {MCP_RPC_ID_STRING, 0, "r-1", 3};
    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_request(&w, &sid, "tools/list");
    mcp_jw_object_begin(&w);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"tools/list\",\"params\":{}}");

    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_notification(&w, "notifications/progress");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "progress");
    mcp_jw_int(&w, 1);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}");

    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, &id, MCP_RPC_INVALID_PARAMS, "Unknown tool: nope", NULL);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,\"message\":\"Unknown tool: nope\"}}");

    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, NULL, MCP_RPC_METHOD_NOT_FOUND, NULL, NULL);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}");

    mcp_buf_reset(&b);
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_error(&w, &id, MCP_RPC_UNSUPPORTED_VERSION, NULL);
    mcp_jw_key(&w, "data");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "requested");
    mcp_jw_string(&w, "1999-01-01");
    mcp_jw_object_end(&w);
    mcp_rpc_end_error(&w);
    T_OK(mcp_jw_finish(&w));
    T_EQ_STR(b.data, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32022,\"message\":\"Unsupported protocol "
                     "version\",\"data\":{\"requested\":\"1999-01-01\"}}}");
    mcp_buf_cleanup(&b);
}

static void test_decode_error_reply(void)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"{bad", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"},
        {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":1}", "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32600,"},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":1}", "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32600,"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcp_rpc_msg m;
        mcp_error err;
        T_TRUE(decode(cases[i].in, &m, &err) != MCP_OK);
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        T_OK(mcp_rpc_write_decode_error(&w, &err));
        T_OK(mcp_jw_finish(&w));
        T_TRUE(strncmp(b.data, cases[i].out, strlen(cases[i].out)) == 0);
        /* The reply itself is a valid JSON-RPC error response. */
        T_OK(mcp_rpc_decode(&m, b.data, b.len, NULL, NULL));
        T_EQ_INT(m.kind, MCP_RPC_ERROR);
        mcp_rpc_msg_cleanup(&m);
        mcp_buf_cleanup(&b);
    }
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    T_STATUS(mcp_rpc_write_decode_error(&w, NULL), MCP_ERR_INVALID_ARG);
    mcp_buf_cleanup(&b);
}

static void test_ids(void)
{
    mcp_rpc_id a = {MCP_RPC_ID_INT, 1, NULL, 0}, b = {MCP_RPC_ID_INT, 1, NULL, 0};
    mcp_rpc_id s1 = {MCP_RPC_ID_STRING, 0, "1", 1}, s2 = {MCP_RPC_ID_STRING, 0, "1", 1};
    T_TRUE(mcp_rpc_id_equal(&a, &b));
    T_TRUE(mcp_rpc_id_equal(&s1, &s2));
    T_FALSE(mcp_rpc_id_equal(&a, &s1)); /* 1 and "1" are different ids */
    b.num = 2;
    T_FALSE(mcp_rpc_id_equal(&a, &b));
    T_FALSE(mcp_rpc_id_equal(&a, NULL));
    T_EQ_STR(mcp_rpc_code_str(-32601), "Method not found");
    T_EQ_STR(mcp_rpc_code_str(-32000), "Server error");
}

static void test_decode_nomem(void)
{
    const char *text = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
                       "\"arguments\":{\"a\":[1,2,3],\"b\":{\"c\":\"d\"}}}}";
    mcp_rpc_msg m;
    mcp_status st;
    T_NOMEM_LOOP(st, { st = mcp_rpc_decode(&m, text, strlen(text), NULL, NULL); },
                 {
                     T_EQ_INT(m.kind, MCP_RPC_REQUEST);
                     mcp_rpc_msg_cleanup(&m);
                 });
}

TEST_MAIN(TEST(test_request), TEST(test_notification), TEST(test_responses), TEST(test_invalid),
          TEST(test_encode), TEST(test_decode_error_reply), TEST(test_ids), TEST(test_decode_nomem))
