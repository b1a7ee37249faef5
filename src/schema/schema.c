/*
 * JSON Schema compiler and validator (2020-12 by default, draft-07 when
 * `$schema` says so).
 *
 * How it works
 *
 *   Compile. The schema (and every registry document it refers to) is first
 *   deep-copied into documents the compiled schema owns, so nothing borrowed
 *   outlives the call. A discovery walk then visits every subschema position
 *   the dialect defines (keyword aware, so `$id` inside `enum` or inside an
 *   unknown keyword is not an identifier), computing each one's base URI and
 *   schema resource, and indexing resource URIs and anchors. Each subschema
 *   gets one `node`, keyed by its JSON value, so a schema reached twice (or
 *   recursively) is compiled once. Nodes are compiled from a worklist, not by
 *   recursion: a node's keyword list holds direct pointers to the nodes of its
 *   subschemas and `$ref` targets, and cycles are just pointers.
 *
 *   Validate. A node is a short list of keywords (type checks first,
 *   applicators later, `unevaluated*` last), each tagged with the instance
 *   types it looks at, so a keyword that does not apply costs one test.
 *   Paths for the report are linked lists living on the C stack; they are
 *   turned into strings only when a violation is reported, so a valid
 *   instance costs no allocation. Annotations for `unevaluatedProperties`
 *   and `unevaluatedItems` are bitsets over the instance's members, kept
 *   only below a node that has such a keyword.
 *
 *   Sub-evaluations whose failure does not make the whole instance invalid
 *   (`anyOf`/`oneOf` branches, `not`, `if`, `contains`, `propertyNames`) run
 *   in quiet mode: yes/no, no report, stop at the first failure. When such a
 *   keyword does fail, the branches are evaluated again with reporting on,
 *   so the report says why each alternative was rejected.
 *
 *   Fast paths (bench/schema measures them against ajv). The node kinds
 *   most tool schemas are made of are evaluated without the general
 *   interpreter: leaves (value checks only), flat objects (type, required,
 *   min/maxProperties, properties, additionalProperties) and `{"$ref": ...}`
 *   wrappers. They always run quietly first; only when one fails and a
 *   report is wanted is it evaluated again with reporting on (v_node, or
 *   v_flat_report for a flat node), with the step count rewound, so every
 *   path does the same work in the same order and meets the same limits.
 *
 *   A flat node whose member schemas are all simple leaves or booleans
 *   (the usual tool input schema) gets a plan at compile time (fplan,
 *   lfast): its members are looked up once, `required` is a bit mask over
 *   the `properties` entries, string enums are sets, integer bounds are one
 *   range, and the steps every member can take are known in advance, so
 *   when they fit under the limits the loop checks none (it still counts
 *   them exactly). Everything such a plan checks is free of side effects
 *   but for its step count, which is why its order may differ from the
 *   keyword list's where nothing can tell. run() takes it for a flat root
 *   without setting up a validation context at all.
 *
 *   Short anchored patterns of ASCII classes are matched without PCRE2
 *   (which still compiles them, so both agree on what is valid; fuzz builds
 *   check every such match against PCRE2); fixed-length ones eight bytes at
 *   a time. A report is put together in the call's own storage and copied
 *   into one allocation at the end: a valid value allocates nothing, an
 *   invalid one (usually) once. The constant parts of messages (the
 *   allowed values, the declared properties, the types wanted, keyword path
 *   tokens) are made at compile time.
 */
#include "mcp/schema.h"
#include "util/abi.h"
#include "util/util.h"
#include "json/json_internal.h"
#include "schema/schema_internal.h"

/* For the few small functions on the validation hot path that must not stay calls. */
#if defined(__GNUC__)
#define SCHEMA_INLINE inline __attribute__((always_inline))
#else
#define SCHEMA_INLINE inline
#endif

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== */
/* Arena: every compiled structure lives in one, freed at once.             */

typedef struct chunk {
    struct chunk *next; /* older chunk */
    size_t cap;         /* usable bytes in mem */
    size_t used;        /* bytes handed out */
    max_align_t mem[];  /* the storage */
} chunk;

typedef struct arena {
    chunk *head; /* chunk being filled; NULL before the first allocation */
} arena;

#define ARENA_CHUNK ((size_t)16384)

