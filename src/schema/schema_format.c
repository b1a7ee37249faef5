/*
 * `format` checkers for JSON Schema's format-assertion mode.
 *
 * Each checker takes the string's UTF-8 bytes and answers yes or no. They
 * follow the RFCs the specification names (RFC 3339 for dates and times,
 * RFC 5321 for e-mail, RFC 1123 for host names, RFC 3986 for URIs,
 * RFC 4291 for IPv6, RFC 6901 for JSON Pointer, RFC 6570 for URI templates)
 * closely enough for input validation; IDNA2008 mapping tables are not
 * implemented, so "idn-hostname" only checks the label syntax with
 * non-ASCII letters allowed.
 */
#include "schema/schema_internal.h"

#include <string.h>

static const struct {
    const char *name; /* format name */
    int id;           /* MCP__FMT_* */
} formats[] = {
    {"date-time", MCP__FMT_DATE_TIME},
    {"date", MCP__FMT_DATE},
    {"time", MCP__FMT_TIME},
    {"duration", MCP__FMT_DURATION},
    {"email", MCP__FMT_EMAIL},
    {"idn-email", MCP__FMT_IDN_EMAIL},
    {"hostname", MCP__FMT_HOSTNAME},
    {"idn-hostname", MCP__FMT_IDN_HOSTNAME},
    {"ipv4", MCP__FMT_IPV4},
    {"ipv6", MCP__FMT_IPV6},
    {"uri", MCP__FMT_URI},
    {"uri-reference", MCP__FMT_URI_REFERENCE},
    {"iri", MCP__FMT_IRI},
    {"iri-reference", MCP__FMT_IRI_REFERENCE},
    {"uri-template", MCP__FMT_URI_TEMPLATE},
    {"uuid", MCP__FMT_UUID},
    {"regex", MCP__FMT_REGEX},
    {"json-pointer", MCP__FMT_JSON_POINTER},
    {"relative-json-pointer", MCP__FMT_REL_JSON_POINTER},
};

int mcp__schema_format_id(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (strlen(formats[i].name) == len && memcmp(formats[i].name, name, len) == 0)
            return formats[i].id;
    return MCP__FMT_NONE;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Reads exactly `n` ASCII digits at s[*i]; returns the value or -1. */
static int digits(const char *s, size_t len, size_t *i, int n)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (*i >= len || !is_digit((unsigned char)s[*i]))
            return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    return v;
}

/* ---- dates and times (RFC 3339) ----------------------------------------- */

static int days_in_month(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return d[m - 1];
}

static int check_date(const char *s, size_t n, size_t *i)
{
    int y = digits(s, n, i, 4);
    if (y < 0 || *i >= n || s[(*i)++] != '-')
        return 0;
    int m = digits(s, n, i, 2);
    if (m < 1 || m > 12 || *i >= n || s[(*i)++] != '-')
        return 0;
    int d = digits(s, n, i, 2);
    return d >= 1 && d <= days_in_month(y, m);
}

static int check_time(const char *s, size_t n, size_t *i)
{
    int h = digits(s, n, i, 2);
    if (h < 0 || h > 23 || *i >= n || s[(*i)++] != ':')
        return 0;
    int m = digits(s, n, i, 2);
    if (m < 0 || m > 59 || *i >= n || s[(*i)++] != ':')
        return 0;
    int sec = digits(s, n, i, 2);
    if (sec < 0 || sec > 60)
        return 0;
    if (*i < n && s[*i] == '.') {
        (*i)++;
        size_t start = *i;
        while (*i < n && is_digit((unsigned char)s[*i]))
            (*i)++;
        if (*i == start)
            return 0;
    }
    if (*i >= n)
        return 0;
    int oh = 0, om = 0, sign = 0;
    char z = s[(*i)++];
    if (z == 'Z' || z == 'z') {
        sign = 0;
    } else if (z == '+' || z == '-') {
        sign = z == '+' ? 1 : -1;
        oh = digits(s, n, i, 2);
        if (oh < 0 || oh > 23 || *i >= n || s[(*i)++] != ':')
            return 0;
        om = digits(s, n, i, 2);
        if (om < 0 || om > 59)
            return 0;
    } else {
        return 0;
    }
    if (sec == 60) {
        /* A leap second exists only at 23:59:60 UTC. */
        int utc = h * 60 + m - sign * (oh * 60 + om);
        utc = ((utc % 1440) + 1440) % 1440;
        if (utc != 23 * 60 + 59)
            return 0;
    }
    return 1;
}

