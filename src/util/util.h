/*
 * Internal helpers shared between libmcp's source files. Nothing here is
 * exported; names use the mcp__ prefix.
 */
#ifndef MCP_UTIL_H
#define MCP_UTIL_H

#include "mcp/base.h"

#include <stdarg.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MCP__LIKELY(x) __builtin_expect(!!(x), 1)
#define MCP__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MCP__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MCP__LIKELY(x) (x)
#define MCP__UNLIKELY(x) (x)
#define MCP__PRINTF(a, b)
#endif

/*
 * Fills `err` (when not NULL) with a status, JSON-RPC code, byte offset and a
 * formatted message, and returns `status` so callers can write
 * `return mcp__fail(err, ...)`.
 */
mcp_status mcp__fail(mcp_error *err, mcp_status status, int rpc_code, size_t offset,
                     const char *fmt, ...) MCP__PRINTF(5, 6);

/* Same with a va_list. */
mcp_status mcp__vfail(mcp_error *err, mcp_status status, int rpc_code, size_t offset,
                      const char *fmt, va_list ap);

/* Allocates zeroed memory through the installed allocator. */
void *mcp__calloc(size_t n, size_t size);

/* Duplicates `n` bytes into a NUL-terminated copy. */
char *mcp__strndup(const char *s, size_t n);

/* A copy of the NUL-terminated `s`; NULL for NULL (or out of memory). */
char *mcp__strdup(const char *s);

/* Nonzero when s[0..n) is non-empty visible ASCII (0x21-0x7E): fit for an
 * HTTP header value such as a token, a session id or a version. */
int mcp__visible_ascii(const char *s, size_t n);

/* Copies text a peer sent into a message (at most cap - 1 bytes, always
 * NUL-terminated): line breaks and tabs become spaces, other control and
 * non-ASCII bytes '?', trailing spaces are dropped. */
void mcp__quote_text(char *out, size_t cap, const char *s, size_t n);

/*
 * n random bytes from the kernel's CSPRNG (getrandom(2), clock.c); 0, or -1
 * when the kernel refuses (callers then fall back to OpenSSL's RAND_bytes).
 * Seeds and session IDs come from here: RAND_bytes would set up OpenSSL's
 * DRBG and providers (about 3 MB of resident libcrypto) in every server,
 * whether or not it ever verifies a token or signs a requestState.
 */
int mcp__random(void *buf, size_t n);

/*
 * libcurl (curl.c), the one thing util takes from outside libc, loaded on
 * first use (curl_api.h). Loads and initialises libcurl once per process
 * (thread-safe); returns curl_global_init's CURLcode, 0 when ready
 * (CURLE_FAILED_INIT when libcurl.so.4 could not be loaded:
 * curl_easy_strerror() of it says why). Call before a first transfer.
 */
int mcp__curl_init(void);

/*
 * The options every libmcp transfer shares: no signals, http and https
 * only, redirects never followed (tokens and POST bodies must not
 * wander). `easy` is a CURL handle; returns its CURLcode.
 */
int mcp__curl_defaults(void *easy);

/*
 * base64 (base64.c), in its two spellings, each with one encoding per value
 * on output:
 *   base64     RFC 4648 section 4: A-Z a-z 0-9 + /, padded with '=' to a
 *              multiple of four (HTTP Basic, SEP-2243 header values, blobs
 *              in JSON);
 *   base64url  section 5: A-Z a-z 0-9 - _, never padded (JOSE, PKCE,
 *              list cursors, requestState).
 * Neither decoder accepts whitespace or the other alphabet's characters.
 */
/* Characters for n bytes (small n: the url form multiplies first). */
#define MCP__BASE64_LEN(n) (((n) + 2) / 3 * 4)
#define MCP__BASE64URL_LEN(n) (((n) * 4 + 2) / 3)

/* Writes the encoding of in[0..n) to `out` (no terminator); returns its length. */
size_t mcp__base64_encode(char *out, const void *in, size_t n);
size_t mcp__base64url_encode(char *out, const void *in, size_t n);

/* Appends the encoding to `b` (kept NUL-terminated). */
mcp_status mcp__base64_append(mcp_buf *b, const void *in, size_t n);
mcp_status mcp__base64url_append(mcp_buf *b, const void *in, size_t n);

/* Decoding flag: the canonical text only. A length of 1 mod 4 (without the
 * padding) and nonzero bits after the last byte are refused, so no two texts
 * decode alike (RFC 7515 section 2). Without it, such bits are ignored. */
#define MCP__BASE64_CANONICAL 1u

/*
 * Decodes in[0..n) into out[0..cap). base64: a length that is a multiple of
 * four, '=' only as the last one or two characters; `cap` must hold
 * n / 4 * 3 bytes (the padding not discounted). base64url: no '='; `cap`
 * must hold the decoded length. Returns 1 and sets *out_len, or 0 when the
 * text is invalid or does not fit (`out` may then hold a part).
 */
int mcp__base64_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *out_len, unsigned flags);
int mcp__base64url_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *out_len,
                          unsigned flags);

/*
 * Protocol versions (version.c). A version is an ISO date, so versions
 * order as strings. mcp__versions lists every version libmcp speaks, newest
 * first: the MCP__N_MODERN modern ones (no initialize; each request names
 * its version in _meta), then the legacy ones (initialize, sessions).
 */
#define MCP__N_VERSIONS 5
#define MCP__N_MODERN 1
extern const char *const mcp__versions[MCP__N_VERSIONS];

/* The table's entry spelled s[0..n) (a string that lives forever), or NULL
 * when libmcp does not speak that version (s may be NULL). */
const char *mcp__version_known(const char *s, size_t n);
/* The same among the legacy versions only. */
const char *mcp__version_legacy(const char *s, size_t n);
/* Nonzero when `version` (NULL: no) is `min` or later. */
int mcp__version_at_least(const char *version, const char *min);
/* Nonzero when `version` belongs to the modern era: the oldest modern
 * version or later, known or not (NULL: no). */
int mcp__version_modern(const char *version);
/* The newest version, and the newest legacy one. */
static inline const char *mcp__version_newest(void)
{
    return mcp__versions[0];
}
static inline const char *mcp__version_newest_legacy(void)
{
    return mcp__versions[MCP__N_MODERN];
}

/* snprintf into a fixed buffer where a cut is acceptable. */
void mcp__say(char *out, size_t cap, const char *fmt, ...) MCP__PRINTF(3, 4);

/* Clocks (clock.c). The monotonic one for deadlines, intervals and ages;
 * the wall clock only for timestamps that leave the process. */
uint64_t mcp__mono_ns(void);
uint64_t mcp__mono_ms(void);
uint64_t mcp__wall_ms(void);

/* W3C Trace Context (trace.c): 1 when a traceparent / tracestate header
 * value is well-formed (the lengths exclude the NUL). */
#define MCP__TRACEPARENT_MAX 256u
#define MCP__TRACESTATE_MAX 512u
int mcp__traceparent_valid(const char *s, size_t n);
int mcp__tracestate_valid(const char *s, size_t n);

/* Ignores SIGPIPE unless the application installed a disposition of its
 * own: a peer that goes away must be an error return, not a signal. */
void mcp__ignore_sigpipe(void);

#endif /* MCP_UTIL_H */