static void *ar_alloc(arena *a, size_t n)
{
    if (n > SIZE_MAX / 4)
        return NULL;
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    chunk *h = a->head;
    if (!h || h->cap - h->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        chunk *c = (chunk *)mcp_malloc(sizeof(chunk) + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        if (h && n > ARENA_CHUNK / 4) {
            /* A big block gets a chunk of its own, behind the current one, so
               the current chunk's free space is not wasted. */
            c->next = h->next;
            h->next = c;
            c->used = n;
            return c->mem;
        }
        c->next = h;
        a->head = c;
        h = c;
    }
    void *p = (char *)h->mem + h->used;
    h->used += n;
    return p;
}

static void *ar_zalloc(arena *a, size_t n)
{
    void *p = ar_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static char *ar_strndup(arena *a, const char *s, size_t n)
{
    char *p = (char *)ar_alloc(a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void ar_free(arena *a)
{
    chunk *c = a->head;
    while (c) {
        chunk *next = c->next;
        mcp_free(c);
        c = next;
    }
    a->head = NULL;
}

/* ======================================================================== */
/* Byte comparison                                                           */

static inline uint64_t load64(const char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

static inline uint32_t load32(const char *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/*
 * Equality of n bytes. Property names and enum strings are short, and a
 * library memcmp call per comparison cost more than the comparison; this
 * one reads only inside both ranges (overlapping words for the tail).
 */
static SCHEMA_INLINE int bytes_eq(const char *a, const char *b, size_t n)
{
    if (n >= 8 && n <= 16)
        return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
    if (n > 16) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            if (load64(a + i) != load64(b + i))
                return 0;
        return i == n || load64(a + n - 8) == load64(b + n - 8);
    }
    if (n >= 4)
        return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* ======================================================================== */
/* sbuf: a string builder that either grows or truncates into caller memory */

typedef struct sbuf {
    char *p;    /* the bytes, NUL-terminated when cap > 0 */
    size_t len; /* bytes written, excluding the NUL */
    size_t cap; /* bytes available at p, including room for the NUL */
    int fixed;  /* 1: p is caller storage and output is truncated to fit */
    int nomem;  /* 1: a growth failed; the content is incomplete */
    int full;   /* 1: fixed output was cut to fit; nothing more is appended, so a
                   truncated text never continues after the cut */
    int stack;  /* 1: p is caller storage that a growing buffer leaves behind (its
                   content is copied to the heap when more room is needed) */
} sbuf;

static void sb_fixed(sbuf *b, char *mem, size_t cap)
{
    b->p = mem;
    b->len = 0;
    b->cap = cap;
    b->fixed = 1;
    b->nomem = 0;
    b->full = 0;
    b->stack = 0;
    if (cap)
        mem[0] = '\0';
}

/* A growing buffer that starts in caller storage (mem, cap > 0), so short texts cost no allocation. */
static void sb_stack(sbuf *b, char *mem, size_t cap)
{
    sb_fixed(b, mem, cap);
    b->fixed = 0;
    b->stack = 1;
}

static void sb_dyn(sbuf *b)
{
    memset(b, 0, sizeof(*b));
}

static void sb_release(sbuf *b)
{
    if (!b->fixed && !b->stack)
        mcp_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Makes room for `extra` more bytes plus the NUL; returns the room available. */
static size_t sb_room(sbuf *b, size_t extra)
{
    if (b->nomem || b->full)
        return 0;
    if (b->fixed)
        return b->cap ? b->cap - 1 - b->len : 0;
    if (b->len + extra + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + extra + 1)
            cap *= 2;
        char *p = (char *)(b->stack ? mcp_malloc(cap) : mcp_realloc(b->p, cap));
        if (!p) {
            b->nomem = 1;
            return 0;
        }
        if (b->stack)
            memcpy(p, b->p, b->len);
        b->stack = 0;
        b->p = p;
        b->cap = cap;
        p[b->len] = '\0';
    }
    return extra;
}

/*
 * Longest prefix of the n bytes at s that is at most max bytes and does not
 * end inside a UTF-8 sequence. Messages cut long names and values short;
 * cutting through a character would make them invalid UTF-8, which the
 * JSON writer (rightly) refuses, so a report could not be sent.
 */
static size_t utf8_clip(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0u) == 0x80u)
        max--;
    return max;
}

/* Length of p[0..len) without a trailing incomplete UTF-8 sequence (one that
   truncation cut), for text whose continuation is not at hand. */
static size_t utf8_trim_tail(const char *p, size_t len)
{
    size_t j = len;
    while (j > 0 && len - j < 3 && ((unsigned char)p[j - 1] & 0xC0u) == 0x80u)
        j--;
    if (j == 0)
        return len;
    unsigned char lead = (unsigned char)p[j - 1];
    size_t need = lead >= 0xF0u ? 4 : lead >= 0xE0u ? 3 : lead >= 0xC0u ? 2 : 1;
    return len - (j - 1) < need ? j - 1 : len;
}

static void sb_put_slow(sbuf *b, const char *s, size_t n)
{
    size_t room = sb_room(b, n);
    if (room > n)
        room = n;
    else if (room < n) {
        room = utf8_clip(s, n, room);
        b->full = 1;
    }
    if (room == 0)
        return;
    memcpy(b->p + b->len, s, room);
    b->len += room;
    b->p[b->len] = '\0';
}

/* Copies n bytes without a library call, reading only inside the source. */
static SCHEMA_INLINE void copy_small(char *d, const char *s, size_t n)
{
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            memcpy(d + i, s + i, 8);
        if (i < n)
            memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* Appends n bytes; a fixed buffer keeps what fits, cut at a character boundary. */
static SCHEMA_INLINE void sb_put(sbuf *b, const char *s, size_t n)
{
    if (!(b->nomem | b->full) && b->len + n < b->cap) {
        /* Most pieces are short: copied inline rather than by a library call. */
        if (n <= 32)
            copy_small(b->p + b->len, s, n);
        else
            memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    sb_put_slow(b, s, n);
}

/* sb_put for at most 32 bytes (numbers in decimal). */
static SCHEMA_INLINE void sb_put_short(sbuf *b, const char *s, size_t n)
{
    if (!(b->nomem | b->full) && b->len + n < b->cap) {
        copy_small(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    sb_put_slow(b, s, n);
}

static void sb_puts(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static SCHEMA_INLINE void sb_putc(sbuf *b, char c)
{
    if (!(b->nomem | b->full) && b->len + 1 < b->cap) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
        return;
    }
    sb_put_slow(b, &c, 1);
}

static void sb_vprintf_libc(sbuf *b, const char *fmt, va_list ap) MCP__PRINTF(2, 0);
static void sb_vprintf_libc(sbuf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n <= 0)
        return;
    size_t room = sb_room(b, (size_t)n);
    if (room == 0)
        return;
    /* vsnprintf writes at most room + 1 bytes including the NUL. */
    vsnprintf(b->p + b->len, room + 1, fmt, ap);
    if (room < (size_t)n) {
        room = utf8_trim_tail(b->p + b->len, room);
        b->full = 1;
    } else
        room = (size_t)n;
    b->len += room;
    b->p[b->len] = '\0';
}

/*
 * Formats into the buffer. Violation messages only use %s, %.*s and %zu,
 * which are done here directly: the C library's vsnprintf (run twice, to
 * measure and to write) cost more than all the rest of a report. A format
 * with any other conversion goes to vsnprintf. The output is the same.
 */
static void sb_vprintf(sbuf *b, const char *fmt, va_list ap) MCP__PRINTF(2, 0);
static void sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
    for (const char *f = strchr(fmt, '%'); f; f = strchr(f, '%')) {
        if (f[1] == 's' || f[1] == '%') {
            f += 2;
        } else if (f[1] == 'z' && f[2] == 'u') {
            f += 3;
        } else if (f[1] == '.' && f[2] == '*' && f[3] == 's') {
            f += 4;
        } else {
            sb_vprintf_libc(b, fmt, ap);
            return;
        }
    }
    const char *f = fmt;
    for (;;) {
        const char *pct = strchr(f, '%');
        if (!pct) {
            sb_puts(b, f);
            return;
        }
        sb_put(b, f, (size_t)(pct - f));
        if (pct[1] == '%') {
            sb_putc(b, '%');
            f = pct + 2;
        } else if (pct[1] == 's') {
            const char *arg = va_arg(ap, const char *);
            sb_puts(b, arg ? arg : "(null)");
            f = pct + 2;
        } else if (pct[1] == 'z') {
            size_t v = va_arg(ap, size_t);
            char digits[24];
            size_t i = sizeof(digits);
            do {
                digits[--i] = (char)('0' + v % 10);
                v /= 10;
            } while (v);
            sb_put_short(b, digits + i, sizeof(digits) - i);
            f = pct + 3;
        } else {
            int prec = va_arg(ap, int);
            const char *arg = va_arg(ap, const char *);
            /* Like printf: at most prec bytes, and none past a NUL. */
            size_t n = 0, lim = prec < 0 ? SIZE_MAX : (size_t)prec;
            while (n < lim && arg[n])
                n++;
            sb_put(b, arg, n);
            f = pct + 4;
        }
    }
}

static void sb_printf(sbuf *b, const char *fmt, ...) MCP__PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

/* Appends a string literal. */
#define SB_LIT(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

/* Appends like printf's %.*s: at most prec bytes, and none past a NUL. */
static void sb_put_prec(sbuf *b, const char *s, size_t prec)
{
    const char *z = (const char *)memchr(s, '\0', prec);
    sb_put(b, s, z ? (size_t)(z - s) : prec);
}

/* Nonzero when one of the 8 bytes in w is '~' or '/'. */
static inline uint64_t has_ptr_special(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t t = w ^ (ones * '~'), u = w ^ (ones * '/');
    return (((t - ones) & ~t) | ((u - ones) & ~u)) & (ones * 0x80u);
}

/* Does a token need escaping in a JSON Pointer (does it hold '~' or '/')? */
static inline int ptr_special(const char *s, size_t n)
{
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            if (has_ptr_special(load64(s + i)))
                return 1;
        return i < n && has_ptr_special(load64(s + n - 8)) != 0;
    }
    if (n >= 4) {
        /* Two overlapping 4-byte halves, widened so the word test applies. */
        uint64_t w = (uint64_t)load32(s) | ((uint64_t)load32(s + n - 4) << 32);
        return has_ptr_special(w) != 0;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' || s[i] == '/')
            return 1;
    return 0;
}

/*
 * Appends a JSON Pointer reference token ("~" -> "~0", "/" -> "~1"). Most
 * tokens hold neither, which is checked a word at a time; such a token is
 * copied in one go. Otherwise the bytes between escapes go in as runs, so
 * a fixed buffer cuts them at a character boundary.
 */
static void sb_ptr_token(sbuf *b, const char *s, size_t n)
{
    if (!ptr_special(s, n)) {
        /* A growing buffer makes room first; a fixed one that is too short
           takes the piecewise path below, which cuts the token to fit. */
        if (!b->fixed && b->len + n + 1 >= b->cap)
            sb_room(b, n + 1);
        if (!(b->nomem | b->full) && b->len + n + 1 < b->cap) {
            b->p[b->len] = '/';
            copy_small(b->p + b->len + 1, s, n);
            b->len += n + 1;
            b->p[b->len] = '\0';
            return;
        }
    }
    size_t run = 0;
    sb_putc(b, '/');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '~' || s[i] == '/') {
            sb_put(b, s + run, i - run);
            sb_put(b, s[i] == '~' ? "~0" : "~1", 2);
            run = i + 1;
        }
    }
    sb_put(b, s + run, n - run);
}

/* ======================================================================== */
/* URIs (RFC 3986): split, remove dot segments, resolve a reference.         */

typedef struct uri_parts {
    const char *scheme; /* scheme without ':' */
    size_t scheme_n;    /* its length */
    const char *auth;   /* authority without "//" */
    size_t auth_n;      /* its length */
    const char *path;   /* path */
    size_t path_n;      /* its length */
    const char *query;  /* query without '?' */
    size_t query_n;     /* its length */
    const char *frag;   /* fragment without '#' */
    size_t frag_n;      /* its length */
    int has_scheme;     /* a scheme is present */
    int has_auth;       /* an authority is present (even empty) */
    int has_query;      /* a '?' is present */
    int has_frag;       /* a '#' is present */
} uri_parts;

static void uri_split(const char *s, size_t n, uri_parts *u)
{
    memset(u, 0, sizeof(*u));
    size_t i = 0, j = 0;
    while (j < n && s[j] != ':' && s[j] != '/' && s[j] != '?' && s[j] != '#')
        j++;
    if (j < n && j > 0 && s[j] == ':') {
        u->has_scheme = 1;
        u->scheme = s;
        u->scheme_n = j;
        i = j + 1;
    }
    if (n - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        i += 2;
        u->has_auth = 1;
        u->auth = s + i;
        while (i < n && s[i] != '/' && s[i] != '?' && s[i] != '#')
            i++;
        u->auth_n = (size_t)(s + i - u->auth);
    }
    u->path = s + i;
    while (i < n && s[i] != '?' && s[i] != '#')
        i++;
    u->path_n = (size_t)(s + i - u->path);
    if (i < n && s[i] == '?') {
        u->has_query = 1;
        u->query = s + ++i;
        while (i < n && s[i] != '#')
            i++;
        u->query_n = (size_t)(s + i - u->query);
    }
    if (i < n && s[i] == '#') {
        u->has_frag = 1;
        u->frag = s + i + 1;
        u->frag_n = n - i - 1;
    }
}

/* Drops the last segment (and the '/' before it) from the output. */
static void rds_pop(sbuf *out, size_t floor)
{
    while (out->len > floor && out->p[out->len - 1] != '/')
        out->len--;
    if (out->len > floor)
        out->len--;
    if (out->p)
        out->p[out->len] = '\0';
}

/* RFC 3986 section 5.2.4, appending the result to `out`. */
static void remove_dot_segments(sbuf *out, const char *in, size_t n)
{
    size_t floor = out->len, i = 0;
    while (i < n) {
        const char *p = in + i;
        size_t rem = n - i;
        if (rem >= 3 && memcmp(p, "../", 3) == 0)
            i += 3;
        else if (rem >= 2 && memcmp(p, "./", 2) == 0)
            i += 2;
        else if (rem >= 3 && memcmp(p, "/./", 3) == 0)
            i += 2;
        else if (rem == 2 && memcmp(p, "/.", 2) == 0) {
            sb_putc(out, '/');
            i = n;
        } else if (rem >= 4 && memcmp(p, "/../", 4) == 0) {
            i += 3;
            rds_pop(out, floor);
        } else if (rem == 3 && memcmp(p, "/..", 3) == 0) {
            rds_pop(out, floor);
            sb_putc(out, '/');
            i = n;
        } else if ((rem == 1 && p[0] == '.') || (rem == 2 && memcmp(p, "..", 2) == 0)) {
            i = n;
        } else {
            size_t j = i;
            if (in[j] == '/')
                j++;
            while (j < n && in[j] != '/')
                j++;
            sb_put(out, in + i, j - i);
            i = j;
        }
    }
}

/* Resolves `ref` against `base` (RFC 3986 section 5.2.2) into `out`. */
static void uri_resolve(sbuf *out, const char *base, const char *ref, size_t refn)
{
    uri_parts B, R;
    uri_split(base, strlen(base), &B);
    uri_split(ref, refn, &R);
    const uri_parts *S = R.has_scheme ? &R : &B; /* where scheme comes from */
    const uri_parts *A;                          /* where the authority comes from */
    if (S->has_scheme) {
        sb_put(out, S->scheme, S->scheme_n);
        sb_putc(out, ':');
    }
    if (R.has_scheme || R.has_auth)
        A = &R;
    else
        A = &B;
    if (A->has_auth) {
        sb_put(out, "//", 2);
        sb_put(out, A->auth, A->auth_n);
    }
    const char *q = NULL;
    size_t qn = 0;
    int hq = 0;
    if (R.has_scheme || R.has_auth) {
        remove_dot_segments(out, R.path, R.path_n);
        q = R.query, qn = R.query_n, hq = R.has_query;
    } else if (R.path_n == 0) {
        sb_put(out, B.path, B.path_n);
        if (R.has_query)
            q = R.query, qn = R.query_n, hq = 1;
        else
            q = B.query, qn = B.query_n, hq = B.has_query;
    } else {
        if (R.path[0] == '/') {
            remove_dot_segments(out, R.path, R.path_n);
        } else {
            sbuf m;
            sb_dyn(&m);
            if (B.has_auth && B.path_n == 0) {
                sb_putc(&m, '/');
            } else {
                size_t k = B.path_n;
                while (k > 0 && B.path[k - 1] != '/')
                    k--;
                sb_put(&m, B.path, k);
            }
            sb_put(&m, R.path, R.path_n);
            if (m.nomem)
                out->nomem = 1;
            else if (m.len)
                remove_dot_segments(out, m.p, m.len);
            sb_release(&m);
        }
        q = R.query, qn = R.query_n, hq = R.has_query;
    }
    if (hq) {
        sb_putc(out, '?');
        sb_put(out, q, qn);
    }
    if (R.has_frag) {
        sb_putc(out, '#');
        sb_put(out, R.frag, R.frag_n);
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes `n` bytes in place; returns the new length. */
static size_t pct_decode(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 && hexval((unsigned char)s[i + 2]) >= 0) {
            s[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
            i += 2;
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

/* ======================================================================== */
/* Errors                                                                    */

/* Length of the valid UTF-8 sequence at s[0..n) (lead byte >= 0x80), or 0. */
static size_t utf8_valid_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t need = c >= 0xC2u && c <= 0xDFu ? 2 : c >= 0xE0u && c <= 0xEFu ? 3
                : c >= 0xF0u && c <= 0xF4u ? 4 : 0;
    if (!need || n < need)
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xC0u) != 0x80u)
            return 0;
    if ((c == 0xE0u && s[1] < 0xA0u) || (c == 0xEDu && s[1] > 0x9Fu) ||
        (c == 0xF0u && s[1] < 0x90u) || (c == 0xF4u && s[1] > 0x8Fu))
        return 0; /* overlong, surrogate, above U+10FFFF */
    return need;
}

/*
 * Keeps an error message valid UTF-8, as the JSON writer needs it when the
 * message goes out in a JSON-RPC error. mcp__vfail truncates by bytes (the
 * cut character is dropped), and a percent-decoded `$ref` fragment quoted in
 * a message may be any bytes at all (each invalid byte becomes '?').
 */
static void tidy_message(mcp_error *err)
{
    unsigned char *m = (unsigned char *)err->message;
    size_t n = strlen(err->message);
    n = utf8_trim_tail(err->message, n);
    m[n] = '\0';
    for (size_t i = 0; i < n;) {
        if (m[i] < 0x80u) {
            i++;
            continue;
        }
        size_t k = utf8_valid_seq(m + i, n - i);
        if (k) {
            i += k;
        } else {
            m[i] = '?';
            i++;
        }
    }
}

static mcp_status fail_at(mcp_error *err, mcp_status st, const char *ptr, const char *fmt, ...)
    MCP__PRINTF(4, 5);
static mcp_status fail_at(mcp_error *err, mcp_status st, const char *ptr, const char *fmt, ...)
{
    if (!err)
        return st;
    va_list ap;
    va_start(ap, fmt);
    mcp__vfail(err, st, 0, 0, fmt, ap);
    va_end(ap);
    tidy_message(err);
    if (ptr) {
        size_t n = utf8_clip(ptr, strlen(ptr), sizeof(err->pointer) - 1);
        memcpy(err->pointer, ptr, n);
        err->pointer[n] = '\0';
    }
    return st;
}

/* ======================================================================== */
/* Copying documents (so the compiled schema owns what it reads)             */

static mcp_status copy_doc(mcp_json_doc **out, const mcp_json *v, mcp_error *err)
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
        return fail_at(err, st, NULL, "out of memory copying a schema");
    if (st == MCP_ERR_LIMIT)
        return fail_at(err, st, NULL, "schema is too large or too deeply nested to copy");
    if (st != MCP_OK)
        return fail_at(err, st, NULL, "could not copy the schema document");
    return MCP_OK;
}

/* ======================================================================== */
/* Registry                                                                  */

typedef struct regent {
    char *uri;         /* registered URI, without fragment (mcp_malloc'd) */
    mcp_json_doc *doc; /* our own copy of the document */
} regent;

struct mcp_schema_registry {
    regent *ents; /* registered documents */
    size_t n;     /* entries in use */
    size_t cap;   /* entries allocated */
};

/* Length of a URI without its fragment (and without a lone trailing '#'). */
static size_t uri_nofrag_len(const char *u)
{
    const char *h = strchr(u, '#');
    return h ? (size_t)(h - u) : strlen(u);
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

static const regent *reg_find(const mcp_schema_registry *r, const char *uri, size_t n)
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
        return fail_at(err, MCP_ERR_INVALID_ARG, NULL, "registry, uri and doc are required");
    mcp_json_type t = mcp_json_typeof(doc);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return fail_at(err, MCP_ERR_TYPE, NULL, "a schema must be an object or a boolean, not %s",
                       mcp_json_type_name(t));
    size_t n = uri_nofrag_len(uri);
    if (reg_find(reg, uri, n))
        return fail_at(err, MCP_ERR_EXISTS, NULL, "schema URI already registered: %.*s", (int)n,
                       uri);
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 8;
        regent *e = (regent *)mcp_realloc(reg->ents, cap * sizeof(*e));
        if (!e)
            return fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory");
        reg->ents = e;
        reg->cap = cap;
    }
    char *u = mcp__strndup(uri, n);
    if (!u)
        return fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory");
    mcp_json_doc *d = NULL;
    mcp_status st = copy_doc(&d, doc, err);
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

/* ======================================================================== */
/* Compiled representation                                                   */

/* Dialects. */
enum { D_2020 = 0, D_7 = 1 };

/* 2020-12 vocabularies (bits of resource.vocab). */
enum {
    V_CORE = 1u << 0,
    V_APPLICATOR = 1u << 1,
    V_UNEVALUATED = 1u << 2,
    V_VALIDATION = 1u << 3,
    V_META = 1u << 4,
    V_FORMAT_ANN = 1u << 5,
    V_FORMAT_ASSERT = 1u << 6,
    V_CONTENT = 1u << 7,
    V_ALL_2020 = V_CORE | V_APPLICATOR | V_UNEVALUATED | V_VALIDATION | V_META | V_FORMAT_ANN |
                 V_CONTENT
};

/* Instance type bits. An integral number has both T_INT and T_NUM. */
enum {
    T_NULL = 1u << 0,
    T_BOOL = 1u << 1,
    T_INT = 1u << 2,
    T_NUM = 1u << 3,
    T_STR = 1u << 4,
    T_ARR = 1u << 5,
    T_OBJ = 1u << 6,
    T_ANY = 0x7fu
};

/* Keyword operations, in no particular order (nodes order their lists). */
enum {
    K_REF,
    K_DYNREF,
    K_TYPE,
    K_ENUM,
    K_CONST,
    K_MULOF,
    K_MAX,
    K_XMAX,
    K_MIN,
    K_XMIN,
    K_MAXLEN,
    K_MINLEN,
    K_PATTERN,
    K_FORMAT,
    K_MAXITEMS,
    K_MINITEMS,
    K_UNIQUE,
    K_PREFIX,
    K_ITEMS,
    K_CONTAINS,
    K_MAXPROPS,
    K_MINPROPS,
    K_REQUIRED,
    K_DEPREQ,
    K_PROPS,
    K_PROPNAMES,
    K_DEPSCHEMAS,
    K_ALLOF,
    K_ANYOF,
    K_ONEOF,
    K_NOT,
    K_IF,
    K_UNEV_ITEMS,
    K_UNEV_PROPS
};

typedef struct node node;
typedef struct resource resource;

/* A byte string borrowed from a document the schema owns. */
typedef struct sstr {
    const char *s; /* bytes (NUL-terminated, may contain NUL) */
    size_t n;      /* length */
} sstr;

/* A numeric keyword argument. */
typedef struct numlim {
    double d;          /* value as a double (fast comparisons) */
    const mcp_json *v; /* the number itself (exact decimal text) */
    int64_t i;         /* value when is_int */
    int is_int;        /* the literal is an int64 */
} numlim;

typedef struct simple_re simple_re;

/* A compiled regular expression. */
typedef struct regex {
    pcre2_code *code;       /* compiled pattern (freed with the schema) */
    const simple_re *fast;  /* the same pattern for the direct matcher, or NULL */
    int jit;                /* code was JIT-compiled: call pcre2_jit_match */
    sstr src;               /* source text, for messages */
} regex;

typedef struct nodelist {
    node **v; /* subschemas */
    size_t n; /* count */
} nodelist;

typedef struct depreq {
    sstr key;    /* trigger property */
    sstr *names; /* properties it requires */
    size_t n;    /* count */
} depreq;

typedef struct depsch {
    sstr key; /* trigger property */
    node *n;  /* schema applied to the whole object when present */
} depsch;

typedef struct propent {
    sstr key;      /* property name */
    uint32_t hash; /* hash of key */
    node *n;       /* its schema */
    sstr kptok;    /* "/properties/" + the escaped name: its keyword path tokens */
} propent;

typedef struct patent {
    regex re; /* property-name pattern */
    node *n;  /* schema for matching members */
} patent;

/* properties + patternProperties + additionalProperties, applied in one pass. */
typedef struct props {
    propent *ents;  /* `properties`, in schema order */
    size_t n;       /* count */
    uint32_t *tab;  /* open-addressing index: entry index + 1, 0 = empty; NULL if n small */
    uint32_t mask;  /* table size - 1 */
    patent *pats;   /* `patternProperties` */
    size_t npats;   /* count */
    node *add;      /* `additionalProperties`, or NULL */
    int has_props;  /* `properties` present (for keyword paths) */
    int dups;       /* `properties` repeats a key (the last one counts); set for any n */
} props;

/* An `enum` whose values are all strings, as a set of byte strings. */
typedef struct senum {
    sstr *v;       /* the values */
    size_t n;      /* their count */
    uint32_t *tab; /* more than 8: open-addressing index (value index + 1, 0 empty), else NULL */
    uint32_t mask; /* table size - 1 */
} senum;

/*
 * A leaf's checks in the form v_flat's fast loop runs them, for leaves
 * whose keywords have no side effect but their steps: `type`, `enum` of
 * strings, the numeric bounds and multipleOf, min/maxLength and a `pattern`
 * the direct matcher takes. The checks run in the order of the node's list
 * (a failure stops them, so a `pattern` after a failed check is neither
 * run nor counted); the ones before `pattern` are pure, so their own order
 * does not matter. The booleans have one too (lf_true, lf_false).
 */
typedef struct lfast {
    unsigned char types;  /* instance types `type` accepts (T_ANY without it, 0: false) */
    unsigned char more;   /* instance types some check after `type` looks at */
    unsigned char steps;  /* steps it counts: 1 for a leaf, 0 for a boolean schema */
    unsigned char intlim; /* the numeric keywords are bounds with int64 limits: lo..hi */
    const senum *en;      /* `enum` (all strings), or NULL */
    size_t minlen;        /* minLength (0 when absent) */
    size_t maxlen;        /* maxLength (SIZE_MAX when absent) */
    const struct regex *re; /* `pattern` (with a direct matcher), or NULL */
    int64_t lo;           /* intlim: smallest integer allowed */
    int64_t hi;           /* intlim: largest integer allowed */
    const struct kw *nums; /* the numeric keywords (consecutive in the node's list) */
    unsigned nnums;       /* their count */
} lfast;

/* A `properties` entry for v_flat's fast loop: its name and its schema's lfast. */
typedef struct fent {
    const char *key; /* property name */
    size_t n;        /* its length */
    const lfast *lf; /* its schema */
} fent;

/*
 * The quiet fast path of a flat node (v_flat), made once at compile time
 * (finish_node). `required` becomes a bit mask over the `properties`
 * entries, so one pass that looks every member up answers it.
 */
typedef struct fplan {
    const props *pr;  /* `properties`/`additionalProperties`, or NULL */
    uint64_t reqmask; /* required names that are `properties` keys: bit i for entry i */
    const sstr *xreq; /* required names that are not, checked one by one */
    size_t nxreq;     /* their count */
    size_t minp;      /* minProperties (0 when absent) */
    size_t maxp;      /* maxProperties (SIZE_MAX when absent) */
    unsigned steps;   /* when every member schema is a leaf or a boolean: the most steps
                         one member can take; else 0 */
    const struct fent *fe; /* fast: the `properties` entries, as the fast loop reads them */
    const lfast *addlf; /* fast: additionalProperties as an lfast, or NULL when absent */
    int fast;         /* every member schema has an lfast (a leaf or a boolean) */
} fplan;

typedef struct kw {
    unsigned char op;      /* K_* */
    unsigned char applies; /* T_* bits of the instance types it looks at */
    const char *name;      /* keyword name, for keyword paths (static or owned) */
    size_t nlen;           /* strlen(name) */
    const senum *se;       /* K_ENUM with only strings: the set, else NULL */
    const char *tok;       /* "/" + name: its keyword path token (finish_node) */
    size_t textn;          /* strlen(text) (a message takes text up to a NUL, as %s did);
                              K_PATTERN: the length of the source a message quotes */
    const char *text;      /* the constant part of its violation message, made once at
                              compile time (finish_node): K_TYPE the types wanted,
                              K_ENUM the allowed values, K_CONST the value, K_PROPS the
                              declared names (when additionalProperties is false) */
    union {
        unsigned types; /* K_TYPE: T_* mask */
        numlim num;     /* K_MULOF, K_MAX, K_XMAX, K_MIN, K_XMIN */
        size_t count;   /* K_MAXLEN, K_MINLEN, K_MAXITEMS, K_MINITEMS, K_*PROPS */
        const mcp_json *val; /* K_CONST value; K_ENUM array */
        regex re;            /* K_PATTERN */
        int fmt;             /* K_FORMAT: MCP__FMT_* */
        node *sub;           /* K_NOT, K_PROPNAMES, K_UNEV_ITEMS, K_UNEV_PROPS */
        nodelist list;       /* K_ALLOF, K_ANYOF, K_ONEOF, K_PREFIX */
        struct {
            node *sub;    /* schema for the items from `start` on */
            size_t start; /* first index it applies to */
        } items;          /* K_ITEMS */
        struct {
            node *sub;    /* the `contains` schema */
            size_t min;   /* minContains (default 1) */
            size_t max;   /* maxContains */
            int has_max;  /* maxContains present */
            int has_min;  /* minContains present */
        } contains;       /* K_CONTAINS */
        struct {
            node *target;  /* statically resolved target */
            sstr anchor;   /* K_DYNREF: dynamic anchor name */
            int dynamic;   /* K_DYNREF: resolve through the dynamic scope */
        } ref;             /* K_REF, K_DYNREF */
        struct {
            node *if_;   /* condition */
            node *then_; /* or NULL */
            node *else_; /* or NULL */
        } cond;          /* K_IF */
        struct {
            sstr *names; /* required property names */
            size_t n;    /* count */
        } req;           /* K_REQUIRED */
        struct {
            depreq *v; /* entries */
            size_t n;  /* count */
        } depreq;      /* K_DEPREQ */
        struct {
            depsch *v; /* entries */
            size_t n;  /* count */
        } depsch;      /* K_DEPSCHEMAS */
        props *pr;     /* K_PROPS */
    } u;
} kw;

enum { N_NEW = 0, N_QUEUED, N_DONE };

struct node {
    const mcp_json *src;   /* the schema value, in a document the schema owns */
    const char *base;      /* base URI for `$ref` (compile time) */
    resource *res;         /* schema resource it belongs to */
    const char *loc;       /* where it is, for compile errors */
    kw *kws;               /* keywords, in evaluation order */
    unsigned nkw;          /* keyword count */
    unsigned depth;        /* subschema nesting depth within its document */
    unsigned char dialect; /* D_2020 or D_7 */
    unsigned char is_bool; /* 1 for a true/false schema */
    unsigned char bool_val; /* value of a boolean schema */
    unsigned char state;   /* N_* (compile time) */
    unsigned char uneval;  /* T_OBJ / T_ARR: keeps an evaluated set for that type */
    unsigned char leaf;    /* no subschemas, no annotations: only value checks */
    unsigned char refonly; /* its only keyword is `$ref` */
    unsigned char flat;    /* only type, required, min/maxProperties, properties and
                              additionalProperties: the usual tool input schema */
    unsigned char ltypes;  /* leaf: the instance types `type` accepts (T_ANY without it) */
    unsigned char lmore;   /* leaf: instance types some keyword after `type` looks at */
    unsigned char lfirst;  /* leaf: index of the first keyword after `type` */
    unsigned char lsteps;  /* leaf: most steps it takes (1, plus 1 per `pattern`) */
    const struct fplan *fp; /* flat: its plan for the quiet fast path, or NULL */
    const lfast *lf;       /* leaf: its checks for v_flat's fast loop, or NULL */
    node *qnext;           /* compile worklist link */
    node *cnext;           /* next node in creation (document) order */
};

typedef struct anchor {
    struct anchor *next; /* next anchor of the same resource */
    sstr name;           /* anchor name */
    const mcp_json *val; /* the subschema carrying it */
    int dynamic;         /* 1 for $dynamicAnchor */
} anchor;

typedef struct dynanchor {
    sstr name;     /* anchor name */
    const node *n; /* its compiled subschema */
} dynanchor;

struct resource {
    const char *uri;     /* canonical URI without fragment */
    const mcp_json *root; /* root value of the resource */
    anchor *anchors;     /* anchors defined directly in it (compile time) */
    dynanchor *dyn;      /* its $dynamicAnchors (validation time) */
    size_t ndyn;         /* entries in dyn */
    unsigned dialect;    /* D_2020 or D_7 */
    unsigned vocab;      /* V_* bits enabled (2020-12) */
    int in_root_doc;     /* 1 when in the document being compiled */
};

struct mcp_schema {
    arena ar;                   /* nodes, keywords, strings */
    mcp_json_doc **docs;        /* owned copies: [0] the schema, then registry documents */
    size_t ndocs;               /* count */
    size_t capdocs;             /* allocated */
    pcre2_code **codes;         /* every compiled regex, freed with the schema */
    size_t ncodes;              /* count */
    size_t capcodes;            /* allocated */
    pcre2_general_context *gctx; /* routes PCRE2 allocations through mcp_malloc */
    pcre2_match_context *mctx;  /* match limits; only read during validation */
    _Atomic(pcre2_match_data *) md_cache; /* a spare match block reused across calls */
    resource **resv;            /* every resource (to fill dynamic anchors) */
    size_t nres;                /* count */
    node *root;                 /* the root subschema */
    uint64_t max_steps;         /* validation work limit per call */
    unsigned max_eval_depth;    /* validation nesting limit */
    size_t max_errors;          /* violations kept per call */
    int format_assert;          /* MCP_SCHEMA_FORMAT_ASSERT was given */
    int uses_dynamic;           /* some $dynamicRef resolves dynamically */
};

/* ======================================================================== */
/* PCRE2 glue                                                                */

static void *re_malloc(PCRE2_SIZE n, void *ud)
{
    (void)ud;
    return mcp_malloc(n ? n : 1);
}

static void re_free(void *p, void *ud)
{
    (void)ud;
    mcp_free(p);
}

/* Caps on one pattern match, so a hostile pattern cannot run away. */
#define RE_MATCH_LIMIT 1000000u
#define RE_HEAP_LIMIT_KIB 32768u

/* ECMA-262 whitespace (\s), as the body of a PCRE2 class under PCRE2_ALT_BSUX. */
#define ECMA_SPACE                                                                      \
    "\\t\\n\\x0b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000" \
    "\\ufeff"

/*
 * Rewrites an ECMA-262 pattern into PCRE2 syntax. Most of the syntax is
 * shared; what differs: `\s`/`\S` (Unicode whitespace in ECMA), `\v` (one
 * character in ECMA, a class in PCRE2), and escapes of letters ECMA does not
 * define (`\a`, `\e`, `\z`, `\Z`, `\A`, `\h`, ...) which ECMA's Unicode mode
 * rejects but PCRE2 would accept with another meaning.
 * Returns 1 on success, 0 for a pattern ECMA rejects (out->nomem on OOM).
 */
/* ECMA-262 long Unicode property names PCRE2 10.42 only knows by short name. */
static const char *const prop_alias[][2] = {
    {"Letter", "L"},
    {"Cased_Letter", "L&"},
    {"LC", "L&"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"},
    {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* Writes `\p{NAME}` with ECMA's long and prefixed names mapped to PCRE2's. */
static void put_property(sbuf *out, char e, const char *name, size_t n)
{
    static const char *const prefixes[] = {"General_Category=", "gc=", "Script=", "sc="};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t pl = strlen(prefixes[i]);
        if (n > pl && memcmp(name, prefixes[i], pl) == 0) {
            name += pl;
            n -= pl;
            break;
        }
    }
    sb_putc(out, '\\');
    sb_putc(out, e);
    sb_putc(out, '{');
    for (size_t i = 0; i < sizeof(prop_alias) / sizeof(prop_alias[0]); i++) {
        if (strlen(prop_alias[i][0]) == n && memcmp(prop_alias[i][0], name, n) == 0) {
            sb_puts(out, prop_alias[i][1]);
            sb_putc(out, '}');
            return;
        }
    }
    sb_put(out, name, n);
    sb_putc(out, '}');
}

static int ecma_translate(sbuf *out, const char *s, size_t n)
{
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 >= n)
                return 0;
            char e = s[++i];
            if (e == 's') {
                if (in_class)
                    sb_puts(out, ECMA_SPACE);
                else
                    sb_puts(out, "[" ECMA_SPACE "]");
            } else if (e == 'S' && !in_class) {
                sb_puts(out, "[^" ECMA_SPACE "]");
            } else if (e == 'v') {
                sb_puts(out, "\\x0b");
            } else if ((e == 'p' || e == 'P') && i + 1 < n && s[i + 1] == '{') {
                const char *close = memchr(s + i + 2, '}', n - i - 2);
                if (!close)
                    return 0;
                put_property(out, e, s + i + 2, (size_t)(close - (s + i + 2)));
                i = (size_t)(close - s);
            } else if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
                if (!strchr("dDwWsSbBfnrtcxukpP", e))
                    return 0;
                sb_putc(out, '\\');
                sb_putc(out, e);
            } else {
                sb_putc(out, '\\');
                sb_putc(out, e);
            }
            continue;
        }
        if (c == '(' && !in_class && i + 1 < n && s[i + 1] == '?') {
            /* ECMA groups: (?:  (?=  (?!  (?<=  (?<!  (?<name>. Inline flags
               such as (?i) and Python's (?P<name>) are not ECMA-262. */
            char g = i + 2 < n ? s[i + 2] : '\0';
            if (g != ':' && g != '=' && g != '!' && g != '<')
                return 0;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            sb_putc(out, c);
            if (i + 1 < n && s[i + 1] == '^')
                sb_putc(out, s[++i]);
            continue;
        }
        if (c == ']' && in_class)
            in_class = 0;
        sb_putc(out, c);
    }
    return 1;
}

/*
 * Compiles an ECMA-262 pattern. Returns MCP_OK, MCP_ERR_NOMEM, or
 * MCP_ERR_SCHEMA with a reason in `why`.
 */
static mcp_status re_compile(pcre2_general_context *gctx, const char *src, size_t n,
                             pcre2_code **out, char *why, size_t whycap)
{
    sbuf t;
    sb_dyn(&t);
    *out = NULL;
    if (!ecma_translate(&t, src, n)) {
        sb_release(&t);
        snprintf(why, whycap, "not an ECMA-262 regular expression (bad escape)");
        return MCP_ERR_SCHEMA;
    }
    if (t.nomem) {
        sb_release(&t);
        return MCP_ERR_NOMEM;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(gctx);
    if (!cc) {
        sb_release(&t);
        return MCP_ERR_NOMEM;
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
    int ec = 0;
    PCRE2_SIZE eo = 0;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)(t.p ? t.p : ""), t.len,
                      PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS |
                          PCRE2_NO_UTF_CHECK,
                      &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    sb_release(&t);
    if (!code) {
        if (ec == PCRE2_ERROR_HEAP_FAILED)
            return MCP_ERR_NOMEM;
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof(msg));
        snprintf(why, whycap, "%s", (const char *)msg);
        return MCP_ERR_SCHEMA;
    }
    /* JIT is a speed-up only: if it is unavailable the interpreter runs, but
       running out of memory is still reported as such. */
    if (pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == PCRE2_ERROR_NOMEMORY) {
        pcre2_code_free(code);
        return MCP_ERR_NOMEM;
    }
    *out = code;
    return MCP_OK;
}

/* ---- simple patterns ---------------------------------------------------- */

/*
 * Most `pattern`s in tool schemas are anchored runs of ASCII character
 * classes ("^CASE-[0-9]{4}-[0-9]{6}$", "^[A-Z]{3}$"), and calling PCRE2
 * for them cost several times the match itself; such patterns are matched
 * directly. A pattern qualifies when it is '^', then atoms, then an
 * optional '$'. An atom is a printable ASCII literal, an escaped ASCII
 * punctuation character, \d, \w, or a non-negated [class] of those and of
 * literal ranges, with an optional greedy quantifier (?, *, +, {n}, {n,},
 * {n,m}). An atom whose count may vary must share no character with any
 * atom after it: the greedy match is then the only possible one, so no
 * backtracking is needed. Anything else is left to PCRE2 (which compiles
 * every pattern anyway, so both agree on what is valid). The classes hold
 * ASCII only, so a non-ASCII byte of the subject matches no atom, exactly
 * as a non-ASCII character matches none of these classes.
 */
typedef struct satom {
    uint64_t set[4]; /* bytes accepted, one bit each (ASCII only: the upper half stays 0) */
    const char *lit; /* or: these exact bytes (min of them), for a run of literals */
    const unsigned char *tab; /* set as a table: tab[byte] is 1 when accepted */
    int digits;               /* the set is exactly 0-9 (checked 8 bytes at a time) */
    uint32_t min;    /* fewest repetitions */
    uint32_t max;    /* most repetitions (UINT32_MAX: no limit) */
} satom;

struct simple_re {
    satom *atoms;     /* the sequence, in order */
    size_t n;         /* atom count */
    int anchored_end; /* the pattern ends with '$' */
    const unsigned char **pos; /* when every count is fixed: the table of each position */
    size_t len;       /* and their number (the length of every match) */
    const struct sblock *blocks; /* a fixed length of 8 or more: its 8-byte blocks */
    size_t nblocks;   /* their count */
};

/*
 * Eight positions of a fixed-length pattern, checked with a few word
 * operations: the literal bytes under a mask, the [0-9] bytes with the
 * nibble test (high nibble 3, and still 3 once 6 is added), and the other
 * positions through their tables. The last block may overlap the one
 * before it. Masks are built byte by byte and loaded like the subject, so
 * they hold on any byte order.
 */
typedef struct sblock {
    uint64_t lit_mask;  /* 0xFF at each literal position */
    uint64_t lit_val;   /* the literal bytes */
    uint64_t dig_mask;  /* 0xFF at each [0-9] position */
    uint32_t off;       /* position of the block's first byte */
    uint32_t tab_bits;  /* bit j: position off + j goes through its table */
} sblock;

/* Longest fixed-length pattern matched position by position. */
#define SIMPLE_MAX_FIXED 64

#define SIMPLE_MAX_ATOMS 64

static void set_add(uint64_t set[4], unsigned ch)
{
    set[ch >> 6] |= (uint64_t)1 << (ch & 63u);
}

static void set_range(uint64_t set[4], unsigned lo, unsigned hi)
{
    for (unsigned ch = lo; ch <= hi; ch++)
        set_add(set, ch);
}

static int is_punct_ascii(char ch)
{
    return ch > 0x20 && ch < 0x7f && !(ch >= '0' && ch <= '9') && !(ch >= 'A' && ch <= 'Z') &&
           !(ch >= 'a' && ch <= 'z');
}

/* Adds the escape `\e` to a set; 0 when it is not one the direct matcher knows. */
static int simple_escape(uint64_t set[4], char e)
{
    if (e == 'd') {
        set_range(set, '0', '9');
    } else if (e == 'w') {
        set_range(set, '0', '9');
        set_range(set, 'A', 'Z');
        set_range(set, 'a', 'z');
        set_add(set, '_');
    } else if (is_punct_ascii(e)) {
        set_add(set, (unsigned char)e);
    } else {
        return 0;
    }
    return 1;
}

/* Reads a decimal count of a {n,m} quantifier; 0 when there is none or it is too big. */
static int simple_count(const char *s, size_t n, size_t *i, uint32_t *out)
{
    size_t j = *i;
    uint32_t v = 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') {
        v = v * 10 + (uint32_t)(s[j] - '0');
        if (v > 100000)
            return 0;
        j++;
    }
    if (j == *i)
        return 0;
    *i = j;
    *out = v;
    return 1;
}

/* Parses the pattern into `a`; returns the atom count, or -1 when it does not qualify. */
static int simple_parse(const char *s, size_t n, satom *a, int *anchored_end)
{
    static const char special[] = "^$\\.|?*+()[]{}";
    size_t i = 1, na = 0;
    if (n == 0 || s[0] != '^')
        return -1;
    *anchored_end = 0;
    while (i < n) {
        char ch = s[i];
        if (ch == '$') {
            if (i + 1 != n)
                return -1;
            *anchored_end = 1;
            break;
        }
        if (na == SIMPLE_MAX_ATOMS)
            return -1;
        satom *t = &a[na++];
        memset(t, 0, sizeof(*t));
        t->min = t->max = 1;
        if (ch == '\\') {
            if (i + 1 >= n || !simple_escape(t->set, s[i + 1]))
                return -1;
            i += 2;
        } else if (ch == '[') {
            i++;
            if (i >= n || s[i] == '^' || s[i] == ']')
                return -1;
            while (i < n && s[i] != ']') {
                char lo = s[i];
                if (lo == '\\') {
                    if (i + 1 >= n || !simple_escape(t->set, s[i + 1]))
                        return -1;
                    /* An escape followed by '-' (not closing the class) starts a
                       range, as in [\\-m] (from '\\' to 'm'): left to PCRE2. */
                    if (i + 2 < n && s[i + 2] == '-' && (i + 3 >= n || s[i + 3] != ']'))
                        return -1;
                    i += 2;
                    continue;
                }
                if (lo == '[' || lo < 0x20 || lo > 0x7e)
                    return -1;
                if (i + 2 < n && s[i + 1] == '-' && s[i + 2] != ']') {
                    char hi = s[i + 2];
                    if (hi == '\\' || hi == '[' || hi < 0x20 || hi > 0x7e || hi < lo)
                        return -1;
                    set_range(t->set, (unsigned char)lo, (unsigned char)hi);
                    i += 3;
                } else {
                    set_add(t->set, (unsigned char)lo);
                    i++;
                }
            }
            if (i >= n)
                return -1;
            i++; /* the ']' */
        } else if (ch >= 0x20 && ch <= 0x7e && !strchr(special, ch)) {
            set_add(t->set, (unsigned char)ch);
            i++;
        } else {
            return -1;
        }
        /* An optional greedy quantifier. */
        if (i < n && (s[i] == '?' || s[i] == '*' || s[i] == '+')) {
            t->min = s[i] == '+' ? 1 : 0;
            t->max = s[i] == '?' ? 1 : UINT32_MAX;
            i++;
        } else if (i < n && s[i] == '{') {
            i++;
            if (!simple_count(s, n, &i, &t->min))
                return -1;
            t->max = t->min;
            if (i < n && s[i] == ',') {
                i++;
                t->max = UINT32_MAX;
                if (i < n && s[i] != '}' && !simple_count(s, n, &i, &t->max))
                    return -1;
            }
            if (i >= n || s[i] != '}' || t->max < t->min)
                return -1;
            i++;
        }
        if (i < n && (s[i] == '?' || s[i] == '*' || s[i] == '+' || s[i] == '{'))
            return -1; /* lazy or stacked quantifiers */
    }
    /* A variable atom must not share a character with any later atom. */
    for (size_t x = 0; x < na; x++) {
        if (a[x].min == a[x].max)
            continue;
        for (size_t y = x + 1; y < na; y++)
            if ((a[x].set[0] & a[y].set[0]) || (a[x].set[1] & a[y].set[1]))
                return -1;
    }
    return (int)na;
}

/* The single character of a set that has exactly one, or -1. */
static int set_single(const uint64_t set[4])
{
    for (int w = 0; w < 2; w++) {
        uint64_t x = set[w];
        if (x && !(x & (x - 1)) && !set[1 - w]) {
            int b = 0;
            while (!((x >> b) & 1u))
                b++;
            return w * 64 + b;
        }
    }
    return -1;
}

/*
 * Merges runs of single literal characters (each exactly once) into one
 * literal atom, compared as bytes. Returns the new atom count; the literal
 * bytes go to `lits` (at least na bytes).
 */
static size_t simple_merge(satom *a, size_t na, char *lits)
{
    size_t out = 0, used = 0;
    for (size_t i = 0; i < na;) {
        int ch = a[i].min == 1 && a[i].max == 1 ? set_single(a[i].set) : -1;
        size_t j = i;
        if (ch >= 0) {
            char *run = lits + used;
            while (j < na && a[j].min == 1 && a[j].max == 1 && (ch = set_single(a[j].set)) >= 0) {
                lits[used++] = (char)ch;
                j++;
            }
            if (j - i > 1) {
                memset(&a[out], 0, sizeof(a[out]));
                a[out].lit = run;
                a[out].min = a[out].max = (uint32_t)(j - i);
                out++;
                i = j;
                continue;
            }
            used -= j - i;
            j = i;
        }
        a[out++] = a[i++];
    }
    return out;
}

/* A fixed-length pattern of 8 or more positions, block by block (sblock). */
static SCHEMA_INLINE int blocks_match(const simple_re *r, const char *s, size_t n)
{
    if (r->anchored_end ? n != r->len : n < r->len)
        return 0;
    const uint64_t ones = 0x0101010101010101ull;
    for (size_t b = 0; b < r->nblocks; b++) {
        const sblock *k = &r->blocks[b];
        uint64_t w = load64(s + k->off);
        if ((w ^ k->lit_val) & k->lit_mask)
            return 0;
        /* A byte of the [0-9] positions is a digit when its high nibble is 3
           and stays 3 once 6 is added. A carry out of a byte (one of 0xFA and
           above) can only disturb the next position when the byte it comes
           from fails its own check (literals and tables are ASCII), so the
           answer is the same. */
        if (((w ^ ones * 0x30u) & k->dig_mask & ones * 0xF0u) ||
            (((w + ones * 0x06u) ^ ones * 0x30u) & k->dig_mask & ones * 0xF0u))
            return 0;
        for (uint32_t t = k->tab_bits, j = 0; t; t >>= 1, j++)
            if ((t & 1u) && !r->pos[k->off + j][(unsigned char)s[k->off + j]])
                return 0;
    }
    return 1;
}

/* Does the direct matcher's pattern match the n bytes at s? */
static int simple_match(const simple_re *r, const char *s, size_t n)
{
    if (r->blocks)
        return blocks_match(r, s, n);
    if (r->pos) {
        /* A fixed-length pattern ("^[A-Z]{3}$", "^CASE-[0-9]{4}-[0-9]{6}$"): one
           table lookup per character, no per-atom bookkeeping. */
        if (r->anchored_end ? n != r->len : n < r->len)
            return 0;
        for (size_t i = 0; i < r->len; i++)
            if (!r->pos[i][(unsigned char)s[i]])
                return 0;
        return 1;
    }
    size_t pos = 0;
    for (size_t i = 0; i < r->n; i++) {
        const satom *a = &r->atoms[i];
        if (a->min == a->max) {
            /* Literal runs and fixed counts: the length is known up front. */
            if (n - pos < a->min)
                return 0;
            if (a->lit) {
                if (!bytes_eq(s + pos, a->lit, a->min))
                    return 0;
            } else {
                uint32_t k = 0;
                if (a->digits) {
                    /* Eight digits at a time: each byte must be 0x30-0x39, i.e. have
                       the high nibble 3 and stay so when 6 is added to it. */
                    for (; k + 8 <= a->min; k += 8) {
                        uint64_t w = load64(s + pos + k);
                        if ((w & 0xF0F0F0F0F0F0F0F0ull) != 0x3030303030303030ull ||
                            ((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) !=
                                0x3030303030303030ull)
                            return 0;
                    }
                    if (k + 4 <= a->min) {
                        uint32_t w = load32(s + pos + k);
                        if ((w & 0xF0F0F0F0u) != 0x30303030u ||
                            ((w + 0x06060606u) & 0xF0F0F0F0u) != 0x30303030u)
                            return 0;
                        k += 4;
                    }
                }
                for (; k < a->min; k++)
                    if (!a->tab[(unsigned char)s[pos + k]])
                        return 0;
            }
            pos += a->min;
            continue;
        }
        uint32_t cnt = 0;
        while (cnt < a->max && pos < n && a->tab[(unsigned char)s[pos]]) {
            pos++;
            cnt++;
        }
        if (cnt < a->min)
            return 0;
    }
    return !r->anchored_end || pos == n;
}

int mcp__schema_regex_valid(const char *s, size_t n)
{
    pcre2_general_context *g = pcre2_general_context_create(re_malloc, re_free, NULL);
    if (!g)
        return -1;
    pcre2_code *code = NULL;
    char why[8];
    mcp_status st = re_compile(g, s, n, &code, why, sizeof(why));
    pcre2_code_free(code);
    pcre2_general_context_free(g);
    if (st == MCP_ERR_NOMEM)
        return -1;
    return st == MCP_OK;
}

/* ======================================================================== */
/* Compiler                                                                  */

typedef struct ident {
    const char *uri; /* resource URI (no fragment) */
    resource *r;     /* the resource */
} ident;

typedef struct comp {
    mcp_schema *s;                  /* schema being built */
    const mcp_schema_registry *reg; /* registry, or NULL */
    mcp_error *err;                 /* caller's error detail */
    unsigned max_depth;             /* subschema nesting limit */
    size_t max_nodes;               /* subschema count limit */
    size_t nnodes;                  /* subschemas created */
    node **map;                     /* open-addressing table: schema value -> node */
    size_t mapcap;                  /* table size (power of two) */
    ident *ids;                     /* URI -> resource */
    size_t nids;                    /* count */
    size_t capids;                  /* allocated */
    node *qhead;                    /* worklist head */
    node *qtail;                    /* worklist tail */
    node *chead;                    /* every node, in creation order */
    node *ctail;                    /* last node created */
    sbuf loc;                       /* JSON Pointer of the value being walked */
    const char *loc_prefix;         /* "" for the root document, else "<uri>#" */
} comp;

static mcp_status nomem(comp *c)
{
    return fail_at(c->err, MCP_ERR_NOMEM, NULL, "out of memory compiling the schema");
}

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (size_t)x;
}

static node *map_get(const comp *c, const mcp_json *v)
{
    if (!c->mapcap)
        return NULL;
    size_t m = c->mapcap - 1, i = ptr_hash(v) & m;
    while (c->map[i]) {
        if (c->map[i]->src == v)
            return c->map[i];
        i = (i + 1) & m;
    }
    return NULL;
}

static int map_put(comp *c, node *n)
{
    if ((c->nnodes + 1) * 2 > c->mapcap) {
        size_t cap = c->mapcap ? c->mapcap * 2 : 64;
        node **t = (node **)mcp__calloc(cap, sizeof(*t));
        if (!t)
            return 0;
        for (size_t i = 0; i < c->mapcap; i++) {
            node *x = c->map[i];
            if (!x)
                continue;
            size_t j = ptr_hash(x->src) & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = x;
        }
        mcp_free(c->map);
        c->map = t;
        c->mapcap = cap;
    }
    size_t m = c->mapcap - 1, i = ptr_hash(n->src) & m;
    while (c->map[i])
        i = (i + 1) & m;
    c->map[i] = n;
    return 1;
}

static resource *find_resource(const comp *c, const char *uri, size_t n)
{
    for (size_t i = 0; i < c->nids; i++)
        if (strlen(c->ids[i].uri) == n && memcmp(c->ids[i].uri, uri, n) == 0)
            return c->ids[i].r;
    return NULL;
}

static mcp_status add_ident(comp *c, const char *uri, resource *r)
{
    if (find_resource(c, uri, strlen(uri)))
        return MCP_OK; /* first definition wins */
    if (c->nids == c->capids) {
        size_t cap = c->capids ? c->capids * 2 : 16;
        ident *t = (ident *)mcp_realloc(c->ids, cap * sizeof(*t));
        if (!t)
            return nomem(c);
        c->ids = t;
        c->capids = cap;
    }
    c->ids[c->nids].uri = uri;
    c->ids[c->nids].r = r;
    c->nids++;
    return MCP_OK;
}

static mcp_status add_resource_list(comp *c, resource *r)
{
    mcp_schema *s = c->s;
    if ((s->nres & (s->nres - 1)) == 0) { /* grow at powers of two */
        size_t cap = s->nres ? s->nres * 2 : 8;
        if (cap < 8)
            cap = 8;
        resource **t = (resource **)mcp_realloc(s->resv, cap * sizeof(*t));
        if (!t)
            return nomem(c);
        s->resv = t;
    }
    s->resv[s->nres++] = r;
    return MCP_OK;
}

static const char *cur_loc(comp *c)
{
    return c->loc.p ? c->loc.p : "";
}

/* Records a compile error about the node `n` (keyword `kwname`, may be NULL). */
static mcp_status bad(comp *c, const node *n, const char *kwname, mcp_status st, const char *fmt,
                      ...) MCP__PRINTF(5, 6);
static mcp_status bad(comp *c, const node *n, const char *kwname, mcp_status st, const char *fmt,
                      ...)
{
    if (!c->err)
        return st;
    char msg[MCP_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *loc = n ? n->loc : cur_loc(c);
    char ptr[MCP_ERROR_POINTER_MAX];
    snprintf(ptr, sizeof(ptr), "%s%s%s", loc, kwname ? "/" : "", kwname ? kwname : "");
    /* Long texts are cut to fit; never inside a character (the pointer is
       copied as it is, and err must stay valid UTF-8). */
    msg[utf8_trim_tail(msg, strlen(msg))] = '\0';
    ptr[utf8_trim_tail(ptr, strlen(ptr))] = '\0';
    return fail_at(c->err, st, ptr, "schema %s%s%s: %s", loc[0] ? loc : "(root)",
                   kwname ? "/" : "", kwname ? kwname : "", msg);
}

/* ---- dialect selection -------------------------------------------------- */

/* Accepts a URI with or without a trailing empty fragment. */
static int uri_is(const char *u, size_t n, const char *want)
{
    size_t w = strlen(want);
    if (n == w + 1 && u[w] == '#')
        n = w;
    return n == w && memcmp(u, want, w) == 0;
}

static const struct {
    const char *uri;
    unsigned bit;
} vocab_names[] = {
    {"https://json-schema.org/draft/2020-12/vocab/core", V_CORE},
    {"https://json-schema.org/draft/2020-12/vocab/applicator", V_APPLICATOR},
    {"https://json-schema.org/draft/2020-12/vocab/unevaluated", V_UNEVALUATED},
    {"https://json-schema.org/draft/2020-12/vocab/validation", V_VALIDATION},
    {"https://json-schema.org/draft/2020-12/vocab/meta-data", V_META},
    {"https://json-schema.org/draft/2020-12/vocab/format-annotation", V_FORMAT_ANN},
    {"https://json-schema.org/draft/2020-12/vocab/format-assertion", V_FORMAT_ASSERT},
    {"https://json-schema.org/draft/2020-12/vocab/content", V_CONTENT},
};

/*
 * Works out the dialect of a resource root from its `$schema` (or the
 * inherited one when absent). A `$schema` that is neither 2020-12 nor
 * draft-07 may name a registered meta-schema written in 2020-12; its
 * `$vocabulary` then selects the vocabularies.
 */
static mcp_status pick_dialect(comp *c, const mcp_json *v, unsigned *dialect, unsigned *vocab)
{
    const mcp_json *sc = mcp_json_get(v, "$schema");
    if (!sc)
        return MCP_OK;
    size_t n;
    const char *u = mcp_json_str(sc, &n);
    if (!u)
        return bad(c, NULL, "$schema", MCP_ERR_SCHEMA, "must be a string");
    if (uri_is(u, n, "https://json-schema.org/draft/2020-12/schema")) {
        *dialect = D_2020;
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    if (uri_is(u, n, "http://json-schema.org/draft-07/schema") ||
        uri_is(u, n, "https://json-schema.org/draft-07/schema")) {
        *dialect = D_7;
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    const regent *e = reg_find(c->reg, u, uri_nofrag_len(u));
    const mcp_json *meta = e ? mcp_json_doc_root(e->doc) : NULL;
    const mcp_json *msc = mcp_json_get(meta, "$schema");
    size_t mn;
    const char *mu = mcp_json_str(msc, &mn);
    if (!meta || !mu || !uri_is(mu, mn, "https://json-schema.org/draft/2020-12/schema"))
        return bad(c, NULL, "$schema", MCP_ERR_UNSUPPORTED,
                   "dialect \"%.*s\" is not supported (use 2020-12 or draft-07)", (int)n, u);
    const mcp_json *voc = mcp_json_get(meta, "$vocabulary");
    *dialect = D_2020;
    if (!voc) {
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    unsigned bits = 0;
    for (size_t i = 0; i < mcp_json_len(voc); i++) {
        size_t kn;
        const char *k = mcp_json_key_at(voc, i, &kn);
        unsigned bit = 0;
        for (size_t j = 0; j < sizeof(vocab_names) / sizeof(vocab_names[0]); j++)
            if (strlen(vocab_names[j].uri) == kn && memcmp(vocab_names[j].uri, k, kn) == 0)
                bit = vocab_names[j].bit;
        if (bit)
            bits |= bit;
        else if (mcp_json_bool(mcp_json_value_at(voc, i)))
            return bad(c, NULL, "$schema", MCP_ERR_UNSUPPORTED,
                       "meta-schema requires unsupported vocabulary \"%.*s\"", (int)kn, k);
    }
    *vocab = bits | V_CORE;
    return MCP_OK;
}

/* ---- discovery walk ----------------------------------------------------- */

static mcp_status walk(comp *c, const mcp_json *v, const char *base, resource *res,
                       unsigned dialect, unsigned vocab, unsigned depth, int doc_root,
                       int in_root_doc);

static mcp_status add_anchor(comp *c, resource *r, const char *name, size_t n, const mcp_json *v,
                             int dynamic)
{
    anchor *a = (anchor *)ar_zalloc(&c->s->ar, sizeof(*a));
    if (!a)
        return nomem(c);
    a->name.s = name;
    a->name.n = n;
    a->val = v;
    a->dynamic = dynamic;
    a->next = r->anchors;
    r->anchors = a;
    return MCP_OK;
}

static void enqueue(comp *c, node *n)
{
    if (n->state != N_NEW)
        return;
    n->state = N_QUEUED;
    n->qnext = NULL;
    if (c->qtail)
        c->qtail->qnext = n;
    else
        c->qhead = n;
    c->qtail = n;
}

/* Walks the subschemas under keyword `k` of `v`, shaped as the dialect says. */
static mcp_status walk_kw(comp *c, const mcp_json *v, const char *k, int shape, const char *base,
                          resource *res, unsigned dialect, unsigned vocab, unsigned depth,
                          int in_root_doc)
{
    /* shape: 0 = one schema, 1 = object of schemas, 2 = array of schemas,
       3 = one schema or an array of schemas, 4 = object of schemas or arrays. */
    const mcp_json *x = mcp_json_get(v, k);
    if (!x)
        return MCP_OK;
    size_t mark = c->loc.len;
    mcp_status st = MCP_OK;
    sb_ptr_token(&c->loc, k, strlen(k));
    mcp_json_type t = mcp_json_typeof(x);
    if (shape == 0 || ((shape == 3) && t != MCP_JSON_ARRAY)) {
        st = walk(c, x, base, res, dialect, vocab, depth + 1, 0, in_root_doc);
    } else if ((shape == 1 || shape == 4) && t == MCP_JSON_OBJECT) {
        for (size_t i = 0; i < mcp_json_len(x) && !st; i++) {
            const mcp_json *m = mcp_json_value_at(x, i);
            if (shape == 4 && mcp_json_typeof(m) == MCP_JSON_ARRAY)
                continue;
            size_t kn, mark2 = c->loc.len;
            const char *key = mcp_json_key_at(x, i, &kn);
            sb_ptr_token(&c->loc, key, kn);
            st = walk(c, m, base, res, dialect, vocab, depth + 1, 0, in_root_doc);
            c->loc.len = mark2;
            if (c->loc.p)
                c->loc.p[mark2] = '\0';
        }
    } else if ((shape == 2 || shape == 3) && t == MCP_JSON_ARRAY) {
        for (size_t i = 0; i < mcp_json_len(x) && !st; i++) {
            size_t mark2 = c->loc.len;
            sb_printf(&c->loc, "/%zu", i);
            st = walk(c, mcp_json_at(x, i), base, res, dialect, vocab, depth + 1, 0, in_root_doc);
            c->loc.len = mark2;
            if (c->loc.p)
                c->loc.p[mark2] = '\0';
        }
    }
    c->loc.len = mark;
    if (c->loc.p)
        c->loc.p[mark] = '\0';
    return st;
}

/*
 * Creates the node for schema value `v` (unless it exists) and for every
 * subschema below it, registering resources and anchors on the way.
 */
static mcp_status walk(comp *c, const mcp_json *v, const char *base, resource *res,
                       unsigned dialect, unsigned vocab, unsigned depth, int doc_root,
                       int in_root_doc)
{
    if (map_get(c, v))
        return MCP_OK;
    mcp_json_type t = mcp_json_typeof(v);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return bad(c, NULL, NULL, MCP_ERR_SCHEMA, "a schema must be an object or a boolean, not %s",
                   mcp_json_type_name(t));
    if (depth > c->max_depth)
        return bad(c, NULL, NULL, MCP_ERR_LIMIT, "subschemas nest deeper than %u levels",
                   c->max_depth);
    if (c->nnodes >= c->max_nodes)
        return bad(c, NULL, NULL, MCP_ERR_LIMIT, "more than %zu subschemas", c->max_nodes);
    arena *ar = &c->s->ar;
    mcp_status st;

    /* A new schema resource starts at a document root and at each `$id`
       (draft-07: an `$id` that is not just "#name", and not next to `$ref`). */
    const mcp_json *id = NULL;
    size_t idn = 0;
    const char *ids = NULL;
    if (t == MCP_JSON_OBJECT) {
        id = mcp_json_get(v, "$id");
        ids = mcp_json_str(id, &idn);
        if (dialect == D_7 && mcp_json_get(v, "$ref"))
            ids = NULL;
        if (id && !ids && !(dialect == D_7 && mcp_json_get(v, "$ref")))
            return bad(c, NULL, "$id", MCP_ERR_SCHEMA, "must be a string");
    }
    const char *d7_anchor = NULL;
    size_t d7_anchor_n = 0;
    if (ids && ids[0] == '#') {
        /* Fragment-only: in draft-07 "#name" is an anchor; 2020-12 allows only
           an empty fragment, which changes nothing. */
        if (dialect == D_7 && idn > 1 && ids[1] != '/') {
            d7_anchor = ids + 1;
            d7_anchor_n = idn - 1;
        }
        ids = NULL;
    }
    const char *nbase = base;
    if (ids || doc_root) {
        sbuf u;
        sb_dyn(&u);
        if (ids)
            uri_resolve(&u, base, ids, idn);
        else
            sb_puts(&u, base);
        if (u.nomem) {
            sb_release(&u);
            return nomem(c);
        }
        const char *raw = u.p ? u.p : "";
        const char *hash = strchr(raw, '#');
        size_t un = hash ? (size_t)(hash - raw) : strlen(raw);
        if (hash && dialect == D_7 && hash[1] && hash[1] != '/') {
            d7_anchor = ids + (strchr(ids, '#') - ids) + 1;
            d7_anchor_n = strlen(d7_anchor);
        }
        char *uri = ar_strndup(ar, raw, un);
        sb_release(&u);
        if (!uri)
            return nomem(c);
        unsigned nd = dialect, nv = vocab;
        if (t == MCP_JSON_OBJECT && (st = pick_dialect(c, v, &nd, &nv)) != MCP_OK)
            return st;
        resource *r = (resource *)ar_zalloc(ar, sizeof(*r));
        if (!r)
            return nomem(c);
        r->uri = uri;
        r->root = v;
        r->dialect = nd;
        r->vocab = nv;
        r->in_root_doc = in_root_doc;
        if ((st = add_resource_list(c, r)) != MCP_OK)
            return st;
        if (doc_root && ids) {
            /* The retrieval URI stays an alias of the document's own `$id`. */
            char *alias = ar_strndup(ar, base, uri_nofrag_len(base));
            if (!alias)
                return nomem(c);
            if ((st = add_ident(c, alias, r)) != MCP_OK)
                return st;
        }
        if ((st = add_ident(c, uri, r)) != MCP_OK)
            return st;
        res = r;
        nbase = uri;
        dialect = nd;
        vocab = nv;
    }

    node *n = (node *)ar_zalloc(ar, sizeof(*n));
    if (!n)
        return nomem(c);
    n->src = v;
    n->base = nbase;
    n->res = res;
    n->depth = depth;
    n->dialect = (unsigned char)dialect;
    if (t == MCP_JSON_BOOL) {
        n->is_bool = 1;
        n->bool_val = (unsigned char)mcp_json_bool(v);
    }
    {
        const char *l = cur_loc(c);
        size_t pl = strlen(c->loc_prefix), ll = strlen(l);
        char *loc = (char *)ar_alloc(ar, pl + ll + 1);
        if (!loc)
            return nomem(c);
        memcpy(loc, c->loc_prefix, pl);
        memcpy(loc + pl, l, ll + 1);
        n->loc = loc;
    }
    if (!map_put(c, n))
        return nomem(c);
    c->nnodes++;
    if (c->ctail)
        c->ctail->cnext = n;
    else
        c->chead = n;
    c->ctail = n;
    if (t == MCP_JSON_BOOL)
        return MCP_OK;

    /* Anchors. */
    if (d7_anchor && (st = add_anchor(c, res, d7_anchor, d7_anchor_n, v, 0)) != MCP_OK)
        return st;
    if (dialect == D_2020) {
        size_t an;
        const char *a = mcp_json_str(mcp_json_get(v, "$anchor"), &an);
        if (a && (st = add_anchor(c, res, a, an, v, 0)) != MCP_OK)
            return st;
        a = mcp_json_str(mcp_json_get(v, "$dynamicAnchor"), &an);
        if (a) {
            if ((st = add_anchor(c, res, a, an, v, 1)) != MCP_OK)
                return st;
            /* The dynamic scope may pick this subschema from anywhere. */
            enqueue(c, n);
        }
    }

    /* Subschemas. */
    static const struct {
        const char *k;
        int shape;
    } kws2020[] = {{"$defs", 1},
                   {"properties", 1},
                   {"patternProperties", 1},
                   {"dependentSchemas", 1},
                   {"dependencies", 4},
                   {"allOf", 2},
                   {"anyOf", 2},
                   {"oneOf", 2},
                   {"prefixItems", 2},
                   {"items", 0},
                   {"contains", 0},
                   {"additionalProperties", 0},
                   {"propertyNames", 0},
                   {"not", 0},
                   {"if", 0},
                   {"then", 0},
                   {"else", 0},
                   {"unevaluatedItems", 0},
                   {"unevaluatedProperties", 0},
                   {"contentSchema", 0}},
      kws7[] = {{"definitions", 1},
                {"properties", 1},
                {"patternProperties", 1},
                {"dependencies", 4},
                {"allOf", 2},
                {"anyOf", 2},
                {"oneOf", 2},
                {"items", 3},
                {"additionalItems", 0},
                {"contains", 0},
                {"additionalProperties", 0},
                {"propertyNames", 0},
                {"not", 0},
                {"if", 0},
                {"then", 0},
                {"else", 0}};
    size_t nk = dialect == D_7 ? sizeof(kws7) / sizeof(kws7[0]) : sizeof(kws2020) / sizeof(kws2020[0]);
    for (size_t i = 0; i < nk; i++) {
        const char *k = dialect == D_7 ? kws7[i].k : kws2020[i].k;
        int shape = dialect == D_7 ? kws7[i].shape : kws2020[i].shape;
        st = walk_kw(c, v, k, shape, nbase, res, dialect, vocab, depth, in_root_doc);
        if (st)
            return st;
    }
    return MCP_OK;
}

/* Adds a document copy to the schema's list of owned documents. */
static mcp_status own_doc(comp *c, mcp_json_doc *d)
{
    mcp_schema *s = c->s;
    if (s->ndocs == s->capdocs) {
        size_t cap = s->capdocs ? s->capdocs * 2 : 4;
        mcp_json_doc **t = (mcp_json_doc **)mcp_realloc(s->docs, cap * sizeof(*t));
        if (!t) {
            mcp_json_doc_free(d);
            return nomem(c);
        }
        s->docs = t;
        s->capdocs = cap;
    }
    s->docs[s->ndocs++] = d;
    return MCP_OK;
}

/*
 * Runs a discovery walk from `v` with the location for messages set to
 * `prefix` + `loc`; the walk in progress (if any) keeps its own location.
 */
static mcp_status walk_at(comp *c, const char *prefix, const char *loc, const mcp_json *v,
                          const char *base, resource *res, unsigned dialect, unsigned vocab,
                          unsigned depth, int doc_root, int in_root_doc)
{
    sbuf saved = c->loc;
    const char *saved_prefix = c->loc_prefix;
    sb_dyn(&c->loc);
    sb_puts(&c->loc, loc);
    c->loc_prefix = prefix;
    mcp_status st = c->loc.nomem ? nomem(c)
                                 : walk(c, v, base, res, dialect, vocab, depth, doc_root,
                                        in_root_doc);
    if (!st && c->loc.nomem)
        st = nomem(c);
    sb_release(&c->loc);
    c->loc = saved;
    c->loc_prefix = saved_prefix;
    return st;
}

/* Loads a registry document (copying it) so `uri` can be found. */
static mcp_status load_registry(comp *c, const char *uri, size_t n, unsigned dialect, int *found)
{
    *found = 0;
    const regent *e = reg_find(c->reg, uri, n);
    if (!e)
        return MCP_OK;
    mcp_json_doc *d = NULL;
    mcp_status st = copy_doc(&d, mcp_json_doc_root(e->doc), c->err);
    if (st)
        return st;
    if ((st = own_doc(c, d)) != MCP_OK)
        return st;
    /* Locations inside this document are reported as "<uri>#<pointer>". */
    size_t pl = strlen(e->uri);
    char *prefix = (char *)ar_alloc(&c->s->ar, pl + 2);
    if (!prefix)
        return nomem(c);
    memcpy(prefix, e->uri, pl);
    prefix[pl] = '#';
    prefix[pl + 1] = '\0';
    st = walk_at(c, prefix, "", mcp_json_doc_root(d), e->uri, NULL, dialect, V_ALL_2020, 0, 1, 0);
    if (st)
        return st;
    *found = 1;
    return MCP_OK;
}

/* Finds the node of a value reached through a JSON Pointer (may be new). */
static mcp_status node_for_value(comp *c, const mcp_json *v, resource *r, node **out)
{
    node *n = map_get(c, v);
    if (!n) {
        mcp_status st = walk_at(c, "", "(reference target)", v, r->uri, r, r->dialect, r->vocab,
                                0, 0, r->in_root_doc);
        if (st)
            return st;
        n = map_get(c, v);
        if (!n)
            return MCP_ERR_INTERNAL;
    }
    *out = n;
    return MCP_OK;
}

/*
 * Resolves a `$ref`/`$dynamicRef` of node `n` to its target node. For a
 * plain-name fragment, `*dyn` (may be NULL) is set when the target carries a
 * `$dynamicAnchor` of that name.
 */
static mcp_status resolve_ref(comp *c, node *n, const char *kwname, const char *ref, size_t refn,
                              node **out, int *dyn)
{
    sbuf u;
    sb_dyn(&u);
    uri_resolve(&u, n->base, ref, refn);
    if (u.nomem) {
        sb_release(&u);
        return nomem(c);
    }
    char *abs = u.p ? u.p : (char *)"";
    char *hash = strchr(abs, '#');
    size_t bn = hash ? (size_t)(hash - abs) : strlen(abs);
    char *frag = hash ? hash + 1 : NULL;
    size_t fn = frag ? pct_decode(frag, strlen(frag)) : 0;
    mcp_status st = MCP_OK;
    resource *r = find_resource(c, abs, bn);
    if (!r) {
        int found = 0;
        st = load_registry(c, abs, bn, n->dialect, &found);
        if (st == MCP_OK && found)
            r = find_resource(c, abs, bn);
    }
    if (!st && !r)
        st = bad(c, n, kwname, MCP_ERR_SCHEMA,
                 "unresolved reference \"%.*s\" (no schema with URI \"%.*s\" is known; "
                 "references are never fetched)",
                 (int)refn, ref, (int)bn, abs);
    const mcp_json *target = NULL;
    if (!st) {
        if (fn == 0) {
            target = r->root;
        } else if (frag[0] == '/') {
            target = mcp_json_pointer(r->root, frag, fn);
            if (!target)
                st = bad(c, n, kwname, MCP_ERR_SCHEMA,
                         "unresolved reference \"%.*s\" (JSON Pointer leads nowhere)", (int)refn,
                         ref);
        } else {
            for (anchor *a = r->anchors; a; a = a->next) {
                if (a->name.n == fn && memcmp(a->name.s, frag, fn) == 0) {
                    if (!target || a->dynamic)
                        target = a->val;
                    if (a->dynamic && dyn)
                        *dyn = 1;
                }
            }
            if (!target)
                st = bad(c, n, kwname, MCP_ERR_SCHEMA,
                         "unresolved reference \"%.*s\" (no anchor \"%.*s\")", (int)refn, ref,
                         (int)fn, frag);
        }
    }
    if (!st) {
        st = node_for_value(c, target, r, out);
        if (!st)
            enqueue(c, *out);
    }
    sb_release(&u);
    return st;
}

/* ---- keyword compilation ------------------------------------------------ */

/* Gets (creating if needed) and queues the node of a subschema value. */
static mcp_status child(comp *c, node *parent, const mcp_json *v, node **out)
{
    node *n = map_get(c, v);
    if (!n) {
        mcp_json_type t = mcp_json_typeof(v);
        if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
            return bad(c, parent, NULL, MCP_ERR_SCHEMA,
                       "a subschema must be an object or a boolean, not %s",
                       mcp_json_type_name(t));
        mcp_status st = walk_at(c, "", parent->loc, v, parent->base, parent->res, parent->dialect,
                                parent->res->vocab, parent->depth + 1, 0,
                                parent->res->in_root_doc);
        if (st)
            return st;
        n = map_get(c, v);
        if (!n)
            return MCP_ERR_INTERNAL;
    }
    enqueue(c, n);
    *out = n;
    return MCP_OK;
}

static int get_count(const mcp_json *v, size_t *out)
{
    mcp_json_type t = mcp_json_typeof(v);
    if (t == MCP_JSON_INT) {
        int64_t i = mcp_json_int(v);
        if (i < 0)
            return 0;
        *out = (uint64_t)i > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)i;
        return 1;
    }
    if (t == MCP_JSON_REAL) {
        double d = mcp_json_number(v);
        if (!(d >= 0) || floor(d) != d)
            return 0;
        *out = d >= 1.8e19 ? SIZE_MAX : (size_t)d;
        return 1;
    }
    return 0;
}

static int get_num(const mcp_json *v, numlim *out)
{
    mcp_json_type t = mcp_json_typeof(v);
    if (t != MCP_JSON_INT && t != MCP_JSON_REAL)
        return 0;
    out->v = v;
    out->d = mcp_json_number(v);
    out->is_int = t == MCP_JSON_INT;
    out->i = mcp_json_int(v);
    return 1;
}

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* Splits a fixed-length pattern (8 or more positions) into the blocks simple_match checks. */
static mcp_status simple_blocks(comp *c, simple_re *r, const satom *atoms, size_t na)
{
    size_t len = r->len, nb = (len + 7) / 8;
    /* What each position is: 1 a literal (its byte in lit), 2 a digit, 0 a table. */
    unsigned char kind[SIMPLE_MAX_FIXED], lit[SIMPLE_MAX_FIXED];
    size_t at = 0;
    for (size_t i = 0; i < na; i++) {
        int one = atoms[i].lit ? -1 : set_single(atoms[i].set);
        for (uint32_t k = 0; k < atoms[i].min; k++, at++) {
            kind[at] = 0;
            if (atoms[i].lit) {
                kind[at] = 1;
                lit[at] = (unsigned char)atoms[i].lit[k];
            } else if (one >= 0) {
                kind[at] = 1;
                lit[at] = (unsigned char)one;
            } else if (atoms[i].digits) {
                kind[at] = 2;
            }
        }
    }
    sblock *bl = (sblock *)ar_zalloc(&c->s->ar, nb * sizeof(sblock));
    if (!bl)
        return nomem(c);
    for (size_t b = 0; b < nb; b++) {
        size_t off = b * 8 + 8 <= len ? b * 8 : len - 8;
        unsigned char lm[8], lv[8], dm[8];
        for (size_t j = 0; j < 8; j++) {
            lm[j] = kind[off + j] == 1 ? 0xFF : 0;
            lv[j] = kind[off + j] == 1 ? lit[off + j] : 0;
            dm[j] = kind[off + j] == 2 ? 0xFF : 0;
            if (kind[off + j] == 0)
                bl[b].tab_bits |= 1u << j;
        }
        memcpy(&bl[b].lit_mask, lm, 8);
        memcpy(&bl[b].lit_val, lv, 8);
        memcpy(&bl[b].dig_mask, dm, 8);
        bl[b].off = (uint32_t)off;
    }
    r->blocks = bl;
    r->nblocks = nb;
    return MCP_OK;
}

/* Completes a compiled regex: the JIT flag and, when it qualifies, the direct-matcher form. */
static mcp_status re_prepare(comp *c, regex *re)
{
    mcp_status st;
    size_t jit_size = 0;
    re->jit = pcre2_pattern_info(re->code, PCRE2_INFO_JITSIZE, &jit_size) == 0 && jit_size > 0;
    satom tmp[SIMPLE_MAX_ATOMS];
    int anchored_end = 0;
    int na = simple_parse(re->src.s, re->src.n, tmp, &anchored_end);
    if (na < 0)
        return MCP_OK;
    simple_re *r = (simple_re *)ar_alloc(&c->s->ar, sizeof(*r));
    char *lits = (char *)ar_alloc(&c->s->ar, (size_t)na + 1);
    if (!r || !lits)
        return nomem(c);
    na = (int)simple_merge(tmp, (size_t)na, lits);
    satom *atoms = na ? (satom *)ar_alloc(&c->s->ar, (size_t)na * sizeof(satom)) : NULL;
    if (na && !atoms)
        return nomem(c);
    for (int i = 0; i < na; i++) {
        if (tmp[i].lit)
            continue;
        unsigned char *tab = (unsigned char *)ar_alloc(&c->s->ar, 256);
        if (!tab)
            return nomem(c);
        for (unsigned ch = 0; ch < 256; ch++)
            tab[ch] = (unsigned char)((tmp[i].set[ch >> 6] >> (ch & 63u)) & 1u);
        tmp[i].tab = tab;
        tmp[i].digits = tmp[i].set[0] == 0x03FF000000000000ull && !tmp[i].set[1];
    }
    if (na)
        memcpy(atoms, tmp, (size_t)na * sizeof(satom));
    r->atoms = atoms;
    r->n = (size_t)na;
    r->anchored_end = anchored_end;
    r->pos = NULL;
    r->len = 0;
    r->blocks = NULL;
    r->nblocks = 0;
    /* Every count fixed and the total short: a table per position (a literal
       character gets a table of its own, shared by its repeats). */
    size_t len = 0;
    int fixed = 1;
    for (int i = 0; i < na && fixed; i++) {
        fixed = atoms[i].min == atoms[i].max;
        len += atoms[i].min;
        if (len > SIMPLE_MAX_FIXED)
            fixed = 0;
    }
    if (fixed && len) {
        const unsigned char **pos = (const unsigned char **)ar_alloc(&c->s->ar, len * sizeof(*pos));
        const unsigned char *one[128] = {NULL};
        if (!pos)
            return nomem(c);
        size_t at = 0;
        for (int i = 0; i < na; i++) {
            for (uint32_t k = 0; k < atoms[i].min; k++, at++) {
                if (!atoms[i].lit) {
                    pos[at] = atoms[i].tab;
                    continue;
                }
                unsigned char ch = (unsigned char)atoms[i].lit[k];
                if (!one[ch & 127u]) {
                    unsigned char *t = (unsigned char *)ar_zalloc(&c->s->ar, 256);
                    if (!t)
                        return nomem(c);
                    t[ch] = 1;
                    one[ch & 127u] = t;
                }
                pos[at] = one[ch & 127u];
            }
        }
        r->pos = pos;
        r->len = len;
        if (len >= 8 && (st = simple_blocks(c, r, atoms, (size_t)na)) != MCP_OK)
            return st;
    }
    re->fast = r;
    return MCP_OK;
}

static mcp_status compile_regex(comp *c, node *n, const char *kwname, const mcp_json *v,
                                regex *out)
{
    size_t len;
    const char *src = mcp_json_str(v, &len);
    if (!src)
        return bad(c, n, kwname, MCP_ERR_SCHEMA, "pattern must be a string");
    mcp_schema *s = c->s;
    if (s->ncodes == s->capcodes) {
        size_t cap = s->capcodes ? s->capcodes * 2 : 8;
        pcre2_code **t = (pcre2_code **)mcp_realloc(s->codes, cap * sizeof(*t));
        if (!t)
            return nomem(c);
        s->codes = t;
        s->capcodes = cap;
    }
    char why[160];
    pcre2_code *code = NULL;
    mcp_status st = re_compile(s->gctx, src, len, &code, why, sizeof(why));
    if (st == MCP_ERR_NOMEM)
        return nomem(c);
    if (st)
        return bad(c, n, kwname, MCP_ERR_SCHEMA, "invalid regular expression \"%.*s\": %s",
                   (int)utf8_clip(src, len, 60), src, why);
    s->codes[s->ncodes++] = code;
    out->code = code;
    out->src.s = src;
    out->src.n = len;
    return re_prepare(c, out);
}

static mcp_status compile_list(comp *c, node *n, const char *kwname, const mcp_json *v,
                               nodelist *out, int allow_empty)
{
    if (mcp_json_typeof(v) != MCP_JSON_ARRAY || (mcp_json_len(v) == 0 && !allow_empty))
        return bad(c, n, kwname, MCP_ERR_SCHEMA, "must be a non-empty array of schemas");
    size_t cnt = mcp_json_len(v);
    out->n = 0;
    if (!cnt)
        return MCP_OK;
    out->v = (node **)ar_alloc(&c->s->ar, cnt * sizeof(node *));
    if (!out->v)
        return nomem(c);
    out->n = cnt;
    for (size_t i = 0; i < cnt; i++) {
        mcp_status st = child(c, n, mcp_json_at(v, i), &out->v[i]);
        if (st)
            return st;
    }
    return MCP_OK;
}

static mcp_status compile_names(comp *c, node *n, const char *kwname, const mcp_json *v,
                                sstr **out, size_t *cnt)
{
    if (mcp_json_typeof(v) != MCP_JSON_ARRAY)
        return bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an array of strings");
    size_t k = mcp_json_len(v);
    *cnt = k;
    *out = NULL;
    if (!k)
        return MCP_OK;
    *out = (sstr *)ar_alloc(&c->s->ar, k * sizeof(sstr));
    if (!*out)
        return nomem(c);
    for (size_t i = 0; i < k; i++) {
        (*out)[i].s = mcp_json_str(mcp_json_at(v, i), &(*out)[i].n);
        if (!(*out)[i].s)
            return bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an array of strings");
    }
    return MCP_OK;
}

static unsigned type_bit(const char *s, size_t n)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"null", T_NULL},  {"boolean", T_BOOL}, {"integer", T_INT}, {"number", T_NUM},
                 {"string", T_STR}, {"array", T_ARR},    {"object", T_OBJ}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0)
            return names[i].bit;
    return 0;
}

#define MAX_KW 48

/* The set of an `enum` whose values are all strings; *out stays NULL otherwise. */
static mcp_status make_senum(comp *c, const mcp_json *arr, const senum **out)
{
    size_t n = mcp_json_len(arr);
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (mcp_json_typeof(mcp_json_at(arr, i)) != MCP_JSON_STRING)
            return MCP_OK;
    senum *e = (senum *)ar_zalloc(&c->s->ar, sizeof(*e));
    if (!e || !(e->v = (sstr *)ar_alloc(&c->s->ar, (n ? n : 1) * sizeof(sstr))))
        return nomem(c);
    e->n = n;
    for (size_t i = 0; i < n; i++)
        e->v[i].s = mcp_json_str(mcp_json_at(arr, i), &e->v[i].n);
    if (n > 8) {
        uint32_t size = 16;
        while (size < n * 2)
            size *= 2;
        e->tab = (uint32_t *)ar_zalloc(&c->s->ar, size * sizeof(uint32_t));
        if (!e->tab)
            return nomem(c);
        e->mask = size - 1;
        for (size_t i = 0; i < n; i++) {
            uint32_t h = hash_bytes(e->v[i].s, e->v[i].n) & e->mask;
            while (e->tab[h])
                h = (h + 1) & e->mask;
            e->tab[h] = (uint32_t)i + 1;
        }
    }
    *out = e;
    return MCP_OK;
}

/* lfast of the boolean schemas. */
static const lfast lf_true = {T_ANY, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0, 0, NULL, 0};
static const lfast lf_false = {0, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0, 0, NULL, 0};

/*
 * The lfast of a leaf whose keywords all allow one (k: its nk keywords);
 * n->lf stays NULL otherwise.
 */
static mcp_status make_lfast(comp *c, node *n, const kw *k, unsigned nk)
{
    lfast f;
    memset(&f, 0, sizeof(f));
    f.types = n->ltypes;
    f.more = n->lmore;
    f.steps = 1;
    f.maxlen = SIZE_MAX;
    f.intlim = 1;
    f.lo = INT64_MIN;
    f.hi = INT64_MAX;
    int empty = 0;
    for (unsigned i = n->lfirst; i < nk; i++) {
        const kw *x = &k[i];
        switch (x->op) {
        case K_ENUM:
            if (!x->se)
                return MCP_OK;
            f.en = x->se;
            break;
        case K_MULOF:
        case K_MAX:
        case K_XMAX:
        case K_MIN:
        case K_XMIN:
            if (f.nnums && &f.nums[f.nnums] != x)
                return MCP_OK; /* compile_node keeps them together; be sure */
            if (!f.nnums)
                f.nums = x;
            f.nnums++;
            if (x->op == K_MULOF || !x->u.num.is_int) {
                f.intlim = 0;
            } else {
                int64_t m = x->u.num.i;
                if (x->op == K_MIN || x->op == K_XMIN) {
                    if (x->op == K_XMIN && m == INT64_MAX)
                        empty = 1;
                    else if (x->op == K_XMIN)
                        m++;
                    if (m > f.lo)
                        f.lo = m;
                } else {
                    if (x->op == K_XMAX && m == INT64_MIN)
                        empty = 1;
                    else if (x->op == K_XMAX)
                        m--;
                    if (m < f.hi)
                        f.hi = m;
                }
            }
            break;
        case K_MAXLEN:
            f.maxlen = x->u.count;
            break;
        case K_MINLEN:
            f.minlen = x->u.count;
            break;
        case K_PATTERN:
            if (!x->u.re.fast)
                return MCP_OK;
            f.re = &x->u.re;
            break;
        default:
            return MCP_OK;
        }
    }
    if (empty) {
        f.lo = INT64_MAX;
        f.hi = INT64_MIN;
    }
    lfast *p = (lfast *)ar_alloc(&c->s->ar, sizeof(*p));
    if (!p)
        return nomem(c);
    *p = f;
    n->lf = p;
    return MCP_OK;
}

/* Keywords that only check the value itself: no subschema, no annotation. */
static int op_is_leaf(int op)
{
    switch (op) {
    case K_TYPE:
    case K_ENUM:
    case K_CONST:
    case K_MULOF:
    case K_MAX:
    case K_XMAX:
    case K_MIN:
    case K_XMIN:
    case K_MAXLEN:
    case K_MINLEN:
    case K_PATTERN:
    case K_FORMAT:
    case K_MAXITEMS:
    case K_MINITEMS:
    case K_MAXPROPS:
    case K_MINPROPS:
    case K_REQUIRED:
        return 1;
    default:
        return 0;
    }
}

/* Compiles one node's keywords (its subschemas are queued, not compiled here). */
static mcp_status compile_node(comp *c, node *n)
{
    n->state = N_DONE;
    if (n->is_bool)
        return MCP_OK;
    const mcp_json *v = n->src;
    unsigned voc = n->dialect == D_7 ? V_ALL_2020 : n->res->vocab;
    int d7 = n->dialect == D_7;
    kw k[MAX_KW];
    unsigned nk = 0;
    mcp_status st;
    const mcp_json *x;
    memset(k, 0, sizeof(k));

#define NEWKW(OP, NAME, APPLIES)                                                         \
    do {                                                                                 \
        k[nk].op = (OP);                                                                 \
        k[nk].name = (NAME);                                                             \
        k[nk].nlen = strlen(NAME);                                                       \
        k[nk].applies = (unsigned char)(APPLIES);                                        \
    } while (0)
#define PUSH() (nk++)

    /* $ref: in draft-07 it overrides every sibling keyword. */
    if ((x = mcp_json_get(v, "$ref")) != NULL) {
        size_t rn;
        const char *r = mcp_json_str(x, &rn);
        if (!r)
            return bad(c, n, "$ref", MCP_ERR_SCHEMA, "must be a string");
        NEWKW(K_REF, "$ref", T_ANY);
        if ((st = resolve_ref(c, n, "$ref", r, rn, &k[nk].u.ref.target, NULL)) != MCP_OK)
            return st;
        PUSH();
        if (d7)
            goto done;
    }
    if (!d7 && (x = mcp_json_get(v, "$dynamicRef")) != NULL) {
        size_t rn;
        const char *r = mcp_json_str(x, &rn);
        if (!r)
            return bad(c, n, "$dynamicRef", MCP_ERR_SCHEMA, "must be a string");
        NEWKW(K_DYNREF, "$dynamicRef", T_ANY);
        int dyn = 0;
        if ((st = resolve_ref(c, n, "$dynamicRef", r, rn, &k[nk].u.ref.target, &dyn)) != MCP_OK)
            return st;
        if (dyn) {
            const char *h = memchr(r, '#', rn);
            k[nk].u.ref.dynamic = 1;
            k[nk].u.ref.anchor.s = h + 1;
            k[nk].u.ref.anchor.n = rn - (size_t)(h + 1 - r);
            c->s->uses_dynamic = 1;
        }
        PUSH();
    }

    if (voc & V_VALIDATION) {
        if ((x = mcp_json_get(v, "type")) != NULL) {
            unsigned mask = 0;
            if (mcp_json_typeof(x) == MCP_JSON_STRING) {
                size_t tn;
                const char *ts = mcp_json_str(x, &tn);
                mask = type_bit(ts, tn);
                if (!mask)
                    return bad(c, n, "type", MCP_ERR_SCHEMA, "unknown type \"%.*s\"", (int)tn, ts);
            } else if (mcp_json_typeof(x) == MCP_JSON_ARRAY) {
                for (size_t i = 0; i < mcp_json_len(x); i++) {
                    size_t tn;
                    const char *ts = mcp_json_str(mcp_json_at(x, i), &tn);
                    unsigned b = ts ? type_bit(ts, tn) : 0;
                    if (!b)
                        return bad(c, n, "type", MCP_ERR_SCHEMA, "unknown type in array");
                    mask |= b;
                }
            } else {
                return bad(c, n, "type", MCP_ERR_SCHEMA, "must be a string or an array");
            }
            NEWKW(K_TYPE, "type", T_ANY);
            k[nk].u.types = mask;
            PUSH();
        }
        if ((x = mcp_json_get(v, "enum")) != NULL) {
            if (mcp_json_typeof(x) != MCP_JSON_ARRAY)
                return bad(c, n, "enum", MCP_ERR_SCHEMA, "must be an array");
            NEWKW(K_ENUM, "enum", T_ANY);
            k[nk].u.val = x;
            if ((st = make_senum(c, x, &k[nk].se)) != MCP_OK)
                return st;
            PUSH();
        }
        if ((x = mcp_json_get(v, "const")) != NULL) {
            NEWKW(K_CONST, "const", T_ANY);
            k[nk].u.val = x;
            PUSH();
        }
        static const struct {
            const char *name;
            int op;
        } nums[] = {{"multipleOf", K_MULOF},
                    {"maximum", K_MAX},
                    {"exclusiveMaximum", K_XMAX},
                    {"minimum", K_MIN},
                    {"exclusiveMinimum", K_XMIN}};
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
            if ((x = mcp_json_get(v, nums[i].name)) == NULL)
                continue;
            NEWKW(nums[i].op, nums[i].name, T_NUM);
            if (!get_num(x, &k[nk].u.num))
                return bad(c, n, nums[i].name, MCP_ERR_SCHEMA, "must be a number");
            if (nums[i].op == K_MULOF && !(k[nk].u.num.d > 0))
                return bad(c, n, nums[i].name, MCP_ERR_SCHEMA, "must be greater than 0");
            PUSH();
        }
        static const struct {
            const char *name;
            int op;
            unsigned applies;
        } counts[] = {{"maxLength", K_MAXLEN, T_STR},       {"minLength", K_MINLEN, T_STR},
                      {"maxItems", K_MAXITEMS, T_ARR},      {"minItems", K_MINITEMS, T_ARR},
                      {"maxProperties", K_MAXPROPS, T_OBJ}, {"minProperties", K_MINPROPS, T_OBJ}};
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            if ((x = mcp_json_get(v, counts[i].name)) == NULL)
                continue;
            NEWKW(counts[i].op, counts[i].name, counts[i].applies);
            if (!get_count(x, &k[nk].u.count))
                return bad(c, n, counts[i].name, MCP_ERR_SCHEMA,
                           "must be a non-negative integer");
            PUSH();
        }
        if ((x = mcp_json_get(v, "pattern")) != NULL) {
            NEWKW(K_PATTERN, "pattern", T_STR);
            if ((st = compile_regex(c, n, "pattern", x, &k[nk].u.re)) != MCP_OK)
                return st;
            PUSH();
        }
        if ((x = mcp_json_get(v, "uniqueItems")) != NULL) {
            if (mcp_json_typeof(x) != MCP_JSON_BOOL)
                return bad(c, n, "uniqueItems", MCP_ERR_SCHEMA, "must be a boolean");
            if (mcp_json_bool(x)) {
                NEWKW(K_UNIQUE, "uniqueItems", T_ARR);
                PUSH();
            }
        }
        if ((x = mcp_json_get(v, "required")) != NULL) {
            NEWKW(K_REQUIRED, "required", T_OBJ);
            if ((st = compile_names(c, n, "required", x, &k[nk].u.req.names, &k[nk].u.req.n)))
                return st;
            if (k[nk].u.req.n)
                PUSH();
        }
    }
    if ((x = mcp_json_get(v, "format")) != NULL &&
        ((c->s->format_assert && (d7 || (voc & (V_FORMAT_ANN | V_FORMAT_ASSERT)))) ||
         (!d7 && (voc & V_FORMAT_ASSERT)))) {
        size_t fl;
        const char *f = mcp_json_str(x, &fl);
        if (!f)
            return bad(c, n, "format", MCP_ERR_SCHEMA, "must be a string");
        int id = mcp__schema_format_id(f, fl);
        if (id != MCP__FMT_NONE) {
            NEWKW(K_FORMAT, "format", T_STR);
            k[nk].u.fmt = id;
            PUSH();
        }
    }

    /* dependentRequired (2020-12) and the array half of `dependencies`. */
    for (int pass = 0; pass < 2; pass++) {
        const char *kwname = pass == 0 ? "dependentRequired" : "dependencies";
        if (pass == 0 && (d7 || !(voc & V_VALIDATION)))
            continue;
        if ((x = mcp_json_get(v, kwname)) == NULL)
            continue;
        if (mcp_json_typeof(x) != MCP_JSON_OBJECT)
            return bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an object");
        size_t cnt = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++)
            if (pass == 0 || mcp_json_typeof(mcp_json_value_at(x, i)) == MCP_JSON_ARRAY)
                cnt++;
        if (!cnt)
            continue;
        NEWKW(K_DEPREQ, kwname, T_OBJ);
        depreq *d = (depreq *)ar_zalloc(&c->s->ar, cnt * sizeof(*d));
        if (!d)
            return nomem(c);
        size_t j = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++) {
            const mcp_json *m = mcp_json_value_at(x, i);
            if (pass == 1 && mcp_json_typeof(m) != MCP_JSON_ARRAY)
                continue;
            d[j].key.s = mcp_json_key_at(x, i, &d[j].key.n);
            if ((st = compile_names(c, n, kwname, m, &d[j].names, &d[j].n)))
                return st;
            j++;
        }
        k[nk].u.depreq.v = d;
        k[nk].u.depreq.n = cnt;
        PUSH();
    }

    if (voc & V_APPLICATOR) {
        /* Arrays. */
        size_t nprefix = 0;
        const char *items_kw = d7 ? "additionalItems" : "items";
        const mcp_json *pfx = mcp_json_get(v, d7 ? "items" : "prefixItems");
        if (pfx && (!d7 || mcp_json_typeof(pfx) == MCP_JSON_ARRAY)) {
            NEWKW(K_PREFIX, d7 ? "items" : "prefixItems", T_ARR);
            /* draft-07 allows an empty `items` array. */
            if ((st = compile_list(c, n, k[nk].name, pfx, &k[nk].u.list, d7)) != MCP_OK)
                return st;
            nprefix = k[nk].u.list.n;
            PUSH();
        } else if (d7 && pfx) {
            items_kw = NULL;
            NEWKW(K_ITEMS, "items", T_ARR);
            if ((st = child(c, n, pfx, &k[nk].u.items.sub)) != MCP_OK)
                return st;
            k[nk].u.items.start = 0;
            PUSH();
        }
        if (items_kw && (!d7 || pfx) && (x = mcp_json_get(v, items_kw)) != NULL) {
            NEWKW(K_ITEMS, items_kw, T_ARR);
            if ((st = child(c, n, x, &k[nk].u.items.sub)) != MCP_OK)
                return st;
            k[nk].u.items.start = nprefix;
            PUSH();
        }
        if ((x = mcp_json_get(v, "contains")) != NULL) {
            NEWKW(K_CONTAINS, "contains", T_ARR);
            if ((st = child(c, n, x, &k[nk].u.contains.sub)) != MCP_OK)
                return st;
            k[nk].u.contains.min = 1;
            const mcp_json *mn = d7 ? NULL : mcp_json_get(v, "minContains");
            const mcp_json *mx = d7 ? NULL : mcp_json_get(v, "maxContains");
            if (mn && (voc & V_VALIDATION)) {
                if (!get_count(mn, &k[nk].u.contains.min))
                    return bad(c, n, "minContains", MCP_ERR_SCHEMA,
                               "must be a non-negative integer");
                k[nk].u.contains.has_min = 1;
            }
            if (mx && (voc & V_VALIDATION)) {
                if (!get_count(mx, &k[nk].u.contains.max))
                    return bad(c, n, "maxContains", MCP_ERR_SCHEMA,
                               "must be a non-negative integer");
                k[nk].u.contains.has_max = 1;
            }
            PUSH();
        }

        /* Objects: properties, patternProperties, additionalProperties in one pass. */
        const mcp_json *pp = mcp_json_get(v, "properties");
        const mcp_json *pat = mcp_json_get(v, "patternProperties");
        const mcp_json *ap = mcp_json_get(v, "additionalProperties");
        if (pp || pat || ap) {
            if ((pp && mcp_json_typeof(pp) != MCP_JSON_OBJECT) ||
                (pat && mcp_json_typeof(pat) != MCP_JSON_OBJECT))
                return bad(c, n, pp && mcp_json_typeof(pp) != MCP_JSON_OBJECT
                                     ? "properties"
                                     : "patternProperties",
                           MCP_ERR_SCHEMA, "must be an object");
            props *pr = (props *)ar_zalloc(&c->s->ar, sizeof(*pr));
            if (!pr)
                return nomem(c);
            pr->has_props = pp != NULL;
            pr->n = mcp_json_len(pp);
            if (pr->n) {
                pr->ents = (propent *)ar_zalloc(&c->s->ar, pr->n * sizeof(propent));
                if (!pr->ents)
                    return nomem(c);
                for (size_t i = 0; i < pr->n; i++) {
                    propent *e = &pr->ents[i];
                    e->key.s = mcp_json_key_at(pp, i, &e->key.n);
                    e->hash = hash_bytes(e->key.s, e->key.n);
                    if ((st = child(c, n, mcp_json_value_at(pp, i), &e->n)) != MCP_OK)
                        return st;
                }
                /* Repeated keys (the last one counts): found here for small
                   `properties`, while building the table for large ones. */
                if (pr->n <= 8)
                    for (size_t i = 0; i < pr->n; i++)
                        for (size_t j = i + 1; j < pr->n; j++)
                            if (pr->ents[i].key.n == pr->ents[j].key.n &&
                                memcmp(pr->ents[i].key.s, pr->ents[j].key.s,
                                       pr->ents[i].key.n) == 0)
                                pr->dups = 1;
                if (pr->n > 8) {
                    uint32_t size = 16;
                    while (size < pr->n * 2)
                        size *= 2;
                    pr->tab = (uint32_t *)ar_zalloc(&c->s->ar, size * sizeof(uint32_t));
                    if (!pr->tab)
                        return nomem(c);
                    pr->mask = size - 1;
                    /* Later duplicates of a key override earlier ones, as lookup does. */
                    for (size_t i = 0; i < pr->n; i++) {
                        uint32_t h = pr->ents[i].hash & pr->mask;
                        while (pr->tab[h]) {
                            propent *o = &pr->ents[pr->tab[h] - 1];
                            if (o->key.n == pr->ents[i].key.n &&
                                memcmp(o->key.s, pr->ents[i].key.s, o->key.n) == 0) {
                                pr->dups = 1;
                                break;
                            }
                            h = (h + 1) & pr->mask;
                        }
                        pr->tab[h] = (uint32_t)i + 1;
                    }
                }
            }
            pr->npats = mcp_json_len(pat);
            if (pr->npats) {
                pr->pats = (patent *)ar_zalloc(&c->s->ar, pr->npats * sizeof(patent));
                if (!pr->pats)
                    return nomem(c);
                for (size_t i = 0; i < pr->npats; i++) {
                    patent *e = &pr->pats[i];
                    size_t kl;
                    const char *key = mcp_json_key_at(pat, i, &kl);
                    /* The member name is the regex source. */
                    e->re.src.s = key;
                    e->re.src.n = kl;
                    char why[160];
                    mcp_schema *s = c->s;
                    if (s->ncodes == s->capcodes) {
                        size_t cap = s->capcodes ? s->capcodes * 2 : 8;
                        pcre2_code **t = (pcre2_code **)mcp_realloc(s->codes, cap * sizeof(*t));
                        if (!t)
                            return nomem(c);
                        s->codes = t;
                        s->capcodes = cap;
                    }
                    st = re_compile(s->gctx, key, kl, &e->re.code, why, sizeof(why));
                    if (st == MCP_ERR_NOMEM)
                        return nomem(c);
                    if (st)
                        return bad(c, n, "patternProperties", MCP_ERR_SCHEMA,
                                   "invalid regular expression \"%.*s\": %s",
                                   (int)utf8_clip(key, kl, 60), key, why);
                    s->codes[s->ncodes++] = e->re.code;
                    if ((st = re_prepare(c, &e->re)) != MCP_OK)
                        return st;
                    if ((st = child(c, n, mcp_json_value_at(pat, i), &e->n)) != MCP_OK)
                        return st;
                }
            }
            if (ap && (st = child(c, n, ap, &pr->add)) != MCP_OK)
                return st;
            NEWKW(K_PROPS, pp ? "properties" : pat ? "patternProperties" : "additionalProperties",
                  T_OBJ);
            k[nk].u.pr = pr;
            PUSH();
        }
        if ((x = mcp_json_get(v, "propertyNames")) != NULL) {
            NEWKW(K_PROPNAMES, "propertyNames", T_OBJ);
            if ((st = child(c, n, x, &k[nk].u.sub)) != MCP_OK)
                return st;
            PUSH();
        }
        /* dependentSchemas and the schema half of `dependencies`. */
        for (int pass = 0; pass < 2; pass++) {
            const char *kwname = pass == 0 ? "dependentSchemas" : "dependencies";
            if (pass == 0 && d7)
                continue;
            if ((x = mcp_json_get(v, kwname)) == NULL)
                continue;
            if (mcp_json_typeof(x) != MCP_JSON_OBJECT)
                return bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an object");
            size_t cnt = 0;
            for (size_t i = 0; i < mcp_json_len(x); i++)
                if (mcp_json_typeof(mcp_json_value_at(x, i)) != MCP_JSON_ARRAY)
                    cnt++;
            if (!cnt)
                continue;
            depsch *d = (depsch *)ar_zalloc(&c->s->ar, cnt * sizeof(*d));
            if (!d)
                return nomem(c);
            size_t j = 0;
            for (size_t i = 0; i < mcp_json_len(x); i++) {
                const mcp_json *m = mcp_json_value_at(x, i);
                if (mcp_json_typeof(m) == MCP_JSON_ARRAY)
                    continue;
                d[j].key.s = mcp_json_key_at(x, i, &d[j].key.n);
                if ((st = child(c, n, m, &d[j].n)) != MCP_OK)
                    return st;
                j++;
            }
            NEWKW(K_DEPSCHEMAS, kwname, T_OBJ);
            k[nk].u.depsch.v = d;
            k[nk].u.depsch.n = cnt;
            PUSH();
        }
        static const struct {
            const char *name;
            int op;
        } lists[] = {{"allOf", K_ALLOF}, {"anyOf", K_ANYOF}, {"oneOf", K_ONEOF}};
        for (size_t i = 0; i < 3; i++) {
            if ((x = mcp_json_get(v, lists[i].name)) == NULL)
                continue;
            NEWKW(lists[i].op, lists[i].name, T_ANY);
            if ((st = compile_list(c, n, lists[i].name, x, &k[nk].u.list, 0)) != MCP_OK)
                return st;
            PUSH();
        }
        if ((x = mcp_json_get(v, "not")) != NULL) {
            NEWKW(K_NOT, "not", T_ANY);
            if ((st = child(c, n, x, &k[nk].u.sub)) != MCP_OK)
                return st;
            PUSH();
        }
        if ((x = mcp_json_get(v, "if")) != NULL) {
            NEWKW(K_IF, "if", T_ANY);
            if ((st = child(c, n, x, &k[nk].u.cond.if_)) != MCP_OK)
                return st;
            const mcp_json *th = mcp_json_get(v, "then"), *el = mcp_json_get(v, "else");
            if (th && (st = child(c, n, th, &k[nk].u.cond.then_)) != MCP_OK)
                return st;
            if (el && (st = child(c, n, el, &k[nk].u.cond.else_)) != MCP_OK)
                return st;
            /* `if` alone still matters to unevaluated*: its annotations count. */
            PUSH();
        }
    }
    if (!d7 && (voc & V_UNEVALUATED)) {
        if ((x = mcp_json_get(v, "unevaluatedItems")) != NULL) {
            NEWKW(K_UNEV_ITEMS, "unevaluatedItems", T_ARR);
            if ((st = child(c, n, x, &k[nk].u.sub)) != MCP_OK)
                return st;
            n->uneval |= T_ARR;
            PUSH();
        }
        if ((x = mcp_json_get(v, "unevaluatedProperties")) != NULL) {
            NEWKW(K_UNEV_PROPS, "unevaluatedProperties", T_OBJ);
            if ((st = child(c, n, x, &k[nk].u.sub)) != MCP_OK)
                return st;
            n->uneval |= T_OBJ;
            PUSH();
        }
    }
