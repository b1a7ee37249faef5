/*
 * JSON-RPC 2.0 messages.
 *
 * Decoding is a classification of one parsed object: the rules are those
 * of the JSON-RPC 2.0 specification narrowed by MCP (no batches, no null
 * request ids). Anything else is -32600, and the request id is recovered
 * whenever it can be, so the error response reaches the right caller.
 */
#include "mcp/rpc.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/*
 * Records the id of an invalid message in err->id (as JSON text) when it is
 * an integer, or a short string that needs no escaping; else leaves ""
 * (answer with null). Never allocates.
 */
static void keep_id(mcp_error *err, const mcp_json *id)
{
    if (!err || !id)
        return;
    if (mcp_json_typeof(id) == MCP_JSON_INT) {
        snprintf(err->id, sizeof err->id, "%lld", (long long)mcp_json_int(id));
        return;
    }
    size_t n;
    const char *s = mcp_json_str(id, &n);
    if (!s || n + 3 > sizeof err->id)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\')
            return;
    }
    err->id[0] = '"';
    memcpy(err->id + 1, s, n);
    err->id[n + 1] = '"';
    err->id[n + 2] = '\0';
}

static mcp_status invalid(mcp_error *err, const mcp_json *id, const char *msg)
{
    mcp__fail(err, MCP_ERR_INVALID_MSG, MCP_RPC_INVALID_REQUEST, 0, "%s", msg);
    keep_id(err, id);
    return MCP_ERR_INVALID_MSG;
}

/* Reads a request id: a string or an integer. */
static int read_id(const mcp_json *v, mcp_rpc_id *id)
{
    memset(id, 0, sizeof *id);
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_INT:
        id->type = MCP_RPC_ID_INT;
        id->num = mcp_json_int(v);
        return 1;
    case MCP_JSON_STRING:
        id->type = MCP_RPC_ID_STRING;
        id->str = mcp_json_str(v, &id->len);
        return 1;
    default:
        return 0;
    }
}

mcp_status mcp_rpc_decode_json(mcp_rpc_msg *out, const mcp_json *root, mcp_error *err)
{
    if (!out || !root)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, MCP_RPC_INTERNAL_ERROR, 0, "invalid argument");
    if (mcp_json_typeof(root) == MCP_JSON_ARRAY)
        return invalid(err, NULL, "batch requests are not supported");
    if (mcp_json_typeof(root) != MCP_JSON_OBJECT)
        return invalid(err, NULL, "a JSON-RPC message must be a JSON object");

    mcp_rpc_msg m;
    memset(&m, 0, sizeof m);
    m.root = root;

    /* The envelope's members in one pass over the object rather than a
     * lookup each; as with mcp_json_get(), the last of duplicate keys wins. */
    const mcp_json *id = NULL, *method = NULL, *result = NULL, *error = NULL, *jsonrpc = NULL, *params = NULL;
    size_t nmembers = mcp_json_len(root);
    for (size_t i = 0; i < nmembers; i++) {
        size_t kl;
        const char *k = mcp_json_key_at(root, i, &kl);
        const mcp_json *v = mcp_json_value_at(root, i);
        if (kl == 2 && memcmp(k, "id", 2) == 0)
            id = v;
        else if (kl == 5 && memcmp(k, "error", 5) == 0)
            error = v;
        else if (kl == 6 && memcmp(k, "method", 6) == 0)
            method = v;
        else if (kl == 6 && memcmp(k, "result", 6) == 0)
            result = v;
        else if (kl == 6 && memcmp(k, "params", 6) == 0)
            params = v;
        else if (kl == 7 && memcmp(k, "jsonrpc", 7) == 0)
            jsonrpc = v;
    }
    /* Only a well-formed id is worth echoing back. */
    const mcp_json *good_id = id;
    if (id && mcp_json_typeof(id) != MCP_JSON_INT && mcp_json_typeof(id) != MCP_JSON_STRING)
        good_id = NULL;

    if (!mcp_json_str_eq(jsonrpc, "2.0"))
        return invalid(err, good_id, "\"jsonrpc\" must be the string \"2.0\"");

    if (method) {
        if (mcp_json_typeof(method) != MCP_JSON_STRING)
            return invalid(err, good_id, "\"method\" must be a string");
        if (result || error)
            return invalid(err, good_id, "a request must not carry \"result\" or \"error\"");
        m.method = mcp_json_str(method, &m.method_len);
        if (params) {
            mcp_json_type t = mcp_json_typeof(params);
            if (t != MCP_JSON_OBJECT && t != MCP_JSON_ARRAY)
                return invalid(err, good_id, "\"params\" must be an object or an array");
            m.params = params;
        }
        if (id) {
            if (!read_id(id, &m.id))
                return invalid(err, NULL, "\"id\" must be a string or an integer");
            m.kind = MCP_RPC_REQUEST;
        } else {
            m.kind = MCP_RPC_NOTIFICATION;
        }
        *out = m;
        return MCP_OK;
    }

    /* A response. */
    if (!id)
        return invalid(err, NULL, "a message needs \"method\" (request) or \"id\" (response)");
    if ((result != NULL) == (error != NULL))
        return invalid(err, good_id, "a response must carry exactly one of \"result\" and \"error\"");
    if (result) {
        if (!read_id(id, &m.id))
            return invalid(err, NULL, "\"id\" must be a string or an integer");
        m.kind = MCP_RPC_RESULT;
        m.result = result;
        *out = m;
        return MCP_OK;
    }
    if (mcp_json_typeof(id) == MCP_JSON_NULL) {
        m.id.type = MCP_RPC_ID_NULL;
    } else if (!read_id(id, &m.id)) {
        return invalid(err, NULL, "\"id\" must be a string, an integer or null");
    }
    const mcp_json *code = mcp_json_get(error, "code");
    const mcp_json *message = mcp_json_get(error, "message");
    if (mcp_json_typeof(error) != MCP_JSON_OBJECT || mcp_json_typeof(code) != MCP_JSON_INT ||
        mcp_json_typeof(message) != MCP_JSON_STRING)
        return invalid(err, good_id, "\"error\" must be an object with an integer \"code\" and a string \"message\"");
    m.kind = MCP_RPC_ERROR;
    m.error_code = mcp_json_int(code);
    m.error_message = mcp_json_str(message, &m.error_message_len);
    m.error_data = mcp_json_get(error, "data");
    *out = m;
    return MCP_OK;
}

