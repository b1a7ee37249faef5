/*
 * Utilities for mcp-server-aml: see util.h.
 */
#include "util/util.h"

#include <openssl/evp.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int aml_errf(aml_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- time ---------------------------------------------------------------- */

/* Howard Hinnant's days_from_civil: exact for the proleptic Gregorian calendar. */
int64_t aml_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void aml_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static int digits(const char *s, size_t n, size_t at, size_t count, unsigned *out)
{
    if (at + count > n)
        return -1;
    unsigned v = 0;
    for (size_t i = 0; i < count; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return 0;
}

static unsigned month_days(int64_t y, unsigned m)
{
    static const unsigned dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

int aml_parse_time(const char *s, size_t n, int64_t *out, int *prec)
{
    unsigned y, mo, d, hh = 0, mm = 0, ss = 0;
    size_t i;
    int p = AML_PREC_DAY;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
        n--;
    if (n == 8) { /* YYYYMMDD */
        if (digits(s, n, 0, 4, &y) || digits(s, n, 4, 2, &mo) || digits(s, n, 6, 2, &d))
            return -1;
        i = 8;
    } else {
        if (digits(s, n, 0, 4, &y) || n < 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] ||
            digits(s, n, 5, 2, &mo) || digits(s, n, 8, 2, &d))
            return -1;
        i = 10;
        if (i < n) {
            if (s[i] != 'T' && s[i] != ' ')
                return -1;
            if (digits(s, n, i + 1, 2, &hh) || i + 3 >= n || s[i + 3] != ':' || digits(s, n, i + 4, 2, &mm))
                return -1;
            i += 6;
            p = AML_PREC_MINUTE;
            if (i < n && s[i] == ':') {
                if (digits(s, n, i + 1, 2, &ss))
                    return -1;
                i += 3;
                p = AML_PREC_SECOND;
                if (i < n && s[i] == '.') { /* fractional seconds are dropped */
                    i++;
                    while (i < n && s[i] >= '0' && s[i] <= '9')
                        i++;
                }
            }
            if (i < n && s[i] == 'Z')
                i++;
        }
    }
    if (i != n || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || hh > 23 || mm > 59 || ss > 59)
        return -1;
    *out = aml_days_from_civil(y, mo, d) * AML_DAY + (int64_t)hh * 3600 + (int64_t)mm * 60 + ss;
    if (prec)
        *prec = p;
    return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int64_t aml_day_start(int64_t t)
{
    return floor_div(t, AML_DAY) * AML_DAY;
}

static void put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
}

static void put_date(char *out, int64_t day)
{
    int64_t y;
    unsigned m, d;
    aml_civil_from_days(day, &y, &m, &d);
    unsigned yy = (unsigned)(y < 0 ? 0 : y > 9999 ? 9999 : y);
    put2(out, yy / 100);
    put2(out + 2, yy % 100);
    out[4] = '-';
    put2(out + 5, m);
    out[7] = '-';
    put2(out + 8, d);
}

void aml_fmt_date(int64_t t, char *out)
{
    put_date(out, floor_div(t, AML_DAY));
    out[10] = '\0';
}

void aml_fmt_time(int64_t t, char *out)
{
    int64_t day = floor_div(t, AML_DAY);
    unsigned sec = (unsigned)(t - day * AML_DAY);
    put_date(out, day);
    out[10] = 'T';
    put2(out + 11, sec / 3600);
    out[13] = ':';
    put2(out + 14, sec / 60 % 60);
    out[16] = ':';
    put2(out + 17, sec % 60);
    out[19] = 'Z';
    out[20] = '\0';
}

int64_t aml_now(void)
{
    return (int64_t)time(NULL);
}

int64_t aml_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t aml_mono_ms(void)
{
    return aml_mono_ns() / 1000000;
}

/* ---- money --------------------------------------------------------------- */

/*
 * Demo FX rates: illustrative round figures so that multi-currency data
 * converts deterministically out of the box. They are not market data;
 * load real rates (native import, record type "fx") for real work.
 */
static const aml_currency currencies[] = {
    {"USD", 2, "US Dollar", 1, 1},
    {"EUR", 2, "Euro", 108, 100},
    {"GBP", 2, "UK Pound", 127, 100},
    {"CHF", 2, "Swiss Franc", 112, 100},
    {"CAD", 2, "Canadian Dollar", 74, 100},
    {"AUD", 2, "Australian Dollar", 66, 100},
    {"CNY", 2, "Yuan", 14, 100},
    {"JPY", 0, "Yen", 67, 10000},
    {"RUB", 2, "Ruble", 11, 1000},
    {"MXN", 2, "Mexican Peso", 58, 1000},
    {"BRL", 2, "Brazil Real", 20, 100},
    {"INR", 2, "Rupee", 12, 1000},
    {"ILS", 2, "Shekel", 27, 100},
    {"SAR", 2, "Saudi Riyal", 2667, 10000},
    {"BTC", 8, "Bitcoin", 60000, 1},
    {NULL, 0, NULL, 0, 0},
};

const aml_currency *aml_currencies(void)
{
    return currencies;
}

const aml_currency *aml_currency_find(const char *name, size_t n)
{
    for (const aml_currency *c = currencies; c->code; c++) {
        if ((strlen(c->code) == n && memcmp(c->code, name, n) == 0) ||
            (strlen(c->amlworld) == n && memcmp(c->amlworld, name, n) == 0))
            return c;
    }
    return NULL;
}

int aml_parse_amount(const char *s, size_t n, int exponent, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
        n--;
    while (i < n && s[i] == ' ')
        i++;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    int64_t v = 0;
    int any = 0, frac = -1, round_up = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (c < '0' || c > '9')
            return -1;
        any = 1;
        if (frac >= 0) {
            if (frac == exponent) { /* first dropped digit decides rounding */
                round_up = c >= '5';
                frac++;
                continue;
            }
            if (frac > exponent)
                continue;
            frac++;
        }
        if (v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (c - '0');
    }
    if (!any)
        return -1;
    for (int k = frac < 0 ? 0 : (frac > exponent ? exponent : frac); k < exponent; k++) {
        if (v > INT64_MAX / 10)
            return -1;
        v *= 10;
    }
    v += round_up;
    *out = neg ? -v : v;
    return 0;
}

int64_t aml_to_usd_minor(int64_t minor, int exponent, int64_t num, int64_t den)
{
    __extension__ typedef __int128 i128;
    i128 v = (i128)minor * num * 100;
    i128 d = (i128)den;
    for (int i = 0; i < exponent; i++)
        d *= 10;
    i128 q = v >= 0 ? (v + d / 2) / d : -((-v + d / 2) / d);
    if (q > INT64_MAX)
        return INT64_MAX;
    if (q < INT64_MIN)
        return INT64_MIN;
    return (int64_t)q;
}

void aml_fmt_amount(int64_t minor, int exponent, char *out, size_t n)
{
    char digits_[32];
    uint64_t u = minor < 0 ? (uint64_t)(-(minor + 1)) + 1 : (uint64_t)minor;
    uint64_t scale = 1;
    for (int i = 0; i < exponent; i++)
        scale *= 10;
    uint64_t whole = u / scale, fr = u % scale;
    int len = snprintf(digits_, sizeof digits_, "%llu", (unsigned long long)whole);
    char grouped[48];
    int g = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            grouped[g++] = ',';
        grouped[g++] = digits_[i];
    }
    grouped[g] = '\0';
    char frac[24];
    int e = exponent > 18 ? 18 : exponent;
    for (int i = e - 1; i >= 0; i--) {
        frac[i] = (char)('0' + fr % 10);
        fr /= 10;
    }
    frac[e] = '\0';
    if (e > 0)
        snprintf(out, n, "%s%s.%s", minor < 0 ? "-" : "", grouped, frac);
    else
        snprintf(out, n, "%s%s", minor < 0 ? "-" : "", grouped);
}