#undef NEWKW
#undef PUSH
done:
    if (nk) {
        n->kws = (kw *)ar_alloc(&c->s->ar, nk * sizeof(kw));
        if (!n->kws)
            return nomem(c);
        memcpy(n->kws, k, nk * sizeof(kw));
        n->nkw = nk;
    }
    n->leaf = 1;
    for (unsigned i = 0; i < nk; i++)
        if (!op_is_leaf(k[i].op))
            n->leaf = 0;
    if (n->leaf) {
        /* What v_leaf needs at hand: `type` (always first when present), then
           whether anything else looks at the instance's type at all. */
        unsigned ki = 0;
        n->ltypes = T_ANY;
        if (nk && k[0].op == K_TYPE) {
            n->ltypes = (unsigned char)k[0].u.types;
            ki = 1;
        }
        n->lfirst = (unsigned char)ki;
        n->lsteps = 1;
        for (; ki < nk; ki++) {
            n->lmore |= k[ki].applies;
            n->lsteps += k[ki].op == K_PATTERN;
        }
        if ((st = make_lfast(c, n, n->kws, nk)) != MCP_OK)
            return st;
    }
    n->refonly = nk == 1 && k[0].op == K_REF;
    n->flat = !n->leaf && !n->uneval;
    for (unsigned i = 0; i < nk; i++)
        if (!(k[i].op == K_TYPE || k[i].op == K_REQUIRED || k[i].op == K_MINPROPS ||
              k[i].op == K_MAXPROPS || (k[i].op == K_PROPS && k[i].u.pr->npats == 0)))
            n->flat = 0;
    return MCP_OK;
}

