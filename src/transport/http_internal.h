/*
 * Parsers of the HTTP server transport that see peer-controlled bytes,
 * exported (internally) for the fuzz target tests/fuzz/fuzz_http.c.
 */
#ifndef MCP_HTTP_INTERNAL_H
#define MCP_HTTP_INTERNAL_H

#include "mcp/json.h"

/* Does an Accept value (comma-separated media ranges) allow `type`? NULL allows all. */
int mcp__http_accepts(const char *value, const char *type);
/* The host of a Host header, lowercased, without port; 0 when it does not fit. */
size_t mcp__http_host_part(const char *h, char *out, size_t cap);
/* An SEP-2243 header value: trimmed, "=?base64?...?=" decoded strictly. 0 when invalid. */
int mcp__http_header_value(const char *raw, char *out, size_t cap, size_t *out_len);
/* Does a decoded header value equal a JSON value (strings, numbers, booleans)? */
int mcp__http_header_matches(const char *h, size_t hl, const mcp_json *v);

#endif /* MCP_HTTP_INTERNAL_H */
