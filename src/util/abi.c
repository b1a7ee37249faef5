/*
 * Option and definition structs of any libmcp release in, full-size copies
 * out (abi.h). The fast path, same size, is inline in abi.h.
 */
#include "util/abi.h"

mcp_status mcp__opts_size_check(size_t size, size_t min_size, const char *type_name, mcp_error *err)
{
    if (MCP__LIKELY(size >= min_size && size))
        return MCP_OK;
    return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                     "%s of %zu bytes is smaller than in any libmcp release (%zu): pass sizeof(%s)", type_name, size,
                     min_size, type_name);
}

mcp_status mcp__opts_in_slow(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size,
                             const char *type_name, mcp_error *err)
{
    if (!src) {
        memset(dst, 0, dst_size);
        return MCP_OK;
    }
    mcp_status st = mcp__opts_size_check(src_size, min_size, type_name, err);
    if (st) {
        memset(dst, 0, dst_size);
        return st;
    }
    if (src_size <= dst_size) {
        /* An older header: the fields it did not have take their defaults. */
        memcpy(dst, src, src_size);
        memset((char *)dst + src_size, 0, dst_size - src_size);
        return MCP_OK;
    }
    /* A newer header: fine as long as the caller left its new fields zero,
     * i.e. at their defaults, which this library gives them anyway. */
    memcpy(dst, src, dst_size);
    const unsigned char *tail = (const unsigned char *)src + dst_size;
    for (size_t i = 0; i < src_size - dst_size; i++)
        if (tail[i])
            return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, dst_size + i,
                             "%s has fields this libmcp %s does not know: update libmcp", type_name,
                             MCP_VERSION_STRING);
    return MCP_OK;
}