static void put_value(sbuf *b, const mcp_json *v, size_t max);
static void put_allowed(sbuf *b, const props *pr);

/* The keyword path tokens of the keywords compile_node makes (static, so not kept per keyword). */
static const char *const kw_tokens[] = {
    "/$ref",          "/$dynamicRef",      "/type",          "/enum",
    "/const",         "/multipleOf",       "/maximum",       "/exclusiveMaximum",
    "/minimum",       "/exclusiveMinimum", "/maxLength",     "/minLength",
    "/maxItems",      "/minItems",         "/maxProperties", "/minProperties",
    "/pattern",       "/uniqueItems",      "/required",      "/format",
    "/dependentRequired", "/dependencies", "/prefixItems",   "/items",
    "/additionalItems", "/contains",       "/properties",    "/patternProperties",
    "/additionalProperties", "/propertyNames", "/dependentSchemas", "/allOf",
    "/anyOf",         "/oneOf",            "/not",           "/if",
    "/unevaluatedItems", "/unevaluatedProperties"};

/* Keeps the text of a fixed buffer (all w->len bytes) in the arena, as a keyword's message part. */
static mcp_status keep_text(comp *c, const sbuf *w, kw *k)
{
    char *t = ar_strndup(&c->s->ar, w->p, w->len);
    if (!t)
        return nomem(c);
    k->text = t;
    k->textn = strlen(t);
    return MCP_OK;
}

