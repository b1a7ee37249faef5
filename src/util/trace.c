/*
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the checks a
 * traceparent and a tracestate must pass before libmcp hands them on.
 * MCP carries them in a request's `_meta` (SEP-414).
 */
#include "util/util.h"

#include <string.h>

static int lower_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int all_zero(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return 0;
    return 1;
}

int mcp__traceparent_valid(const char *s, size_t n)
{
    /* version "-" trace-id "-" parent-id "-" flags: 2-32-16-2 lower-case hex. */
    if (!s || n < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return 0;
    if (!lower_hex(s, 2) || !lower_hex(s + 3, 32) || !lower_hex(s + 36, 16) || !lower_hex(s + 53, 2))
        return 0;
    if (memcmp(s, "ff", 2) == 0 || all_zero(s + 3, 32) || all_zero(s + 36, 16))
        return 0;
    if (memcmp(s, "00", 2) == 0)
        return n == 55; /* version 00 has nothing after the flags */
    /* A later version may add fields, after a dash. */
    return n == 55 || (s[55] == '-' && n <= MCP__TRACEPARENT_MAX);
}

/* A key: lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/"), or tenant@system. */
static int state_key(const char *k, size_t n)
{
    const char *at = memchr(k, '@', n);
    size_t tenant = at ? (size_t)(at - k) : n;
    if (n == 0 || n > 256 || (at && (tenant == 0 || tenant > 241 || n - tenant - 1 == 0 || n - tenant - 1 > 14)))
        return 0;
    if (!at && !(k[0] >= 'a' && k[0] <= 'z'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (i == tenant)
            continue;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/'))
            return 0;
    }
    return !at || (k[tenant + 1] >= 'a' && k[tenant + 1] <= 'z');
}

/* A value: 0*255 printable ASCII but "," and "=", not ending in a space. */
static int state_value(const char *v, size_t n)
{
    if (n == 0 || n > 256 || v[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
            return 0;
    return 1;
}

int mcp__tracestate_valid(const char *s, size_t n)
{
    if (!s || n == 0 || n > MCP__TRACESTATE_MAX)
        return 0;
    unsigned members = 0;
    size_t i = 0;
    while (i <= n) {
        size_t end = i;
        while (end < n && s[end] != ',')
            end++;
        size_t a = i, b = end; /* optional spaces and tabs around a member */
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (b > a) {
            const char *eq = memchr(s + a, '=', b - a);
            if (!eq || !state_key(s + a, (size_t)(eq - (s + a))) || !state_value(eq + 1, (size_t)(s + b - eq - 1)))
                return 0;
            if (++members > 32)
                return 0;
        }
        i = end + 1;
    }
    return members > 0;
}
