/*
 * The MCP protocol versions libmcp speaks: one table, newest first, that
 * the server core, the client core and the HTTP transports all read.
 */
#include "util/util.h"
#include "mcp/server.h"

#include <string.h>

const char *const mcp__versions[MCP__N_VERSIONS] = {
    /* modern: no initialize, the version travels in each request's _meta */
    MCP_PROTOCOL_2026_07_28,
    /* legacy: initialize, then sessions */
    MCP_PROTOCOL_2025_11_25,
    MCP_PROTOCOL_2025_06_18,
    MCP_PROTOCOL_2025_03_26,
    MCP_PROTOCOL_2024_11_05,
};

_Static_assert(MCP__N_MODERN >= 1 && MCP__N_MODERN < MCP__N_VERSIONS, "modern versions first, then legacy");

/* The entry of mcp__versions[from..to) spelled s[0..n), or NULL. */
static const char *find(size_t from, size_t to, const char *s, size_t n)
{
    for (size_t i = from; s && i < to; i++)
        if (strlen(mcp__versions[i]) == n && memcmp(mcp__versions[i], s, n) == 0)
            return mcp__versions[i];
    return NULL;
}

const char *mcp__version_known(const char *s, size_t n)
{
    return find(0, MCP__N_VERSIONS, s, n);
}

const char *mcp__version_legacy(const char *s, size_t n)
{
    return find(MCP__N_MODERN, MCP__N_VERSIONS, s, n);
}

int mcp__version_at_least(const char *version, const char *min)
{
    /* Versions are ISO dates, so they order as strings. */
    return version && strcmp(version, min) >= 0;
}

int mcp__version_modern(const char *version)
{
    return mcp__version_at_least(version, mcp__versions[MCP__N_MODERN - 1]);
}