void aml_fmt_usd(int64_t cents, char *out, size_t n)
{
    char a[48];
    aml_fmt_amount(cents, 2, a, sizeof a);
    if (a[0] == '-')
        snprintf(out, n, "-$%s", a + 1);
    else
        snprintf(out, n, "$%s", a);
}

/* ---- hashing ------------------------------------------------------------- */

static void hexify(const unsigned char *md, unsigned len, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (unsigned i = 0; i < len; i++) {
        out[2 * i] = hx[md[i] >> 4];
        out[2 * i + 1] = hx[md[i] & 15];
    }
    out[2 * len] = '\0';
}

void aml_sha256_hex(const void *data, size_t n, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL)) {
        memset(out, '0', 64);
        out[64] = '\0';
        return;
    }
    hexify(md, len, out);
}

int aml_sha256_init(aml_sha256 *h)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(ctx);
        h->ctx = NULL;
        return -1;
    }
    h->ctx = ctx;
    return 0;
}

void aml_sha256_update(aml_sha256 *h, const void *data, size_t n)
{
    if (h->ctx && n)
        EVP_DigestUpdate((EVP_MD_CTX *)h->ctx, data, n);
}

void aml_sha256_final(aml_sha256 *h, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (!h->ctx || !EVP_DigestFinal_ex((EVP_MD_CTX *)h->ctx, md, &len)) {
        memset(out, '0', 64);
        out[64] = '\0';
    } else {
        hexify(md, len, out);
    }
    EVP_MD_CTX_free((EVP_MD_CTX *)h->ctx);
    h->ctx = NULL;
}

