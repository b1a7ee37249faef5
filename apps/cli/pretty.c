/*
 * Indented JSON for --pretty. libmcp's streaming writer emits compact text
 * only, so this walks a parsed value and lays it out the way
 * JSON.stringify(v, null, 2) does: people compare the two.
 */
#include "cli.h"

static mcp_status put(mcp_buf *out, const char *s, size_t n)
{
    return mcp_buf_append(out, s, n);
}

static mcp_status newline_indent(mcp_buf *out, unsigned depth)
{
    mcp_status st = put(out, "\n", 1);
    for (unsigned i = 0; st == MCP_OK && i < depth; i++)
        st = put(out, "  ", 2);
    return st;
}

/*
 * Recursion is bounded: every value printed comes from a parsed document,
 * and the parser caps nesting (256 levels by default), so the C stack
 * holds at most that many small frames.
 */
static mcp_status pretty(mcp_buf *out, const mcp_json *v, unsigned depth)
{
    mcp_status st = MCP_OK;
    size_t n = mcp_json_len(v);
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_NULL:
        return put(out, "null", 4);
    case MCP_JSON_BOOL:
        return mcp_json_bool(v) ? put(out, "true", 4) : put(out, "false", 5);
    case MCP_JSON_INT:
    case MCP_JSON_REAL: {
        size_t len;
        const char *text = mcp_json_num_text(v, &len);
        return put(out, text, len);
    }
    case MCP_JSON_STRING: {
        size_t len;
        const char *s = mcp_json_str(v, &len);
        return mcp_json_quote(out, s, len);
    }
    case MCP_JSON_ARRAY:
        if (n == 0)
            return put(out, "[]", 2);
        st = put(out, "[", 1);
        for (size_t i = 0; st == MCP_OK && i < n; i++) {
            if (i)
                st = put(out, ",", 1);
            if (st == MCP_OK)
                st = newline_indent(out, depth + 1);
            if (st == MCP_OK)
                st = pretty(out, mcp_json_at(v, i), depth + 1);
        }
        if (st == MCP_OK)
            st = newline_indent(out, depth);
        return st == MCP_OK ? put(out, "]", 1) : st;
    case MCP_JSON_OBJECT:
        if (n == 0)
            return put(out, "{}", 2);
        st = put(out, "{", 1);
        for (size_t i = 0; st == MCP_OK && i < n; i++) {
            size_t klen;
            const char *key = mcp_json_key_at(v, i, &klen);
            if (i)
                st = put(out, ",", 1);
            if (st == MCP_OK)
                st = newline_indent(out, depth + 1);
            if (st == MCP_OK)
                st = mcp_json_quote(out, key, klen);
            if (st == MCP_OK)
                st = put(out, ": ", 2);
            if (st == MCP_OK)
                st = pretty(out, mcp_json_value_at(v, i), depth + 1);
        }
        if (st == MCP_OK)
            st = newline_indent(out, depth);
        return st == MCP_OK ? put(out, "}", 1) : st;
    case MCP_JSON_NONE:
        break;
    }
    return MCP_ERR_INVALID_ARG;
}

mcp_status cli_json_pretty(mcp_buf *out, const mcp_json *v)
{
    if (!v)
        return MCP_ERR_INVALID_ARG;
    size_t mark = out->len;
    mcp_status st = pretty(out, v, 0);
    if (st != MCP_OK) {
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
    }
    return st;
}

mcp_status cli_json_write(mcp_buf *out, const mcp_json *v, int pretty_flag)
{
    if (pretty_flag)
        return cli_json_pretty(out, v);
    if (!v)
        return MCP_ERR_INVALID_ARG;
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_jw_value(&w, v);
    return mcp_jw_finish(&w);
}
