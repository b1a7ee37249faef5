/*
 * Streaming JSON writer.
 *
 * Output goes straight into an mcp_buf: no intermediate tree. The writer
 * tracks just enough state to refuse malformed output (a bit per open
 * container for "object or array" and "needs a comma"), and its first error
 * is sticky so callers can check once at the end.
 */
#include "json/json_internal.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mcp_status fail(mcp_jw *w, mcp_status st)
{
    if (!w->status)
        w->status = st;
    return w->status;
}

static inline int bit_get(const unsigned char *bits, unsigned i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline void bit_set(unsigned char *bits, unsigned i, int v)
{
    if (v)
        bits[i >> 3] |= (unsigned char)(1u << (i & 7));
    else
        bits[i >> 3] &= (unsigned char)~(1u << (i & 7));
}

void mcp_jw_init(mcp_jw *w, mcp_buf *buf)
{
    memset(w, 0, sizeof *w);
    w->buf = buf;
}

mcp_status mcp_jw_status(const mcp_jw *w)
{
    return w->status;
}

mcp_status mcp_jw_finish(mcp_jw *w)
{
    if (w->status)
        return w->status;
    if (w->depth || !w->done)
        return fail(w, MCP_ERR_STATE);
    return MCP_OK;
}

/*
 * Appends one byte. Inline for the common case, where the buffer has room:
 * mcp_buf never allocates past its max, so checking the free room is
 * enough.
 */
static inline mcp_status put_byte(mcp_buf *b, char c)
{
    if (MCP__LIKELY(b->data && b->cap - b->len >= 2)) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return MCP_OK;
    }
    return mcp_buf_append(b, &c, 1);
}

/* Position check and comma before any value (scalar or container). */
static mcp_status before_value(mcp_jw *w)
{
    if (MCP__UNLIKELY(w->status))
        return w->status;
    if (w->depth == 0)
        return w->done ? fail(w, MCP_ERR_STATE) : MCP_OK;
    unsigned lvl = w->depth - 1;
    if (bit_get(w->is_obj, lvl)) {
        if (!w->after_key)
            return fail(w, MCP_ERR_STATE);
        w->after_key = 0;
        return MCP_OK;
    }
    if (bit_get(w->has_item, lvl)) {
        mcp_status st = put_byte(w->buf, ',');
        if (st)
            return fail(w, st);
    } else {
        bit_set(w->has_item, lvl, 1);
    }
    return MCP_OK;
}

static inline void after_value(mcp_jw *w)
{
    if (w->depth == 0)
        w->done = 1;
}

/* ------------------------------------------------------------------------ */
/* String escaping                                                           */

static const char g_hex[] = "0123456789abcdef";

/*
 * 1 when no byte of s[0..n) needs escaping or UTF-8 checking (printable
 * ASCII other than '"' and '\\'): most keys and many values. Reads whole
 * words, the last one overlapping the previous (its bytes were already
 * found plain), so short strings cost one or two loads.
 */
static inline int plain_ascii(const unsigned char *s, size_t n)
{
    uint64_t w;
    if (n >= 8) {
        size_t j = 0;
        for (; j + 8 < n; j += 8) {
            memcpy(&w, s + j, 8);
            if (mcp__str_special(w))
                return 0;
        }
        memcpy(&w, s + n - 8, 8);
    } else if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        w = (uint64_t)lo | (uint64_t)hi << 32;
    } else {
        w = MCP__ONES * 'a'; /* padding that needs no escaping */
        for (size_t j = 0; j < n; j++)
            w = (w << 8) | s[j];
    }
    return mcp__str_special(w) == 0;
}

