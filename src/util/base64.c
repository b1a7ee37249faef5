/*
 * base64 (RFC 4648 section 4: '+' '/', padded with '=') and base64url
 * (section 5: '-' '_', never padded): one encoder and one decoder, the
 * alphabet and the padding being the only differences. The JSON writer
 * encodes image and audio blobs with it, so the encoder's loop is the hot
 * part: three bytes in, four characters out, no branch inside.
 */
#include "util/util.h"

#include <string.h>

static const char g_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char g_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The encoding of s[0..n) with alphabet `a`, '=' padding when `pad`. */
static inline size_t encode(const char *a, int pad, char *out, const unsigned char *s, size_t n)
{
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t t = ((uint32_t)s[i] << 16) | ((uint32_t)s[i + 1] << 8) | s[i + 2];
        o[0] = a[t >> 18];
        o[1] = a[(t >> 12) & 63];
        o[2] = a[(t >> 6) & 63];
        o[3] = a[t & 63];
        o += 4;
    }
    if (i < n) {
        /* One or two bytes left: two or three characters, then the padding. */
        uint32_t t = (uint32_t)s[i] << 16;
        if (i + 1 < n)
            t |= (uint32_t)s[i + 1] << 8;
        *o++ = a[t >> 18];
        *o++ = a[(t >> 12) & 63];
        if (i + 1 < n)
            *o++ = a[(t >> 6) & 63];
        else if (pad)
            *o++ = '=';
        if (pad)
            *o++ = '=';
    }
    return (size_t)(o - out);
}

size_t mcp__base64_encode(char *out, const void *in, size_t n)
{
    return encode(g_std, 1, out, in, n);
}

size_t mcp__base64url_encode(char *out, const void *in, size_t n)
{
    return encode(g_url, 0, out, in, n);
}

static mcp_status append(mcp_buf *b, int url, const void *in, size_t n)
{
    if (n / 3 > (SIZE_MAX - 8) / 4)
        return MCP_ERR_LIMIT;
    mcp_status st = mcp_buf_reserve(b, MCP__BASE64_LEN(n));
    if (st)
        return st;
    b->len += url ? mcp__base64url_encode(b->data + b->len, in, n) : mcp__base64_encode(b->data + b->len, in, n);
    b->data[b->len] = '\0';
    return MCP_OK;
}

mcp_status mcp__base64_append(mcp_buf *b, const void *in, size_t n)
{
    return append(b, 0, in, n);
}

mcp_status mcp__base64url_append(mcp_buf *b, const void *in, size_t n)
{
    return append(b, 1, in, n);
}

/* The value of `c` in the alphabet (`url`: '-' and '_', else '+' and '/'), or -1. */
static int value(unsigned char c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

static int decode(int url, const char *in, size_t n, unsigned char *out, size_t cap, size_t *out_len,
                  unsigned flags)
{
    size_t body = n; /* the characters that carry bits */
    size_t need;     /* what `out` must hold */
    if (url) {
        need = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    } else {
        if (n % 4)
            return 0;
        need = n / 4 * 3;
        /* '=' only at the end, once or twice; anywhere else it is no character. */
        for (int k = 0; k < 2 && body && in[body - 1] == '='; k++)
            body--;
    }
    /* A lone last character holds 6 bits, less than a byte. */
    if (need > cap || ((flags & MCP__BASE64_CANONICAL) && body % 4 == 1))
        return 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < body; i++) {
        int v = value((unsigned char)in[i], url);
        if (v < 0)
            return 0;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    /* Bits left over after the last byte: nonzero ones give a second text for the same bytes. */
    if ((flags & MCP__BASE64_CANONICAL) && acc != 0)
        return 0;
    *out_len = o;
    return 1;
}

int mcp__base64_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *out_len, unsigned flags)
{
    return decode(0, in, n, out, cap, out_len, flags);
}

int mcp__base64url_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *out_len,
                          unsigned flags)
{
    return decode(1, in, n, out, cap, out_len, flags);
}