/*
 * Finishes a compiled node once every node is compiled: the constant parts
 * of its violation messages (exactly what the reporting path used to put
 * together at each violation, into buffers of the same sizes, so the cuts
 * are the same), what a leaf checks, and the plan of a flat node.
 */
static mcp_status finish_node(comp *c, node *n)
{
    if (n->state != N_DONE || n->is_bool)
        return MCP_OK;
    mcp_status st;
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        kw *k = &n->kws[ki];
        char buf[200];
        sbuf w;
        /* Keyword names are plain words: the token is '/' and the name. */
        for (size_t i = 0; i < sizeof(kw_tokens) / sizeof(kw_tokens[0]) && !k->tok; i++)
            if (strcmp(kw_tokens[i] + 1, k->name) == 0)
                k->tok = kw_tokens[i];
        if (!k->tok) {
            char *tok = (char *)ar_alloc(&c->s->ar, k->nlen + 2);
            if (!tok)
                return nomem(c);
            tok[0] = '/';
            memcpy(tok + 1, k->name, k->nlen + 1);
            k->tok = tok;
        }
        if (k->op == K_PATTERN) {
            /* The message quotes at most 100 bytes of the source, and (as %.*s
               did) nothing from a NUL on. */
            size_t clip = utf8_clip(k->u.re.src.s, k->u.re.src.n, 100);
            const char *z = (const char *)memchr(k->u.re.src.s, '\0', clip);
            k->textn = z ? (size_t)(z - k->u.re.src.s) : clip;
        }
        if (k->op == K_PROPS) {
            props *pr = k->u.pr;
            for (size_t i = 0; i < pr->n; i++) {
                sbuf t;
                sb_dyn(&t);
                sb_puts(&t, "/properties");
                sb_ptr_token(&t, pr->ents[i].key.s, pr->ents[i].key.n);
                if (t.nomem || !(pr->ents[i].kptok.s = ar_strndup(&c->s->ar, t.p, t.len))) {
                    sb_release(&t);
                    return nomem(c);
                }
                pr->ents[i].kptok.n = t.len;
                sb_release(&t);
            }
        }
        if (k->op == K_TYPE) {
            static const char *const names[] = {"null",   "boolean", "integer", "number",
                                                "string", "array",   "object"};
            sb_fixed(&w, buf, 96);
            int cnt = 0;
            for (unsigned b = 0; b < 7; b++)
                if (k->u.types & (1u << b)) {
                    if (cnt++)
                        sb_puts(&w, " or ");
                    sb_puts(&w, names[b]);
                }
            if ((st = keep_text(c, &w, k)) != MCP_OK)
                return st;
        } else if (k->op == K_ENUM) {
            sb_fixed(&w, buf, 200);
            for (size_t i = 0; i < mcp_json_len(k->u.val); i++) {
                if (w.len > 150) {
                    sb_puts(&w, ", ...");
                    break;
                }
                if (i)
                    sb_puts(&w, ", ");
                put_value(&w, mcp_json_at(k->u.val, i), 40);
            }
            if ((st = keep_text(c, &w, k)) != MCP_OK)
                return st;
        } else if (k->op == K_CONST) {
            sb_fixed(&w, buf, 120);
            put_value(&w, k->u.val, 80);
            if ((st = keep_text(c, &w, k)) != MCP_OK)
                return st;
        } else if (k->op == K_PROPS && k->u.pr->add && k->u.pr->add->is_bool &&
                   !k->u.pr->add->bool_val) {
            sb_fixed(&w, buf, 200);
            put_allowed(&w, k->u.pr);
            if ((st = keep_text(c, &w, k)) != MCP_OK)
                return st;
        }
    }
    if (!n->flat)
        return MCP_OK;
    fplan *fp = (fplan *)ar_zalloc(&c->s->ar, sizeof(*fp));
    if (!fp)
        return nomem(c);
    fp->maxp = SIZE_MAX;
    const kw *req = NULL;
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (k->op == K_MINPROPS)
            fp->minp = k->u.count;
        else if (k->op == K_MAXPROPS)
            fp->maxp = k->u.count;
        else if (k->op == K_REQUIRED)
            req = k;
        else if (k->op == K_PROPS)
            fp->pr = k->u.pr;
    }
    const props *pr = fp->pr;
    if (pr && pr->n > 64)
        return MCP_OK; /* no plan: the general loop */
    if (req) {
        sstr *x = (sstr *)ar_alloc(&c->s->ar, req->u.req.n * sizeof(sstr));
        if (!x)
            return nomem(c);
        for (size_t i = 0; i < req->u.req.n; i++) {
            const sstr *r = &req->u.req.names[i];
            /* The entry a lookup finds: with repeated keys, the last one. */
            size_t hit = SIZE_MAX;
            for (size_t j = 0; pr && j < pr->n; j++)
                if (pr->ents[j].key.n == r->n && bytes_eq(pr->ents[j].key.s, r->s, r->n))
                    hit = j;
            if (hit != SIZE_MAX)
                fp->reqmask |= (uint64_t)1 << hit;
            else
                x[fp->nxreq++] = *r;
        }
        fp->xreq = x;
    }
    /* A bound on the steps of a member (so v_flat can check the limits once
       for all of them) exists when no member schema can do more than a leaf. */
    unsigned most = 1;
    int bounded = pr != NULL;
    for (size_t i = 0; pr && i <= pr->n; i++) {
        const node *m = i < pr->n ? pr->ents[i].n : pr->add;
        if (!m || m->is_bool)
            continue;
        if (!m->leaf || m->state != N_DONE)
            bounded = 0;
        else if (m->lsteps > most)
            most = m->lsteps;
    }
    fp->steps = bounded ? most : 0;
    /* Every member schema a boolean or a leaf with an lfast: the fast loop. */
    if (pr) {
        fent *fe = (fent *)ar_alloc(&c->s->ar, (pr->n + 1) * sizeof(*fe));
        if (!fe)
            return nomem(c);
        fp->fast = 1;
        for (size_t i = 0; i <= pr->n; i++) {
            const node *m = i < pr->n ? pr->ents[i].n : pr->add;
            const lfast *f = NULL;
            if (m && m->is_bool)
                f = m->bool_val ? &lf_true : &lf_false;
            else if (m && m->state == N_DONE && m->leaf)
                f = m->lf;
            if (m && !f)
                fp->fast = 0;
            if (i < pr->n) {
                fe[i].key = pr->ents[i].key.s;
                fe[i].n = pr->ents[i].key.n;
                fe[i].lf = f;
            } else {
                fp->addlf = f;
            }
        }
        fp->fe = fe;
    }
    n->fp = fp;
    return MCP_OK;
}

/* Fills each resource's table of compiled $dynamicAnchors. */
static mcp_status link_dynamic(comp *c)
{
    for (size_t i = 0; i < c->s->nres; i++) {
        resource *r = c->s->resv[i];
        size_t cnt = 0;
        for (anchor *a = r->anchors; a; a = a->next)
            cnt += a->dynamic != 0;
        if (!cnt)
            continue;
        r->dyn = (dynanchor *)ar_zalloc(&c->s->ar, cnt * sizeof(dynanchor));
        if (!r->dyn)
            return nomem(c);
        for (anchor *a = r->anchors; a; a = a->next) {
            if (!a->dynamic)
                continue;
            node *n = map_get(c, a->val);
            if (!n)
                return MCP_ERR_INTERNAL;
            r->dyn[r->ndyn].name = a->name;
            r->dyn[r->ndyn].n = n;
            r->ndyn++;
        }
    }
    return MCP_OK;
}

void mcp_schema_free(mcp_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncodes; i++)
        pcre2_code_free(s->codes[i]);
    mcp_free(s->codes);
    pcre2_match_data *md = atomic_load(&s->md_cache);
    pcre2_match_data_free(md);
    pcre2_match_context_free(s->mctx);
    pcre2_general_context_free(s->gctx);
    for (size_t i = 0; i < s->ndocs; i++)
        mcp_json_doc_free(s->docs[i]);
    mcp_free(s->docs);
    mcp_free(s->resv);
    ar_free(&s->ar);
    mcp_free(s);
}

mcp_status mcp_schema_new_sized(mcp_schema **out, const mcp_json *schema, const mcp_schema_opts *opts,
                                size_t opts_size, mcp_error *err)
{
    mcp_schema_opts o;
    mcp_status ost = MCP__OPTS_IN(mcp_schema_opts, &o, opts, opts_size, err);
    if (ost)
        return ost;
    if (!out || !schema)
        return fail_at(err, MCP_ERR_INVALID_ARG, NULL, "out and schema are required");
    if (o.default_dialect > MCP_SCHEMA_DIALECT_DRAFT7 || o.max_depth > MCP_SCHEMA_LIMIT_MAX_DEPTH ||
        o.max_eval_depth > MCP_SCHEMA_LIMIT_MAX_EVAL_DEPTH)
        return fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema option out of range");
    mcp_json_type t = mcp_json_typeof(schema);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return fail_at(err, MCP_ERR_SCHEMA, "", "a schema must be an object or a boolean, not %s",
                       mcp_json_type_name(t));

    mcp_schema *s = (mcp_schema *)mcp__calloc(1, sizeof(*s));
    if (!s)
        return fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory compiling the schema");
    atomic_init(&s->md_cache, NULL);
    s->max_steps = o.max_steps ? o.max_steps : MCP_SCHEMA_DEFAULT_MAX_STEPS;
    s->max_eval_depth = o.max_eval_depth ? o.max_eval_depth : MCP_SCHEMA_DEFAULT_MAX_EVAL_DEPTH;
    s->max_errors = o.max_errors ? o.max_errors : MCP_SCHEMA_DEFAULT_MAX_ERRORS;
    s->format_assert = (o.flags & MCP_SCHEMA_FORMAT_ASSERT) != 0;

    comp c;
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.reg = o.registry;
    c.err = err;
    c.max_depth = o.max_depth ? o.max_depth : MCP_SCHEMA_DEFAULT_MAX_DEPTH;
    c.max_nodes = o.max_nodes ? o.max_nodes : MCP_SCHEMA_DEFAULT_MAX_NODES;
    c.loc_prefix = "";
    sb_dyn(&c.loc);

    mcp_status st = MCP_OK;
    mcp_json_doc *d = NULL;
    const char *base = "";
    s->gctx = pcre2_general_context_create(re_malloc, re_free, NULL);
    if (!s->gctx)
        st = nomem(&c);
    if (!st) {
        s->mctx = pcre2_match_context_create(s->gctx);
        if (!s->mctx)
            st = nomem(&c);
        else {
            pcre2_set_match_limit(s->mctx, RE_MATCH_LIMIT);
            pcre2_set_heap_limit(s->mctx, RE_HEAP_LIMIT_KIB);
        }
    }
    if (!st)
        st = copy_doc(&d, schema, err);
    if (!st)
        st = own_doc(&c, d);
    if (!st && o.base_uri) {
        base = ar_strndup(&s->ar, o.base_uri, uri_nofrag_len(o.base_uri));
        if (!base)
            st = nomem(&c);
    }
    if (!st) {
        const mcp_json *root = mcp_json_doc_root(d);
        st = walk(&c, root, base, NULL, o.default_dialect == MCP_SCHEMA_DIALECT_DRAFT7 ? D_7 : D_2020,
                  V_ALL_2020, 0, 1, 1);
        if (!st && c.loc.nomem)
            st = nomem(&c);
        if (!st) {
            s->root = map_get(&c, root);
            /* Every subschema of the root document is compiled, used or not, so
               a broken `$ref` anywhere in it is reported now. Document order
               (not the table's, which follows addresses) makes the error
               reported for a schema with several the same on every run. */
            for (node *x = c.chead; x; x = x->cnext)
                if (x->res->in_root_doc)
                    enqueue(&c, x);
        }
    }
    while (!st && c.qhead) {
        node *n = c.qhead;
        c.qhead = n->qnext;
        if (!c.qhead)
            c.qtail = NULL;
        st = compile_node(&c, n);
    }
    if (!st)
        st = link_dynamic(&c);
    for (node *x = c.chead; x && !st; x = x->cnext)
        st = finish_node(&c, x);
    if (!st && s->ncodes) {
        /* One match block up front, so a validation on one thread allocates
           nothing for patterns; concurrent calls make their own. */
        pcre2_match_data *md = pcre2_match_data_create(1, s->gctx);
        if (!md)
            st = nomem(&c);
        else
            atomic_store(&s->md_cache, md);
    }
    mcp_free(c.map);
    mcp_free(c.ids);
    sb_release(&c.loc);
    if (st) {
        if (st == MCP_ERR_INTERNAL)
            fail_at(err, st, NULL, "internal error compiling the schema");
        mcp_schema_free(s);
        return st;
    }
    *out = s;
    return MCP_OK;
}

/* ======================================================================== */
/* Exact decimal arithmetic on number literals                               */

/*
 * A number literal viewed as  digits x 10^exp  with no leading or trailing
 * zeros in `digits`. The digits stay in the source text (split around the
 * '.'), so no allocation is needed.
 */
typedef struct dec {
    const char *ip; /* integer-part digits */
    size_t in;      /* their count */
    const char *fp; /* fraction digits */
    size_t fn;      /* their count */
    size_t first;   /* index (in ip++fp) of the first non-zero digit */
    size_t nd;      /* significant digits */
    long long exp;  /* value = digits * 10^exp */
    int neg;        /* sign */
    int zero;       /* the value is zero */
} dec;

static char dec_digit(const dec *d, size_t i)
{
    i += d->first;
    return i < d->in ? d->ip[i] : d->fp[i - d->in];
}

static void dec_parse(dec *d, const char *s, size_t n)
{
    memset(d, 0, sizeof(*d));
    size_t i = 0;
    if (i < n && s[i] == '-') {
        d->neg = 1;
        i++;
    }
    d->ip = s + i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    d->in = (size_t)(s + i - d->ip);
    if (i < n && s[i] == '.') {
        i++;
        d->fp = s + i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        d->fn = (size_t)(s + i - d->fp);
    }
    long long e = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (e < 1000000000000LL)
                e = e * 10 + (s[i] - '0');
            i++;
        }
        if (eneg)
            e = -e;
    }
    size_t total = d->in + d->fn, first = 0, last = total;
    dec tmp = *d;
    tmp.first = 0;
    while (first < total && dec_digit(&tmp, first) == '0')
        first++;
    if (first == total) {
        d->zero = 1;
        d->neg = 0;
        return;
    }
    while (last > first && dec_digit(&tmp, last - 1) == '0')
        last--;
    d->first = first;
    d->nd = last - first;
    d->exp = e - (long long)d->fn + (long long)(total - last);
}

static void dec_of(dec *d, const mcp_json *v)
{
    size_t n;
    const char *t = mcp_json_num_text(v, &n);
    dec_parse(d, t ? t : "0", t ? n : 1);
}

/* Compares two decimals: -1, 0 or 1. */
static int dec_cmp(const dec *a, const dec *b)
{
    int sa = a->zero ? 0 : a->neg ? -1 : 1, sb = b->zero ? 0 : b->neg ? -1 : 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (sa == 0)
        return 0;
    /* Same sign: compare magnitudes, then flip for negatives. */
    long long ma = (long long)a->nd + a->exp, mb = (long long)b->nd + b->exp;
    int r = 0;
    if (ma != mb) {
        r = ma < mb ? -1 : 1;
    } else {
        size_t n = a->nd < b->nd ? a->nd : b->nd;
        for (size_t i = 0; i < n && !r; i++) {
            char x = dec_digit(a, i), y = dec_digit(b, i);
            if (x != y)
                r = x < y ? -1 : 1;
        }
        if (!r && a->nd != b->nd)
            r = a->nd < b->nd ? -1 : 1;
    }
    return sa < 0 ? -r : r;
}

/* (a * b) mod m for m < 2^63, without 128-bit arithmetic. */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m)
{
    uint64_t r = 0;
    a %= m;
    while (b) {
        if (b & 1)
            r = (r + a) % m;
        a = (a * 2) % m;
        b >>= 1;
    }
    return r;
}

/*
 * Is the decimal a an integer multiple of the positive decimal b?
 * Returns 1/0, or -1 when b has too many digits for the exact method.
 */
static int dec_multiple(const dec *a, const dec *b)
{
    if (a->zero)
        return 1;
    if (b->nd > 18)
        return -1;
    uint64_t m = 0;
    for (size_t i = 0; i < b->nd; i++)
        m = m * 10 + (uint64_t)(dec_digit(b, i) - '0');
    /* a = A * 10^ea with A's last digit non-zero; if ea < eb, a has a
       non-zero digit finer than b's smallest unit, so it cannot be a multiple. */
    if (a->exp < b->exp)
        return 0;
    uint64_t r = 0;
    for (size_t i = 0; i < a->nd; i++)
        r = (r * 10 + (uint64_t)(dec_digit(a, i) - '0')) % m;
    long long k = a->exp - b->exp;
    uint64_t p = 1 % m, base = 10 % m;
    while (k > 0) {
        if (k & 1)
            p = mulmod(p, base, m);
        base = mulmod(base, base, m);
        k >>= 1;
    }
    return mulmod(r, p, m) == 0;
}

/* Compares two numbers exactly on their decimal text: -1, 0 or 1. */
static int num_cmp_exact(const mcp_json *v, const mcp_json *lim)
{
    dec x, y;
    dec_of(&x, v);
    dec_of(&y, lim);
    return dec_cmp(&x, &y);
}

/* Compares an instance number with a limit: -1, 0 or 1. */
static inline int num_cmp(const mcp_json *v, const numlim *l)
{
    if (v->type == MCP_JSON_INT && l->is_int)
        return v->u.i < l->i ? -1 : v->u.i > l->i;
    double a = v->type == MCP_JSON_INT ? (double)v->u.i : v->u.d;
    if (a < l->d)
        return -1;
    if (a > l->d)
        return 1;
    /* Equal as doubles: decide exactly on the decimal text. */
    return num_cmp_exact(v, l->v);
}

