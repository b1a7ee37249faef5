/*
 * The in-memory layout of parsed JSON values, shared by the parser
 * (json.c) and the writer (json_write.c). Not part of the public API.
 */
#ifndef MCP_JSON_INTERNAL_H
#define MCP_JSON_INTERNAL_H

#include "mcp/json.h"

#include <pthread.h>
#include <stdio.h>

/*
 * One value: 24 bytes. `p` and `len` mean, by type:
 *   STRING      decoded bytes (NUL-terminated) and their length
 *   INT, REAL   the number's source text and its length; `u` holds the value
 *   ARRAY       an array of `len` mcp_json elements
 *   OBJECT      an array of `len` mcp__member; `u.index` the hash index or NULL
 */
struct mcp_json {
    uint8_t type;   /* mcp_json_type */
    uint8_t flags;  /* unused, reserved */
    uint16_t pad;   /* unused, keeps the layout explicit */
    uint32_t len;   /* byte or element count (inputs are capped at 1 GiB) */
    const void *p;  /* see above */
    union {
        int64_t i;              /* INT value, or BOOL 0/1 */
        double d;               /* REAL value */
        const uint32_t *index;  /* OBJECT: open-addressing table or NULL */
    } u;
};

/* One object member. `hash` is only set in objects that carry an index. */
typedef struct mcp__member {
    const char *key; /* decoded key bytes, NUL-terminated */
    uint32_t klen;   /* key length in bytes */
    uint32_t hash;   /* hash of the key (indexed objects only) */
    mcp_json value;  /* the member's value */
} mcp__member;

/*
 * Objects with at least this many members get a hash index; below it a
 * backwards linear scan (last duplicate wins) is faster than hashing.
 */
#define MCP__JSON_INDEX_MIN 12u

/* The index table of an object of n members has index_cap(n) slots (a power of two). */
uint32_t mcp__json_index_cap(uint32_t n);

/* Key hash used by the object index. */
uint32_t mcp__json_hash(const char *key, size_t len);

/* The "C" locale (created once), or (locale_t)0 if it could not be made. */
#include <locale.h>
locale_t mcp__c_locale(void);

/*
 * Length of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0.
 * Reads up to s[3]: the caller guarantees those bytes are readable (the
 * parser's padding does; the writer copies short tails to a local buffer).
 */
static inline int mcp__utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0xC2)
        return 0; /* continuation byte or overlong 2-byte lead */
    if (c < 0xE0)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        unsigned c1 = s[1];
        if ((c1 & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && c1 < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && c1 > 0x9F)
            return 0; /* UTF-16 surrogate */
        return 3;
    }
    if (c < 0xF5) {
        unsigned c1 = s[1];
        if ((c1 & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && c1 < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && c1 > 0x8F)
            return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

#define MCP__ONES 0x0101010101010101ull
#define MCP__HIGHS 0x8080808080808080ull

/*
 * Nonzero when the 8 bytes in w contain '"', '\\', a byte < 0x20 or a byte
 * >= 0x80. May report a false positive only in a word that also holds a
 * true one, which is all the scanners need.
 */
static inline uint64_t mcp__str_special(uint64_t w)
{
    uint64_t q = w ^ (MCP__ONES * '"');
    uint64_t b = w ^ (MCP__ONES * '\\');
    uint64_t t = (q - MCP__ONES) & ~q;
    t |= (b - MCP__ONES) & ~b;
    t |= (w - MCP__ONES * 0x20) & ~w;
    return (t | w) & MCP__HIGHS;
}

/*
 * Byte index (0-7) of the first special byte in a word whose
 * mcp__str_special() mask is `m` (nonzero). The lowest flagged byte is
 * always a true one: false positives come only from borrows moving upward.
 */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MCP__FIRST_SPECIAL(m) ((unsigned)__builtin_ctzll(m) >> 3)
#else
#define MCP__FIRST_SPECIAL(m) 0u /* no fast position: callers fall back to one byte at a time */
#endif

/* One transcript line {"time","dir","msg"|"raw"|"rawBase64"} appended to `f`
 * under `mu` (transcript.c; the server's and the client's transcripts share
 * the format). `popts` limits the parse of the frame. */
void mcp__transcript_line(FILE *f, pthread_mutex_t *mu, const char *dir, const char *frame, size_t len,
                          const mcp_json_parse_opts *popts);
/* The same with "traceparent" (and "tracestate") after "dir" when
 * traceparent is not NULL: the HTTP headers' trace context of the frame. */
void mcp__transcript_line_trace(FILE *f, pthread_mutex_t *mu, const char *dir, const char *frame, size_t len,
                                const mcp_json_parse_opts *popts, const char *traceparent, const char *tracestate);

/* Opens a transcript file for appending, creating it owner-only (0600: it
 * holds what users sent). NULL with errno set on failure. */
FILE *mcp__transcript_open(const char *path);

#endif /* MCP_JSON_INTERNAL_H */