static int f_date(const char *s, size_t n)
{
    size_t i = 0;
    return check_date(s, n, &i) && i == n;
}

static int f_time(const char *s, size_t n)
{
    size_t i = 0;
    return check_time(s, n, &i) && i == n;
}

static int f_date_time(const char *s, size_t n)
{
    size_t i = 0;
    if (!check_date(s, n, &i) || i >= n || (s[i] != 'T' && s[i] != 't'))
        return 0;
    i++;
    return check_time(s, n, &i) && i == n;
}

/* ISO 8601 durations as RFC 3339 appendix A writes them. */
static int f_duration(const char *s, size_t n)
{
    size_t i = 0;
    if (n < 2 || s[i++] != 'P')
        return 0;
    static const char date_units[] = "YMD", time_units[] = "HMS";
    int any = 0, in_time = 0, weeks = 0;
    const char *units = date_units;
    size_t next = 0; /* index of the smallest unit still allowed */
    while (i < n) {
        if (s[i] == 'T') {
            if (in_time)
                return 0;
            in_time = 1;
            units = time_units;
            next = 0;
            i++;
            if (i >= n)
                return 0;
            continue;
        }
        size_t start = i;
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
        if (i == start || i >= n)
            return 0;
        char u = s[i++];
        if (u == 'W' && !in_time) {
            if (any)
                return 0;
            weeks = 1;
            any = 1;
            continue;
        }
        if (weeks)
            return 0;
        const char *p = strchr(units, u);
        /* Units come in order and, once one is given, without gaps
           (P1Y1D and PT1H1S are not durations). */
        if (!p || u == '\0' || (size_t)(p - units) < next ||
            (next > 0 && (size_t)(p - units) != next))
            return 0;
        next = (size_t)(p - units) + 1;
        any = 1;
        if (in_time && i == n)
            break;
    }
    if (!any)
        return 0;
    /* "T" must be followed by at least one time element. */
    return !(in_time && s[n - 1] == 'T');
}

/* ---- host names, addresses ---------------------------------------------- */

static int f_ipv4(const char *s, size_t n)
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part && (i >= n || s[i++] != '.'))
            return 0;
        size_t start = i;
        int v = 0;
        while (i < n && is_digit((unsigned char)s[i]) && i - start < 4)
            v = v * 10 + (s[i++] - '0');
        size_t len = i - start;
        if (len == 0 || len > 3 || v > 255 || (len > 1 && s[start] == '0'))
            return 0;
    }
    return i == n;
}

static int f_ipv6(const char *s, size_t n)
{
    size_t i = 0;
    int groups = 0, dbl = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        dbl = 1;
        i = 2;
        if (i == n)
            return 1;
    } else if (n && s[0] == ':') {
        return 0;
    }
    while (i < n) {
        size_t start = i;
        while (i < n && is_hex((unsigned char)s[i]) && i - start < 5)
            i++;
        size_t len = i - start;
        if (i < n && s[i] == '.') {
            /* A trailing dotted IPv4 address stands for two groups. */
            if (!f_ipv4(s + start, n - start))
                return 0;
            groups += 2;
            i = n;
            break;
        }
        if (len == 0 || len > 4)
            return 0;
        groups++;
        if (i == n)
            break;
        if (s[i] != ':')
            return 0;
        i++;
        if (i < n && s[i] == ':') {
            if (dbl)
                return 0;
            dbl = 1;
            i++;
            if (i == n)
                break;
        } else if (i == n) {
            return 0;
        }
    }
    return dbl ? groups <= 7 : groups == 8;
}