/* put_str() for strings that need escaping or UTF-8 checks; `b` has room for n + 2 bytes. */
static mcp_status put_str_slow(mcp_buf *b, const unsigned char *s, size_t n, int validate)
{
    mcp_status st = MCP_OK;
    size_t base_len = b->len;
    b->data[b->len++] = '"';
    size_t i = 0;
    while (i < n) {
        /* Find the end of a run of bytes that need no escaping. */
        size_t j = i;
        for (;;) {
            while (j + 8 <= n) {
                uint64_t word;
                memcpy(&word, s + j, 8);
                uint64_t m = mcp__str_special(word);
                if (m) {
                    j += MCP__FIRST_SPECIAL(m);
                    break;
                }
                j += 8;
            }
            if (j >= n)
                break;
            unsigned c = s[j];
            if (c == '"' || c == '\\' || c < 0x20)
                break;
            if (c < 0x80 || !validate) {
                j++;
                continue;
            }
            int k;
            if (n - j >= 4) {
                k = mcp__utf8_seq(s + j);
            } else {
                unsigned char tail[4] = {0, 0, 0, 0};
                memcpy(tail, s + j, n - j);
                k = mcp__utf8_seq(tail);
            }
            if (!k) {
                b->len = base_len;
                b->data[b->len] = '\0';
                return MCP_ERR_INVALID_ARG;
            }
            j += (size_t)k;
        }
        if (j > i) {
            if (b->cap - b->len < j - i + 2 && (st = mcp_buf_reserve(b, j - i + 1)))
                goto undo;
            memcpy(b->data + b->len, s + i, j - i);
            b->len += j - i;
        }
        if (j >= n)
            break;
        /* One byte to escape. */
        unsigned c = s[j];
        if (b->cap - b->len < 8 && (st = mcp_buf_reserve(b, 7)))
            goto undo;
        char *o = b->data + b->len;
        switch (c) {
        case '"': o[0] = '\\'; o[1] = '"'; b->len += 2; break;
        case '\\': o[0] = '\\'; o[1] = '\\'; b->len += 2; break;
        case '\b': o[0] = '\\'; o[1] = 'b'; b->len += 2; break;
        case '\f': o[0] = '\\'; o[1] = 'f'; b->len += 2; break;
        case '\n': o[0] = '\\'; o[1] = 'n'; b->len += 2; break;
        case '\r': o[0] = '\\'; o[1] = 'r'; b->len += 2; break;
        case '\t': o[0] = '\\'; o[1] = 't'; b->len += 2; break;
        default:
            memcpy(o, "\\u00", 4);
            o[4] = g_hex[c >> 4];
            o[5] = g_hex[c & 15];
            b->len += 6;
        }
        i = j + 1;
    }
    if (b->cap - b->len < 2 && (st = mcp_buf_reserve(b, 1)))
        goto undo;
    b->data[b->len++] = '"';
    b->data[b->len] = '\0';
    return MCP_OK;
undo:
    b->len = base_len;
    b->data[b->len] = '\0';
    return st;
}

/*
 * Appends the quoted, escaped form of s[0..n) to b. With `validate`, bytes
 * >= 0x80 must form valid UTF-8 (strings from a parsed document already
 * do, so splicing skips that). Inline: most strings need no escaping and
 * take one copy.
 */
static inline mcp_status put_str(mcp_buf *b, const unsigned char *s, size_t n, int validate)
{
    mcp_status st;
    if (MCP__UNLIKELY(!b->data || b->cap - b->len < n || b->cap - b->len - n < 3) &&
        (st = mcp_buf_reserve(b, n + 2)))
        return st;
    if (!plain_ascii(s, n))
        return put_str_slow(b, s, n, validate);
    char *o = b->data + b->len;
    o[0] = '"';
    if (n) /* s may be NULL when n is 0 */
        memcpy(o + 1, s, n);
    o[n + 1] = '"';
    o[n + 2] = '\0';
    b->len += n + 2;
    return MCP_OK;
}

mcp_status mcp_json_quote(mcp_buf *buf, const char *s, size_t len)
{
    if (!buf || (!s && len))
        return MCP_ERR_INVALID_ARG;
    return put_str(buf, (const unsigned char *)s, len, 1);
}

/* ------------------------------------------------------------------------ */
/* Containers and keys                                                       */

