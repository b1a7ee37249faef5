/*
 * Fuzz target: JSON-RPC decode. A decoded message is answered (result or
 * error) and the answer must decode as a response with the same id; a
 * rejected frame gets a decode-error reply that must itself decode as an
 * error response.
 */
#include "mcp/rpc.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reply(const mcp_buf *b, mcp_rpc_kind want_kind, const mcp_rpc_id *want_id)
{
    mcp_rpc_msg r;
    if (mcp_rpc_decode(&r, b->data, b->len, NULL, NULL) != MCP_OK)
        abort();
    if (r.kind != want_kind)
        abort();
    if (want_id && !mcp_rpc_id_equal(&r.id, want_id))
        abort();
    mcp_rpc_msg_cleanup(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcp_rpc_msg m;
    mcp_error err;
    mcp_json_parse_opts opts = {1 << 20, 64, 0};
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    if (mcp_rpc_decode(&m, (const char *)data, size, &opts, &err) != MCP_OK) {
        if (err.rpc_code != -32700 && err.rpc_code != -32600)
            abort();
        if (mcp_rpc_write_decode_error(&w, &err) != MCP_OK || mcp_jw_finish(&w) != MCP_OK)
            abort();
        check_reply(&b, MCP_RPC_ERROR, NULL);
        mcp_buf_cleanup(&b);
        return 0;
    }
    if (m.kind == MCP_RPC_REQUEST) {
        /* Echo the params back as the result. */
        mcp_rpc_begin_result(&w, &m.id);
        mcp_jw_value(&w, m.params);
        mcp_rpc_end(&w);
        if (mcp_jw_finish(&w) != MCP_OK)
            abort();
        check_reply(&b, MCP_RPC_RESULT, &m.id);
    } else if (m.kind == MCP_RPC_ERROR) {
        mcp_rpc_write_error(&w, &m.id, (int)(m.error_code & 0x7fffffff), m.error_message, m.error_data);
        if (mcp_jw_finish(&w) != MCP_OK)
            abort();
        check_reply(&b, MCP_RPC_ERROR, &m.id);
    }
    mcp_buf_cleanup(&b);
    mcp_rpc_msg_cleanup(&m);
    return 0;
}
