/*
 * Value checks: the keywords that look at the instance itself (type, enum,
 * const, the numeric bounds and multipleOf, min/maxLength, pattern,
 * format, min/maxItems, min/maxProperties, required, dependentRequired,
 * uniqueItems). Most of them are v_value, inline in schema_internal.h, so
 * the quiet leaf path (v_leaf_at), v_node's loop and the flat report run
 * them without a call; here are the equality and enum tests they use and
 * the rarer keywords: format, uniqueItems, dependentRequired.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>

/* ======================================================================== */
/* Equality and enum                                                         */

/* Equality of the instance with a schema value (handles property-name instances). */
int mcp__ival_equal(const ival *iv, const mcp_json *v)
{
    if (iv->v)
        return mcp_json_equal(iv->v, v);
    size_t n;
    const char *s = mcp_json_str(v, &n);
    return s && n == iv->n && bytes_eq(s, iv->s, n);
}

int mcp__enum_hit(const kw *k, const ival *iv, unsigned tb)
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
        if (mcp__ival_equal(iv, &e[i]))
            return 1;
    return 0;
}

/* ======================================================================== */
/* uniqueItems                                                               */

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
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory checking uniqueItems");
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

/* ======================================================================== */
/* format, uniqueItems, dependentRequired                                    */

int mcp__v_format(vctx *c, const kw *k, const ival *iv, const pseg *ip, const pseg *kp, int quiet,
                  const node *n)
{
    size_t sn;
    const char *sv = ival_bytes(iv, &sn);
    int r = mcp__schema_format_check(k->u.fmt, sv, sn);
    if (r < 0) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory checking a format");
        return 0;
    }
    if (r)
        return 1;
    if (!quiet)
        mcp__say_format(c, ip, kp, n);
    return 0;
}

int mcp__v_unique(vctx *c, const ival *iv, const pseg *ip, const pseg *kp, int quiet)
{
    size_t a = 0, b = 0;
    int r = find_duplicate(c, iv->v, &a, &b);
    if (r <= 0)
        return r == 0; /* -1: c->status is set */
    if (!quiet)
        mcp__say_unique(c, ip, kp, a, b);
    return 0;
}

/* dependentRequired (and the array half of draft-07 `dependencies`); each missing name is a
   violation of its own. */
int mcp__v_depreq(vctx *c, const kw *k, const ival *iv, const pseg *ip, const pseg *kp, int quiet)
{
    pseg kseg = {kp, k->tok, k->nlen + 1, 1};
    const mcp_json *obj = iv->v;
    int ok = 1;
    for (size_t i = 0; i < k->u.depreq.n; i++) {
        const depreq *d = &k->u.depreq.v[i];
        if (!j_has(obj, d->key.s, d->key.n))
            continue;
        for (size_t j = 0; j < d->n; j++) {
            if (j_has(obj, d->names[j].s, d->names[j].n))
                continue;
            if (!quiet) {
                pseg ks = {&kseg, d->key.s, d->key.n, 0};
                mcp__say_depreq(c, ip, &ks, k, d, &d->names[j]);
            }
            ok = 0;
            if (quiet || c->stop || c->status)
                return 0;
        }
    }
    return ok;
}
