/*
 * The schema layer's small tools: the arena compiled schemas live in, the
 * string builder (sbuf) messages, paths and URIs are written with, cutting
 * text at a UTF-8 character boundary, JSON Pointer tokens, and the error
 * details handed to the caller (fail_at). The sbuf operations of the hot
 * path (sb_put and friends) are inline in schema_internal.h; their slow
 * halves are here.
 */
#include "schema/schema_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ======================================================================== */
/* Arena                                                                     */

#define ARENA_CHUNK ((size_t)16384)

void *mcp__ar_alloc(arena *a, size_t n)
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

void *mcp__ar_zalloc(arena *a, size_t n)
{
    void *p = mcp__ar_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *mcp__ar_strndup(arena *a, const char *s, size_t n)
{
    char *p = (char *)mcp__ar_alloc(a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void mcp__ar_free(arena *a)
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
/* sbuf                                                                      */

/* Makes room for `extra` more bytes plus the NUL; returns the room available. */
size_t mcp__sb_room(sbuf *b, size_t extra)
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

/* Length of p[0..len) without a trailing incomplete UTF-8 sequence (one that
   truncation cut), for text whose continuation is not at hand. */
size_t mcp__utf8_trim_tail(const char *p, size_t len)
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

void mcp__sb_put_slow(sbuf *b, const char *s, size_t n)
{
    size_t room = mcp__sb_room(b, n);
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

static void sb_vprintf_libc(sbuf *b, const char *fmt, va_list ap) MCP__PRINTF(2, 0);
static void sb_vprintf_libc(sbuf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n <= 0)
        return;
    size_t room = mcp__sb_room(b, (size_t)n);
    if (room == 0)
        return;
    /* vsnprintf writes at most room + 1 bytes including the NUL. */
    vsnprintf(b->p + b->len, room + 1, fmt, ap);
    if (room < (size_t)n) {
        room = mcp__utf8_trim_tail(b->p + b->len, room);
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
void mcp__sb_vprintf(sbuf *b, const char *fmt, va_list ap)
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

void mcp__sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mcp__sb_vprintf(b, fmt, ap);
    va_end(ap);
}

/*
 * Appends a JSON Pointer reference token ("~" -> "~0", "/" -> "~1"). Most
 * tokens hold neither, which is checked a word at a time; such a token is
 * copied in one go. Otherwise the bytes between escapes go in as runs, so
 * a fixed buffer cuts them at a character boundary.
 */
void mcp__sb_ptr_token(sbuf *b, const char *s, size_t n)
{
    if (!ptr_special(s, n)) {
        /* A growing buffer makes room first; a fixed one that is too short
           takes the piecewise path below, which cuts the token to fit. */
        if (!b->fixed && b->len + n + 1 >= b->cap)
            mcp__sb_room(b, n + 1);
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
void mcp__tidy_message(mcp_error *err)
{
    unsigned char *m = (unsigned char *)err->message;
    size_t n = strlen(err->message);
    n = mcp__utf8_trim_tail(err->message, n);
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

mcp_status mcp__fail_at(mcp_error *err, mcp_status st, const char *ptr, const char *fmt, ...)
{
    if (!err)
        return st;
    va_list ap;
    va_start(ap, fmt);
    mcp__vfail(err, st, 0, 0, fmt, ap);
    va_end(ap);
    mcp__tidy_message(err);
    if (ptr) {
        size_t n = utf8_clip(ptr, strlen(ptr), sizeof(err->pointer) - 1);
        memcpy(err->pointer, ptr, n);
        err->pointer[n] = '\0';
    }
    return st;
}