static int punycode_ok(const char *s, size_t n);

/* One DNS label: 1-63 of [A-Za-z0-9-] (plus non-ASCII when idn), no edge hyphens. */
static int label_ok(const char *s, size_t n, int idn)
{
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(is_alpha(c) || is_digit(c) || c == '-' || (idn && c >= 0x80)))
            return 0;
    }
    if (n >= 4 && s[2] == '-' && s[3] == '-') {
        /* "xx--" is reserved: only "xn--" A-labels, and they must decode. */
        if ((s[0] != 'x' && s[0] != 'X') || (s[1] != 'n' && s[1] != 'N'))
            return 0;
        return punycode_ok(s + 4, n - 4);
    }
    return 1;
}

static int hostname(const char *s, size_t n, int idn)
{
    if (n == 0 || n > 253)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!label_ok(s + start, i - start, idn))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* Decodes RFC 3492 punycode just far enough to know it is well formed. */
static int punycode_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '-')
            b = i;
    size_t in = b ? b + 1 : 0;
    unsigned long long cp = 128, i = 0, bias = 72, out = b;
    while (in < n) {
        unsigned long long oldi = i, w = 1;
        for (unsigned long long k = 36;; k += 36) {
            if (in >= n)
                return 0;
            int c = (unsigned char)s[in++], d;
            if (c >= '0' && c <= '9')
                d = c - '0' + 26;
            else if (c >= 'a' && c <= 'z')
                d = c - 'a';
            else if (c >= 'A' && c <= 'Z')
                d = c - 'A';
            else
                return 0;
            i += (unsigned long long)d * w;
            if (i > 0x10FFFFull * 64)
                return 0;
            unsigned long long t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
            if ((unsigned long long)d < t)
                break;
            w *= 36 - t;
        }
        out++;
        unsigned long long delta = oldi == 0 ? i / 700 : (i - oldi) / 2;
        delta += delta / out;
        unsigned long long k = 0;
        while (delta > 455) {
            delta /= 35;
            k += 36;
        }
        bias = k + (36 * delta) / (delta + 38);
        cp += i / out;
        i %= out;
        if (cp > 0x10FFFF)
            return 0;
        i++;
    }
    return 1;
}

/* ---- e-mail (RFC 5321 mailbox) ------------------------------------------ */

static int atext(unsigned char c, int idn)
{
    return is_alpha(c) || is_digit(c) || strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL ||
           (idn && c >= 0x80);
}

static int email(const char *s, size_t n, int idn)
{
    const char *at = NULL;
    size_t i = 0;
    if (n && s[0] == '"') {
        /* quoted-string local part */
        for (i = 1; i < n && s[i] != '"'; i++) {
            if (s[i] == '\\')
                i++;
        }
        if (i >= n)
            return 0;
        i++;
        if (i >= n || s[i] != '@')
            return 0;
        at = s + i;
    } else {
        at = memchr(s, '@', n);
        if (!at || at == s)
            return 0;
        size_t ln = (size_t)(at - s);
        if (s[0] == '.' || s[ln - 1] == '.')
            return 0;
        for (i = 0; i < ln; i++) {
            if (s[i] == '.') {
                if (s[i + 1] == '.')
                    return 0;
            } else if (!atext((unsigned char)s[i], idn)) {
                return 0;
            }
        }
    }
    const char *d = at + 1;
    size_t dn = n - (size_t)(d - s);
    if (dn >= 2 && d[0] == '[' && d[dn - 1] == ']') {
        if (dn > 7 && memcmp(d + 1, "IPv6:", 5) == 0)
            return f_ipv6(d + 6, dn - 7);
        return f_ipv4(d + 1, dn - 2);
    }
    return hostname(d, dn, idn);
}

/* ---- URIs (RFC 3986) and IRIs (RFC 3987) -------------------------------- */