static mcp_status begin(mcp_jw *w, int is_obj)
{
    mcp_status st = before_value(w);
    if (st)
        return st;
    if (w->depth >= MCP_JW_MAX_DEPTH)
        return fail(w, MCP_ERR_LIMIT);
    if ((st = put_byte(w->buf, is_obj ? '{' : '[')))
        return fail(w, st);
    bit_set(w->is_obj, w->depth, is_obj);
    bit_set(w->has_item, w->depth, 0);
    w->depth++;
    return MCP_OK;
}

static mcp_status end(mcp_jw *w, int is_obj)
{
    if (w->status)
        return w->status;
    if (w->depth == 0 || bit_get(w->is_obj, w->depth - 1) != is_obj || w->after_key)
        return fail(w, MCP_ERR_STATE);
    mcp_status st = put_byte(w->buf, is_obj ? '}' : ']');
    if (st)
        return fail(w, st);
    w->depth--;
    after_value(w);
    return MCP_OK;
}

mcp_status mcp_jw_object_begin(mcp_jw *w) { return begin(w, 1); }
mcp_status mcp_jw_object_end(mcp_jw *w) { return end(w, 1); }
mcp_status mcp_jw_array_begin(mcp_jw *w) { return begin(w, 0); }
mcp_status mcp_jw_array_end(mcp_jw *w) { return end(w, 0); }

mcp_status mcp_jw_keyn(mcp_jw *w, const char *key, size_t len)
{
    if (w->status)
        return w->status;
    if (!key && len)
        return fail(w, MCP_ERR_INVALID_ARG);
    if (w->depth == 0 || !bit_get(w->is_obj, w->depth - 1) || w->after_key)
        return fail(w, MCP_ERR_STATE);
    unsigned lvl = w->depth - 1;
    mcp_status st;
    if (bit_get(w->has_item, lvl)) {
        if ((st = put_byte(w->buf, ',')))
            return fail(w, st);
    }
    if ((st = put_str(w->buf, (const unsigned char *)key, len, 1)))
        return fail(w, st);
    if ((st = put_byte(w->buf, ':')))
        return fail(w, st);
    bit_set(w->has_item, lvl, 1);
    w->after_key = 1;
    return MCP_OK;
}

mcp_status mcp_jw_key(mcp_jw *w, const char *key)
{
    if (!key)
        return fail(w, MCP_ERR_INVALID_ARG);
    return mcp_jw_keyn(w, key, strlen(key));
}

/* ------------------------------------------------------------------------ */
/* Scalars                                                                   */

/* Appends pre-validated bytes as one value. */
static mcp_status put_value_bytes(mcp_jw *w, const char *p, size_t n)
{
    mcp_status st = before_value(w);
    if (st)
        return st;
    if ((st = mcp_buf_append(w->buf, p, n)))
        return fail(w, st);
    after_value(w);
    return MCP_OK;
}

mcp_status mcp_jw_stringn(mcp_jw *w, const char *s, size_t len)
{
    if (!s && len)
        return fail(w, MCP_ERR_INVALID_ARG);
    mcp_status st = before_value(w);
    if (st)
        return st;
    if ((st = put_str(w->buf, (const unsigned char *)s, len, 1)))
        return fail(w, st);
    after_value(w);
    return MCP_OK;
}

mcp_status mcp_jw_string(mcp_jw *w, const char *s)
{
    if (!s)
        return mcp_jw_null(w);
    return mcp_jw_stringn(w, s, strlen(s));
}

/* Writes v in decimal into out (at least 20 bytes); returns the length. */
static size_t fmt_u64(char *out, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

mcp_status mcp_jw_int(mcp_jw *w, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        tmp[n++] = '-';
        u = 0 - u;
    }
    n += fmt_u64(tmp + n, u);
    return put_value_bytes(w, tmp, n);
}