static int is_multiple(const mcp_json *v, const numlim *l)
{
    if (l->is_int && v->type == MCP_JSON_INT) {
        int64_t a = v->u.i, b = l->i;
        if (b == 1 || b == -1)
            return 1;
        return a % b == 0;
    }
    dec x, y;
    dec_of(&x, v);
    dec_of(&y, l->v);
    int r = dec_multiple(&x, &y);
    if (r >= 0)
        return r;
    double q = mcp_json_number(v) / l->d;
    return isfinite(q) && fabs(q - nearbyint(q)) < 1e-9;
}

/* ======================================================================== */
/* Validation                                                                */

/*
 * The validator reads instance values through the document layout
 * (json_internal.h) rather than the public accessors: a validation is a
 * tight loop over members and elements, and a call per access was a large
 * share of its time. The instance is never NULL here.
 */
static inline const mcp__member *j_members(const mcp_json *v)
{
    return (const mcp__member *)v->p;
}

static inline const mcp_json *j_elems(const mcp_json *v)
{
    return (const mcp_json *)v->p;
}

/*
 * Does an object have a member with this key? Only presence matters here
 * (which of duplicate keys would be looked up does not), so small objects
 * are scanned forwards: required properties usually come first.
 */
static inline int j_has(const mcp_json *obj, const char *key, size_t n)
{
    if (obj->u.index)
        return mcp_json_getn(obj, key, n) != NULL;
    const mcp__member *m = j_members(obj);
    for (uint32_t i = 0; i < obj->len; i++)
        if (m[i].klen == n && bytes_eq(m[i].key, key, n))
            return 1;
    return 0;
}

/* A path segment on the C stack: a key (s != NULL) or an array index. */
typedef struct pseg {
    const struct pseg *up; /* parent segment, NULL at the root */
    const char *s;         /* key bytes, or NULL for an index */
    size_t n;              /* key length, or the index */
    int raw;               /* s is already one or more escaped tokens, each with its '/'
                              (schema names made at compile time) */
} pseg;

/* The instance being validated: a document value or a property name. */
typedef struct ival {
    const mcp_json *v; /* the value, or NULL for a property name */
    const char *s;     /* property name bytes (when v is NULL) */
    size_t n;          /* their length */
} ival;

/* One level of the dynamic scope (schema resources entered, innermost first). */
typedef struct dscope {
    const struct dscope *up; /* enclosing level */
    const resource *res;     /* resource entered */
} dscope;

/* Members (object) or elements (array) evaluated so far, for unevaluated*. */
typedef struct evals {
    unsigned char *bits;     /* one bit per member/element */
    size_t n;                /* members/elements */
    unsigned char local[32]; /* inline storage for up to 256 */
} evals;

typedef struct vctx {
    const mcp_schema *s;       /* the schema */
    uint64_t steps;            /* subschema evaluations so far */
    uint64_t max_steps;        /* s->max_steps, kept at hand */
    unsigned depth;            /* current nesting */
    unsigned max_depth;        /* s->max_eval_depth, kept at hand */
    int dyn;                   /* s->uses_dynamic: keep the dynamic scope */
    mcp_status status;         /* hard failure (NOMEM, LIMIT), stops everything */
    int stop;                  /* enough violations recorded: unwind */
    int first_only;            /* MCP_SCHEMA_FIRST_ERROR */
    int report;                /* collect violations (else the first goes to err only) */
    int truncated;             /* a violation was dropped: max_errors were kept */
    struct vrec *recs;         /* the violations kept so far (run()'s storage, then heap) */
    size_t nrec;               /* their number */
    size_t reccap;             /* entries available at recs */
    sbuf text;                 /* their strings, "ip\0kp\0message\0" each, growing
                                  from run()'s storage */
    mcp_error *err;            /* receives the first violation / the failure */
    int have_first;            /* err already holds the first violation */
    pcre2_match_data *md;      /* match block for this call, or NULL until needed */
} vctx;

static int v_node(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                  evals *ev, int quiet, const dscope *ds);

/* Field by field: a memset of the whole context was a measurable share of a
   small validation. */
static void vctx_init(vctx *c, const mcp_schema *s)
{
    c->s = s;
    c->steps = 0;
    c->max_steps = s->max_steps;
    c->depth = 0;
    c->max_depth = s->max_eval_depth;
    c->dyn = s->uses_dynamic;
    c->status = MCP_OK;
    c->stop = 0;
    c->first_only = 0;
    c->report = 0;
    c->truncated = 0;
    c->recs = NULL;
    c->nrec = 0;
    c->reccap = 0;
    c->err = NULL;
    c->have_first = 0;
    c->md = NULL;
}

static void hard_fail(vctx *c, mcp_status st, const char *fmt, ...) MCP__PRINTF(3, 4);
static void hard_fail(vctx *c, mcp_status st, const char *fmt, ...)
{
    if (c->status)
        return;
    c->status = st;
    if (c->err) {
        va_list ap;
        va_start(ap, fmt);
        mcp__vfail(c->err, st, 0, 0, fmt, ap);
        va_end(ap);
        tidy_message(c->err);
    }
}

static void path_put(sbuf *b, const pseg *p)
{
    if (!p)
        return;
    if (p->up)
        path_put(b, p->up);
    if (p->raw) {
        sb_put(b, p->s, p->n);
    } else if (p->s) {
        /* The usual key: short, nothing to escape, room at hand. */
        if (p->n <= 32 && !(b->nomem | b->full) && b->len + p->n + 1 < b->cap &&
            !ptr_special(p->s, p->n)) {
            b->p[b->len] = '/';
            copy_small(b->p + b->len + 1, p->s, p->n);
            b->len += p->n + 1;
            b->p[b->len] = '\0';
        } else {
            sb_ptr_token(b, p->s, p->n);
        }
    }
    else
        sb_printf(b, "/%zu", p->n);
}

/* Writes a short rendering of a value (scalars in full, containers elided). */
static void put_value(sbuf *b, const mcp_json *v, size_t max)
{
    size_t n;
    const char *s;
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_NULL:
        sb_puts(b, "null");
        break;
    case MCP_JSON_BOOL:
        sb_puts(b, mcp_json_bool(v) ? "true" : "false");
        break;
    case MCP_JSON_INT:
    case MCP_JSON_REAL:
        s = mcp_json_num_text(v, &n);
        sb_put(b, s, n);
        break;
    case MCP_JSON_STRING:
        s = mcp_json_str(v, &n);
        sb_putc(b, '"');
        if (n > max) {
            sb_put(b, s, utf8_clip(s, n, max));
            sb_puts(b, "...");
        } else {
            sb_put(b, s, n);
        }
        sb_putc(b, '"');
        break;
    case MCP_JSON_ARRAY:
        sb_puts(b, mcp_json_len(v) ? "[...]" : "[]");
        break;
    case MCP_JSON_OBJECT:
        sb_puts(b, mcp_json_len(v) ? "{...}" : "{}");
        break;
    default:
        break;
    }
}

static const char *ival_type_name(const ival *iv)
{
    if (!iv->v)
        return "string";
    mcp_json_type t = mcp_json_typeof(iv->v);
    if (t == MCP_JSON_REAL) {
        double d = mcp_json_number(iv->v);
        return floor(d) == d && isfinite(d) ? "integer" : "number";
    }
    return mcp_json_type_name(t);
}

/*
 * A violation kept during a validation: offsets of its three strings in
 * vctx.text. The report is put together once, at the end of the call
 * (make_report), so a report of any size costs one allocation.
 */
typedef struct vrec {
    size_t ip;         /* offset of the instance path */
    size_t kp;         /* offset of the keyword path */
    size_t msg;        /* offset of the message */
    const char *label; /* mcp_schema_error.keyword (static string) */
} vrec;

/* Violation records and text kept in run()'s frame before anything is allocated. */
#define VREC_LOCAL 8
#define VTEXT_LOCAL 1024

/*
 * Records a violation, in two halves around its message text:
 *
 *     emitter em;
 *     if (emit_begin(c, &em, ip, kp, kwtok, kwlen, sub, subn)) {
 *         ... append the message (after "<pointer>: ") to em.b ...
 *         emit_end(c, &em, label);
 *     }
 *
 * with the instance path `ip` (+ `sub`, a member name shown in the message
 * only), the keyword path `kp` + `kwtok` (the failing keyword's token, '/'
 * and its name, when not NULL) and `label`, the keyword reported in
 * mcp_schema_error.keyword. emit_begin returns 0 when
 * no text is wanted (validation is stopping, or err already holds the first
 * violation). Without a result list the violation fills the caller's
 * mcp_error in place (cut to fit) and nothing is allocated; with one, its
 * strings are appended to the call's text (make_report copies them).
 */
typedef struct emitter {
    sbuf *b;        /* where the message goes */
    sbuf m;         /* without a result list: err->message */
    size_t ip_off;  /* with one: offsets of the strings in c->text */
    size_t kp_off;
    size_t msg_off;
} emitter;

static int emit_begin(vctx *c, emitter *em, const pseg *ip, const pseg *kp, const char *kwtok,
                      size_t kwlen, const char *sub, size_t subn)
{
    if (c->stop || c->status)
        return 0;
    if (!c->report) {
        /* Report into err only, without allocating. */
        if (c->err && !c->have_first) {
            sbuf p;
            sb_fixed(&p, c->err->pointer, sizeof(c->err->pointer));
            path_put(&p, ip);
            sb_fixed(&em->m, c->err->message, sizeof(c->err->message));
            path_put(&em->m, ip);
            if (sub)
                sb_ptr_token(&em->m, sub, subn);
            if (em->m.len == 0)
                sb_puts(&em->m, "(root)");
            sb_put(&em->m, ": ", 2);
            em->b = &em->m;
            return 1;
        }
        c->have_first = 1;
        c->stop = 1;
        return 0;
    }
    if (c->nrec >= c->s->max_errors) {
        c->truncated = 1;
        c->stop = 1;
        return 0;
    }
    if (c->nrec == c->reccap) {
        /* The first VREC_LOCAL records live in run()'s frame; beyond, on the heap. */
        size_t cap = c->reccap * 2;
        vrec *r = (vrec *)mcp_malloc(cap * sizeof(*r));
        if (!r) {
            hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
            return 0;
        }
        memcpy(r, c->recs, c->nrec * sizeof(*r));
        if (c->reccap > VREC_LOCAL)
            mcp_free(c->recs);
        c->recs = r;
        c->reccap = cap;
    }
    /* Instance path, keyword path and message, each NUL-terminated. The
       message starts with the instance path again: a copy of its bytes. */
    sbuf *b = &c->text;
    em->ip_off = b->len;
    path_put(b, ip);
    size_t ipn = b->len - em->ip_off;
    sb_putc(b, '\0');
    em->kp_off = b->len;
    path_put(b, kp);
    if (kwtok)
        sb_put(b, kwtok, kwlen);
    sb_putc(b, '\0');
    em->msg_off = b->len;
    if (ipn && (b->len + ipn < b->cap || sb_room(b, ipn) >= ipn) && !b->nomem) {
        memcpy(b->p + b->len, b->p + em->ip_off, ipn);
        b->len += ipn;
        b->p[b->len] = '\0';
    }
    if (sub)
        sb_ptr_token(b, sub, subn);
    if (b->len == em->msg_off)
        sb_puts(b, "(root)");
    sb_put(b, ": ", 2);
    em->b = b;
    return 1;
}

static void emit_end(vctx *c, emitter *em, const char *label)
{
    if (!c->report) {
        c->err->status = MCP_ERR_INVALID;
        c->err->rpc_code = 0;
        c->err->offset = 0;
        c->err->id[0] = '\0';
        c->have_first = 1;
        c->stop = 1;
        return;
    }
    sbuf *b = em->b;
    sb_putc(b, '\0');
    if (b->nomem) {
        hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return;
    }
    vrec *r = &c->recs[c->nrec++];
    r->ip = em->ip_off;
    r->kp = em->kp_off;
    r->msg = em->msg_off;
    r->label = label;
    c->have_first = 1;
    if (c->first_only)
        c->stop = 1;
}

/* A violation whose message is a printf-style format (%s, %.*s, %zu): the rare ones. */
static void emit(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok,
                 const char *label, const char *sub, size_t subn, const char *fmt, ...)
    MCP__PRINTF(8, 9);
static void emit(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok,
                 const char *label, const char *sub, size_t subn, const char *fmt, ...)
{
    emitter em;
    if (!emit_begin(c, &em, ip, kp, kwtok, kwtok ? strlen(kwtok) : 0, sub, subn))
        return;
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(em.b, fmt, ap);
    va_end(ap);
    emit_end(c, &em, label);
}

/*
 * The report of a validation that kept violations: one allocation holding
 * the result, its violations and their strings (mcp_schema_result_free
 * knows this layout; nothing else makes results). The first violation also
 * goes to err, cut to fit. NULL with c->status set when memory ran out.
 */
static mcp_schema_result *make_report(vctx *c)
{
    size_t n = c->nrec, len = c->text.len;
    size_t head = sizeof(mcp_schema_result) + n * sizeof(mcp_schema_error);
    mcp_schema_result *r = NULL;
    if (n < SIZE_MAX / 2 / sizeof(mcp_schema_error) && len < SIZE_MAX / 2)
        r = (mcp_schema_result *)mcp_malloc(head + len);
    if (!r) {
        hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return NULL;
    }
    mcp_schema_error *e = (mcp_schema_error *)(r + 1);
    char *text = (char *)r + head;
    memcpy(text, c->text.p, len);
    for (size_t i = 0; i < n; i++) {
        e[i].instance_path = text + c->recs[i].ip;
        e[i].keyword_path = text + c->recs[i].kp;
        e[i].message = text + c->recs[i].msg;
        e[i].keyword = c->recs[i].label;
    }
    r->errors = e;
    r->count = n;
    r->truncated = c->truncated;
    if (c->err) {
        sbuf p;
        sb_fixed(&p, c->err->pointer, sizeof(c->err->pointer));
        sb_puts(&p, e[0].instance_path);
        sb_fixed(&p, c->err->message, sizeof(c->err->message));
        sb_puts(&p, e[0].message);
        c->err->status = MCP_ERR_INVALID;
        c->err->rpc_code = 0;
        c->err->offset = 0;
        c->err->id[0] = '\0';
    }
    return r;
}

static int ev_init(vctx *c, evals *e, size_t n)
{
    size_t bytes = (n + 7) / 8;
    e->n = n;
    if (bytes <= sizeof(e->local)) {
        e->bits = e->local;
        memset(e->local, 0, sizeof(e->local));
        return 1;
    }
    e->bits = (unsigned char *)mcp__calloc(bytes, 1);
    if (!e->bits) {
        hard_fail(c, MCP_ERR_NOMEM, "out of memory during validation");
        return 0;
    }
    return 1;
}

static void ev_free(evals *e)
{
    if (e->bits && e->bits != e->local)
        mcp_free(e->bits);
    e->bits = NULL;
}

static void ev_mark(evals *e, size_t i)
{
    if (e && i < e->n)
        e->bits[i / 8] |= (unsigned char)(1u << (i % 8));
}

static int ev_has(const evals *e, size_t i)
{
    return (e->bits[i / 8] >> (i % 8)) & 1u;
}

static void ev_merge(evals *dst, const evals *src)
{
    size_t bytes = (dst->n + 7) / 8;
    for (size_t i = 0; i < bytes; i++)
        dst->bits[i] |= src->bits[i];
}

/* Does a regex match the bytes (through PCRE2)? 1/0, or -1 with c->status set. */
static int re_match_pcre2(vctx *c, const regex *re, const char *s, size_t n)
{
    if (!c->md) {
        pcre2_match_data *md = atomic_exchange(&((mcp_schema *)c->s)->md_cache, NULL);
        if (!md)
            md = pcre2_match_data_create(1, c->s->gctx);
        if (!md) {
            hard_fail(c, MCP_ERR_NOMEM, "out of memory matching a pattern");
            return -1;
        }
        c->md = md;
    }
    int rc = re->jit ? pcre2_jit_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, c->md,
                                       c->s->mctx)
                     : pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, c->md,
                                   c->s->mctx);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_NOMEMORY)
        hard_fail(c, MCP_ERR_NOMEM, "out of memory matching pattern \"%.*s\"",
                  (int)utf8_clip(re->src.s, re->src.n, 60), re->src.s);
    else
        hard_fail(c, MCP_ERR_LIMIT,
                  "pattern \"%.*s\" needs too much backtracking (PCRE2 error %d); "
                  "validation stopped",
                  (int)utf8_clip(re->src.s, re->src.n, 60), re->src.s, rc);
    return -1;
}

/* Does a regex match the bytes? 1/0, or -1 with c->status set. */
static int re_match(vctx *c, const regex *re, const char *s, size_t n)
{
    if (!re->fast)
        return re_match_pcre2(c, re, s, n);
    int m = simple_match(re->fast, s, n);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* Fuzz builds hold the direct matcher to PCRE2's answer. */
    int ref = re_match_pcre2(c, re, s, n);
    if (ref >= 0 && ref != m)
        abort();
#endif
    return m;
}

static size_t utf8_count(const char *s, size_t n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += ((unsigned char)s[i] & 0xC0u) != 0x80u;
    return cnt;
}

/* Equality of the instance with a schema value (handles property-name instances). */
static int ival_equal(const ival *iv, const mcp_json *v)
{
    if (iv->v)
        return mcp_json_equal(iv->v, v);
    size_t n;
    const char *s = mcp_json_str(v, &n);
    return s && n == iv->n && bytes_eq(s, iv->s, n);
}

/* ---- uniqueItems -------------------------------------------------------- */

/* A hash consistent with mcp_json_equal (1 and 1.0 hash alike, key order ignored). */
static uint64_t jhash(const mcp_json *v, unsigned depth)
{
    uint64_t h = 1469598103934665603ull;
    size_t n;
    const char *s;
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_NULL:
        return 11;
    case MCP_JSON_BOOL:
        return mcp_json_bool(v) ? 13 : 17;
    case MCP_JSON_INT:
    case MCP_JSON_REAL: {
        double d = mcp_json_number(v);
        if (d == 0)
            d = 0; /* -0 and 0 are equal */
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        return bits * 0x9E3779B97F4A7C15ull + 19;
    }
    case MCP_JSON_STRING:
        s = mcp_json_str(v, &n);
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
        return h;
    case MCP_JSON_ARRAY:
        if (depth > 32)
            return 23;
        for (size_t i = 0; i < mcp_json_len(v); i++)
            h = (h ^ jhash(mcp_json_at(v, i), depth + 1)) * 1099511628211ull;
        return h + 29;
    case MCP_JSON_OBJECT: {
        if (depth > 32)
            return 31;
        uint64_t sum = 37;
        for (size_t i = 0; i < mcp_json_len(v); i++) {
            size_t kn;
            const char *k = mcp_json_key_at(v, i, &kn);
            uint64_t kh = 1469598103934665603ull;
            for (size_t j = 0; j < kn; j++)
                kh = (kh ^ (unsigned char)k[j]) * 1099511628211ull;
            sum += kh * 31 + jhash(mcp_json_value_at(v, i), depth + 1);
        }
        return sum;
    }
    default:
        return 0;
    }
}

typedef struct hidx {
    uint64_t h; /* hash of the element */
    size_t i;   /* its index */
} hidx;

static int hidx_cmp(const void *a, const void *b)
{
    const hidx *x = (const hidx *)a, *y = (const hidx *)b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Finds two equal elements; returns 1 and their indexes, 0 if all unique, -1 on failure. */
static int find_duplicate(vctx *c, const mcp_json *arr, size_t *a, size_t *b)
{
    size_t n = mcp_json_len(arr);
    if (n < 2)
        return 0;
    if (n <= 16) {
        c->steps += n * n / 2;
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (mcp_json_equal(mcp_json_at(arr, i), mcp_json_at(arr, j))) {
                    *a = i;
                    *b = j;
                    return 1;
                }
        return 0;
    }
    hidx *t = (hidx *)mcp_malloc(n * sizeof(hidx));
    if (!t) {
        hard_fail(c, MCP_ERR_NOMEM, "out of memory checking uniqueItems");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        t[i].h = jhash(mcp_json_at(arr, i), 0);
        t[i].i = i;
    }
    c->steps += n;
    qsort(t, n, sizeof(hidx), hidx_cmp);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        for (size_t j = i + 1; j < n && t[j].h == t[i].h; j++) {
            c->steps++;
            if (mcp_json_equal(mcp_json_at(arr, t[i].i), mcp_json_at(arr, t[j].i))) {
                *a = t[i].i < t[j].i ? t[i].i : t[j].i;
                *b = t[i].i < t[j].i ? t[j].i : t[i].i;
                found = 1;
                break;
            }
        }
    }
    mcp_free(t);
    return found;
}

/* ---- the keyword interpreter -------------------------------------------- */

/* ---- value checks, shared by the reporting and the quiet paths --------- */

static inline int is_integral(double d)
{
    return isfinite(d) && floor(d) == d;
}

/* Instance type bits (a real is T_NUM only; type_ok() decides "integer" for it). */
static inline unsigned ival_type_bits(const ival *iv)
{
    static const unsigned char bits[] = {
        [MCP_JSON_NONE] = T_OBJ,        [MCP_JSON_NULL] = T_NULL, [MCP_JSON_BOOL] = T_BOOL,
        [MCP_JSON_INT] = T_INT | T_NUM, [MCP_JSON_REAL] = T_NUM,  [MCP_JSON_STRING] = T_STR,
        [MCP_JSON_ARRAY] = T_ARR,       [MCP_JSON_OBJECT] = T_OBJ};
    return iv->v ? bits[iv->v->type] : T_STR;
}

/* Does the instance have one of `types`? A real with no fraction is an integer. */
static inline int type_ok(unsigned types, unsigned tb, const ival *iv)
{
    if (types & tb)
        return 1;
    return (types & T_INT) && tb == T_NUM && is_integral(iv->v->u.d);
}

/* Bytes of a string instance (a string value or a property name). */
static inline const char *ival_bytes(const ival *iv, size_t *n)
{
    if (!iv->v) {
        *n = iv->n;
        return iv->s;
    }
    *n = iv->v->len;
    return (const char *)iv->v->p;
}

/* Is the byte string one of the set's values? */
static SCHEMA_INLINE int senum_has(const senum *e, const char *s, size_t n)
{
    if (!e->tab) {
        for (size_t i = 0; i < e->n; i++)
            if (e->v[i].n == n && bytes_eq(e->v[i].s, s, n))
                return 1;
        return 0;
    }
    for (uint32_t h = hash_bytes(s, n) & e->mask; e->tab[h]; h = (h + 1) & e->mask) {
        const sstr *x = &e->v[e->tab[h] - 1];
        if (x->n == n && bytes_eq(x->s, s, n))
            return 1;
    }
    return 0;
}

static inline int enum_hit(const kw *k, const ival *iv, unsigned tb)
{
    const mcp_json *e = j_elems(k->u.val);
    size_t ne = k->u.val->len;
    if (k->se) {
        /* Only strings: a string instance is looked up, anything else is not one. */
        size_t sn;
        const char *sv;
        if (tb != T_STR)
            return 0;
        sv = ival_bytes(iv, &sn);
        return senum_has(k->se, sv, sn);
    }
    if (tb == T_STR) {
        /* Strings (the usual enum) compare by bytes, without the generic equality. */
        size_t sn;
        const char *sv = ival_bytes(iv, &sn);
        for (size_t i = 0; i < ne; i++)
            if (e[i].type == MCP_JSON_STRING && e[i].len == sn &&
                bytes_eq((const char *)e[i].p, sv, sn))
                return 1;
        return 0;
    }
    for (size_t i = 0; i < ne; i++)
        if (ival_equal(iv, &e[i]))
            return 1;
    return 0;
}

/* The relation a number fails ("<=", ...), or NULL when it satisfies the keyword. */
static SCHEMA_INLINE const char *num_fails(const kw *k, const mcp_json *v)
{
    if (k->op == K_MULOF)
        return is_multiple(v, &k->u.num) ? NULL : "a multiple of";
    int r = num_cmp(v, &k->u.num);
    switch (k->op) {
    case K_MAX:
        return r > 0 ? "<=" : NULL;
    case K_XMAX:
        return r >= 0 ? "<" : NULL;
    case K_MIN:
        return r < 0 ? ">=" : NULL;
    default:
        return r <= 0 ? ">" : NULL;
    }
}

/* minLength/maxLength: 1 when violated, with the length in code points in *len. */
static inline int len_fails(const kw *k, const char *sv, size_t sn, size_t *len)
{
    /* Code points <= bytes: a string no longer in bytes than maxLength passes
       without counting. */
    *len = sn;
    if (k->op == K_MAXLEN)
        return sn > k->u.count && (*len = utf8_count(sv, sn)) > k->u.count;
    return (*len = utf8_count(sv, sn)) < k->u.count;
}

/* min/maxItems, min/maxProperties: 1 when violated. */
static inline int count_fails(const kw *k, size_t len)
{
    return k->op == K_MAXITEMS || k->op == K_MAXPROPS ? len > k->u.count : len < k->u.count;
}

/*
 * Quiet evaluation of a leaf node (value checks only): 1 when the value
 * passes, 0 when not (c->status set on a hard failure). It does the same
 * work, in the same order, as v_node in quiet mode, including the step and
 * depth accounting, without v_node's frame, paths and annotations: most
 * subschemas of a tool schema are leaves, so this is the common case.
 * With `checked` 0 the caller has made sure that the step and depth limits
 * cannot be reached here (v_flat), and the step is only counted.
 */
static SCHEMA_INLINE int v_leaf_at(vctx *c, const node *n, const ival *iv, int checked)
{
    if (!checked) {
        c->steps++;
    } else {
        if (++c->steps > c->max_steps) {
            hard_fail(c, MCP_ERR_LIMIT, "validation needed more than %llu steps",
                      (unsigned long long)c->max_steps);
            return 0;
        }
        if (c->depth >= c->max_depth) {
            hard_fail(c, MCP_ERR_LIMIT,
                      "validation nested deeper than %u levels (recursive schema or deep instance)",
                      c->max_depth);
            return 0;
        }
    }
    unsigned tb = ival_type_bits(iv);
    /* `type` comes first when present (ltypes is T_ANY without it). */
    if (!type_ok(n->ltypes, tb, iv))
        return 0;
    if (!(n->lmore & tb))
        return 1;
    for (unsigned ki = n->lfirst; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (!(k->applies & tb))
            continue;
        switch (k->op) {
        case K_TYPE:
            if (!type_ok(k->u.types, tb, iv))
                return 0;
            break;
        case K_ENUM:
            if (!enum_hit(k, iv, tb))
                return 0;
            break;
        case K_CONST:
            if (!ival_equal(iv, k->u.val))
                return 0;
            break;
        case K_MULOF:
        case K_MAX:
        case K_XMAX:
        case K_MIN:
        case K_XMIN:
            if (num_fails(k, iv->v))
                return 0;
            break;
        case K_MAXLEN:
        case K_MINLEN: {
            size_t sn, len;
            const char *sv = ival_bytes(iv, &sn);
            if (len_fails(k, sv, sn, &len))
                return 0;
            break;
        }
        case K_PATTERN: {
            size_t sn;
            const char *sv = ival_bytes(iv, &sn);
            c->steps++;
            if (re_match(c, &k->u.re, sv, sn) <= 0)
                return 0;
            break;
        }
        case K_FORMAT: {
            size_t sn;
            const char *sv = ival_bytes(iv, &sn);
            int r = mcp__schema_format_check(k->u.fmt, sv, sn);
            if (r < 0)
                hard_fail(c, MCP_ERR_NOMEM, "out of memory checking a format");
            if (r <= 0)
                return 0;
            break;
        }
        case K_MAXITEMS:
        case K_MINITEMS:
        case K_MAXPROPS:
        case K_MINPROPS:
            if (count_fails(k, iv->v->len))
                return 0;
            break;
        case K_REQUIRED:
            for (size_t i = 0; i < k->u.req.n; i++)
                if (!j_has(iv->v, k->u.req.names[i].s, k->u.req.names[i].n))
                    return 0;
            break;
        default:
            return 0; /* not a leaf keyword: op_is_leaf() keeps this unreachable */
        }
    }
    return 1;
}

