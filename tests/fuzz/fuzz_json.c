/*
 * Fuzz target: JSON parse -> write -> parse -> write. Whatever parses must
 * write, re-parse, and write again to identical bytes; every accessor must
 * cope with every value.
 */
#include "mcp/json.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const mcp_json *v, unsigned depth)
{
    size_t n;
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_ARRAY:
        for (size_t i = 0; i < mcp_json_len(v); i++)
            walk(mcp_json_at(v, i), depth + 1);
        break;
    case MCP_JSON_OBJECT:
        for (size_t i = 0; i < mcp_json_len(v); i++) {
            const char *k = mcp_json_key_at(v, i, &n);
            /* Lookup returns the last member with this key. */
            const mcp_json *found = mcp_json_getn(v, k, n);
            if (!found)
                abort();
            walk(mcp_json_value_at(v, i), depth + 1);
        }
        break;
    case MCP_JSON_STRING:
        if (!mcp_json_str(v, &n) || mcp_json_str(v, NULL)[n] != '\0')
            abort();
        break;
    default:
        (void)mcp_json_number(v);
        (void)mcp_json_num_text(v, &n);
    }
}

static int write_value(const mcp_json *v, mcp_buf *b)
{
    mcp_jw w;
    mcp_jw_init(&w, b);
    mcp_jw_value(&w, v);
    return mcp_jw_finish(&w) == MCP_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcp_json_parse_opts opts = {0, 64, size && (data[0] & 1) ? MCP_JSON_REJECT_DUPLICATES : 0};
    mcp_json_doc *doc;
    if (mcp_json_parse(&doc, (const char *)data, size, &opts, NULL) != MCP_OK)
        return 0;
    const mcp_json *root = mcp_json_doc_root(doc);
    walk(root, 0);
    if (!mcp_json_equal(root, root))
        abort();
    (void)mcp_json_pointer(root, (const char *)data, size < 64 ? size : 64);

    mcp_buf a, b;
    mcp_buf_init(&a, 0);
    mcp_buf_init(&b, 0);
    if (!write_value(root, &a))
        abort();
    mcp_json_doc *doc2;
    if (mcp_json_parse(&doc2, a.data, a.len, &opts, NULL) != MCP_OK)
        abort();
    if (!mcp_json_equal(root, mcp_json_doc_root(doc2)))
        abort();
    if (!write_value(mcp_json_doc_root(doc2), &b) || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
        abort();
    mcp_json_doc_free(doc2);
    mcp_buf_cleanup(&a);
    mcp_buf_cleanup(&b);
    mcp_json_doc_free(doc);
    return 0;
}