mcp_status mcp_jw_double(mcp_jw *w, double v)
{
    if (!isfinite(v))
        return fail(w, MCP_ERR_INVALID_ARG);
    char tmp[40];
    int n = 0;
    /* Format in the "C" locale whatever the process locale is, and take the
     * shortest precision that reads back as the same double. */
    locale_t c = mcp__c_locale();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (prec == 17 || strtod(tmp, NULL) == v)
            break;
    }
    if (c)
        uselocale(old);
    if (n <= 0 || (size_t)n >= sizeof tmp)
        return fail(w, MCP_ERR_INTERNAL);
    return put_value_bytes(w, tmp, (size_t)n);
}

mcp_status mcp_jw_bool(mcp_jw *w, int v)
{
    return v ? put_value_bytes(w, "true", 4) : put_value_bytes(w, "false", 5);
}

mcp_status mcp_jw_null(mcp_jw *w)
{
    return put_value_bytes(w, "null", 4);
}

mcp_status mcp_jw_raw(mcp_jw *w, const char *json, size_t len)
{
    if (!json || !len)
        return fail(w, MCP_ERR_INVALID_ARG);
    return put_value_bytes(w, json, len);
}

mcp_status mcp_jw_base64(mcp_jw *w, const void *bytes, size_t n)
{
    if (!bytes && n)
        return fail(w, MCP_ERR_INVALID_ARG);
    mcp_status st = before_value(w);
    if (st)
        return st;
    if (n / 3 > (SIZE_MAX - 8) / 4)
        return fail(w, MCP_ERR_LIMIT);
    if ((st = mcp_buf_reserve(w->buf, MCP__BASE64_LEN(n) + 2)))
        return fail(w, st);
    char *o = w->buf->data + w->buf->len;
    *o++ = '"';
    o += mcp__base64_encode(o, bytes, n);
    *o++ = '"';
    *o = '\0';
    w->buf->len = (size_t)(o - w->buf->data);
    after_value(w);
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Splicing a parsed value                                                   */

/* Appends one byte; the common case (room left) stays inline. */
static inline mcp_status put_ch(mcp_buf *b, char c)
{
    if (MCP__UNLIKELY(b->cap - b->len < 2)) {
        mcp_status st = mcp_buf_reserve(b, 1);
        if (st)
            return st;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return MCP_OK;
}

static mcp_status put_json(mcp_buf *b, const mcp_json *v)
{
    mcp_status st;
    switch (v->type) {
    case MCP_JSON_NULL:
        return mcp_buf_append(b, "null", 4);
    case MCP_JSON_BOOL:
        return v->u.i ? mcp_buf_append(b, "true", 4) : mcp_buf_append(b, "false", 5);
    case MCP_JSON_INT:
    case MCP_JSON_REAL:
        return mcp_buf_append(b, v->p, v->len);
    case MCP_JSON_STRING:
        return put_str(b, v->p, v->len, 0);
    case MCP_JSON_ARRAY: {
        if ((st = put_ch(b, '[')))
            return st;
        const mcp_json *a = v->p;
        for (uint32_t i = 0; i < v->len; i++) {
            if (i && (st = put_ch(b, ',')))
                return st;
            if ((st = put_json(b, &a[i])))
                return st;
        }
        return put_ch(b, ']');
    }
    case MCP_JSON_OBJECT: {
        if ((st = put_ch(b, '{')))
            return st;
        const mcp__member *m = v->p;
        for (uint32_t i = 0; i < v->len; i++) {
            if (i && (st = put_ch(b, ',')))
                return st;
            if ((st = put_str(b, (const unsigned char *)m[i].key, m[i].klen, 0)))
                return st;
            if ((st = put_ch(b, ':')))
                return st;
            if ((st = put_json(b, &m[i].value)))
                return st;
        }
        return put_ch(b, '}');
    }
    default:
        return MCP_ERR_INTERNAL;
    }
}

mcp_status mcp_jw_value(mcp_jw *w, const mcp_json *v)
{
    if (!v)
        return mcp_jw_null(w);
    mcp_status st = before_value(w);
    if (st)
        return st;
    if ((st = put_json(w->buf, v)))
        return fail(w, st);
    after_value(w);
    return MCP_OK;
}