/* Characters allowed in a URI outside of percent-escapes (brackets aside). */
static int uri_char(unsigned char c, int iri)
{
    if (c >= 0x80)
        return iri;
    return is_alpha(c) || is_digit(c) || strchr("-._~!$&'()*+,;=:@/?#%", c) != NULL;
}

/* Checks characters and escapes of a URI part; '#' allowed only when frag_ok. */
static int uri_chars(const char *s, size_t n, int iri, const char *extra_bad)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n + 0 || !is_hex((unsigned char)s[i + 1]) ||
                !is_hex((unsigned char)s[i + 2]))
                return 0;
            i += 2;
            continue;
        }
        if (!uri_char(c, iri) || (extra_bad && strchr(extra_bad, c)))
            return 0;
    }
    return 1;
}

/* Validates an authority: [userinfo@]host[:port]. */
static int authority(const char *s, size_t n, int iri)
{
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '@')
            at = s + i;
    if (at) {
        if (!uri_chars(s, (size_t)(at - s), iri, "/?#[]@"))
            return 0;
        n -= (size_t)(at + 1 - s);
        s = at + 1;
    }
    size_t hn = n;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close)
            return 0;
        size_t in = (size_t)(close - s) - 1;
        if (in && (s[1] == 'v' || s[1] == 'V')) {
            if (!uri_chars(s + 1, in, 0, "/?#[]@"))
                return 0;
        } else if (!f_ipv6(s + 1, in)) {
            return 0;
        }
        hn = (size_t)(close - s) + 1;
    } else {
        const char *colon = memchr(s, ':', n);
        if (colon)
            hn = (size_t)(colon - s);
        if (!uri_chars(s, hn, iri, "/?#[]@:"))
            return 0;
    }
    if (hn < n) {
        if (s[hn] != ':')
            return 0;
        for (size_t i = hn + 1; i < n; i++)
            if (!is_digit((unsigned char)s[i]))
                return 0;
    }
    return 1;
}

/* absolute: a scheme is required; otherwise a relative reference is allowed. */
static int uri(const char *s, size_t n, int iri, int absolute)
{
    size_t i = 0;
    size_t j = 0;
    while (j < n && s[j] != ':' && s[j] != '/' && s[j] != '?' && s[j] != '#')
        j++;
    int has_scheme = j < n && s[j] == ':' && j > 0;
    if (has_scheme) {
        if (!is_alpha((unsigned char)s[0]))
            return 0;
        for (size_t k = 1; k < j; k++) {
            unsigned char c = (unsigned char)s[k];
            if (!(is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.'))
                return 0;
        }
        i = j + 1;
    } else if (absolute) {
        return 0;
    } else if (j < n && s[j] == ':') {
        return 0; /* a relative path's first segment may not contain ':' */
    }
    if (n - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        size_t a = i + 2, e = a;
        while (e < n && s[e] != '/' && s[e] != '?' && s[e] != '#')
            e++;
        if (!authority(s + a, e - a, iri))
            return 0;
        i = e;
    }
    const char *hash = memchr(s + i, '#', n - i);
    size_t end = hash ? (size_t)(hash - s) : n;
    if (!uri_chars(s + i, end - i, iri, "#[]"))
        return 0;
    if (hash && !uri_chars(hash + 1, n - end - 1, iri, "#[]"))
        return 0;
    return 1;
}

/* varchar = ALPHA / DIGIT / "_" / pct-encoded (RFC 6570 section 2.3). */
static int tpl_varchar(const char *s, size_t n, size_t *i)
{
    unsigned char c = (unsigned char)s[*i];
    if (is_alpha(c) || is_digit(c) || c == '_') {
        (*i)++;
        return 1;
    }
    if (c == '%' && *i + 2 < n && is_hex((unsigned char)s[*i + 1]) &&
        is_hex((unsigned char)s[*i + 2])) {
        *i += 3;
        return 1;
    }
    return 0;
}

/* One expression body between the braces. */
static int tpl_expr(const char *s, size_t n)
{
    size_t i = 0;
    if (n && strchr("+#./;?&", s[0]))
        i++;
    for (;;) {
        /* varname = varchar *( ["."] varchar ) */
        if (i >= n || !tpl_varchar(s, n, &i))
            return 0;
        while (i < n) {
            if (s[i] == '.') {
                i++;
                if (i >= n || !tpl_varchar(s, n, &i))
                    return 0;
            } else if (!tpl_varchar(s, n, &i)) {
                break;
            }
        }
        if (i < n && s[i] == '*') {
            i++;
        } else if (i < n && s[i] == ':') {
            size_t st = ++i;
            while (i < n && is_digit((unsigned char)s[i]))
                i++;
            if (i == st || i - st > 4 || s[st] == '0')
                return 0;
        }
        if (i == n)
            return 1;
        if (s[i] != ',')
            return 0;
        i++;
    }
}

static int f_uri_template(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '{') {
            const char *close = memchr(s + i + 1, '}', n - i - 1);
            if (!close || memchr(s + i + 1, '{', (size_t)(close - s) - i - 1))
                return 0;
            if (!tpl_expr(s + i + 1, (size_t)(close - s) - i - 1))
                return 0;
            i = (size_t)(close - s);
        } else if (c == '%') {
            if (i + 2 >= n || !is_hex((unsigned char)s[i + 1]) || !is_hex((unsigned char)s[i + 2]))
                return 0;
            i += 2;
        } else if (c <= ' ' || c == 0x7f || strchr("\"<>\\^`|}", c)) {
            return 0;
        }
    }
    return 1;
}