/* ---- random -------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void aml_rng_seed(aml_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t aml_rng_next(aml_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

int64_t aml_rng_range(aml_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(aml_rng_next(r) % span);
}

double aml_rng_unit(aml_rng *r)
{
    return (double)(aml_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

int aml_rng_chance(aml_rng *r, double p)
{
    return aml_rng_unit(r) < p;
}

/* ---- progress -------------------------------------------------------------- */

static void progress_draw(aml_progress *p)
{
    if (p->total) {
        unsigned pct = (unsigned)(p->done * 100 / p->total);
        if (pct > 100)
            pct = 100;
        char bar[31];
        unsigned fill = pct * 30 / 100;
        for (unsigned i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : ' ';
        bar[30] = '\0';
        fprintf(stderr, "\r%s [%s] %3u%% %llu/%llu", p->label, bar, pct, (unsigned long long)p->done,
                (unsigned long long)p->total);
    } else {
        fprintf(stderr, "\r%s %llu", p->label, (unsigned long long)p->done);
    }
    fflush(stderr);
}

/* Per-label counters, filled in the order labels are first seen, never emptied. */
#define PROGRESS_LABELS 16
static struct {
    _Atomic(const char *) label;
    atomic_llong running;
    atomic_ullong expected;
    atomic_ullong done_total;
    atomic_ullong finished_total;
} g_progress[PROGRESS_LABELS];
static pthread_mutex_t g_progress_mu = PTHREAD_MUTEX_INITIALIZER;

static int progress_slot(const char *label)
{
    if (!label)
        return -1;
    for (int i = 0; i < PROGRESS_LABELS; i++) {
        const char *l = atomic_load(&g_progress[i].label);
        if (l && strcmp(l, label) == 0)
            return i;
    }
    int slot = -1;
    pthread_mutex_lock(&g_progress_mu);
    for (int i = 0; i < PROGRESS_LABELS && slot < 0; i++) {
        const char *l = atomic_load(&g_progress[i].label);
        if (!l)
            atomic_store(&g_progress[i].label, label);
        if (!l || strcmp(l, label) == 0)
            slot = i;
    }
    pthread_mutex_unlock(&g_progress_mu);
    return slot;
}

int aml_progress_stats(int i, aml_progress_counts *out)
{
    const char *l = i >= 0 && i < PROGRESS_LABELS ? atomic_load(&g_progress[i].label) : NULL;
    if (!l)
        return 0;
    out->label = l;
    out->running = atomic_load_explicit(&g_progress[i].running, memory_order_relaxed);
    out->expected = atomic_load_explicit(&g_progress[i].expected, memory_order_relaxed);
    out->done_total = atomic_load_explicit(&g_progress[i].done_total, memory_order_relaxed);
    out->finished_total = atomic_load_explicit(&g_progress[i].finished_total, memory_order_relaxed);
    return 1;
}

void aml_progress_start(aml_progress *p, const char *label, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->enabled = isatty(2);
    p->last_ms = aml_mono_ms();
    p->slot = progress_slot(label);
    if (p->slot >= 0) {
        atomic_fetch_add_explicit(&g_progress[p->slot].running, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&g_progress[p->slot].expected, total, memory_order_relaxed);
    }
}

void aml_progress_update(aml_progress *p, uint64_t done)
{
    if (p->slot >= 0 && done > p->done)
        atomic_fetch_add_explicit(&g_progress[p->slot].done_total, done - p->done, memory_order_relaxed);
    p->done = done;
    if (!p->enabled)
        return;
    int64_t now = aml_mono_ms();
    if (now - p->last_ms < 100)
        return;
    p->last_ms = now;
    progress_draw(p);
}

void aml_progress_end(aml_progress *p)
{
    if (p->slot >= 0) {
        atomic_fetch_sub_explicit(&g_progress[p->slot].expected, p->total, memory_order_relaxed);
        atomic_fetch_sub_explicit(&g_progress[p->slot].running, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&g_progress[p->slot].finished_total, 1, memory_order_relaxed);
        p->slot = -1; /* ended once */
    }
    if (!p->enabled)
        return;
    if (p->total)
        p->done = p->total;
    progress_draw(p);
    fputc('\n', stderr);
}

/* ---- CSV ----------------------------------------------------------------- */

#define CSV_MAX_RECORD ((size_t)1 << 20)

int aml_csv_open(aml_csv *c, FILE *f)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->cap = 1 << 20;
    c->buf = malloc(c->cap + 1);
    c->next_line = 1;
    return c->buf ? 0 : -1;
}

