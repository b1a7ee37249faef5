/*
 * Exact decimal arithmetic on number literals, for the numeric keywords:
 * comparisons that doubles cannot decide (equal as doubles, different as
 * decimals) and multipleOf. The digits are read in place from the
 * number's source text, so nothing is allocated. num_cmp, the fast
 * comparison that falls back on these, is inline in schema_internal.h.
 */
#include "schema/schema_internal.h"

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
int mcp__num_cmp_exact(const mcp_json *v, const mcp_json *lim)
{
    dec x, y;
    dec_of(&x, v);
    dec_of(&y, lim);
    return dec_cmp(&x, &y);
}

int mcp__is_multiple(const mcp_json *v, const numlim *l)
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
