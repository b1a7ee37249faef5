/*
 * Growable byte buffer. Capacity doubles, so appending n bytes one at a
 * time costs O(n) in total; the data is always NUL-terminated so callers
 * can hand it to C string functions.
 */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BUF_DEFAULT_MAX (SIZE_MAX / 2)

void mcp_buf_init(mcp_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max ? max : BUF_DEFAULT_MAX;
}

void mcp_buf_cleanup(mcp_buf *b)
{
    if (!b)
        return;
    mcp_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

mcp_status mcp_buf_reserve(mcp_buf *b, size_t extra)
{
    size_t max = b->max ? b->max : BUF_DEFAULT_MAX;
    if (extra > max || b->len > max - extra)
        return MCP_ERR_LIMIT;
    size_t need = b->len + extra + 1; /* + terminator */
    if (MCP__LIKELY(need <= b->cap))
        return MCP_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    /* Never allocate past max + 1: callers that check free room inline
     * (cap - len) then cannot exceed max either. */
    if (cap > max + 1)
        cap = max + 1;
    char *p = mcp_realloc(b->data, cap);
    if (!p)
        return MCP_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    b->data[b->len] = '\0';
    return MCP_OK;
}

mcp_status mcp_buf_append(mcp_buf *b, const void *p, size_t n)
{
    if (n == 0) {
        /* Still make data non-NULL so a caller always gets a string back. */
        return b->data ? MCP_OK : mcp_buf_reserve(b, 0);
    }
    if (!p)
        return MCP_ERR_INVALID_ARG;
    mcp_status st = mcp_buf_reserve(b, n);
    if (st)
        return st;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return MCP_OK;
}

char *mcp_buf_take(mcp_buf *b, size_t *len)
{
    char *p = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void mcp_buf_reset(mcp_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Text for headers and messages                                             */

int mcp__visible_ascii(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7E)
            return 0;
    return 1;
}

void mcp__quote_text(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    if (cap == 0)
        return;
    for (size_t i = 0; s && i < n && o + 1 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[o++] = ch == '\n' || ch == '\r' || ch == '\t' ? ' ' : ch < 0x20 || ch > 0x7E ? '?' : (char)ch;
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
}

void mcp__say(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}