void aml_csv_close(aml_csv *c)
{
    free(c->buf);
    c->buf = NULL;
}

/* Moves the unparsed tail to the front and reads more; 0 when nothing more came. */
static size_t csv_fill(aml_csv *c)
{
    if (c->eof)
        return 0;
    if (c->pos) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    if (c->len == c->cap) {
        size_t ncap = c->cap * 2;
        char *nb = realloc(c->buf, ncap + 1);
        if (!nb)
            return 0;
        c->buf = nb;
        c->cap = ncap;
    }
    size_t got = fread(c->buf + c->len, 1, c->cap - c->len, c->f);
    if (got == 0)
        c->eof = 1;
    c->len += got;
    c->bytes_read += got;
    return got;
}

/* Where the record starting at c->pos ends: its newline outside quotes (*end), or (size_t)-1 when
 * the buffer holds no whole record yet (*inq: inside a quoted field at the end). Counts the
 * newlines inside quoted fields and says whether the record has quotes at all. */
static size_t csv_record_end(const aml_csv *c, size_t *newlines, int *quoted, int *inq)
{
    size_t i = c->pos;
    *inq = *quoted = 0;
    *newlines = 0;
    while (i < c->len) {
        if (!*inq) {
            const char *nl = memchr(c->buf + i, '\n', c->len - i);
            const char *q = memchr(c->buf + i, '"', (nl ? (size_t)(nl - (c->buf + i)) : c->len - i));
            if (q) {
                *inq = 1;
                *quoted = 1;
                i = (size_t)(q - c->buf) + 1;
                continue;
            }
            if (nl)
                return (size_t)(nl - c->buf);
            i = c->len;
        } else {
            const char *q = memchr(c->buf + i, '"', c->len - i);
            if (!q) {
                for (size_t k = i; k < c->len; k++)
                    *newlines += c->buf[k] == '\n';
                return (size_t)-1;
            }
            for (const char *k = c->buf + i; k < q; k++)
                *newlines += *k == '\n';
            i = (size_t)(q - c->buf) + 1;
            if (i < c->len && c->buf[i] == '"') {
                i++;
                continue;
            }
            if (i == c->len && !c->eof)
                return (size_t)-1; /* the quote may be doubled by the next byte: refill */
            *inq = 0;
        }
    }
    return (size_t)-1;
}