static SCHEMA_INLINE int v_leaf(vctx *c, const node *n, const ival *iv)
{
    return v_leaf_at(c, n, iv, 1);
}

static int v_refonly(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                     evals *cur, int quiet, const dscope *ds);
static int v_flat(vctx *c, const node *n, const ival *iv);
static int v_flat_report(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp);
static SCHEMA_INLINE int flat_report_fits(const vctx *c, const node *n, const ival *iv);

/*
 * Validates a subschema, taking the leaf path when it can. A leaf that
 * fails outside quiet mode is evaluated again by v_node to report why; the
 * step count is rewound first, so the work counts once, as in quiet mode.
 */
static SCHEMA_INLINE int v_child(vctx *c, const node *n, const ival *iv, const pseg *ip,
                                 const pseg *kp, int quiet, const dscope *ds)
{
    if (n->refonly && !c->dyn)
        return v_refonly(c, n, iv, ip, kp, NULL, quiet, ds);
    if (n->leaf || (n->flat && !c->dyn)) {
        uint64_t steps = c->steps;
        int r = n->leaf ? v_leaf(c, n, iv) : v_flat(c, n, iv);
        if (r || quiet || c->status)
            return r && !c->status;
        c->steps = steps;
        if (n->flat && flat_report_fits(c, n, iv))
            return v_flat_report(c, n, iv, ip, kp);
    } else if (n->is_bool && n->bool_val) {
        return 1;
    }
    return v_node(c, n, iv, ip, kp, NULL, quiet, ds);
}

/* Validates an in-place subschema (same instance), keeping its annotations if it passes. */
static int v_inplace(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                     evals *cur, int quiet, const dscope *ds)
{
    if (!cur || n->leaf || n->is_bool)
        return v_child(c, n, iv, ip, kp, quiet, ds);
    if (n->refonly && !c->dyn)
        return v_refonly(c, n, iv, ip, kp, cur, quiet, ds);
    evals tmp;
    if (!ev_init(c, &tmp, cur->n))
        return 0;
    int ok = v_node(c, n, iv, ip, kp, &tmp, quiet, ds);
    if (ok)
        ev_merge(cur, &tmp);
    ev_free(&tmp);
    return ok;
}

/*
 * A subschema whose only keyword is `$ref` (the way `$defs` are used),
 * evaluated without a v_node frame of its own: it still counts a step and
 * a nesting level, and its target's annotations pass through, exactly as
 * v_node would do. Not used with $dynamicRef, where entering the node's
 * resource matters to the dynamic scope.
 */
static int v_refonly(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                     evals *cur, int quiet, const dscope *ds)
{
    if (++c->steps > c->max_steps) {
        hard_fail(c, MCP_ERR_LIMIT, "validation needed more than %llu steps",
                  (unsigned long long)c->max_steps);
        return 0;
    }
    if (c->depth >= c->max_depth) {
        hard_fail(c, MCP_ERR_LIMIT,
                  "validation nested deeper than %u levels (recursive schema or deep instance)",
                  c->max_depth);
        return 0;
    }
    c->depth++;
    const kw *k = &n->kws[0];
    pseg kseg = {kp, k->tok, k->nlen + 1, 1};
    int ok = v_inplace(c, k->u.ref.target, iv, ip, &kseg, cur, quiet, ds);
    c->depth--;
    return ok && !c->status;
}

/* Most members v_flat's two-pass loop handles (it keeps their entries on the
   stack); larger objects take the general loop. */
#define FLAT_MEMBERS 32

/* The direct matcher on a `pattern` that has one (fuzz builds hold it to PCRE2's answer). */
static SCHEMA_INLINE int re_fast(const regex *re, const char *s, size_t n)
{
    int m = re->fast->blocks ? blocks_match(re->fast, s, n) : simple_match(re->fast, s, n);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (md) {
        int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, md, NULL);
        if ((rc >= 0 || rc == PCRE2_ERROR_NOMATCH) && (rc >= 0) != m)
            abort();
        pcre2_match_data_free(md);
    }
#endif
    return m;
}

/*
 * One member of v_flat's fast loop: does the value pass the leaf (or
 * boolean) schema `f`? Adds the steps it takes to *steps, as v_leaf counts
 * them. Nothing else changes, so a caller may take the steps back.
 */
static SCHEMA_INLINE int lf_ok(const lfast *f, const mcp_json *v, uint64_t *steps)
{
    static const unsigned char bits[] = {
        [MCP_JSON_NONE] = T_OBJ,        [MCP_JSON_NULL] = T_NULL, [MCP_JSON_BOOL] = T_BOOL,
        [MCP_JSON_INT] = T_INT | T_NUM, [MCP_JSON_REAL] = T_NUM,  [MCP_JSON_STRING] = T_STR,
        [MCP_JSON_ARRAY] = T_ARR,       [MCP_JSON_OBJECT] = T_OBJ};
    unsigned tb = bits[v->type];
    *steps += f->steps;
    if (!(f->types & tb) && !((f->types & T_INT) && tb == T_NUM && is_integral(v->u.d)))
        return 0;
    if (!(f->more & tb))
        return 1;
    if (f->en && (tb != T_STR || !senum_has(f->en, (const char *)v->p, v->len)))
        return 0;
    if (tb == T_STR) {
        const char *sv = (const char *)v->p;
        size_t sn = v->len;
        /* Code points <= bytes: no count when the bytes already fit. */
        if (sn > f->maxlen && utf8_count(sv, sn) > f->maxlen)
            return 0;
        if (f->minlen && utf8_count(sv, sn) < f->minlen)
            return 0;
        if (f->re) {
            ++*steps;
            return re_fast(f->re, sv, sn);
        }
        return 1;
    }
    if (tb & T_NUM) {
        if ((tb & T_INT) && f->intlim)
            return v->u.i >= f->lo && v->u.i <= f->hi;
        for (unsigned i = 0; i < f->nnums; i++)
            if (num_fails(&f->nums[i], v))
                return 0;
    }
    return 1;
}

/*
 * Looks up a property schema by name. Instances usually list their members
 * in the schema's order, so the entry after the previous match (*hint) is
 * tried first (inline); then small `properties` are scanned from there,
 * wrapping around, and large ones go through their hash table. With
 * repeated keys (`dups`) the first try is skipped and small ones are
 * scanned backwards, so the last one wins, as in a lookup.
 */
static SCHEMA_INLINE const propent *prop_find_scan(const props *pr, const char *k, size_t kn,
                                                   size_t *hint)
{
    if (!pr->tab) {
        if (pr->dups) {
            for (size_t i = pr->n; i-- > 0;) {
                const propent *e = &pr->ents[i];
                if (e->key.n == kn && bytes_eq(e->key.s, k, kn))
                    return e;
            }
            return NULL;
        }
        size_t i = *hint < pr->n ? *hint : 0;
        for (size_t tried = 0; tried < pr->n; tried++) {
            const propent *e = &pr->ents[i];
            if (++i == pr->n)
                i = 0;
            if (e->key.n == kn && bytes_eq(e->key.s, k, kn)) {
                *hint = i;
                return e;
            }
        }
        return NULL;
    }
    uint32_t h = hash_bytes(k, kn) & pr->mask;
    while (pr->tab[h]) {
        const propent *e = &pr->ents[pr->tab[h] - 1];
        if (e->key.n == kn && bytes_eq(e->key.s, k, kn)) {
            *hint = (size_t)(e - pr->ents) + 1;
            return e;
        }
        h = (h + 1) & pr->mask;
    }
    return NULL;
}

/* The same, out of line, for flat_fast (which tries the hint itself). */
static const propent *prop_find_rest(const props *pr, const char *k, size_t kn, size_t *hint)
{
    return prop_find_scan(pr, k, kn, hint);
}

static SCHEMA_INLINE const propent *prop_find(const props *pr, const char *k, size_t kn,
                                              size_t *hint)
{
    /* Members in the schema's order: the entry after the last match. */
    if (!pr->dups && *hint < pr->n) {
        const propent *e = &pr->ents[*hint];
        if (e->key.n == kn && bytes_eq(e->key.s, k, kn)) {
            ++*hint;
            return e;
        }
    }
    return prop_find_scan(pr, k, kn, hint);
}

/*
 * v_flat's fast loop: every member schema is an lfast, and the limits
 * cannot be met (the caller checked the bound). The members are looked up
 * and checked in one pass; `required` is answered at the end from the
 * entries seen, or, when a member fails first, by looking for the required
 * names not seen yet among the members. If `required` fails, the general
 * order would have stopped before any member, so their steps are not kept;
 * else they are added to *stepsp. Returns 1 (valid) or 0; nothing else changes.
 */
static int flat_fast(const fplan *fp, const mcp_json *obj, uint64_t *stepsp)
{
    const mcp__member *mem = j_members(obj);
    size_t cnt = obj->len;
    if (cnt < fp->minp || cnt > fp->maxp)
        return 0;
    for (size_t i = 0; i < fp->nxreq; i++)
        if (!j_has(obj, fp->xreq[i].s, fp->xreq[i].n))
            return 0;
    const props *pr = fp->pr;
    const fent *fe = fp->fe;
    const lfast *addlf = fp->addlf;
    size_t np = pr->n;
    /* The entry after the previous match is tried first (members usually
       come in the schema's order); not with repeated keys (see prop_find). */
    size_t hint = pr->dups ? np : 0;
    uint64_t seen = 0, steps = 0;
    size_t i = 0;
    int ok = 1;
    for (; i < cnt; i++) {
        const mcp__member *m = &mem[i];
        const lfast *f = addlf;
        if (hint < np && fe[hint].n == m->klen && bytes_eq(fe[hint].key, m->key, m->klen)) {
            seen |= (uint64_t)1 << hint;
            f = fe[hint++].lf;
        } else if (np) {
            const propent *e = prop_find_rest(pr, m->key, m->klen, &hint);
            if (e) {
                size_t at = (size_t)(e - pr->ents);
                seen |= (uint64_t)1 << at;
                f = fe[at].lf;
            }
        }
        if (f && !lf_ok(f, &m->value, &steps)) {
            ok = 0;
            break;
        }
    }
    /* The required names no member looked at so far matched: present later? */
    uint64_t missing = fp->reqmask & ~seen;
    for (size_t b = 0; missing; b++, missing >>= 1)
        if ((missing & 1u) && (ok || !j_has(obj, fe[b].key, fe[b].n)))
            return 0;
    *stepsp += steps;
    return ok;
}

/*
 * Quiet evaluation of a flat node (type, required, min/maxProperties,
 * properties, additionalProperties; the shape of most tool input schemas):
 * the same work, order and step accounting as v_node in quiet mode, in one
 * tight loop, with the property schemas that are leaves checked directly.
 * Only used where no annotations are collected and no dynamic scope is kept.
 *
 * With a plan (fplan), every member is looked up once: that answers
 * `required` (a bit mask), and then the members' schemas run in member
 * order. The checks before the members' schemas have no side effects, so
 * doing them in another order changes nothing. When every member schema
 * is a leaf or a boolean, the steps all of them can take are known before
 * the loop; when they fit under max_steps (and one more level fits under
 * max_eval_depth), no leaf can meet a limit, and the leaves only count
 * their steps instead of checking them.
 */
static int v_flat(vctx *c, const node *n, const ival *iv)
{
    if (++c->steps > c->max_steps) {
        hard_fail(c, MCP_ERR_LIMIT, "validation needed more than %llu steps",
                  (unsigned long long)c->max_steps);
        return 0;
    }
    if (c->depth >= c->max_depth) {
        hard_fail(c, MCP_ERR_LIMIT,
                  "validation nested deeper than %u levels (recursive schema or deep instance)",
                  c->max_depth);
        return 0;
    }
    unsigned tb = ival_type_bits(iv);
    unsigned ki = 0;
    /* `type` comes first when present; everything after it looks at objects only. */
    if (n->nkw && n->kws[0].op == K_TYPE) {
        if (!type_ok(n->kws[0].u.types, tb, iv))
            return 0;
        ki = 1;
    }
    if (tb != T_OBJ)
        return 1;
    const mcp_json *obj = iv->v;
    const mcp__member *mem = j_members(obj);
    size_t cnt = obj->len;
    const fplan *fp = n->fp;
    int ok = 1;
    if (fp && fp->fast && fp->steps * cnt <= c->max_steps - c->steps &&
        c->depth + 1 < c->max_depth)
        return flat_fast(fp, obj, &c->steps);
    if (fp && cnt <= FLAT_MEMBERS) {
        if (cnt < fp->minp || cnt > fp->maxp)
            return 0;
        const props *pr = fp->pr;
        unsigned char which[FLAT_MEMBERS]; /* entry index + 1 of each member, 0: none */
        if (pr) {
            uint64_t seen = 0;
            size_t hint = 0;
            for (size_t i = 0; i < cnt; i++) {
                const propent *e = pr->n ? prop_find(pr, mem[i].key, mem[i].klen, &hint) : NULL;
                size_t at = e ? (size_t)(e - pr->ents) : 0;
                seen |= e ? (uint64_t)1 << at : 0;
                which[i] = (unsigned char)(e ? at + 1 : 0);
            }
            if ((seen & fp->reqmask) != fp->reqmask)
                return 0;
        }
        for (size_t i = 0; i < fp->nxreq; i++)
            if (!j_has(obj, fp->xreq[i].s, fp->xreq[i].n))
                return 0;
        if (!pr)
            return 1;
        c->depth++;
        int checked = !(fp->steps && fp->steps * cnt <= c->max_steps - c->steps &&
                        c->depth < c->max_depth);
        for (size_t i = 0; i < cnt && ok; i++) {
            const node *cn = which[i] ? pr->ents[which[i] - 1].n : pr->add;
            if (!cn)
                continue;
            ival ci = {&mem[i].value, NULL, 0};
            if (cn->leaf)
                ok = v_leaf_at(c, cn, &ci, checked);
            else if (cn->is_bool)
                ok = cn->bool_val;
            else
                ok = v_child(c, cn, &ci, NULL, NULL, 1, NULL);
        }
        c->depth--;
        return ok && !c->status;
    }
    c->depth++;
    for (; ki < n->nkw && ok; ki++) {
        const kw *k = &n->kws[ki];
        switch (k->op) {
        case K_REQUIRED:
            for (size_t i = 0; i < k->u.req.n && ok; i++)
                ok = j_has(obj, k->u.req.names[i].s, k->u.req.names[i].n);
            break;
        case K_MINPROPS:
        case K_MAXPROPS:
            ok = !count_fails(k, cnt);
            break;
        case K_PROPS: { /* without patternProperties */
            const props *pr = k->u.pr;
            size_t hint = 0;
            for (size_t i = 0; i < cnt && ok; i++) {
                const propent *e = pr->n ? prop_find(pr, mem[i].key, mem[i].klen, &hint) : NULL;
                const node *cn = e ? e->n : pr->add;
                if (!cn)
                    continue;
                ival ci = {&mem[i].value, NULL, 0};
                ok = cn->leaf ? v_leaf(c, cn, &ci) : v_child(c, cn, &ci, NULL, NULL, 1, NULL);
            }
            break;
        }
        default: /* K_TYPE is always first (compile_node's order), handled above */
            break;
        }
    }
    c->depth--;
    return ok && !c->status;
}

/* Lists the declared property names into a message (bounded). */
static void put_allowed(sbuf *b, const props *pr)
{
    if (!pr || !pr->n) {
        sb_puts(b, "no properties are declared");
        return;
    }
    sb_puts(b, "allowed: ");
    for (size_t i = 0; i < pr->n; i++) {
        if (b->len > 160) {
            sb_puts(b, ", ...");
            break;
        }
        if (i)
            sb_puts(b, ", ");
        sb_put(b, pr->ents[i].key.s, pr->ents[i].key.n);
    }
}

/* A piece of a violation message (emit_parts). */
typedef struct mpart {
    const char *s; /* bytes */
    size_t n;      /* their count */
} mpart;

#define MP_LIT(lit) {(lit), sizeof(lit) - 1}
#define MP_STR(str) {(str), strlen(str)}

/* Most bytes a path takes written out (every key byte escaped, indexes of 20 digits). */
static size_t path_bound(const pseg *p)
{
    size_t n = 0;
    for (; p; p = p->up)
        n += p->raw ? p->n : p->s ? 1 + 2 * p->n : 21;
    return n;
}

/* Copies n bytes to d (short ones inline); returns the end. */
static SCHEMA_INLINE char *mem_put(char *d, const char *s, size_t n)
{
    if (n <= 32)
        copy_small(d, s, n);
    else
        memcpy(d, s, n);
    return d + n;
}

/* Writes a reference token ('/' and the escaped key) into room known to be enough. */
static char *token_write(char *d, const char *s, size_t n)
{
    *d++ = '/';
    if (!ptr_special(s, n))
        return mem_put(d, s, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '~' || s[i] == '/') {
            *d++ = '~';
            *d++ = s[i] == '~' ? '0' : '1';
        } else {
            *d++ = s[i];
        }
    }
    return d;
}

/* Writes a path (what path_put appends) into room known to be enough; returns the end. */
static char *path_write(char *d, const pseg *p)
{
    if (!p)
        return d;
    if (p->up)
        d = path_write(d, p->up);
    if (p->raw)
        return mem_put(d, p->s, p->n);
    if (p->s)
        return token_write(d, p->s, p->n);
    char digits[24];
    size_t i = sizeof(digits), v = p->n;
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    *d++ = '/';
    copy_small(d, digits + i, sizeof(digits) - i);
    return d + sizeof(digits) - i;
}

/*
 * Records a violation whose message is the `np` pieces at `pt` (see
 * emit_begin for the other arguments). With a result list, the bytes it
 * takes are bounded first, room is made once, and the strings are written
 * straight in; the text is what emit_begin/emit_end would append piece by
 * piece. Without one, emit_begin/emit_end fill err, piece by piece (so a
 * cut falls where it always did).
 */
static void emit_parts(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok, size_t kwlen,
                       const char *label, const char *sub, size_t subn, const mpart *pt,
                       unsigned np)
{
    emitter em;
    if (!c->report || c->stop || c->status || c->nrec >= c->s->max_errors ||
        c->nrec == c->reccap) {
        if (emit_begin(c, &em, ip, kp, kwtok, kwlen, sub, subn)) {
            for (unsigned i = 0; i < np; i++)
                sb_put(em.b, pt[i].s, pt[i].n);
            emit_end(c, &em, label);
        }
        return;
    }
    size_t ipb = path_bound(ip), msgn = 0;
    for (unsigned i = 0; i < np; i++)
        msgn += pt[i].n;
    /* Instance path twice, keyword path, the member name, "(root)", ": ",
       the pieces and three NULs. */
    size_t need = 2 * ipb + path_bound(kp) + kwlen + (sub ? 1 + 2 * subn : 0) + 6 + 2 + msgn + 3;
    sbuf *b = &c->text;
    if (b->len + need >= b->cap && sb_room(b, need) < need) {
        hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return;
    }
    char *base = b->p, *d = base + b->len;
    size_t ip_off = b->len;
    d = path_write(d, ip);
    size_t ipn = (size_t)(d - base) - ip_off;
    *d++ = '\0';
    size_t kp_off = (size_t)(d - base);
    d = path_write(d, kp);
    if (kwtok)
        d = mem_put(d, kwtok, kwlen);
    *d++ = '\0';
    size_t msg_off = (size_t)(d - base);
    d = mem_put(d, base + ip_off, ipn);
    if (sub)
        d = token_write(d, sub, subn);
    if ((size_t)(d - base) == msg_off) {
        memcpy(d, "(root)", 6);
        d += 6;
    }
    *d++ = ':';
    *d++ = ' ';
    for (unsigned i = 0; i < np; i++)
        d = mem_put(d, pt[i].s, pt[i].n);
    *d++ = '\0';
    b->len = (size_t)(d - base);
    b->p[b->len] = '\0';
    vrec *r = &c->recs[c->nrec++];
    r->ip = ip_off;
    r->kp = kp_off;
    r->msg = msg_off;
    r->label = label;
    c->have_first = 1;
    if (c->first_only)
        c->stop = 1;
}

/* Formats v in decimal into buf (24 bytes); returns the piece. */
static mpart mp_zu(char *buf, size_t v)
{
    size_t i = 24;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    mpart m = {buf + i, 24 - i};
    return m;
}

/* The violations v_node and v_flat_report share. */
static void say_type(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const ival *iv)
{
    const mpart pt[] = {MP_LIT("must be "), {k->text, k->textn}, MP_LIT(", but is "),
                        MP_STR(ival_type_name(iv))};
    emit_parts(c, ip, kp, "/type", 5, "type", NULL, 0, pt, 4);
}

static void say_enum(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    const mpart pt[] = {MP_LIT("must be one of: "), {k->text, k->textn}};
    emit_parts(c, ip, kp, "/enum", 5, "enum", NULL, 0, pt, 2);
}

/* The numeric bounds and multipleOf; `what` is the relation that failed. */
static void say_num(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const char *what,
                    const ival *iv)
{
    /* Number texts are ASCII without NULs: %.*s of them is a plain cut. */
    size_t ln = k->u.num.v->len, vn = iv->v->len;
    const mpart pt[] = {MP_LIT("must be "),
                        MP_STR(what),
                        MP_LIT(" "),
                        {(const char *)k->u.num.v->p, ln > 40 ? 40 : ln},
                        MP_LIT(", but is "),
                        {(const char *)iv->v->p, vn > 40 ? 40 : vn}};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 6);
}

/* minLength/maxLength; `len` is the length in code points. */
static void say_len(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len)
{
    char b1[24], b2[24];
    const mpart pt[] = {MP_LIT("must be at "),
                        MP_STR(k->op == K_MAXLEN ? "most" : "least"),
                        MP_LIT(" "),
                        mp_zu(b1, k->u.count),
                        MP_LIT(" characters long, but has "),
                        mp_zu(b2, len)};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 6);
}

static void say_pattern(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    const mpart pt[] = {MP_LIT("must match the pattern \""), {k->u.re.src.s, k->textn},
                        MP_LIT("\"")};
    emit_parts(c, ip, kp, "/pattern", 8, "pattern", NULL, 0, pt, 3);
}

/* min/maxItems, min/maxProperties. */
static void say_count(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len)
{
    char b1[24], b2[24];
    int over = k->op == K_MAXITEMS || k->op == K_MAXPROPS;
    const mpart pt[] = {MP_LIT("must have at "),
                        MP_STR(over ? "most" : "least"),
                        MP_LIT(" "),
                        mp_zu(b1, k->u.count),
                        MP_LIT(" "),
                        MP_STR((k->op == K_MAXITEMS || k->op == K_MINITEMS) ? "items" : "properties"),
                        MP_LIT(", but has "),
                        mp_zu(b2, len)};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 8);
}

static void say_required(vctx *c, const pseg *ip, const pseg *kp, const sstr *r)
{
    const mpart pt[] = {MP_LIT("required property missing")};
    emit_parts(c, ip, kp, "/required", 9, "required", r->s, r->n, pt, 1);
}

/* A member that additionalProperties: false rejects (k is the K_PROPS keyword). */
static void say_additional(vctx *c, const pseg *is, const pseg *kp, const kw *k, const char *key,
                           size_t kn)
{
    /* As %.*s: at most 60 bytes (not cutting a character), none from a NUL on. */
    size_t clip = utf8_clip(key, kn, 60);
    const char *z = (const char *)memchr(key, '\0', clip);
    const mpart pt[] = {MP_LIT("property \""), {key, z ? (size_t)(z - key) : clip},
                        MP_LIT("\" is not allowed ("), {k->text, k->textn}, MP_LIT(")")};
    emit_parts(c, is, kp, "/additionalProperties", 21, "additionalProperties", NULL, 0, pt, 5);
}

#define FAIL_HERE()                                                                      \
    do {                                                                                 \
        ok = 0;                                                                          \
        if (quiet || c->stop || c->status)                                               \
            goto out;                                                                    \
    } while (0)

#define CHECK_STOP()                                                                     \
    do {                                                                                 \
        if (c->stop || c->status) {                                                      \
            ok = 0;                                                                      \
            goto out;                                                                    \
        }                                                                                \
    } while (0)

