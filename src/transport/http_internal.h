/*
 * Parsers of the HTTP server transport that see peer-controlled bytes,
 * exported (internally) for the fuzz target tests/fuzz/fuzz_http.c.
 */
#ifndef MCP_HTTP_INTERNAL_H
#define MCP_HTTP_INTERNAL_H

#include "mcp/json.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Does an Accept value (comma-separated media ranges) allow `type`? NULL allows all. */
int mcp__http_accepts(const char *value, const char *type);
/* The host of a Host header, lowercased, without port; 0 when it does not fit. */
size_t mcp__http_host_part(const char *h, char *out, size_t cap);
/* An SEP-2243 header value: trimmed, "=?base64?...?=" decoded strictly. 0 when invalid. */
int mcp__http_header_value(const char *raw, char *out, size_t cap, size_t *out_len);
/* Does a decoded header value equal a JSON value (strings, numbers, booleans)? */
int mcp__http_header_matches(const char *h, size_t hl, const mcp_json *v);


/*
 * The last hop of an X-Forwarded-For value (the address the proxy that
 * added it saw): an IPv4 or IPv6 address, optionally in brackets, nothing
 * else (no port, no "unknown"), written in canonical form to out. 0 when
 * the value is longer than 1024 bytes or its last hop is not an address.
 */
int mcp__http_forwarded_for(const char *value, char *out, size_t cap);

/*
 * A Last-Event-ID this server could have written: "<stream>_<seq>", two
 * decimal numbers of 1 to 20 digits, no sign, no leading zero (but "0"),
 * each within 64 bits, nothing before, between or after them. 1 with
 *stream_no and *seq set; 0 for anything else (junk, overflow, trailing
 * bytes, NULL).
 */
int mcp__http_event_id(const char *value, uint64_t *stream_no, uint64_t *seq);

/* Counters per key for quotas on what a client holds at once (http_quota.c;
 * thread-safe). */
typedef struct mcp__quota mcp__quota;
mcp_status mcp__quota_new(mcp__quota **out);
void mcp__quota_free(mcp__quota *q); /* NULL is a no-op */
/* One more for `key` unless it holds `limit` already: 1 taken, 0 refused (or out of memory). */
int mcp__quota_take(mcp__quota *q, const char *key, unsigned limit);
/* One less for `key` (a key it does not hold: nothing). */
void mcp__quota_give(mcp__quota *q, const char *key);
unsigned mcp__quota_count(mcp__quota *q, const char *key);
size_t mcp__quota_entries(mcp__quota *q); /* keys held now */
/* The table's seeded 64-bit hash of a key (never 0): the same for the same
 * key within one table, not predictable by a client. Thread-safe. */
uint64_t mcp__quota_hash(const mcp__quota *q, const char *key);
/* The address to bind for libmicrohttpd: an IPv4 or IPv6 literal, or
 * "localhost" (IPv4 loopback); IPv6 adds MHD_USE_IPv6 to *flags.
 * MCP_ERR_INVALID_ARG for anything else. */
mcp_status mcp__http_bind_address(const char *host, unsigned port, struct sockaddr_storage *ss, unsigned *flags,
                                  mcp_error *err);

#endif /* MCP_HTTP_INTERNAL_H */