mcp_status mcp_rpc_decode_sized(mcp_rpc_msg *out, const char *bytes, size_t len,
                                const mcp_json_parse_opts *opts, size_t opts_size, mcp_error *err)
{
    if (!out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, MCP_RPC_INTERNAL_ERROR, 0, "invalid argument");
    mcp_json_doc *doc;
    /* The caller's size goes on: mcp_json_parse_sized() checks and copies. */
    mcp_status st = mcp_json_parse_sized(&doc, bytes, len, opts, opts_size, err);
    if (st) {
        if (err && (st == MCP_ERR_PARSE || st == MCP_ERR_LIMIT))
            err->rpc_code = MCP_RPC_PARSE_ERROR;
        return st;
    }
    mcp_rpc_msg m;
    st = mcp_rpc_decode_json(&m, mcp_json_doc_root(doc), err);
    if (st) {
        mcp_json_doc_free(doc);
        return st;
    }
    m.doc = doc;
    *out = m;
    return MCP_OK;
}

void mcp_rpc_msg_cleanup(mcp_rpc_msg *msg)
{
    if (!msg)
        return;
    mcp_json_doc_free(msg->doc);
    memset(msg, 0, sizeof *msg);
}

int mcp_rpc_method_is(const mcp_rpc_msg *msg, const char *method)
{
    if (!msg || !msg->method || !method)
        return 0;
    size_t n = strlen(method);
    return n == msg->method_len && memcmp(msg->method, method, n) == 0;
}

int mcp_rpc_id_equal(const mcp_rpc_id *a, const mcp_rpc_id *b)
{
    if (!a || !b || a->type != b->type)
        return 0;
    switch (a->type) {
    case MCP_RPC_ID_INT:
        return a->num == b->num;
    case MCP_RPC_ID_STRING:
        return a->len == b->len && (a->len == 0 || memcmp(a->str, b->str, a->len) == 0);
    default:
        return 1;
    }
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                  */

mcp_status mcp_rpc_write_id(mcp_jw *w, const mcp_rpc_id *id)
{
    if (!id)
        return mcp_jw_null(w);
    switch (id->type) {
    case MCP_RPC_ID_INT:
        return mcp_jw_int(w, id->num);
    case MCP_RPC_ID_STRING:
        return mcp_jw_stringn(w, id->str, id->len);
    default:
        return mcp_jw_null(w);
    }
}

static mcp_status envelope(mcp_jw *w)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "jsonrpc");
    return mcp_jw_string(w, "2.0");
}

