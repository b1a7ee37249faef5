/*
 * The schema registry (mcp_schema_registry_*): documents `$ref` may name by
 * URI, each deep-copied when added, so the caller's document may go at
 * once. Compilation copies the documents it uses again (copy_doc), so a
 * compiled schema owns everything it reads.
 */
#include "schema/schema_internal.h"

mcp_status mcp__copy_doc(mcp_json_doc **out, const mcp_json *v, mcp_error *err)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    mcp_jw_value(&w, v);
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK) {
        mcp_json_parse_opts po;
        memset(&po, 0, sizeof(po));
        po.max_bytes = MCP_JSON_LIMIT_MAX_BYTES;
        po.max_depth = MCP_JSON_LIMIT_MAX_DEPTH;
        st = mcp_json_parse(out, b.data, b.len, &po, NULL);
        if (st != MCP_OK && st != MCP_ERR_NOMEM && st != MCP_ERR_LIMIT)
            st = MCP_ERR_INTERNAL;
    }
    mcp_buf_cleanup(&b);
    if (st == MCP_ERR_NOMEM)
        return mcp__fail_at(err, st, NULL, "out of memory copying a schema");
    if (st == MCP_ERR_LIMIT)
        return mcp__fail_at(err, st, NULL, "schema is too large or too deeply nested to copy");
    if (st != MCP_OK)
        return mcp__fail_at(err, st, NULL, "could not copy the schema document");
    return MCP_OK;
}

mcp_status mcp_schema_registry_new(mcp_schema_registry **out)
{
    if (!out)
        return MCP_ERR_INVALID_ARG;
    mcp_schema_registry *r = (mcp_schema_registry *)mcp__calloc(1, sizeof(*r));
    if (!r)
        return MCP_ERR_NOMEM;
    *out = r;
    return MCP_OK;
}

const regent *mcp__registry_find(const mcp_schema_registry *r, const char *uri, size_t n)
{
    if (!r)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->ents[i].uri) == n && memcmp(r->ents[i].uri, uri, n) == 0)
            return &r->ents[i];
    return NULL;
}

mcp_status mcp_schema_registry_add(mcp_schema_registry *reg, const char *uri,
                                   const mcp_json *doc, mcp_error *err)
{
    if (!reg || !uri || !*uri || !doc)
        return mcp__fail_at(err, MCP_ERR_INVALID_ARG, NULL, "registry, uri and doc are required");
    mcp_json_type t = mcp_json_typeof(doc);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return mcp__fail_at(err, MCP_ERR_TYPE, NULL,
                            "a schema must be an object or a boolean, not %s",
                            mcp_json_type_name(t));
    size_t n = mcp__uri_nofrag_len(uri);
    if (mcp__registry_find(reg, uri, n))
        return mcp__fail_at(err, MCP_ERR_EXISTS, NULL, "schema URI already registered: %.*s",
                            (int)n, uri);
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 8;
        regent *e = (regent *)mcp_realloc(reg->ents, cap * sizeof(*e));
        if (!e)
            return mcp__fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory");
        reg->ents = e;
        reg->cap = cap;
    }
    char *u = mcp__strndup(uri, n);
    if (!u)
        return mcp__fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory");
    mcp_json_doc *d = NULL;
    mcp_status st = mcp__copy_doc(&d, doc, err);
    if (st) {
        mcp_free(u);
        return st;
    }
    reg->ents[reg->n].uri = u;
    reg->ents[reg->n].doc = d;
    reg->n++;
    return MCP_OK;
}

void mcp_schema_registry_free(mcp_schema_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++) {
        mcp_free(reg->ents[i].uri);
        mcp_json_doc_free(reg->ents[i].doc);
    }
    mcp_free(reg->ents);
    mcp_free(reg);
}