static int f_uuid(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!is_hex((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

static int f_json_pointer(const char *s, size_t n)
{
    if (n && s[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1')))
            return 0;
    return 1;
}

static int f_rel_json_pointer(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && is_digit((unsigned char)s[i]))
        i++;
    if (i == 0 || (i > 1 && s[0] == '0'))
        return 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        /* index manipulation: "+N" / "-N", N a non-negative integer */
        size_t st = ++i;
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
        if (i == st || (i - st > 1 && s[st] == '0'))
            return 0;
    }
    if (i == n)
        return 1;
    if (s[i] == '#')
        return i + 1 == n;
    return f_json_pointer(s + i, n - i);
}

int mcp__schema_format_check(int id, const char *s, size_t n)
{
    switch (id) {
    case MCP__FMT_DATE_TIME:
        return f_date_time(s, n);
    case MCP__FMT_DATE:
        return f_date(s, n);
    case MCP__FMT_TIME:
        return f_time(s, n);
    case MCP__FMT_DURATION:
        return f_duration(s, n);
    case MCP__FMT_EMAIL:
        return email(s, n, 0);
    case MCP__FMT_IDN_EMAIL:
        return email(s, n, 1);
    case MCP__FMT_HOSTNAME:
        return hostname(s, n, 0);
    case MCP__FMT_IDN_HOSTNAME:
        return hostname(s, n, 1);
    case MCP__FMT_IPV4:
        return f_ipv4(s, n);
    case MCP__FMT_IPV6:
        return f_ipv6(s, n);
    case MCP__FMT_URI:
        return uri(s, n, 0, 1);
    case MCP__FMT_URI_REFERENCE:
        return uri(s, n, 0, 0);
    case MCP__FMT_IRI:
        return uri(s, n, 1, 1);
    case MCP__FMT_IRI_REFERENCE:
        return uri(s, n, 1, 0);
    case MCP__FMT_URI_TEMPLATE:
        return f_uri_template(s, n);
    case MCP__FMT_UUID:
        return f_uuid(s, n);
    case MCP__FMT_REGEX:
        return mcp__schema_regex_valid(s, n);
    case MCP__FMT_JSON_POINTER:
        return f_json_pointer(s, n);
    case MCP__FMT_REL_JSON_POINTER:
        return f_rel_json_pointer(s, n);
    default:
        return 1;
    }
}
