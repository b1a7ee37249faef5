/*
 * JSON parser and read access.
 *
 * The parser copies the input into the document's arena (with eight zero
 * bytes of padding) and decodes strings in place: a decoded string is never
 * longer than its source, so it overwrites its own text and its closing
 * quote becomes the NUL terminator. Copying costs one memcpy and buys three
 * things: the caller's buffer is free at once, strings need no allocation,
 * and the padding lets the scanners read eight bytes at a time and look
 * ahead a few bytes without bounds checks (a zero byte is never valid where
 * they look, so it stops them exactly where the end would).
 *
 * The parser is iterative. Values of open containers wait on one member
 * stack; when a container closes, its children are copied into the arena
 * as one contiguous array. Every value is therefore copied exactly once,
 * and nesting depth costs heap (bounded by max_depth), never C stack.
 */

#include "json/json_internal.h"
#include "util/abi.h"
#include "util/util.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Arena                                                                     */

typedef struct arena_block {
    struct arena_block *next; /* older block */
    size_t cap;               /* usable bytes after the header */
    size_t used;              /* bytes handed out */
} arena_block;

#define ARENA_ALIGN 8u
#define BLOCK_HDR ((sizeof(arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct mcp_json_doc {
    mcp_json root;       /* the top-level value */
    arena_block *blocks; /* newest first; the first block also holds this struct */
};

static void *arena_alloc(mcp_json_doc *doc, size_t size)
{
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    arena_block *b = doc->blocks;
    if (MCP__LIKELY(b->cap - b->used >= size)) {
        void *p = (char *)b + BLOCK_HDR + b->used;
        b->used += size;
        return p;
    }
    /* Grow geometrically so a document needs O(log n) blocks. */
    size_t cap = b->cap * 2;
    if (cap < size)
        cap = size;
    if (cap > SIZE_MAX - BLOCK_HDR)
        return NULL;
    arena_block *nb = mcp_malloc(BLOCK_HDR + cap);
    if (!nb)
        return NULL;
    nb->next = b;
    nb->cap = cap;
    nb->used = size;
    doc->blocks = nb;
    return (char *)nb + BLOCK_HDR;
}

void mcp_json_doc_free(mcp_json_doc *doc)
{
    if (!doc)
        return;
    arena_block *b = doc->blocks;
    while (b) {
        arena_block *next = b->next;
        mcp_free(b); /* the last (oldest) block holds `doc` itself */
        b = next;
    }
}

const mcp_json *mcp_json_doc_root(const mcp_json_doc *doc)
{
    return doc ? &doc->root : NULL;
}

/* ------------------------------------------------------------------------ */
/* Hashing for object indexes                                                */

/*
 * The index hash is seeded once per process from the system CSPRNG, so a
 * peer cannot precompute keys that collide and turn lookups quadratic.
 */
static uint64_t g_hash_seed;
static pthread_once_t g_hash_once = PTHREAD_ONCE_INIT;

static void hash_seed_init(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s)
        s = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)&s;
    g_hash_seed = s | 1;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return x;
}

