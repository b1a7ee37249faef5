/*
 * The schema layer's internal interface: the types every file of
 * src/schema/ shares and the functions one file calls in another. Nothing
 * here is exported. How the compiler and the validator work is told at the
 * top of schema.c; where each part lives:
 *
 *   schema.c            mcp_schema_new and mcp_schema_free: options, the
 *                       compile pipeline (discovery, worklist, finishing)
 *   schema_text.c       arena, string builder, UTF-8 cuts, JSON Pointer
 *                       tokens, error details (fail_at)
 *   schema_uri.c        URI references (RFC 3986) and percent-decoding
 *   schema_registry.c   mcp_schema_registry_* and document copies
 *   schema_resolve.c    the compile context: the discovery walk, resources,
 *                       `$id`, anchors, dialects and vocabularies, `$ref`
 *                       resolution
 *   schema_compile.c    one node's keywords, family by family (compile_node)
 *   schema_plan.c       what is made once every node is compiled: keyword
 *                       tokens, message texts, string-enum sets, the fast
 *                       forms of leaves (lfast) and flat objects (fplan)
 *   schema_regex.c      ECMA-262 patterns: translation to PCRE2, the direct
 *                       matcher for short anchored patterns, matching
 *   schema_number.c     exact decimal comparison and multipleOf
 *   schema_validate.c   one validation: run(), mcp_schema_check and
 *                       mcp_schema_validate, limits and hard failures
 *   schema_apply.c      the keyword loop (v_node) and the applicators:
 *                       `$ref`, allOf, anyOf, oneOf, not, if,
 *                       dependentSchemas, properties & co, propertyNames,
 *                       prefixItems, items, contains, unevaluated*
 *   schema_check.c      value checks (type, enum, const, numbers, lengths,
 *                       pattern, counts, required: v_value, inline below)
 *                       and their out-of-line parts: equality, enum,
 *                       format, uniqueItems, dependentRequired
 *   schema_flat.c       flat objects: the quiet fast paths (fplan) and
 *                       their reporting twin
 *   schema_report.c     violations: paths, messages, the report
 *   schema_format.c     the `format` checkers
 *
 * Naming: a function defined in one file and called from another is named
 * mcp__*, as everywhere in src/ (it is a symbol of the static library).
 * The static inline helpers below (the validator's hot path: they must be
 * inlined where they are used, whichever file that is) and the types keep
 * their short names: they never reach the linker.
 */
#ifndef MCP_SCHEMA_INTERNAL_H
#define MCP_SCHEMA_INTERNAL_H

#include "mcp/schema.h"
#include "util/util.h"
#include "json/json_internal.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* For the few small functions on the validation hot path that must not stay calls. */
#if defined(__GNUC__)
#define SCHEMA_INLINE inline __attribute__((always_inline))
#else
#define SCHEMA_INLINE inline
#endif

/* ======================================================================== */
/* `format` checkers (schema_format.c)                                       */

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
 * compile, 0 when not, -1 when memory ran out. Defined in schema_regex.c.
 */
int mcp__schema_regex_valid(const char *s, size_t n);

/* ======================================================================== */
/* Bytes (inline)                                                            */

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

/* FNV-1a of n bytes: the hash of property names and enum strings (tables made at compile time). */
static inline uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/*
 * Longest prefix of the n bytes at s that is at most max bytes and does not
 * end inside a UTF-8 sequence. Messages cut long names and values short;
 * cutting through a character would make them invalid UTF-8, which the
 * JSON writer (rightly) refuses, so a report could not be sent.
 */
static inline size_t utf8_clip(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0u) == 0x80u)
        max--;
    return max;
}