mcp_status mcp_rpc_begin_result(mcp_jw *w, const mcp_rpc_id *id)
{
    envelope(w);
    mcp_jw_key(w, "id");
    mcp_rpc_write_id(w, id);
    return mcp_jw_key(w, "result");
}

mcp_status mcp_rpc_begin_request(mcp_jw *w, const mcp_rpc_id *id, const char *method)
{
    envelope(w);
    mcp_jw_key(w, "id");
    mcp_rpc_write_id(w, id);
    mcp_jw_key(w, "method");
    mcp_jw_string(w, method);
    return mcp_jw_key(w, "params");
}

mcp_status mcp_rpc_begin_notification(mcp_jw *w, const char *method)
{
    envelope(w);
    mcp_jw_key(w, "method");
    mcp_jw_string(w, method);
    return mcp_jw_key(w, "params");
}

mcp_status mcp_rpc_end(mcp_jw *w)
{
    return mcp_jw_object_end(w);
}

const char *mcp_rpc_code_str(int code)
{
    switch (code) {
    case MCP_RPC_PARSE_ERROR: return "Parse error";
    case MCP_RPC_INVALID_REQUEST: return "Invalid Request";
    case MCP_RPC_METHOD_NOT_FOUND: return "Method not found";
    case MCP_RPC_INVALID_PARAMS: return "Invalid params";
    case MCP_RPC_INTERNAL_ERROR: return "Internal error";
    case MCP_RPC_RESOURCE_NOT_FOUND: return "Resource not found";
    case MCP_RPC_URL_ELICITATION_REQUIRED: return "URL elicitation required";
    case MCP_RPC_HEADER_MISMATCH: return "Header mismatch";
    case MCP_RPC_MISSING_CAPABILITY: return "Missing required client capability";
    case MCP_RPC_UNSUPPORTED_VERSION: return "Unsupported protocol version";
    default: return "Server error";
    }
}

mcp_status mcp_rpc_begin_error(mcp_jw *w, const mcp_rpc_id *id, int code, const char *message)
{
    envelope(w);
    mcp_jw_key(w, "id");
    mcp_rpc_write_id(w, id);
    mcp_jw_key(w, "error");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "code");
    mcp_jw_int(w, code);
    mcp_jw_key(w, "message");
    return mcp_jw_string(w, message ? message : mcp_rpc_code_str(code));
}

mcp_status mcp_rpc_end_error(mcp_jw *w)
{
    mcp_jw_object_end(w);
    return mcp_jw_object_end(w);
}

mcp_status mcp_rpc_write_error(mcp_jw *w, const mcp_rpc_id *id, int code, const char *message,
                               const mcp_json *data)
{
    mcp_rpc_begin_error(w, id, code, message);
    if (data) {
        mcp_jw_key(w, "data");
        mcp_jw_value(w, data);
    }
    return mcp_rpc_end_error(w);
}

mcp_status mcp_rpc_write_decode_error(mcp_jw *w, const mcp_error *err)
{
    if (!err || !err->rpc_code)
        return MCP_ERR_INVALID_ARG;
    envelope(w);
    mcp_jw_key(w, "id");
    if (err->id[0])
        mcp_jw_raw(w, err->id, strlen(err->id));
    else
        mcp_jw_null(w);
    mcp_jw_key(w, "error");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "code");
    mcp_jw_int(w, err->rpc_code);
    mcp_jw_key(w, "message");
    /* "Parse error: unexpected end of input at byte 39": the standard
     * phrase first, then what exactly is wrong. */
    char text[sizeof err->message + 40];
    snprintf(text, sizeof text, "%s%s%s", mcp_rpc_code_str(err->rpc_code), err->message[0] ? ": " : "",
             err->message);
    mcp_jw_string(w, text);
    return mcp_rpc_end_error(w);
}
