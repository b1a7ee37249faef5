/*
 * Internal interface between the schema compiler/validator (schema.c) and
 * the `format` checkers (schema_format.c). Nothing here is exported.
 */
#ifndef MCP_SCHEMA_INTERNAL_H
#define MCP_SCHEMA_INTERNAL_H

#include <stddef.h>

/* The formats libmcp can assert; MCP__FMT_NONE means "annotation only". */
enum {
    MCP__FMT_NONE = 0,
    MCP__FMT_DATE_TIME,
    MCP__FMT_DATE,
    MCP__FMT_TIME,
    MCP__FMT_DURATION,
    MCP__FMT_EMAIL,
    MCP__FMT_IDN_EMAIL,
    MCP__FMT_HOSTNAME,
    MCP__FMT_IDN_HOSTNAME,
    MCP__FMT_IPV4,
    MCP__FMT_IPV6,
    MCP__FMT_URI,
    MCP__FMT_URI_REFERENCE,
    MCP__FMT_IRI,
    MCP__FMT_IRI_REFERENCE,
    MCP__FMT_URI_TEMPLATE,
    MCP__FMT_UUID,
    MCP__FMT_REGEX,
    MCP__FMT_JSON_POINTER,
    MCP__FMT_REL_JSON_POINTER
};

/* Maps a format name to its MCP__FMT_* id; MCP__FMT_NONE when unknown. */
int mcp__schema_format_id(const char *name, size_t len);

/*
 * Checks `n` bytes of UTF-8 against format `id`.
 * Returns 1 when valid, 0 when not, -1 when memory ran out (only the
 * "regex" format allocates).
 */
int mcp__schema_format_check(int id, const char *s, size_t n);

/*
 * Returns 1 when `n` bytes are an ECMA-262 regular expression libmcp can
 * compile, 0 when not, -1 when memory ran out. Defined in schema.c.
 */
int mcp__schema_regex_valid(const char *s, size_t n);

#endif /* MCP_SCHEMA_INTERNAL_H */