/* Room for one more field, or the error. */
static int csv_room(const aml_csv *c, aml_err *err)
{
    if (c->nfields < AML_CSV_MAX_FIELDS)
        return 0;
    return aml_errf(err, "line %llu: more than %d fields", (unsigned long long)c->line, AML_CSV_MAX_FIELDS);
}

static void csv_add_field(aml_csv *c, char *p, size_t n)
{
    c->fields[c->nfields].p = p;
    c->fields[c->nfields].n = n;
    c->nfields++;
}

/* The unquoted field at p, up to the next comma or e; returns where the next field starts, or NULL at e. */
static char *csv_plain_field(aml_csv *c, char *p, char *e)
{
    char *comma = memchr(p, ',', (size_t)(e - p));
    csv_add_field(c, p, (size_t)((comma ? comma : e) - p));
    return comma ? comma + 1 : NULL;
}

/* Fields of a record [p, e) without quotes. */
static int csv_split_plain(aml_csv *c, char *p, char *e, aml_err *err)
{
    while (p) {
        if (csv_room(c, err))
            return -1;
        p = csv_plain_field(c, p, e);
    }
    return 1;
}

/* The quoted field at p (on its opening quote), unquoted in place; *next is where the next field
 * starts, NULL at the end of the record. @return 0, or -1 with the error. */
static int csv_quoted_field(aml_csv *c, char *p, char *e, char **next, aml_err *err)
{
    char *w = ++p, *r = p;
    for (;;) {
        if (r >= e)
            return aml_errf(err, "line %llu: unterminated quoted field", (unsigned long long)c->line);
        if (*r == '"') {
            if (r + 1 < e && r[1] == '"') {
                *w++ = '"';
                r += 2;
                continue;
            }
            r++;
            break;
        }
        *w++ = *r++;
    }
    csv_add_field(c, p, (size_t)(w - p));
    *next = NULL;
    if (r == e)
        return 0;
    if (*r != ',')
        return aml_errf(err, "line %llu: text after a closing quote", (unsigned long long)c->line);
    *next = r + 1;
    return 0;
}

/* Fields of a record [p, e) with quoted fields. */
static int csv_split_quoted(aml_csv *c, char *p, char *e, aml_err *err)
{
    while (p) {
        if (csv_room(c, err))
            return -1;
        if (p < e && *p == '"') {
            if (csv_quoted_field(c, p, e, &p, err))
                return -1;
        } else {
            p = csv_plain_field(c, p, e);
        }
    }
    return 1;
}

/* Length of the UTF-8 sequence at p (at most n bytes), or 0 when it is not one (overlong, surrogate, > U+10FFFF, NUL). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned char b = p[0];
    if (b >= 0x01 && b < 0x80)
        return 1;
    size_t len = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((b == 0xE0 && p[1] < 0xA0) || (b == 0xED && p[1] > 0x9F) || (b == 0xF0 && p[1] < 0x90) ||
        (b == 0xF4 && p[1] > 0x8F))
        return 0;
    return len;
}

/* The first field of the record that is not UTF-8 text (1-based), or 0. */
static size_t csv_bad_utf8(const aml_csv *c)
{
    for (size_t f = 0; f < c->nfields; f++) {
        const unsigned char *p = (const unsigned char *)c->fields[f].p;
        size_t n = c->fields[f].n, k;
        for (size_t i = 0; i < n; i += k)
            if (!(k = utf8_seq(p + i, n - i)))
                return f + 1;
    }
    return 0;
}

/* The record's fields, checked to be UTF-8 text without NUL bytes (what the stores hold). */
static int csv_split(aml_csv *c, char *p, char *e, int quoted, aml_err *err)
{
    int rc = quoted ? csv_split_quoted(c, p, e, err) : csv_split_plain(c, p, e, err);
    size_t bad = rc > 0 ? csv_bad_utf8(c) : 0;
    if (bad)
        return aml_errf(err, "line %llu: field %zu is not UTF-8 text (or holds a NUL byte)", (unsigned long long)c->line,
                        bad);
    return rc;
}