/* Code points in n bytes of UTF-8. */
static inline size_t utf8_count(const char *s, size_t n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += ((unsigned char)s[i] & 0xC0u) != 0x80u;
    return cnt;
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

/* Length of p[0..len) without a trailing incomplete UTF-8 sequence (one that
   truncation cut), for text whose continuation is not at hand. */
size_t mcp__utf8_trim_tail(const char *p, size_t len);

/* ======================================================================== */
/* Arena: every compiled structure lives in one, freed at once (schema_text.c) */

typedef struct chunk {
    struct chunk *next; /* older chunk */
    size_t cap;         /* usable bytes in mem */
    size_t used;        /* bytes handed out */
    max_align_t mem[];  /* the storage */
} chunk;

typedef struct arena {
    chunk *head; /* chunk being filled; NULL before the first allocation */
} arena;

/* n bytes (16-aligned) from the arena; NULL when memory ran out. */
void *mcp__ar_alloc(arena *a, size_t n);
/* The same, zeroed. */
void *mcp__ar_zalloc(arena *a, size_t n);
/* A NUL-terminated copy of n bytes. */
char *mcp__ar_strndup(arena *a, const char *s, size_t n);
/* Frees every chunk. */
void mcp__ar_free(arena *a);

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

/* A buffer writing into caller memory (mem, cap bytes), cutting what does not fit. */
static inline void sb_fixed(sbuf *b, char *mem, size_t cap)
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

/* A growing buffer that starts in caller storage (mem, cap > 0): short texts cost no allocation. */
static inline void sb_stack(sbuf *b, char *mem, size_t cap)
{
    sb_fixed(b, mem, cap);
    b->fixed = 0;
    b->stack = 1;
}

/* A growing buffer that starts empty. */
static inline void sb_dyn(sbuf *b)
{
    memset(b, 0, sizeof(*b));
}

/* Frees what a growing buffer allocated. */
static inline void sb_release(sbuf *b)
{
    if (!b->fixed && !b->stack)
        mcp_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Makes room for `extra` more bytes plus the NUL; returns the room available. */
size_t mcp__sb_room(sbuf *b, size_t extra);

/* sb_put when the bytes do not simply fit: grows, or cuts at a character boundary. */
void mcp__sb_put_slow(sbuf *b, const char *s, size_t n);

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
    mcp__sb_put_slow(b, s, n);
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
    mcp__sb_put_slow(b, s, n);
}

static inline void sb_puts(sbuf *b, const char *s)
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
    mcp__sb_put_slow(b, &c, 1);
}

/* Appends a string literal. */
#define SB_LIT(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

/* Appends like printf's %.*s: at most prec bytes, and none past a NUL. */
static inline void sb_put_prec(sbuf *b, const char *s, size_t prec)
{
    const char *z = (const char *)memchr(s, '\0', prec);
    sb_put(b, s, z ? (size_t)(z - s) : prec);
}

/*
 * Formats into the buffer. %s, %.*s and %zu (all a violation message uses)
 * are done directly; a format with any other conversion goes to the C
 * library's vsnprintf. The output is the same either way.
 */
void mcp__sb_vprintf(sbuf *b, const char *fmt, va_list ap) MCP__PRINTF(2, 0);
void mcp__sb_printf(sbuf *b, const char *fmt, ...) MCP__PRINTF(2, 3);

/* Appends a JSON Pointer reference token: '/' and the name, "~" -> "~0", "/" -> "~1". */
void mcp__sb_ptr_token(sbuf *b, const char *s, size_t n);

/* ======================================================================== */
/* Error details (schema_text.c)                                             */

/*
 * Keeps an error message valid UTF-8 (a cut character is dropped, each
 * invalid byte becomes '?'), as the JSON writer needs it when the message
 * goes out in a JSON-RPC error.
 */
void mcp__tidy_message(mcp_error *err);

/* Fills err (may be NULL) with st, the message and the JSON Pointer ptr (or NULL); returns st. */
mcp_status mcp__fail_at(mcp_error *err, mcp_status st, const char *ptr, const char *fmt, ...)
    MCP__PRINTF(4, 5);

/* ======================================================================== */
/* URIs (schema_uri.c)                                                       */

/* Appends `ref` resolved against `base` (RFC 3986 section 5.2.2) to `out`. */
void mcp__uri_resolve(sbuf *out, const char *base, const char *ref, size_t refn);

/* Length of a URI without its fragment (and without a lone trailing '#'). */
size_t mcp__uri_nofrag_len(const char *u);

/* Percent-decodes `n` bytes in place; returns the new length. */
size_t mcp__pct_decode(char *s, size_t n);

/* ======================================================================== */
/* Registry (schema_registry.c)                                              */