static int v_node(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                  evals *ev, int quiet, const dscope *ds)
{
    if (n->is_bool) {
        if (n->bool_val)
            return 1;
        emitter em;
        if (!quiet && emit_begin(c, &em, ip, kp, NULL, 0, NULL, 0)) {
            SB_LIT(em.b, "no value is allowed here (the schema is false)");
            emit_end(c, &em, "false");
        }
        return 0;
    }
    if (++c->steps > c->max_steps) {
        hard_fail(c, MCP_ERR_LIMIT, "validation needed more than %llu steps",
                  (unsigned long long)c->max_steps);
        return 0;
    }
    if (c->depth >= c->max_depth) {
        hard_fail(c, MCP_ERR_LIMIT,
                  "validation nested deeper than %u levels (recursive schema or deep instance)",
                  c->max_depth);
        return 0;
    }
    c->depth++;

    dscope here;
    if (c->dyn && (!ds || ds->res != n->res)) {
        here.up = ds;
        here.res = n->res;
        ds = &here;
    }

    unsigned tb = ival_type_bits(iv);

    int ok = 1;
    evals own;
    own.bits = NULL;
    evals *cur = ev;
    if (n->uneval & tb & (T_OBJ | T_ARR)) {
        if (!ev_init(c, &own, iv->v->len)) {
            c->depth--;
            return 0;
        }
        cur = &own;
    }

    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (!(k->applies & tb))
            continue;
        /* The keyword's own path segment, for subschemas and reports that use it. */
#define KSEG pseg kseg = {kp, k->tok, k->nlen + 1, 1}
        switch (k->op) {
        case K_REF: {
            KSEG;
            if (!v_inplace(c, k->u.ref.target, iv, ip, &kseg, cur, quiet, ds))
                FAIL_HERE();
            break;
        }
        case K_DYNREF: {
            KSEG;
            const node *t = k->u.ref.target;
            if (k->u.ref.dynamic) {
                /* The outermost resource in scope with this dynamic anchor wins. */
                for (const dscope *d = ds; d; d = d->up)
                    for (size_t i = 0; i < d->res->ndyn; i++)
                        if (d->res->dyn[i].name.n == k->u.ref.anchor.n &&
                            memcmp(d->res->dyn[i].name.s, k->u.ref.anchor.s,
                                   k->u.ref.anchor.n) == 0)
                            t = d->res->dyn[i].n;
            }
            if (!v_inplace(c, t, iv, ip, &kseg, cur, quiet, ds))
                FAIL_HERE();
            break;
        }
        case K_TYPE:
            if (!type_ok(k->u.types, tb, iv)) {
                if (!quiet)
                    say_type(c, ip, kp, k, iv);
                FAIL_HERE();
            }
            break;
        case K_ENUM: {
            if (!enum_hit(k, iv, tb)) {
                if (!quiet)
                    say_enum(c, ip, kp, k);
                FAIL_HERE();
            }
            break;
        }
        case K_CONST:
            if (!ival_equal(iv, k->u.val)) {
                emitter em;
                if (!quiet && emit_begin(c, &em, ip, kp, "/const", 6, NULL, 0)) {
                    SB_LIT(em.b, "must be exactly ");
                    sb_put(em.b, k->text, k->textn);
                    emit_end(c, &em, "const");
                }
                FAIL_HERE();
            }
            break;
        case K_MULOF:
        case K_MAX:
        case K_XMAX:
        case K_MIN:
        case K_XMIN: {
            const char *what = num_fails(k, iv->v);
            if (what) {
                if (!quiet)
                    say_num(c, ip, kp, k, what, iv);
                FAIL_HERE();
            }
            break;
        }
        case K_MAXLEN:
        case K_MINLEN:
        case K_PATTERN:
        case K_FORMAT: {
            size_t sn;
            const char *sv = ival_bytes(iv, &sn);
            if (k->op == K_MAXLEN || k->op == K_MINLEN) {
                size_t len;
                if (len_fails(k, sv, sn, &len)) {
                    if (!quiet)
                        say_len(c, ip, kp, k, len);
                    FAIL_HERE();
                }
            } else if (k->op == K_PATTERN) {
                c->steps++;
                int m = re_match(c, &k->u.re, sv, sn);
                if (m < 0) {
                    ok = 0;
                    goto out;
                }
                if (!m) {
                    if (!quiet)
                        say_pattern(c, ip, kp, k);
                    FAIL_HERE();
                }
            } else {
                int r = mcp__schema_format_check(k->u.fmt, sv, sn);
                if (r < 0) {
                    hard_fail(c, MCP_ERR_NOMEM, "out of memory checking a format");
                    ok = 0;
                    goto out;
                }
                if (!r) {
                    if (!quiet) {
                        size_t fnl;
                        const char *fname = mcp_json_str(mcp_json_get(n->src, "format"), &fnl);
                        emit(c, ip, kp, "/format", "format", NULL, 0, "must be a valid %.*s", (int)fnl,
                             fname);
                    }
                    FAIL_HERE();
                }
            }
            break;
        }
        case K_MAXITEMS:
        case K_MINITEMS:
        case K_MAXPROPS:
        case K_MINPROPS: {
            size_t len = iv->v->len;
            if (count_fails(k, len)) {
                if (!quiet)
                    say_count(c, ip, kp, k, len);
                FAIL_HERE();
            }
            break;
        }
        case K_UNIQUE: {
            size_t a = 0, b = 0;
            int r = find_duplicate(c, iv->v, &a, &b);
            if (r < 0) {
                ok = 0;
                goto out;
            }
            if (r) {
                if (!quiet)
                    emit(c, ip, kp, "/uniqueItems", "uniqueItems", NULL, 0,
                         "items must be unique, but items %zu and %zu are equal", a, b);
                FAIL_HERE();
            }
            break;
        }
        case K_PREFIX: {
            KSEG;
            size_t len = mcp_json_len(iv->v);
            for (size_t i = 0; i < k->u.list.n && i < len; i++) {
                pseg is = {ip, NULL, i, 0}, ks = {&kseg, NULL, i, 0};
                ival ci = {mcp_json_at(iv->v, i), NULL, 0};
                if (!v_child(c, k->u.list.v[i], &ci, &is, &ks, quiet, ds))
                    FAIL_HERE();
                ev_mark(cur, i);
            }
            break;
        }
        case K_ITEMS: {
            KSEG;
            size_t len = iv->v->len;
            const node *sub = k->u.items.sub;
            for (size_t i = k->u.items.start; i < len; i++) {
                pseg is = {ip, NULL, i, 0};
                ival ci = {&j_elems(iv->v)[i], NULL, 0};
                if (sub->is_bool && !sub->bool_val) {
                    if (!quiet)
                        emit(c, &is, kp, k->tok, k->name, NULL, 0,
                             "no item allowed at this index (at most %zu items)",
                             k->u.items.start);
                    FAIL_HERE();
                    break;
                }
                if (!v_child(c, sub, &ci, &is, &kseg, quiet, ds))
                    FAIL_HERE();
                ev_mark(cur, i);
            }
            break;
        }
        case K_CONTAINS: {
            KSEG;
            size_t len = mcp_json_len(iv->v), hits = 0;
            for (size_t i = 0; i < len; i++) {
                pseg is = {ip, NULL, i, 0};
                ival ci = {mcp_json_at(iv->v, i), NULL, 0};
                int m = v_child(c, k->u.contains.sub, &ci, &is, &kseg, 1, ds);
                if (c->status) {
                    ok = 0;
                    goto out;
                }
                if (m) {
                    hits++;
                    if (n->dialect == D_2020)
                        ev_mark(cur, i);
                    /* Without annotations to collect, stop once the answer is known. */
                    if (!cur && !k->u.contains.has_max && hits >= k->u.contains.min)
                        break;
                }
            }
            if (hits < k->u.contains.min) {
                if (!quiet) {
                    if (k->u.contains.has_min)
                        emit(c, ip, kp, "/minContains", "minContains", NULL, 0,
                             "must contain at least %zu items matching the \"contains\" schema, "
                             "but has %zu",
                             k->u.contains.min, hits);
                    else
                        emit(c, ip, kp, "/contains", "contains", NULL, 0,
                             "must contain an item matching the \"contains\" schema, but none "
                             "does");
                }
                FAIL_HERE();
            } else if (k->u.contains.has_max && hits > k->u.contains.max) {
                if (!quiet)
                    emit(c, ip, kp, "/maxContains", "maxContains", NULL, 0,
                         "must contain at most %zu items matching the \"contains\" schema, but "
                         "has %zu",
                         k->u.contains.max, hits);
                FAIL_HERE();
            }
            break;
        }
        case K_REQUIRED:
            for (size_t i = 0; i < k->u.req.n; i++) {
                const sstr *r = &k->u.req.names[i];
                if (!j_has(iv->v, r->s, r->n)) {
                    if (!quiet)
                        say_required(c, ip, kp, r);
                    FAIL_HERE();
                }
            }
            break;
        case K_DEPREQ: {
            KSEG;
            for (size_t i = 0; i < k->u.depreq.n; i++) {
                const depreq *d = &k->u.depreq.v[i];
                if (!j_has(iv->v, d->key.s, d->key.n))
                    continue;
                for (size_t j = 0; j < d->n; j++) {
                    if (!j_has(iv->v, d->names[j].s, d->names[j].n)) {
                        if (!quiet) {
                            pseg ks = {&kseg, d->key.s, d->key.n, 0};
                            emit(c, ip, &ks, NULL, k->name, d->names[j].s, d->names[j].n,
                                 "required property missing (required when \"%.*s\" is present)",
                                 (int)utf8_clip(d->key.s, d->key.n, 60), d->key.s);
                        }
                        FAIL_HERE();
                    }
                }
            }
            break;
        }
        case K_PROPS: {
            const props *pr = k->u.pr;
            size_t cnt = iv->v->len, hint = 0;
            const mcp__member *mem = j_members(iv->v);
            for (size_t i = 0; i < cnt; i++) {
                size_t kn = mem[i].klen;
                const char *key = mem[i].key;
                ival ci = {&mem[i].value, NULL, 0};
                pseg is = {ip, key, kn, 0};
                int matched = 0;
                if (pr->n) {
                    const propent *e = prop_find(pr, key, kn, &hint);
                    if (e) {
                        matched = 1;
                        /* The usual property schema is a leaf: try it before
                           building the paths only a report needs (as v_child
                           does, rewinding the steps before reporting). */
                        const node *cn = e->n;
                        int pass;
                        if (cn->leaf) {
                            uint64_t steps = c->steps;
                            pass = v_leaf(c, cn, &ci);
                            if (!pass && !quiet && !c->status) {
                                c->steps = steps;
                                pseg k2 = {kp, e->kptok.s, e->kptok.n, 1};
                                pass = v_node(c, cn, &ci, &is, &k2, NULL, quiet, ds);
                            }
                        } else {
                            pseg k2 = {kp, e->kptok.s, e->kptok.n, 1};
                            pass = v_child(c, cn, &ci, &is, &k2, quiet, ds);
                        }
                        if (!pass)
                            FAIL_HERE();
                    }
                }
                for (size_t p = 0; p < pr->npats; p++) {
                    int m = re_match(c, &pr->pats[p].re, key, kn);
                    if (m < 0) {
                        ok = 0;
                        goto out;
                    }
                    if (!m)
                        continue;
                    matched = 1;
                    pseg k1 = {kp, "patternProperties", 17, 0},
                         k2 = {&k1, pr->pats[p].re.src.s, pr->pats[p].re.src.n, 0};
                    if (!v_child(c, pr->pats[p].n, &ci, &is, &k2, quiet, ds))
                        FAIL_HERE();
                }
                if (!matched && pr->add) {
                    pseg k1 = {kp, "/additionalProperties", 21, 1};
                    if (pr->add->is_bool && !pr->add->bool_val) {
                        if (!quiet)
                            say_additional(c, &is, kp, k, key, kn);
                        FAIL_HERE();
                        continue;
                    }
                    if (!v_child(c, pr->add, &ci, &is, &k1, quiet, ds))
                        FAIL_HERE();
                    matched = 1;
                }
                if (matched)
                    ev_mark(cur, i);
            }
            break;
        }
        case K_PROPNAMES: {
            KSEG;
            size_t cnt = mcp_json_len(iv->v);
            for (size_t i = 0; i < cnt; i++) {
                size_t kn;
                const char *key = mcp_json_key_at(iv->v, i, &kn);
                ival ci = {NULL, key, kn};
                pseg is = {ip, key, kn, 0};
                if (!v_child(c, k->u.sub, &ci, &is, &kseg, 1, ds)) {
                    if (c->status) {
                        ok = 0;
                        goto out;
                    }
                    if (!quiet)
                        emit(c, ip, kp, "/propertyNames", "propertyNames", NULL, 0,
                             "property name \"%.*s\" does not match the propertyNames schema",
                             (int)utf8_clip(key, kn, 60), key);
                    FAIL_HERE();
                }
            }
            break;
        }
        case K_DEPSCHEMAS: {
            KSEG;
            for (size_t i = 0; i < k->u.depsch.n; i++) {
                const depsch *d = &k->u.depsch.v[i];
                if (!j_has(iv->v, d->key.s, d->key.n))
                    continue;
                pseg ks = {&kseg, d->key.s, d->key.n, 0};
                if (!v_inplace(c, d->n, iv, ip, &ks, cur, quiet, ds))
                    FAIL_HERE();
            }
            break;
        }
        case K_ALLOF: {
            KSEG;
            for (size_t i = 0; i < k->u.list.n; i++) {
                pseg ks = {&kseg, NULL, i, 0};
                if (!v_inplace(c, k->u.list.v[i], iv, ip, &ks, cur, quiet, ds))
                    FAIL_HERE();
            }
            break;
        }
        case K_ANYOF:
        case K_ONEOF: {
            KSEG;
            size_t hits = 0, first = 0, second = 0;
            for (size_t i = 0; i < k->u.list.n; i++) {
                pseg ks = {&kseg, NULL, i, 0};
                int m = v_inplace(c, k->u.list.v[i], iv, ip, &ks, cur, 1, ds);
                if (c->status) {
                    ok = 0;
                    goto out;
                }
                if (m) {
                    if (hits == 0)
                        first = i;
                    else if (hits == 1)
                        second = i;
                    hits++;
                    /* anyOf may stop at the first match unless annotations are collected;
                       oneOf may stop at the second. */
                    if ((k->op == K_ANYOF && !cur) || (k->op == K_ONEOF && hits > 1 && !cur))
                        break;
                }
            }
            if (hits == 0) {
                if (!quiet) {
                    emit(c, ip, kp, k->tok, k->name, NULL, 0,
                         "must match %s of the %zu %s schemas, but matches none",
                         k->op == K_ANYOF ? "at least one" : "exactly one", k->u.list.n, k->name);
                    /* Say why each alternative failed. */
                    for (size_t i = 0; i < k->u.list.n && c->report && !c->stop; i++) {
                        pseg ks = {&kseg, NULL, i, 0};
                        v_child(c, k->u.list.v[i], iv, ip, &ks, 0, ds);
                    }
                }
                FAIL_HERE();
            } else if (k->op == K_ONEOF && hits > 1) {
                if (!quiet)
                    emit(c, ip, kp, "/oneOf", "oneOf", NULL, 0,
                         "must match exactly one of the %zu oneOf schemas, but matches %zu "
                         "(indexes %zu and %zu)",
                         k->u.list.n, hits, first, second);
                FAIL_HERE();
            }
            break;
        }
        case K_NOT: {
            KSEG;
            int m = v_child(c, k->u.sub, iv, ip, &kseg, 1, ds);
            if (c->status) {
                ok = 0;
                goto out;
            }
            if (m) {
                if (!quiet)
                    emit(c, ip, kp, "/not", "not", NULL, 0, "must not match the \"not\" schema");
                FAIL_HERE();
            }
            break;
        }
        case K_IF: {
            KSEG;
            /* A lone `if` only matters for the annotations it contributes. */
            if (!k->u.cond.then_ && !k->u.cond.else_ && !cur)
                break;
            int m = v_inplace(c, k->u.cond.if_, iv, ip, &kseg, cur, 1, ds);
            if (c->status) {
                ok = 0;
                goto out;
            }
            const node *br = m ? k->u.cond.then_ : k->u.cond.else_;
            if (br) {
                pseg ks = {kp, m ? "then" : "else", 4, 0};
                if (!v_inplace(c, br, iv, ip, &ks, cur, quiet, ds))
                    FAIL_HERE();
            }
            break;
        }
        case K_UNEV_ITEMS: {
            KSEG;
            size_t len = mcp_json_len(iv->v);
            const node *sub = k->u.sub;
            for (size_t i = 0; i < len; i++) {
                if (ev_has(cur, i))
                    continue;
                pseg is = {ip, NULL, i, 0};
                ival ci = {mcp_json_at(iv->v, i), NULL, 0};
                if (sub->is_bool && !sub->bool_val) {
                    if (!quiet)
                        emit(c, &is, kp, k->tok, k->name, NULL, 0,
                             "item not allowed (not evaluated by any subschema and "
                             "unevaluatedItems is false)");
                    FAIL_HERE();
                    continue;
                }
                if (!v_child(c, sub, &ci, &is, &kseg, quiet, ds))
                    FAIL_HERE();
                ev_mark(cur, i);
            }
            break;
        }
        case K_UNEV_PROPS: {
            KSEG;
            size_t cnt = iv->v->len;
            const mcp__member *mem = j_members(iv->v);
            const node *sub = k->u.sub;
            for (size_t i = 0; i < cnt; i++) {
                if (ev_has(cur, i))
                    continue;
                size_t kn = mem[i].klen;
                const char *key = mem[i].key;
                pseg is = {ip, key, kn, 0};
                ival ci = {&mem[i].value, NULL, 0};
                if (sub->is_bool && !sub->bool_val) {
                    emitter em;
                    if (!quiet && emit_begin(c, &em, &is, kp, k->tok, k->nlen + 1, NULL, 0)) {
                        SB_LIT(em.b, "property \"");
                        sb_put_prec(em.b, key, utf8_clip(key, kn, 60));
                        SB_LIT(em.b, "\" is not allowed (not evaluated by any subschema "
                                     "and unevaluatedProperties is false)");
                        emit_end(c, &em, k->name);
                    }
                    FAIL_HERE();
                    continue;
                }
                if (!v_child(c, sub, &ci, &is, &kseg, quiet, ds))
                    FAIL_HERE();
                ev_mark(cur, i);
            }
            break;
        }
        default:
            break;
        }
        CHECK_STOP();
    }
out:
    if (cur == &own) {
        if (ok && ev)
            ev_merge(ev, &own);
        ev_free(&own);
    }
    c->depth--;
    return ok && !c->status;
}

#undef KSEG
#undef FAIL_HERE
#undef CHECK_STOP

/*
 * The reporting evaluation of a leaf with an lfast, inside v_flat_report:
 * what v_node does for it (not quiet, no annotations, no dynamic scope),
 * keyword by keyword, for the keywords an lfast leaf can have. The limits
 * were checked by the caller for the whole flat node.
 */
static int v_leaf_report(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp)
{
    int ok = 1;
    c->steps++;
    c->depth++;
    unsigned tb = ival_type_bits(iv);
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (!(k->applies & tb))
            continue;
        switch (k->op) {
        case K_TYPE:
            if (!type_ok(k->u.types, tb, iv)) {
                say_type(c, ip, kp, k, iv);
                ok = 0;
            }
            break;
        case K_ENUM:
            if (!enum_hit(k, iv, tb)) {
                say_enum(c, ip, kp, k);
                ok = 0;
            }
            break;
        case K_MULOF:
        case K_MAX:
        case K_XMAX:
        case K_MIN:
        case K_XMIN: {
            const char *what = num_fails(k, iv->v);
            if (what) {
                say_num(c, ip, kp, k, what, iv);
                ok = 0;
            }
            break;
        }
        case K_MAXLEN:
        case K_MINLEN: {
            size_t sn, len;
            const char *sv = ival_bytes(iv, &sn);
            if (len_fails(k, sv, sn, &len)) {
                say_len(c, ip, kp, k, len);
                ok = 0;
            }
            break;
        }
        case K_PATTERN: {
            size_t sn;
            const char *sv = ival_bytes(iv, &sn);
            c->steps++;
            int m = re_match(c, &k->u.re, sv, sn);
            if (m < 0) {
                ok = 0;
                goto out;
            }
            if (!m) {
                say_pattern(c, ip, kp, k);
                ok = 0;
            }
            break;
        }
        default: /* make_lfast admits no other keyword */
            break;
        }
        if (c->stop || c->status) {
            ok = 0;
            goto out;
        }
    }
out:
    c->depth--;
    return ok && !c->status;
}

/*
 * The reporting evaluation of a flat node with a fast plan: exactly what
 * v_node does for it (ev NULL, not quiet, no dynamic scope), keyword by
 * keyword and member by member, with the member schemas (lfasts) tried
 * first without a frame; one that fails is handed to v_node to say why,
 * as v_node's own loop does after its quiet attempt. The caller has made
 * sure, as for flat_fast, that no step or depth limit can be met here
 * (flat_report_fits), so none is checked.
 */
static int v_flat_report(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp)
{
    const fplan *fp = n->fp;
    int ok = 1;
    c->steps++;
    c->depth++;
    unsigned tb = ival_type_bits(iv);
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (!(k->applies & tb))
            continue;
        switch (k->op) {
        case K_TYPE:
            if (!type_ok(k->u.types, tb, iv)) {
                say_type(c, ip, kp, k, iv);
                ok = 0;
            }
            break;
        case K_MAXPROPS:
        case K_MINPROPS:
            if (count_fails(k, iv->v->len)) {
                say_count(c, ip, kp, k, iv->v->len);
                ok = 0;
            }
            break;
        case K_REQUIRED:
            for (size_t i = 0; i < k->u.req.n; i++) {
                const sstr *r = &k->u.req.names[i];
                if (!j_has(iv->v, r->s, r->n)) {
                    say_required(c, ip, kp, r);
                    ok = 0;
                    if (c->stop || c->status)
                        goto out;
                }
            }
            break;
        case K_PROPS: {
            const props *pr = k->u.pr;
            size_t cnt = iv->v->len, hint = 0;
            const mcp__member *mem = j_members(iv->v);
            for (size_t i = 0; i < cnt; i++) {
                size_t kn = mem[i].klen;
                const char *key = mem[i].key;
                const propent *e = pr->n ? prop_find(pr, key, kn, &hint) : NULL;
                const lfast *f;
                const node *cn;
                if (e) {
                    f = fp->fe[e - pr->ents].lf;
                    cn = e->n;
                } else if (pr->add) {
                    f = fp->addlf;
                    cn = pr->add;
                } else {
                    continue;
                }
                uint64_t steps = 0;
                if (lf_ok(f, &mem[i].value, &steps)) {
                    c->steps += steps;
                    continue;
                }
                ival ci = {&mem[i].value, NULL, 0};
                pseg is = {ip, key, kn, 0};
                if (!e && cn->is_bool) {
                    say_additional(c, &is, kp, k, key, kn);
                } else {
                    pseg ks = e ? (pseg){kp, e->kptok.s, e->kptok.n, 1}
                                : (pseg){kp, "/additionalProperties", 21, 1};
                    if (cn->is_bool)
                        v_node(c, cn, &ci, &is, &ks, NULL, 0, NULL);
                    else
                        v_leaf_report(c, cn, &ci, &is, &ks);
                }
                ok = 0;
                if (c->stop || c->status)
                    goto out;
            }
            break;
        }
        default: /* not in a flat node */
            break;
        }
        if (c->stop || c->status) {
            ok = 0;
            goto out;
        }
    }
out:
    c->depth--;
    return ok && !c->status;
}

/* Is v_flat_report's bound met: can the node meet no limit on this instance? */
static SCHEMA_INLINE int flat_report_fits(const vctx *c, const node *n, const ival *iv)
{
    const fplan *fp = n->fp;
    if (!fp || !fp->fast || c->dyn)
        return 0;
    uint64_t cnt = iv->v && iv->v->type == MCP_JSON_OBJECT ? iv->v->len : 0;
    return c->steps < c->max_steps && fp->steps * cnt <= c->max_steps - c->steps - 1 &&
           c->depth + 1 < c->max_depth;
}

/* Returns the call's match block to the schema's one-slot cache. */
static void release_md(vctx *c)
{
    if (!c->md)
        return;
    pcre2_match_data *expected = NULL;
    if (!atomic_compare_exchange_strong(&((mcp_schema *)c->s)->md_cache, &expected, c->md))
        pcre2_match_data_free(c->md);
    c->md = NULL;
}

/*
 * run()'s shortcut for a flat root whose member schemas all have an lfast
 * (the usual tool input schema): what v_child -> v_flat would do in quiet
 * mode at the start of a call (steps 0, depth 0), without a context.
 * Returns 1 (valid), 0 (invalid; nothing was changed, nothing failed hard)
 * or -1 when the limits are too tight for the fast loop's bound.
 */
static int root_fast(const mcp_schema *s, const node *n, const mcp_json *inst)
{
    static const unsigned char bits[] = {
        [MCP_JSON_NONE] = T_OBJ,        [MCP_JSON_NULL] = T_NULL, [MCP_JSON_BOOL] = T_BOOL,
        [MCP_JSON_INT] = T_INT | T_NUM, [MCP_JSON_REAL] = T_NUM,  [MCP_JSON_STRING] = T_STR,
        [MCP_JSON_ARRAY] = T_ARR,       [MCP_JSON_OBJECT] = T_OBJ};
    unsigned tb = bits[inst->type];
    /* v_flat's first step (max_steps >= 1) and depth (max_eval_depth >= 1) always pass. */
    if (n->nkw && n->kws[0].op == K_TYPE) {
        unsigned types = n->kws[0].u.types;
        if (!(types & tb) && !((types & T_INT) && tb == T_NUM && is_integral(inst->u.d)))
            return 0;
    }
    if (tb != T_OBJ)
        return 1;
    const fplan *fp = n->fp;
    if (!(fp->steps * (uint64_t)inst->len <= s->max_steps - 1 && 1 < s->max_eval_depth))
        return -1;
    uint64_t steps = 1;
    return flat_fast(fp, inst, &steps);
}

/*
 * One validation. With `outp`, violations are collected into a report,
 * returned there (NULL when there were none); the caller frees it.
 */
static mcp_status run(const mcp_schema *s, const mcp_json *inst, int quiet, int first_only,
                      mcp_schema_result **outp, mcp_error *err)
{
    const node *root = s->root;
    int known_bad = 0;
    if (root->fp && root->fp->fast && !s->uses_dynamic) {
        int r = root_fast(s, root, inst);
        if (r == 1)
            return MCP_OK;
        if (r == 0 && !outp && !err)
            return MCP_ERR_INVALID;
        /* Invalid, and a report or err wanted: the quiet pass that v_child
           (and, for a check, run itself) would make first has no effect when
           it fails, so the reporting pass starts at once. */
        known_bad = r == 0;
    }
    vctx c;
    vrec recs[VREC_LOCAL];
    char text[VTEXT_LOCAL];
    vctx_init(&c, s);
    c.first_only = first_only;
    c.err = err;
    if (outp) {
        c.report = 1;
        c.recs = recs;
        c.reccap = VREC_LOCAL;
        sb_stack(&c.text, text, sizeof(text));
    }
    ival iv = {inst, NULL, 0};
    int ok;
    if (!known_bad)
        ok = v_child(&c, root, &iv, NULL, NULL, quiet, NULL);
    else if (flat_report_fits(&c, root, &iv))
        ok = v_flat_report(&c, root, &iv, NULL, NULL);
    else
        ok = v_node(&c, root, &iv, NULL, NULL, NULL, 0, NULL);
    release_md(&c);
    if (outp) {
        if (!ok && !c.status && c.nrec)
            *outp = make_report(&c);
        sb_release(&c.text);
        if (c.reccap > VREC_LOCAL)
            mcp_free(c.recs);
    }
    if (c.status)
        return c.status;
    if (ok)
        return MCP_OK;
    if (quiet && err) {
        if (!known_bad) {
            /* The fast pass said no; run again to describe the first violation. */
            vctx_init(&c, s);
            c.first_only = 1;
            c.err = err;
            ok = v_node(&c, s->root, &iv, NULL, NULL, NULL, 0, NULL);
            release_md(&c);
            if (c.status)
                return c.status;
        }
        if (!c.have_first)
            fail_at(err, MCP_ERR_INVALID, "", "the value does not match the schema");
    }
    return MCP_ERR_INVALID;
}

mcp_status mcp_schema_check(const mcp_schema *s, const mcp_json *instance, mcp_error *err)
{
    if (!s || !instance)
        return fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema and instance are required");
    return run(s, instance, 1, 1, NULL, err);
}

void mcp_schema_result_free(mcp_schema_result *r)
{
    /* make_report's single block. */
    mcp_free(r);
}

mcp_status mcp_schema_validate(const mcp_schema *s, const mcp_json *instance, unsigned flags,
                               mcp_schema_result **out, mcp_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !instance)
        return fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema and instance are required");
    if (!out)
        return run(s, instance, 0, 1, NULL, err);
    /* The report is made at the end, only for an invalid value. */
    mcp_schema_result *r = NULL;
    mcp_status st = run(s, instance, 0, (flags & MCP_SCHEMA_FIRST_ERROR) != 0, &r, err);
    if (st == MCP_ERR_INVALID && r) {
        *out = r;
        return st;
    }
    mcp_schema_result_free(r);
    if (st == MCP_ERR_INVALID)
        return fail_at(err, MCP_ERR_INTERNAL, NULL, "validation failed without a violation");
    return st;
}

mcp_status mcp_schema_result_write(mcp_jw *w, const mcp_schema_result *r)
{
    if (!w)
        return MCP_ERR_INVALID_ARG;
    mcp_jw_array_begin(w);
    for (size_t i = 0; r && i < r->count; i++) {
        const mcp_schema_error *e = &r->errors[i];
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "instancePath");
        mcp_jw_string(w, e->instance_path);
        mcp_jw_key(w, "keywordPath");
        mcp_jw_string(w, e->keyword_path);
        mcp_jw_key(w, "keyword");
        mcp_jw_string(w, e->keyword);
        mcp_jw_key(w, "message");
        mcp_jw_string(w, e->message);
        mcp_jw_object_end(w);
    }
    return mcp_jw_array_end(w);
}