int aml_csv_next(aml_csv *c, aml_err *err)
{
    for (;;) {
        size_t start = c->pos, newlines;
        int quoted, inq;
        size_t end = csv_record_end(c, &newlines, &quoted, &inq);
        if (end == (size_t)-1) {
            if (c->eof) {
                if (start >= c->len)
                    return 0;
                if (inq) {
                    c->line = c->next_line;
                    return aml_errf(err, "line %llu: unterminated quoted field", (unsigned long long)c->line);
                }
                end = c->len; /* last record without a newline */
            } else {
                if (c->len - c->pos >= CSV_MAX_RECORD) {
                    c->line = c->next_line;
                    return aml_errf(err, "line %llu: record longer than 1 MiB", (unsigned long long)c->line);
                }
                csv_fill(c);
                continue;
            }
        }
        /* Split [start, end) into fields. */
        c->line = c->next_line;
        c->next_line += 1 + newlines;
        size_t rec_end = end;
        if (rec_end > start && c->buf[rec_end - 1] == '\r')
            rec_end--;
        c->pos = end < c->len ? end + 1 : end;
        c->nfields = 0;
        char *p = c->buf + start, *e = c->buf + rec_end;
        return csv_split(c, p, e, quoted, err);
    }
}

int aml_csv_eq(const aml_csv *c, size_t i, const char *s)
{
    size_t n = strlen(s);
    return i < c->nfields && c->fields[i].n == n && memcmp(c->fields[i].p, s, n) == 0;
}

/* ---- helpers ------------------------------------------------------------- */

void aml_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (base && n > 1)
        qsort(base, n, size, cmp);
}

int aml_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int aml_ivec_push(aml_ivec *a, int64_t x)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        int64_t *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

/*
 * Ascending order by LSD radix sort, a byte a pass, of the keys with the
 * sign bit flipped (so that unsigned order is signed order); a pass where
 * every key has the same byte is skipped, so a few million account
 * numbers take three passes. The scan sorts every transaction's two
 * accounts this way before the job starts, while no other thread can
 * help: qsort's comparisons through a function pointer took 0.4 s of the
 * 1.7M-transaction bank's 1 s there. -1 (nothing changed): no memory for
 * the second buffer.
 */
static int radix_i64(int64_t *v, size_t n)
{
    uint64_t *tmp = malloc(n * sizeof *tmp);
    size_t(*count)[256] = calloc(8, sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return -1;
    }
    uint64_t *src = (uint64_t *)(void *)v, *dst = tmp;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = src[i] ^ UINT64_C(0x8000000000000000);
        src[i] = k;
        for (int b = 0; b < 8; b++)
            count[b][(k >> (b * 8)) & 0xff]++;
    }
    for (int b = 0; b < 8; b++) {
        if (count[b][(src[0] >> (b * 8)) & 0xff] == n)
            continue; /* one value of this byte: the order stays */
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[b][d];
            count[b][d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[b][(src[i] >> (b * 8)) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (int64_t)(src[i] ^ UINT64_C(0x8000000000000000));
    free(tmp);
    free(count);
    return 0;
}

void aml_ivec_uniq(aml_ivec *a)
{
    if (!a->n)
        return;
    if (a->n < 1024 || radix_i64(a->v, a->n))
        aml_sort(a->v, a->n, sizeof *a->v, aml_cmp_i64);
    size_t k = 1;
    for (size_t i = 1; i < a->n; i++)
        if (a->v[i] != a->v[k - 1])
            a->v[k++] = a->v[i];
    a->n = k;
}

ssize_t aml_ivec_find(const aml_ivec *a, int64_t x)
{
    int64_t *p = bsearch(&x, a->v, a->n, sizeof *a->v, aml_cmp_i64);
    return p ? p - a->v : -1;
}

char *aml_strdup(const char *s)
{
    return s ? aml_strndup(s, strlen(s)) : NULL;
}

char *aml_strndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *aml_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

mcp_status aml_buf_printf(mcp_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCP_ERR_INVALID_ARG;
    if ((size_t)n < sizeof small)
        return mcp_buf_append(b, small, (size_t)n);
    mcp_status st = mcp_buf_reserve(b, (size_t)n + 1);
    if (st)
        return st;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return MCP_OK;
}

mcp_status aml_buf_puts(mcp_buf *b, const char *s)
{
    return mcp_buf_append(b, s, strlen(s));
}
