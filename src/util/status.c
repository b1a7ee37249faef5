/*
 * Status names and strings, error detail, and the library version.
 */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* One row per status; the table is indexed by -status. */
static const struct {
    const char *name; /* symbolic name */
    const char *text; /* English description */
} g_status[] = {
    {"MCP_OK", "success"},
    {"MCP_ERR_NOMEM", "out of memory"},
    {"MCP_ERR_INVALID_ARG", "invalid argument"},
    {"MCP_ERR_PARSE", "malformed JSON"},
    {"MCP_ERR_LIMIT", "limit exceeded"},
    {"MCP_ERR_INVALID_MSG", "invalid JSON-RPC message"},
    {"MCP_ERR_NOT_FOUND", "not found"},
    {"MCP_ERR_TYPE", "wrong JSON type"},
    {"MCP_ERR_STATE", "invalid state for this call"},
    {"MCP_ERR_IO", "I/O error"},
    {"MCP_ERR_TIMEOUT", "timed out"},
    {"MCP_ERR_CANCELLED", "cancelled"},
    {"MCP_ERR_CLOSED", "closed"},
    {"MCP_ERR_SCHEMA", "invalid JSON Schema"},
    {"MCP_ERR_UNSUPPORTED", "not supported"},
    {"MCP_ERR_BUSY", "busy, retry later"},
    {"MCP_ERR_PROTOCOL", "peer returned a JSON-RPC error"},
    {"MCP_ERR_INTERNAL", "internal error"},
    {"MCP_ERR_EXISTS", "already exists"},
    {"MCP_ERR_AUTH", "authorization failed"},
    {"MCP_ERR_INVALID", "invalid data"},
    {"MCP_ERR_INPUT_REQUIRED", "client input required"},
};

#define N_STATUS (sizeof g_status / sizeof g_status[0])

const char *mcp_status_str(mcp_status status)
{
    int i = -(int)status;
    if (i < 0 || (size_t)i >= N_STATUS)
        return "unknown status";
    return g_status[i].text;
}

const char *mcp_status_name(mcp_status status)
{
    int i = -(int)status;
    if (i < 0 || (size_t)i >= N_STATUS)
        return "MCP_ERR_UNKNOWN";
    return g_status[i].name;
}

void mcp_error_clear(mcp_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

mcp_status mcp__vfail(mcp_error *err, mcp_status status, int rpc_code, size_t offset,
                      const char *fmt, va_list ap)
{
    if (err) {
        mcp_error_clear(err);
        err->status = status;
        err->rpc_code = rpc_code;
        err->offset = offset;
        if (fmt)
            vsnprintf(err->message, sizeof err->message, fmt, ap);
        else
            snprintf(err->message, sizeof err->message, "%s", mcp_status_str(status));
    }
    return status;
}

mcp_status mcp__fail(mcp_error *err, mcp_status status, int rpc_code, size_t offset,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mcp_status st = mcp__vfail(err, status, rpc_code, offset, fmt, ap);
    va_end(ap);
    return st;
}

const char *mcp_version(void)
{
    return MCP_VERSION_STRING;
}

unsigned mcp_version_number(void)
{
    return ((unsigned)MCP_VERSION_MAJOR << 16) | ((unsigned)MCP_VERSION_MINOR << 8) |
           (unsigned)MCP_VERSION_PATCH;
}