typedef struct regent {
    char *uri;         /* registered URI, without fragment (mcp_malloc'd) */
    mcp_json_doc *doc; /* our own copy of the document */
} regent;

struct mcp_schema_registry {
    regent *ents; /* registered documents */
    size_t n;     /* entries in use */
    size_t cap;   /* entries allocated */
};

/* The registered document of URI uri[0..n) (no fragment), or NULL (also when r is NULL). */
const regent *mcp__registry_find(const mcp_schema_registry *r, const char *uri, size_t n);

/* Deep-copies a JSON value into a document of its own (err names the failure). */
mcp_status mcp__copy_doc(mcp_json_doc **out, const mcp_json *v, mcp_error *err);

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
/* The compile context (schema_resolve.c)                                    */

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

/* Records "out of memory compiling the schema"; returns MCP_ERR_NOMEM. */
mcp_status mcp__comp_nomem(comp *c);

/* Records a compile error about node `n` (NULL: the value being walked) and its keyword `kwname`
   (may be NULL). */
mcp_status mcp__comp_bad(comp *c, const node *n, const char *kwname, mcp_status st,
                         const char *fmt, ...) MCP__PRINTF(5, 6);

/* The node of a schema value, or NULL when it has none yet. */
node *mcp__map_get(const comp *c, const mcp_json *v);

/* Queues a new node for compile_node (once). */
void mcp__enqueue(comp *c, node *n);

/* Adds a document copy to the schema's owned documents (freeing it on failure). */
mcp_status mcp__own_doc(comp *c, mcp_json_doc *d);

/*
 * The discovery walk: creates the node of schema value `v` (unless it
 * exists) and of every subschema below it, registering resources and
 * anchors on the way. `base`, `res`, `dialect` and `vocab` are what `v`
 * inherits; `doc_root` marks a document's root, `in_root_doc` the document
 * being compiled.
 */
mcp_status mcp__walk(comp *c, const mcp_json *v, const char *base, resource *res,
                     unsigned dialect, unsigned vocab, unsigned depth, int doc_root,
                     int in_root_doc);

/*
 * Resolves a `$ref`/`$dynamicRef` (ref[0..refn)) of node `n` to its target
 * node, loading registry documents as needed. For a plain-name fragment,
 * `*dyn` (may be NULL) is set when the target carries a `$dynamicAnchor` of
 * that name.
 */
mcp_status mcp__resolve_ref(comp *c, node *n, const char *kwname, const char *ref, size_t refn,
                            node **out, int *dyn);

/* Gets (creating if needed) and queues the node of subschema value `v` of `parent`. */
mcp_status mcp__child(comp *c, node *parent, const mcp_json *v, node **out);

/* Fills each resource's table of compiled $dynamicAnchors (once every node exists). */
mcp_status mcp__link_dynamic(comp *c);

/* ======================================================================== */
/* Compiling keywords (schema_compile.c) and finishing nodes (schema_plan.c) */

/* Compiles one node's keywords (its subschemas are queued, not compiled here). */
mcp_status mcp__compile_node(comp *c, node *n);

/* The set of an `enum` whose values are all strings; *out stays NULL otherwise. */
mcp_status mcp__make_senum(comp *c, const mcp_json *arr, const senum **out);

/* The lfast of a leaf whose keywords (k: its nk keywords) all allow one; else n->lf stays NULL. */
mcp_status mcp__make_lfast(comp *c, node *n, const kw *k, unsigned nk);

/*
 * Finishes a compiled node once every node is compiled: keyword tokens, the
 * constant parts of its violation messages, and the plan of a flat node.
 */
mcp_status mcp__finish_node(comp *c, node *n);

/* ======================================================================== */
/* Regular expressions (schema_regex.c)                                      */

/* Creates the schema's PCRE2 contexts (allocation through mcp_malloc, match limits). */
mcp_status mcp__re_contexts(comp *c);

/*
 * Compiles pattern src[0..len) into `out` (a regex of node `n`, keyword
 * `kwname`, for messages): PCRE2 code owned by the schema and, when the
 * pattern qualifies, the direct matcher.
 */
mcp_status mcp__re_build(comp *c, node *n, const char *kwname, const char *src, size_t len,
                         regex *out);