uint32_t mcp__json_hash(const char *key, size_t len)
{
    uint64_t h = g_hash_seed ^ (len * 0x9E3779B97F4A7C15ull);
    const unsigned char *s = (const unsigned char *)key;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = mix64(h ^ w) * 0xFF51AFD7ED558CCDull;
        s += 8;
        len -= 8;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < len; i++)
        t |= (uint64_t)s[i] << (8 * i);
    h = mix64(h ^ t);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t mcp__json_index_cap(uint32_t n)
{
    uint32_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                    */

/* A container being parsed: its children start at member-stack index `start`. */
typedef struct frame {
    uint32_t start; /* first child on the member stack */
    uint32_t is_obj; /* 1 for an object, 0 for an array */
} frame;

#define INLINE_MEMBERS 32
#define INLINE_FRAMES 32
#define PAD 8 /* zero bytes after the copied text */

typedef struct parser {
    unsigned char *beg;   /* start of the copied text */
    unsigned char *end;   /* one past its last byte (a zero byte) */
    mcp_json_doc *doc;    /* the document being built */
    mcp__member *stk;     /* member stack: children of open containers */
    size_t nstk;          /* members on it */
    size_t capstk;        /* its capacity */
    frame *frames;        /* open containers, innermost last */
    size_t nframes;       /* their number */
    size_t capframes;     /* capacity of `frames` */
    unsigned max_depth;   /* nesting limit */
    unsigned flags;       /* MCP_JSON_* flags */
    mcp_error *err;       /* caller's error detail, may be NULL */
    mcp_status st;        /* status of the first failure */
    mcp__member inl_stk[INLINE_MEMBERS]; /* member stack until it outgrows this */
    frame inl_frames[INLINE_FRAMES];     /* frame stack until it outgrows this */
} parser;

static mcp_status perr(parser *ps, const unsigned char *at, const char *msg)
{
    size_t off = at >= ps->beg ? (size_t)(at - ps->beg) : 0;
    ps->st = mcp__fail(ps->err, MCP_ERR_PARSE, -32700, off, "%s at byte %zu", msg, off);
    return ps->st;
}

static const unsigned char g_ws[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

static inline unsigned char *skip_ws(unsigned char *p)
{
    /* The text ends in a zero byte, which is not whitespace. */
    while (g_ws[*p])
        p++;
    return p;
}

/* The byte a two-character escape stands for; 0 for 'u' and invalid escapes. */
static const unsigned char g_unescape[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
    ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
};

static inline int hexval(unsigned c)
{
    if (c - '0' < 10)
        return (int)(c - '0');
    c |= 0x20;
    if (c - 'a' < 6)
        return (int)(c - 'a' + 10);
    return -1;
}

/* Four hex digits at s, or -1. Reads s[0..3], which the padding keeps in bounds. */
static inline long hex4(const unsigned char *s)
{
    int a = hexval(s[0]), b = hexval(s[1]), c = hexval(s[2]), d = hexval(s[3]);
    if ((a | b | c | d) < 0)
        return -1;
    return (long)((a << 12) | (b << 8) | (c << 4) | d);
}

static inline unsigned char *put_utf8(unsigned char *w, unsigned long cp)
{
    if (cp < 0x80) {
        *w++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *w++ = (unsigned char)(0xC0 | (cp >> 6));
        *w++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (unsigned char)(0xE0 | (cp >> 12));
        *w++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (unsigned char)(0xF0 | (cp >> 18));
        *w++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *w++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    return w;
}

/*
 * Parses the string whose opening quote is at *pp, decoding it in place.
 * On success stores the decoded bytes and length and moves *pp past the
 * closing quote.
 */
static mcp_status parse_string(parser *ps, unsigned char **pp, const char **out, uint32_t *outlen)
{
    unsigned char *start = *pp + 1;
    unsigned char *s = start;
    unsigned char *w;

    /* Pass 1: nothing to rewrite until the first escape. */
    for (;;) {
        uint64_t word;
        memcpy(&word, s, 8);
        uint64_t m = mcp__str_special(word);
        if (!m) {
            s += 8;
            continue;
        }
        s += MCP__FIRST_SPECIAL(m);
        unsigned c = *s;
        if (c == '"') {
            *s = '\0';
            *out = (const char *)start;
            *outlen = (uint32_t)(s - start);
            *pp = s + 1;
            return MCP_OK;
        }
        if (c == '\\')
            break;
        if (c < 0x20)
            return perr(ps, s, s == ps->end ? "unterminated string" : "unescaped control character in string");
        if (c < 0x80) {
            s++;
            continue;
        }
        int n = mcp__utf8_seq(s);
        if (!n)
            return perr(ps, s, "invalid UTF-8 in string");
        s += n;
    }

    /* Pass 2: an escape was seen; copy down while decoding. */
    w = s;
    for (;;) {
        uint64_t word;
        memcpy(&word, s, 8);
        uint64_t m = mcp__str_special(word);
        if (!m) {
            /* w <= s: these 8 bytes only overwrite text already consumed. */
            memcpy(w, &word, 8);
            s += 8;
            w += 8;
            continue;
        }
        /* Copy only the plain prefix: a full word could overwrite unread text. */
        unsigned skip = MCP__FIRST_SPECIAL(m);
        for (unsigned k = 0; k < skip; k++)
            w[k] = s[k];
        s += skip;
        w += skip;
        unsigned c = *s;
        if (c == '"') {
            *w = '\0';
            *out = (const char *)start;
            *outlen = (uint32_t)(w - start);
            *pp = s + 1;
            return MCP_OK;
        }
        if (c == '\\') {
            /* A table, not a switch: escapes vary from one to the next, and
             * an indirect jump per escape mispredicts. */
            unsigned e = s[1];
            unsigned char d = g_unescape[e];
            if (MCP__LIKELY(d)) {
                *w++ = d;
                s += 2;
                continue;
            }
            if (e != 'u')
                return perr(ps, s, "invalid escape in string");
            long cp = hex4(s + 2);
            if (cp < 0)
                return perr(ps, s, "invalid \\u escape in string");
            s += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = (s[0] == '\\' && s[1] == 'u') ? hex4(s + 2) : -1;
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                } else {
                    cp = 0xFFFD; /* lone high surrogate */
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD; /* lone low surrogate */
            }
            w = put_utf8(w, (unsigned long)cp);
            continue;
        }
        if (c < 0x20)
            return perr(ps, s, s == ps->end ? "unterminated string" : "unescaped control character in string");
        if (c < 0x80) {
            *w++ = *s++;
            continue;
        }
        int n = mcp__utf8_seq(s);
        if (!n)
            return perr(ps, s, "invalid UTF-8 in string");
        for (int i = 0; i < n; i++)
            *w++ = *s++;
    }
}

/* The "C" locale for strtod_l, so an embedder's setlocale() cannot change how '.' reads. */
static locale_t g_c_locale;
static pthread_once_t g_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
    g_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t mcp__c_locale(void)
{
    pthread_once(&g_locale_once, c_locale_init);
    return g_c_locale;
}

static double slow_strtod(unsigned char *start, unsigned char *stop)
{
    mcp__c_locale();
    /* The text is ours and padded: terminate the literal in place, then restore. */
    unsigned char saved = *stop;
    *stop = '\0';
    double d = g_c_locale ? strtod_l((const char *)start, NULL, g_c_locale)
                          : strtod((const char *)start, NULL);
    *stop = saved;
    return d;
}

static const double g_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

/* Parses the number at *pp into v (type, value, source text). */
static mcp_status parse_number(parser *ps, unsigned char **pp, mcp_json *v)
{
    unsigned char *s = *pp, *start = s;
    int neg = 0;
    uint64_t mant = 0; /* significant digits, up to 19 of them */
    int sig = 0;       /* significant digits seen (leading zeros excluded) */
    int dropped = 0;   /* a nonzero digit did not fit in mant */
    long exp10 = 0;    /* decimal exponent to apply to mant */
    int is_int = 1;

    if (*s == '-') {
        neg = 1;
        s++;
    }
    if (*s == '0') {
        s++;
        if (IS_DIGIT(*s))
            return perr(ps, s, "leading zero in number");
    } else if (IS_DIGIT(*s)) {
        while (IS_DIGIT(*s)) {
            unsigned d = *s - '0';
            if (sig < 19) {
                mant = mant * 10 + d;
                if (mant)
                    sig++;
            } else {
                exp10++;
                dropped |= d != 0;
            }
            s++;
        }
    } else {
        return perr(ps, s, "invalid number");
    }
    if (*s == '.') {
        is_int = 0;
        s++;
        if (!IS_DIGIT(*s))
            return perr(ps, s, "digit expected after decimal point");
        while (IS_DIGIT(*s)) {
            unsigned d = *s - '0';
            if (sig < 19) {
                mant = mant * 10 + d;
                if (mant)
                    sig++;
                exp10--;
            } else {
                dropped |= d != 0;
            }
            s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        is_int = 0;
        s++;
        int eneg = 0;
        if (*s == '+' || *s == '-') {
            eneg = *s == '-';
            s++;
        }
        if (!IS_DIGIT(*s))
            return perr(ps, s, "digit expected in exponent");
        long e = 0;
        while (IS_DIGIT(*s)) {
            if (e < 100000000)
                e = e * 10 + (*s - '0');
            s++;
        }
        exp10 += eneg ? -e : e;
    }

    v->p = start;
    v->len = (uint32_t)(s - start);
    *pp = s;

    if (is_int && !dropped && exp10 == 0) {
        /* At most 19 digits: exact in uint64. */
        if (!neg && mant <= (uint64_t)INT64_MAX) {
            v->type = MCP_JSON_INT;
            v->u.i = (int64_t)mant;
            return MCP_OK;
        }
        if (neg && mant <= (uint64_t)INT64_MAX + 1) {
            v->type = MCP_JSON_INT;
            v->u.i = mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mant;
            return MCP_OK;
        }
    }
    v->type = MCP_JSON_REAL;
    /* Clinger's fast path: both operands exact in a double, so one
     * correctly rounded operation gives the correctly rounded result. */
    if (!dropped && mant <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)mant;
        d = exp10 < 0 ? d / g_pow10[-exp10] : d * g_pow10[exp10];
        v->u.d = neg ? -d : d;
        return MCP_OK;
    }
    /* Its extension for larger exponents (1e28, 12.5e30): move the excess
     * powers of ten into the mantissa while it stays exact (at most 2^53),
     * then one multiplication by 1e22 as above. */
    if (!dropped && exp10 > 22 && exp10 <= 22 + 16) {
        uint64_t m = mant;
        long e = exp10;
        while (e > 22 && m <= (1ull << 53) / 10) {
            m *= 10;
            e--;
        }
        if (e == 22) {
            double d = (double)m * 1e22;
            v->u.d = neg ? -d : d;
            return MCP_OK;
        }
    }
    v->u.d = slow_strtod(start, s);
    return MCP_OK;
}

static mcp_status grow_stack(parser *ps)
{
    size_t ncap = ps->capstk * 2;
    mcp__member *n;
    if (ps->stk == ps->inl_stk) {
        n = mcp_malloc(ncap * sizeof *n);
        if (n)
            memcpy(n, ps->stk, ps->nstk * sizeof *n);
    } else {
        n = ncap > SIZE_MAX / sizeof *n ? NULL : mcp_realloc(ps->stk, ncap * sizeof *n);
    }
    if (!n)
        return ps->st = mcp__fail(ps->err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
    ps->stk = n;
    ps->capstk = ncap;
    return MCP_OK;
}

static mcp_status push_frame(parser *ps, unsigned char *at, int is_obj)
{
    if (ps->nframes >= ps->max_depth) {
        size_t off = (size_t)(at - ps->beg);
        return ps->st = mcp__fail(ps->err, MCP_ERR_LIMIT, -32700, off,
                                  "nesting deeper than %u at byte %zu", ps->max_depth, off);
    }
    if (ps->nframes == ps->capframes) {
        size_t ncap = ps->capframes * 2;
        frame *n;
        if (ps->frames == ps->inl_frames) {
            n = mcp_malloc(ncap * sizeof *n);
            if (n)
                memcpy(n, ps->frames, ps->nframes * sizeof *n);
        } else {
            n = mcp_realloc(ps->frames, ncap * sizeof *n);
        }
        if (!n)
            return ps->st = mcp__fail(ps->err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
        ps->frames = n;
        ps->capframes = ncap;
    }
    ps->frames[ps->nframes].start = (uint32_t)ps->nstk;
    ps->frames[ps->nframes].is_obj = (uint32_t)is_obj;
    ps->nframes++;
    return MCP_OK;
}

/* Builds the hash index of an object (and finds duplicate keys). */
static mcp_status index_object(parser *ps, mcp__member *m, uint32_t n, const uint32_t **out,
                               unsigned char *at)
{
    uint32_t cap = mcp__json_index_cap(n);
    uint32_t *tab = arena_alloc(ps->doc, (size_t)cap * sizeof *tab);
    if (!tab)
        return ps->st = mcp__fail(ps->err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
    memset(tab, 0, (size_t)cap * sizeof *tab);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = mcp__json_hash(m[i].key, m[i].klen);
        m[i].hash = h;
        uint32_t slot = h & (cap - 1);
        for (;;) {
            uint32_t j = tab[slot];
            if (!j) {
                tab[slot] = i + 1;
                break;
            }
            const mcp__member *o = &m[j - 1];
            if (o->hash == h && o->klen == m[i].klen && memcmp(o->key, m[i].key, o->klen) == 0) {
                if (ps->flags & MCP_JSON_REJECT_DUPLICATES)
                    return perr(ps, at, "duplicate object key");
                tab[slot] = i + 1; /* the last duplicate wins */
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    *out = tab;
    return MCP_OK;
}

/*
 * Where the value being parsed goes: the open slot on top of the member
 * stack (an array element or an object member pushed before the value), or
 * the root. Values are written in place rather than built in a local and
 * copied: a copy right after field-by-field stores stalls store forwarding.
 */
static inline mcp_json *slot(parser *ps, mcp_json *root)
{
    return ps->nframes ? &ps->stk[ps->nstk - 1].value : root;
}

/* Closes the innermost container and stores it in its parent's slot. */
static mcp_status close_container(parser *ps, unsigned char *at, mcp_json *root)
{
    frame f = ps->frames[--ps->nframes];
    uint32_t n = (uint32_t)(ps->nstk - f.start);
    mcp__member *kids = ps->stk + f.start;
    const void *items = NULL;
    const uint32_t *index = NULL;
    if (f.is_obj) {
        if (n) {
            mcp__member *m = arena_alloc(ps->doc, (size_t)n * sizeof *m);
            if (!m)
                return ps->st = mcp__fail(ps->err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
            memcpy(m, kids, (size_t)n * sizeof *m);
            items = m;
            if (n >= MCP__JSON_INDEX_MIN) {
                mcp_status st = index_object(ps, m, n, &index, at);
                if (st)
                    return st;
            } else if (ps->flags & MCP_JSON_REJECT_DUPLICATES) {
                for (uint32_t i = 1; i < n; i++)
                    for (uint32_t j = 0; j < i; j++)
                        if (m[i].klen == m[j].klen && memcmp(m[i].key, m[j].key, m[i].klen) == 0)
                            return perr(ps, at, "duplicate object key");
            }
        }
    } else if (n) {
        mcp_json *a = arena_alloc(ps->doc, (size_t)n * sizeof *a);
        if (!a)
            return ps->st = mcp__fail(ps->err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
        for (uint32_t i = 0; i < n; i++)
            a[i] = kids[i].value;
        items = a;
    }
    ps->nstk = f.start;
    mcp_json *v = slot(ps, root);
    v->type = f.is_obj ? MCP_JSON_OBJECT : MCP_JSON_ARRAY;
    v->len = n;
    v->p = items;
    v->u.index = index;
    return MCP_OK;
}

/* Pushes an empty slot for the next array element. */
static inline mcp_status push_element(parser *ps)
{
    if (ps->nstk == ps->capstk) {
        mcp_status st = grow_stack(ps);
        if (st)
            return st;
    }
    ps->stk[ps->nstk].key = NULL;
    ps->stk[ps->nstk].klen = 0;
    ps->nstk++;
    return MCP_OK;
}

static mcp_status run(parser *ps, mcp_json *root)
{
    unsigned char *p = skip_ws(ps->beg);
    mcp_json *v;
    mcp_status st;

parse_value:
    switch (*p) {
    case '{':
        if ((st = push_frame(ps, p, 1)))
            return st;
        p = skip_ws(p + 1);
        if (*p == '}') {
            p++;
            if ((st = close_container(ps, p, root)))
                return st;
            break;
        }
        goto object_key;
    case '[':
        if ((st = push_frame(ps, p, 0)))
            return st;
        p = skip_ws(p + 1);
        if (*p == ']') {
            p++;
            if ((st = close_container(ps, p, root)))
                return st;
            break;
        }
        if ((st = push_element(ps)))
            return st;
        goto parse_value;
    case '"': {
        const char *s;
        uint32_t n;
        if ((st = parse_string(ps, &p, &s, &n)))
            return st;
        v = slot(ps, root);
        v->type = MCP_JSON_STRING;
        v->p = s;
        v->len = n;
        break;
    }
    case 't':
        if (memcmp(p, "true", 4) != 0)
            return perr(ps, p, "invalid literal");
        v = slot(ps, root);
        v->type = MCP_JSON_BOOL;
        v->u.i = 1;
        p += 4;
        break;
    case 'f':
        if (memcmp(p, "false", 5) != 0)
            return perr(ps, p, "invalid literal");
        v = slot(ps, root);
        v->type = MCP_JSON_BOOL;
        v->u.i = 0;
        p += 5;
        break;
    case 'n':
        if (memcmp(p, "null", 4) != 0)
            return perr(ps, p, "invalid literal");
        v = slot(ps, root);
        v->type = MCP_JSON_NULL;
        p += 4;
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        if ((st = parse_number(ps, &p, slot(ps, root))))
            return st;
        break;
    default:
        if (p == ps->end)
            return perr(ps, p, "unexpected end of input, value expected");
        return perr(ps, p, "value expected");
    }

value_done:
    /* A value is complete in its slot: continue its container, or finish. */
    if (ps->nframes == 0) {
        p = skip_ws(p);
        if (p != ps->end)
            return perr(ps, p, "unexpected data after the JSON value");
        return MCP_OK;
    }
    p = skip_ws(p);
    if (ps->frames[ps->nframes - 1].is_obj) {
        if (*p == ',') {
            p = skip_ws(p + 1);
            goto object_key;
        }
        if (*p == '}') {
            p++;
            if ((st = close_container(ps, p, root)))
                return st;
            goto value_done;
        }
        return perr(ps, p, p == ps->end ? "unexpected end of input in object" : "expected ',' or '}' after object member");
    }
    if (*p == ',') {
        p = skip_ws(p + 1);
        if ((st = push_element(ps)))
            return st;
        goto parse_value;
    }
    if (*p == ']') {
        p++;
        if ((st = close_container(ps, p, root)))
            return st;
        goto value_done;
    }
    return perr(ps, p, p == ps->end ? "unexpected end of input in array" : "expected ',' or ']' after array element");

object_key:
    /* p is at the first non-space byte where a member key must start. */
    if (*p != '"')
        return perr(ps, p, p == ps->end ? "unexpected end of input in object" : "object key (string) expected");
    {
        const char *k;
        uint32_t kn;
        if ((st = parse_string(ps, &p, &k, &kn)))
            return st;
        if (ps->nstk == ps->capstk && (st = grow_stack(ps)))
            return st;
        ps->stk[ps->nstk].key = k;
        ps->stk[ps->nstk].klen = kn;
        ps->stk[ps->nstk].hash = 0;
        ps->nstk++;
    }
    p = skip_ws(p);
    if (*p != ':')
        return perr(ps, p, "expected ':' after object key");
    p = skip_ws(p + 1);
    goto parse_value;
}

mcp_status mcp_json_parse_sized(mcp_json_doc **out, const char *text, size_t len,
                                const mcp_json_parse_opts *opts, size_t opts_size, mcp_error *err)
{
    size_t max_bytes = MCP_JSON_DEFAULT_MAX_BYTES;
    unsigned max_depth = MCP_JSON_DEFAULT_MAX_DEPTH;
    unsigned flags = 0;

    mcp_json_parse_opts opts_copy;
    if (opts) {
        mcp_status ost = MCP__OPTS_IN(mcp_json_parse_opts, &opts_copy, opts, opts_size, err);
        if (ost)
            return ost;
        opts = &opts_copy;
    }
    if (!out || (!text && len))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, -32603, 0, "invalid argument");
    if (opts) {
        if (opts->max_bytes > MCP_JSON_LIMIT_MAX_BYTES || opts->max_depth > MCP_JSON_LIMIT_MAX_DEPTH)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, -32603, 0, "parse limit above the allowed maximum");
        if (opts->max_bytes)
            max_bytes = opts->max_bytes;
        if (opts->max_depth)
            max_depth = opts->max_depth;
        flags = opts->flags;
    }
    if (len > max_bytes)
        return mcp__fail(err, MCP_ERR_LIMIT, -32700, 0, "input of %zu bytes exceeds the limit of %zu bytes",
                         len, max_bytes);

    pthread_once(&g_hash_once, hash_seed_init);

    /* One allocation holds the document, the copied text and a first arena
     * block sized for a typical node density; big documents add blocks. */
    size_t text_space = (len + PAD + ARENA_ALIGN) & ~(size_t)(ARENA_ALIGN - 1);
    size_t doc_space = (sizeof(mcp_json_doc) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    size_t node_space = len / 4 + 256;
    arena_block *b = mcp_malloc(BLOCK_HDR + doc_space + text_space + node_space);
    if (!b)
        return mcp__fail(err, MCP_ERR_NOMEM, -32603, 0, "out of memory");
    b->next = NULL;
    b->cap = doc_space + text_space + node_space;
    b->used = doc_space + text_space;
    mcp_json_doc *doc = (mcp_json_doc *)((char *)b + BLOCK_HDR);
    unsigned char *copy = (unsigned char *)doc + doc_space;
    if (len)
        memcpy(copy, text, len);
    memset(copy + len, 0, text_space - len);
    doc->blocks = b;

    parser ps;
    ps.beg = copy;
    ps.end = copy + len;
    ps.doc = doc;
    ps.stk = ps.inl_stk;
    ps.nstk = 0;
    ps.capstk = INLINE_MEMBERS;
    ps.frames = ps.inl_frames;
    ps.nframes = 0;
    ps.capframes = INLINE_FRAMES;
    ps.max_depth = max_depth;
    ps.flags = flags;
    ps.err = err;
    ps.st = MCP_OK;

    mcp_status st;
    memset(&doc->root, 0, sizeof doc->root);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        st = perr(&ps, copy, "byte order mark not allowed (RFC 8259)");
    else
        st = run(&ps, &doc->root);
    if (ps.stk != ps.inl_stk)
        mcp_free(ps.stk);
    if (ps.frames != ps.inl_frames)
        mcp_free(ps.frames);
    if (st) {
        mcp_json_doc_free(doc);
        return st;
    }
    *out = doc;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Read access                                                               */

mcp_json_type mcp_json_typeof(const mcp_json *v)
{
    return v ? (mcp_json_type)v->type : MCP_JSON_NONE;
}

const char *mcp_json_type_name(mcp_json_type t)
{
    switch (t) {
    case MCP_JSON_NULL: return "null";
    case MCP_JSON_BOOL: return "boolean";
    case MCP_JSON_INT: return "integer";
    case MCP_JSON_REAL: return "number";
    case MCP_JSON_STRING: return "string";
    case MCP_JSON_ARRAY: return "array";
    case MCP_JSON_OBJECT: return "object";
    default: return "none";
    }
}

int mcp_json_bool(const mcp_json *v)
{
    return v && v->type == MCP_JSON_BOOL && v->u.i;
}

int64_t mcp_json_int(const mcp_json *v)
{
    return v && v->type == MCP_JSON_INT ? v->u.i : 0;
}

double mcp_json_number(const mcp_json *v)
{
    if (!v)
        return 0.0;
    if (v->type == MCP_JSON_INT)
        return (double)v->u.i;
    if (v->type == MCP_JSON_REAL)
        return v->u.d;
    return 0.0;
}

const char *mcp_json_num_text(const mcp_json *v, size_t *len)
{
    if (!v || (v->type != MCP_JSON_INT && v->type != MCP_JSON_REAL)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = v->len;
    return v->p;
}

const char *mcp_json_str(const mcp_json *v, size_t *len)
{
    if (!v || v->type != MCP_JSON_STRING) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = v->len;
    return v->p;
}

int mcp_json_str_eq(const mcp_json *v, const char *s)
{
    if (!v || v->type != MCP_JSON_STRING || !s)
        return 0;
    size_t n = strlen(s);
    return n == v->len && memcmp(v->p, s, n) == 0;
}

size_t mcp_json_len(const mcp_json *v)
{
    if (!v || (v->type != MCP_JSON_ARRAY && v->type != MCP_JSON_OBJECT))
        return 0;
    return v->len;
}

const mcp_json *mcp_json_at(const mcp_json *arr, size_t i)
{
    if (!arr || arr->type != MCP_JSON_ARRAY || i >= arr->len)
        return NULL;
    return (const mcp_json *)arr->p + i;
}

const mcp_json *mcp_json_getn(const mcp_json *obj, const char *key, size_t klen)
{
    if (!obj || obj->type != MCP_JSON_OBJECT || (!key && klen))
        return NULL;
    const mcp__member *m = obj->p;
    if (obj->u.index) {
        uint32_t cap = mcp__json_index_cap(obj->len);
        uint32_t h = mcp__json_hash(key, klen);
        uint32_t slot = h & (cap - 1);
        for (;;) {
            uint32_t j = obj->u.index[slot];
            if (!j)
                return NULL;
            const mcp__member *o = &m[j - 1];
            if (o->hash == h && o->klen == klen && memcmp(o->key, key, klen) == 0)
                return &o->value;
            slot = (slot + 1) & (cap - 1);
        }
    }
    /* Backwards, so the last of duplicate keys wins. */
    for (uint32_t i = obj->len; i-- > 0;)
        if (m[i].klen == klen && memcmp(m[i].key, key, klen) == 0)
            return &m[i].value;
    return NULL;
}

const mcp_json *mcp_json_get(const mcp_json *obj, const char *key)
{
    if (!key)
        return NULL;
    return mcp_json_getn(obj, key, strlen(key));
}

const char *mcp_json_key_at(const mcp_json *obj, size_t i, size_t *klen)
{
    if (!obj || obj->type != MCP_JSON_OBJECT || i >= obj->len) {
        if (klen)
            *klen = 0;
        return NULL;
    }
    const mcp__member *m = (const mcp__member *)obj->p + i;
    if (klen)
        *klen = m->klen;
    return m->key;
}

const mcp_json *mcp_json_value_at(const mcp_json *obj, size_t i)
{
    if (!obj || obj->type != MCP_JSON_OBJECT || i >= obj->len)
        return NULL;
    return &((const mcp__member *)obj->p)[i].value;
}

const mcp_json *mcp_json_pointer(const mcp_json *root, const char *ptr, size_t len)
{
    if (!root || (!ptr && len))
        return NULL;
    const mcp_json *cur = root;
    size_t i = 0;
    char tok[256];
    while (i < len) {
        if (ptr[i] != '/')
            return NULL;
        i++;
        /* Unescape one reference token (~0 -> ~, ~1 -> /). */
        size_t n = 0;
        while (i < len && ptr[i] != '/') {
            char c = ptr[i++];
            if (c == '~') {
                if (i >= len || (ptr[i] != '0' && ptr[i] != '1'))
                    return NULL;
                c = ptr[i++] == '0' ? '~' : '/';
            }
            if (n >= sizeof tok)
                return NULL; /* longer than any key we look up by pointer */
            tok[n++] = c;
        }
        if (cur->type == MCP_JSON_OBJECT) {
            cur = mcp_json_getn(cur, tok, n);
        } else if (cur->type == MCP_JSON_ARRAY) {
            if (n == 0 || n > 10 || (n > 1 && tok[0] == '0'))
                return NULL;
            size_t idx = 0;
            for (size_t k = 0; k < n; k++) {
                if (!IS_DIGIT(tok[k]))
                    return NULL;
                idx = idx * 10 + (size_t)(tok[k] - '0');
            }
            cur = mcp_json_at(cur, idx);
        } else {
            return NULL;
        }
        if (!cur)
            return NULL;
    }
    return cur;
}

int mcp_json_equal(const mcp_json *a, const mcp_json *b)
{
    if (!a || !b)
        return 0;
    int an = a->type == MCP_JSON_INT || a->type == MCP_JSON_REAL;
    int bn = b->type == MCP_JSON_INT || b->type == MCP_JSON_REAL;
    if (an && bn) {
        if (a->type == MCP_JSON_INT && b->type == MCP_JSON_INT)
            return a->u.i == b->u.i;
        return mcp_json_number(a) == mcp_json_number(b);
    }
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case MCP_JSON_NULL:
        return 1;
    case MCP_JSON_BOOL:
        return a->u.i == b->u.i;
    case MCP_JSON_STRING:
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
    case MCP_JSON_ARRAY:
        if (a->len != b->len)
            return 0;
        for (uint32_t i = 0; i < a->len; i++)
            if (!mcp_json_equal((const mcp_json *)a->p + i, (const mcp_json *)b->p + i))
                return 0;
        return 1;
    case MCP_JSON_OBJECT: {
        /* Compare by lookup semantics: every key of a (its effective, last
         * value) equals b's, and both have the same number of distinct keys. */
        size_t da = 0, db = 0;
        const mcp__member *ma = a->p, *mb = b->p;
        for (uint32_t i = 0; i < a->len; i++) {
            const mcp_json *va = mcp_json_getn(a, ma[i].key, ma[i].klen);
            if (va != &ma[i].value)
                continue; /* an earlier duplicate, shadowed */
            da++;
            if (!mcp_json_equal(va, mcp_json_getn(b, ma[i].key, ma[i].klen)))
                return 0;
        }
        for (uint32_t i = 0; i < b->len; i++)
            if (mcp_json_getn(b, mb[i].key, mb[i].klen) == &mb[i].value)
                db++;
        return da == db;
    }
    default:
        return 0;
    }
}
