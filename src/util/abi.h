/*
 * Option and definition structs across library versions (include/mcp/base.h,
 * "Option structs and the ABI"; docs/design.md, "ABI and option structs").
 *
 * Every public function that reads a caller-filled struct is exported as
 * NAME_sized and also receives the caller's sizeof of that struct. Its
 * first lines copy the caller's struct into a full-size local with
 * MCP__OPTS_IN and from then on read only the copy:
 *
 *     mcp_server_opts o;
 *     mcp_status st = MCP__OPTS_IN(mcp_server_opts, &o, opts, opts_size, err);
 *     if (st)
 *         return st;
 *
 * The table below holds each struct's size in libmcp 0.1.0, the first
 * release: through its last field then. It never changes when a struct
 * grows; a new struct gets its own line with the release that added it.
 */
#ifndef MCP_UTIL_ABI_H
#define MCP_UTIL_ABI_H

#include "mcp/mcp.h"
#include "util/util.h"

#include <stddef.h>
#include <string.h>

/* The size of `type` up to and including `field`. */
#define MCP__SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* The smallest size each public input struct ever had (0.1.0). */
#define MCP__V0_mcp_allocator MCP__SIZE_THROUGH(mcp_allocator, user_data)
#define MCP__V0_mcp_json_parse_opts MCP__SIZE_THROUGH(mcp_json_parse_opts, flags)
#define MCP__V0_mcp_schema_opts MCP__SIZE_THROUGH(mcp_schema_opts, max_errors)
#define MCP__V0_mcp_auth_opts MCP__SIZE_THROUGH(mcp_auth_opts, fetch_timeout_ms)
#define MCP__V0_mcp_server_opts MCP__SIZE_THROUGH(mcp_server_opts, on_call_end_user_data)
#define MCP__V0_mcp_tool_def MCP__SIZE_THROUGH(mcp_tool_def, scopes)
#define MCP__V0_mcp_annotations MCP__SIZE_THROUGH(mcp_annotations, last_modified)
#define MCP__V0_mcp_resource_def MCP__SIZE_THROUGH(mcp_resource_def, scopes)
#define MCP__V0_mcp_prompt_arg MCP__SIZE_THROUGH(mcp_prompt_arg, required)
#define MCP__V0_mcp_prompt_def MCP__SIZE_THROUGH(mcp_prompt_def, scopes)
#define MCP__V0_mcp_stdio_opts MCP__SIZE_THROUGH(mcp_stdio_opts, grace_ms)
#define MCP__V0_mcp_http_opts MCP__SIZE_THROUGH(mcp_http_opts, tls_key_file)
#define MCP__V0_mcp_client_opts MCP__SIZE_THROUGH(mcp_client_opts, transcript_path)
#define MCP__V0_mcp_stdio_client_opts MCP__SIZE_THROUGH(mcp_stdio_client_opts, kill_grace_ms)
#define MCP__V0_mcp_oauth_opts MCP__SIZE_THROUGH(mcp_oauth_opts, allow_insecure_http)
#define MCP__V0_mcp_http_client_opts MCP__SIZE_THROUGH(mcp_http_client_opts, oauth)
#define MCP__V0_mcp_request_opts MCP__SIZE_THROUGH(mcp_request_opts, handle_out)

/*
 * Copies the caller's struct `src` of `src_size` bytes into `dst` of
 * `dst_size` bytes (this library's sizeof):
 *   - src NULL: dst is zeroed (the defaults), whatever src_size says;
 *   - src_size 0 or below `min_size`: MCP_ERR_INVALID_ARG, dst zeroed;
 *   - src_size < dst_size (an older header): the missing tail is zeroed;
 *   - src_size > dst_size (a newer header): accepted when every byte past
 *     dst_size is zero, else MCP_ERR_UNSUPPORTED naming `type_name`; dst
 *     holds the fields this library knows either way (so a definition's
 *     user_data_free can still run).
 * Never allocates. `err` is filled on failure (offset: the first unknown
 * nonzero byte).
 */
mcp_status mcp__opts_in_slow(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size,
                             const char *type_name, mcp_error *err);

static inline mcp_status mcp__opts_in(void *dst, size_t dst_size, const void *src, size_t src_size,
                                      size_t min_size, const char *type_name, mcp_error *err)
{
    /* The common cases, a caller built against this very header or no
     * struct at all, cost one fixed-size copy or clear. */
    if (MCP__LIKELY(src && src_size == dst_size)) {
        memcpy(dst, src, dst_size);
        return MCP_OK;
    }
    if (!src) {
        memset(dst, 0, dst_size);
        return MCP_OK;
    }
    return mcp__opts_in_slow(dst, dst_size, src, src_size, min_size, type_name, err);
}

/* mcp__opts_in for a public struct type by name; `dst` must be a `type *`. */
#define MCP__OPTS_IN(type, dst, src, src_size, err)                                                                 \
    mcp__opts_in((1 ? (dst) : (type *)0), sizeof(type), (src), (src_size), MCP__V0_##type, #type, (err))

/*
 * For functions that only write 0.1.0 fields into a caller's struct
 * (mcp_auth_parse_arg, mcp_http_parse_listen): MCP_OK when `size` holds
 * at least the first release's fields, else MCP_ERR_INVALID_ARG.
 */
mcp_status mcp__opts_size_check(size_t size, size_t min_size, const char *type_name, mcp_error *err);

#define MCP__OPTS_SIZE_CHECK(type, size, err) mcp__opts_size_check((size), MCP__V0_##type, #type, (err))

#endif /* MCP_UTIL_ABI_H */