/*
 * The direct matcher's form of a fixed-length pattern of 8 or more
 * positions: eight positions checked with a few word operations (the
 * literal bytes under a mask, the [0-9] bytes with the nibble test, the
 * other positions through their tables). The last block may overlap the
 * one before it. Masks are built byte by byte and loaded like the subject,
 * so they hold on any byte order.
 */
typedef struct sblock {
    uint64_t lit_mask;  /* 0xFF at each literal position */
    uint64_t lit_val;   /* the literal bytes */
    uint64_t dig_mask;  /* 0xFF at each [0-9] position */
    uint32_t off;       /* position of the block's first byte */
    uint32_t tab_bits;  /* bit j: position off + j goes through its table */
} sblock;

/* One atom of a simple pattern (schema_regex.c). */
typedef struct satom satom;

/* A pattern the direct matcher takes. */
struct simple_re {
    satom *atoms;     /* the sequence, in order */
    size_t n;         /* atom count */
    int anchored_end; /* the pattern ends with '$' */
    const unsigned char **pos; /* when every count is fixed: the table of each position */
    size_t len;       /* and their number (the length of every match) */
    const struct sblock *blocks; /* a fixed length of 8 or more: its 8-byte blocks */
    size_t nblocks;   /* their count */
};

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
int mcp__simple_match(const simple_re *r, const char *s, size_t n);

/* ======================================================================== */
/* Exact decimal arithmetic on number literals (schema_number.c)            */

/* Compares two numbers exactly on their decimal text: -1, 0 or 1. */
int mcp__num_cmp_exact(const mcp_json *v, const mcp_json *lim);

/* Is the number v a multiple of the limit l (exactly, on the decimal text where it can)? */
int mcp__is_multiple(const mcp_json *v, const numlim *l);

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
    return mcp__num_cmp_exact(v, l->v);
}

/* ======================================================================== */
/* Validation: the state of one call                                         */

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

static inline void ev_mark(evals *e, size_t i)
{
    if (e && i < e->n)
        e->bits[i / 8] |= (unsigned char)(1u << (i % 8));
}

static inline int ev_has(const evals *e, size_t i)
{
    return (e->bits[i / 8] >> (i % 8)) & 1u;
}

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

/*
 * What v_node hands each keyword of a node it evaluates (the keyword
 * functions of schema_apply.c, and v_value). A keyword function
 * returns 1 when the keyword holds and 0 when it fails; after a failure it
 * goes on (to report more) only while v_fail_stops() says no.
 */
typedef struct vframe {
    const node *n;    /* the node */
    const ival *iv;   /* the instance */
    const pseg *ip;   /* the instance's path */
    const pseg *kp;   /* the node's keyword path */
    evals *cur;       /* members/items evaluated, to mark (NULL: none are kept) */
    const dscope *ds; /* the dynamic scope */
    unsigned tb;      /* the instance's type bits */
    int quiet;        /* yes/no only: no report, stop at the first failure */
} vframe;

/* After a failure: must the keyword stop here (quiet mode, or the validation is ending)? */
static inline int v_fail_stops(const vctx *c, const vframe *f)
{
    return f->quiet || c->stop || c->status;
}

/* Records a hard failure (NOMEM, LIMIT) that stops the validation; the first one counts. */
void mcp__hard_fail(vctx *c, mcp_status st, const char *fmt, ...) MCP__PRINTF(3, 4);

/* Records that the step or the nesting limit was met (the step limit first). */
void mcp__v_limit(vctx *c);

/* Counts a step and checks the step and nesting limits: 0 (c->status set) when one is met. */
static SCHEMA_INLINE int v_enter(vctx *c)
{
    if (++c->steps > c->max_steps || c->depth >= c->max_depth) {
        mcp__v_limit(c);
        return 0;
    }
    return 1;
}

/* ======================================================================== */
/* Value checks, shared by the reporting and the quiet paths (inline)        */

static inline int is_integral(double d)
{
    return isfinite(d) && floor(d) == d;
}

