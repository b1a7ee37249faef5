/*
 * URI references (RFC 3986) for `$id` and `$ref`: splitting, removing dot
 * segments, resolving a reference against a base, and percent-decoding a
 * fragment. Nothing is ever fetched; resolution is string work only.
 */
#include "schema/schema_internal.h"

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
void mcp__uri_resolve(sbuf *out, const char *base, const char *ref, size_t refn)
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

/* Length of a URI without its fragment (and without a lone trailing '#'). */
size_t mcp__uri_nofrag_len(const char *u)
{
    const char *h = strchr(u, '#');
    return h ? (size_t)(h - u) : strlen(u);
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
size_t mcp__pct_decode(char *s, size_t n)
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