/* Type bits of a JSON value type (a real is T_NUM only; type_ok() decides "integer" for it). */
static const unsigned char json_type_bits[] = {
    [MCP_JSON_NONE] = T_OBJ,        [MCP_JSON_NULL] = T_NULL, [MCP_JSON_BOOL] = T_BOOL,
    [MCP_JSON_INT] = T_INT | T_NUM, [MCP_JSON_REAL] = T_NUM,  [MCP_JSON_STRING] = T_STR,
    [MCP_JSON_ARRAY] = T_ARR,       [MCP_JSON_OBJECT] = T_OBJ};

/* Instance type bits (a property name is a string). */
static inline unsigned ival_type_bits(const ival *iv)
{
    return iv->v ? json_type_bits[iv->v->type] : T_STR;
}

/* Is a value of type bits tb one of `types`? A real with no fraction is an integer. */
static inline int types_ok(unsigned types, unsigned tb, const mcp_json *v)
{
    return (types & tb) || ((types & T_INT) && tb == T_NUM && is_integral(v->u.d));
}

/* Does the instance (type bits tb) have one of `types`? */
static inline int type_ok(unsigned types, unsigned tb, const ival *iv)
{
    return types_ok(types, tb, iv->v); /* iv->v is only read for a number */
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

/* Equality of the instance with a schema value (handles property-name instances). */
int mcp__ival_equal(const ival *iv, const mcp_json *v);

/* Is the instance (type bits tb) one of the `enum` keyword's values? */
int mcp__enum_hit(const kw *k, const ival *iv, unsigned tb);

/* The relation a number fails ("<=", ...), or NULL when it satisfies the keyword. */
static SCHEMA_INLINE const char *num_fails(const kw *k, const mcp_json *v)
{
    if (k->op == K_MULOF)
        return mcp__is_multiple(v, &k->u.num) ? NULL : "a multiple of";
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

/* Does a regex match the bytes? 1/0, or -1 with c->status set. */
int mcp__re_match(vctx *c, const regex *re, const char *s, size_t n);

/* format, uniqueItems and dependentRequired (schema_check.c): v_value's out-of-line cases. */
int mcp__v_format(vctx *c, const kw *k, const ival *iv, const pseg *ip, const pseg *kp, int quiet,
                  const node *n);
int mcp__v_unique(vctx *c, const ival *iv, const pseg *ip, const pseg *kp, int quiet);
int mcp__v_depreq(vctx *c, const kw *k, const ival *iv, const pseg *ip, const pseg *kp,
                  int quiet);

/* The violations v_value reports (schema_report.c). */
void mcp__say_type(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const ival *iv);
void mcp__say_enum(vctx *c, const pseg *ip, const pseg *kp, const kw *k);
void mcp__say_const(vctx *c, const pseg *ip, const pseg *kp, const kw *k);
void mcp__say_num(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const char *what,
                  const ival *iv);
void mcp__say_len(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len);
void mcp__say_pattern(vctx *c, const pseg *ip, const pseg *kp, const kw *k);
void mcp__say_count(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len);
void mcp__say_required(vctx *c, const pseg *ip, const pseg *kp, const sstr *r);

/*
 * One value keyword k of node f->n, applying to the instance: 1 when it
 * holds, 0 when it fails (c->status set on a hard failure), each violation
 * reported unless f->quiet. The value checks of v_node's loop, of the quiet
 * leaf path (v_leaf_at, where f->quiet is a constant and the reporting
 * vanishes) and of the flat report.
 */
static SCHEMA_INLINE int v_value(vctx *c, const vframe *f, const kw *k)
{
    const ival *iv = f->iv;
    const char *sv, *what;
    size_t sn, len;
    int ok = 1;
    switch (k->op) {
    case K_TYPE:
        if (type_ok(k->u.types, f->tb, iv))
            return 1;
        if (!f->quiet)
            mcp__say_type(c, f->ip, f->kp, k, iv);
        return 0;
    case K_ENUM:
        if (mcp__enum_hit(k, iv, f->tb))
            return 1;
        if (!f->quiet)
            mcp__say_enum(c, f->ip, f->kp, k);
        return 0;
    case K_CONST:
        if (mcp__ival_equal(iv, k->u.val))
            return 1;
        if (!f->quiet)
            mcp__say_const(c, f->ip, f->kp, k);
        return 0;
    case K_MULOF:
    case K_MAX:
    case K_XMAX:
    case K_MIN:
    case K_XMIN:
        if ((what = num_fails(k, iv->v)) == NULL)
            return 1;
        if (!f->quiet)
            mcp__say_num(c, f->ip, f->kp, k, what, iv);
        return 0;
    case K_MAXLEN:
    case K_MINLEN:
        sv = ival_bytes(iv, &sn);
        if (!len_fails(k, sv, sn, &len))
            return 1;
        if (!f->quiet)
            mcp__say_len(c, f->ip, f->kp, k, len);
        return 0;
    case K_PATTERN:
        sv = ival_bytes(iv, &sn);
        c->steps++;
        if ((ok = mcp__re_match(c, &k->u.re, sv, sn)) != 0)
            return ok > 0; /* -1: c->status is set */
        if (!f->quiet)
            mcp__say_pattern(c, f->ip, f->kp, k);
        return 0;
    case K_MAXITEMS:
    case K_MINITEMS:
    case K_MAXPROPS:
    case K_MINPROPS:
        if (!count_fails(k, iv->v->len))
            return 1;
        if (!f->quiet)
            mcp__say_count(c, f->ip, f->kp, k, iv->v->len);
        return 0;
    case K_REQUIRED: /* each missing name is a violation of its own */
        for (size_t i = 0; i < k->u.req.n; i++) {
            const sstr *r = &k->u.req.names[i];
            if (j_has(iv->v, r->s, r->n))
                continue;
            if (!f->quiet)
                mcp__say_required(c, f->ip, f->kp, r);
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
        return ok;
    case K_FORMAT:
        return mcp__v_format(c, k, iv, f->ip, f->kp, f->quiet, f->n);
    case K_UNIQUE:
        return mcp__v_unique(c, iv, f->ip, f->kp, f->quiet);
    case K_DEPREQ:
        return mcp__v_depreq(c, k, iv, f->ip, f->kp, f->quiet);
    default:
        return 0; /* not a value keyword: the callers keep this unreachable */
    }
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
    if (!checked)
        c->steps++;
    else if (!v_enter(c))
        return 0;
    unsigned tb = ival_type_bits(iv);
    /* `type` comes first when present (ltypes is T_ANY without it). */
    if (!type_ok(n->ltypes, tb, iv))
        return 0;
    if (!(n->lmore & tb))
        return 1;
    const vframe f = {n, iv, NULL, NULL, NULL, NULL, tb, 1};
    for (unsigned ki = n->lfirst; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if ((k->applies & tb) && !v_value(c, &f, k))
            return 0;
    }
    return 1;
}

static SCHEMA_INLINE int v_leaf(vctx *c, const node *n, const ival *iv)
{
    return v_leaf_at(c, n, iv, 1);
}

/* ======================================================================== */
/* Validation: properties and flat objects (schema_flat.c)                   */

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

/* Quiet evaluation of a flat node (schema_flat.c tells how). */
int mcp__v_flat(vctx *c, const node *n, const ival *iv);

/*
 * The fast loop of a flat node's plan (every member schema an lfast) on
 * object obj, the limits known not to be reachable: 1 valid, 0 not; adds
 * the steps taken to *stepsp when `required` holds. Nothing else changes.
 */
int mcp__flat_fast(const fplan *fp, const mcp_json *obj, uint64_t *stepsp);

/*
 * The reporting evaluation of a leaf with an lfast or of a flat node with
 * a fast plan, when flat_report_fits: exactly what v_node does for it (no
 * annotations, no dynamic scope, not quiet), without checking the limits.
 */
int mcp__v_flat_report(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp);

/* Is mcp__v_flat_report's bound met: can the flat node meet no limit on this instance? */
static SCHEMA_INLINE int flat_report_fits(const vctx *c, const node *n, const ival *iv)
{
    const fplan *fp = n->fp;
    if (!fp || !fp->fast || c->dyn)
        return 0;
    uint64_t cnt = iv->v && iv->v->type == MCP_JSON_OBJECT ? iv->v->len : 0;
    return c->steps < c->max_steps && fp->steps * cnt <= c->max_steps - c->steps - 1 &&
           c->depth + 1 < c->max_depth;
}

/* ======================================================================== */
/* Validation: the keyword loop (schema_apply.c)                             */

/*
 * The general evaluation of node n on the instance: every keyword, with
 * paths for the report, annotations for unevaluated* (kept into ev, may be
 * NULL) and the dynamic scope ds. 1 valid, 0 not.
 */
int mcp__v_node(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                evals *ev, int quiet, const dscope *ds);

/* A node whose only keyword is `$ref`, without a frame of its own (not with $dynamicRef). */
int mcp__v_refonly(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                   evals *cur, int quiet, const dscope *ds);

/* Validates an in-place subschema (same instance), keeping its annotations in cur if it passes. */
int mcp__v_inplace(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                   evals *cur, int quiet, const dscope *ds);

/*
 * Validates a subschema, taking the leaf, flat or `$ref` path when it can.
 * A leaf or flat node that fails outside quiet mode is evaluated again to
 * report why; the step count is rewound first, so the work counts once, as
 * in quiet mode.
 */
static SCHEMA_INLINE int v_child(vctx *c, const node *n, const ival *iv, const pseg *ip,
                                 const pseg *kp, int quiet, const dscope *ds)
{
    if (n->refonly && !c->dyn)
        return mcp__v_refonly(c, n, iv, ip, kp, NULL, quiet, ds);
    if (n->leaf || (n->flat && !c->dyn)) {
        uint64_t steps = c->steps;
        int r = n->leaf ? v_leaf(c, n, iv) : mcp__v_flat(c, n, iv);
        if (r || quiet || c->status)
            return r && !c->status;
        c->steps = steps;
        if (n->flat && flat_report_fits(c, n, iv))
            return mcp__v_flat_report(c, n, iv, ip, kp);
    } else if (n->is_bool && n->bool_val) {
        return 1;
    }
    return mcp__v_node(c, n, iv, ip, kp, NULL, quiet, ds);
}

/* ======================================================================== */
/* Violations and the report (schema_report.c)                              */

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
 *     if (mcp__emit_begin(c, &em, ip, kp, kwtok, kwlen, sub, subn)) {
 *         ... append the message (after "<pointer>: ") to em.b ...
 *         mcp__emit_end(c, &em, label);
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

int mcp__emit_begin(vctx *c, emitter *em, const pseg *ip, const pseg *kp, const char *kwtok,
                    size_t kwlen, const char *sub, size_t subn);
void mcp__emit_end(vctx *c, emitter *em, const char *label);

/*
 * The report of a validation that kept violations: one allocation holding
 * the result, its violations and their strings. NULL with c->status set
 * when memory ran out.
 */
mcp_schema_result *mcp__make_report(vctx *c);

/* Writes a short rendering of a value (scalars in full, containers elided). */
void mcp__put_value(sbuf *b, const mcp_json *v, size_t max);

/* Lists the declared property names into a message (bounded). */
void mcp__put_allowed(sbuf *b, const props *pr);

/* The other violations, one function each (ip: the instance path, kp: the node's keyword path). */
void mcp__say_false(vctx *c, const pseg *ip, const pseg *kp);
void mcp__say_format(vctx *c, const pseg *ip, const pseg *kp, const node *n);
void mcp__say_unique(vctx *c, const pseg *ip, const pseg *kp, size_t a, size_t b);
void mcp__say_depreq(vctx *c, const pseg *ip, const pseg *ks, const kw *k, const depreq *d,
                     const sstr *name);
void mcp__say_additional(vctx *c, const pseg *is, const pseg *kp, const kw *k, const char *key,
                         size_t kn);
void mcp__say_propname(vctx *c, const pseg *ip, const pseg *kp, const char *key, size_t kn);
void mcp__say_no_item(vctx *c, const pseg *is, const pseg *kp, const kw *k);
void mcp__say_contains(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t hits);
void mcp__say_none_matches(vctx *c, const pseg *ip, const pseg *kp, const kw *k);
void mcp__say_oneof_many(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t hits,
                         size_t first, size_t second);
void mcp__say_not(vctx *c, const pseg *ip, const pseg *kp);
void mcp__say_unevaluated(vctx *c, const pseg *is, const pseg *kp, const kw *k, const char *key,
                          size_t kn);

#endif /* MCP_SCHEMA_INTERNAL_H */
