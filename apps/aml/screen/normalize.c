/*
 * Name normalisation for screening: ICU transliteration to Latin ASCII,
 * case, punctuation, "LAST, First", honorifics and legal forms; birth
 * dates; country codes and names; schema names.
 */
#include "screen/screen.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uloc.h>
#include <unicode/ustring.h>
#include <unicode/utrans.h>

/* ---- transliteration -------------------------------------------------- */

/* Per thread: ICU's transliterators are not safe to share while in use,
 * and a cache of words already transliterated (names repeat their words:
 * a list of a million names has a few hundred thousand distinct ones, and
 * ICU costs tens of microseconds a word). The cache is direct-mapped: a
 * colliding word replaces the one in its slot. */
#define TR_SLOTS 8192
#define TR_KEY 47
#define TR_VAL 79

typedef struct tr_slot {
    uint64_t h;
    uint8_t klen, vlen;
    char k[TR_KEY], v[TR_VAL];
} tr_slot;

typedef struct tr_tls {
    UTransliterator *t;
    tr_slot *slots;
} tr_tls;

static pthread_key_t tr_key;
static pthread_once_t tr_once = PTHREAD_ONCE_INIT;

static void tr_destroy(void *p)
{
    tr_tls *x = p;
    utrans_close(x->t);
    free(x->slots);
    free(x);
}

static void tr_init(void)
{
    (void)pthread_key_create(&tr_key, tr_destroy);
}

static tr_tls *tr_get(void)
{
    pthread_once(&tr_once, tr_init);
    tr_tls *x = pthread_getspecific(tr_key);
    if (x)
        return x;
    /* Cyrillic by the BGN/PCGN romanisation sanctions lists use
     * ("Zakharov", not ISO 9 "Zaharov"), every other script by ICU's
     * default, then marks and ligatures folded to ASCII. */
    static const UChar id[] = u"Russian-Latin/BGN; Any-Latin; Latin-ASCII";
    UErrorCode st = U_ZERO_ERROR;
    x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->t = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, NULL, &st);
    x->slots = calloc(TR_SLOTS, sizeof *x->slots);
    if (U_FAILURE(st) || !x->slots) {
        tr_destroy(x);
        return NULL;
    }
    pthread_setspecific(tr_key, x);
    return x;
}

/* ICU on n bytes of UTF-8 into ASCII out (cap bytes). Characters ICU
 * leaves non-ASCII become spaces. @return bytes written. */
static size_t icu_ascii(UTransliterator *t, const char *s, size_t n, char *out, size_t cap)
{
    UChar u[AML_SC_MAX_NAME * 4];
    int32_t ulen = 0;
    UErrorCode st = U_ZERO_ERROR;
    u_strFromUTF8WithSub(u, AML_SC_MAX_NAME, &ulen, s, (int32_t)n, 0xFFFD, NULL, &st);
    if (U_FAILURE(st) && st != U_BUFFER_OVERFLOW_ERROR)
        ulen = 0;
    if (ulen > AML_SC_MAX_NAME)
        ulen = AML_SC_MAX_NAME;
    if (t) {
        int32_t len = ulen, limit = ulen;
        st = U_ZERO_ERROR;
        utrans_transUChars(t, u, &len, (int32_t)(sizeof u / sizeof u[0]), 0, &limit, &st);
        if (U_SUCCESS(st))
            ulen = len;
    }
    size_t k = 0;
    for (int32_t i = 0; i < ulen && k + 1 < cap; i++) {
        if (u[i] == 0xB7 || u[i] == 0x2BE || u[i] == 0x2BF || u[i] == 0x2BC)
            continue; /* the middle dot of BGN, ayn and hamza marks: inside a word */
        out[k++] = u[i] < 0x80 ? (char)u[i] : ' ';
    }
    out[k] = 0;
    return k;
}

static uint64_t word_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h | 1;
}

/* One word through the cache. */
static size_t word_ascii(tr_tls *x, const char *s, size_t n, char *out, size_t cap)
{
    if (!x || n > TR_KEY)
        return icu_ascii(x ? x->t : NULL, s, n, out, cap);
    uint64_t h = word_hash(s, n);
    tr_slot *sl = &x->slots[h & (TR_SLOTS - 1)];
    if (sl->h == h && sl->klen == n && !memcmp(sl->k, s, n)) {
        size_t k = sl->vlen < cap ? sl->vlen : cap - 1;
        memcpy(out, sl->v, k);
        out[k] = 0;
        return k;
    }
    size_t k = icu_ascii(x->t, s, n, out, cap);
    if (k <= TR_VAL) {
        sl->h = h;
        sl->klen = (uint8_t)n;
        sl->vlen = (uint8_t)k;
        memcpy(sl->k, s, n);
        memcpy(sl->v, out, k);
    }
    return k;
}

/* Transliterates n bytes of UTF-8 into ASCII out, word by word (words
 * split at ASCII spaces). @return bytes written. */
static size_t to_ascii(const char *s, size_t n, char *out, size_t cap)
{
    tr_tls *x = tr_get();
    size_t k = 0, i = 0;
    out[0] = 0;
    while (i < n && k + 2 < cap) {
        while (i < n && s[i] == ' ')
            i++;
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        if (j > i) {
            if (k)
                out[k++] = ' ';
            k += word_ascii(x, s + i, j - i, out + k, cap - k);
        }
        i = j;
    }
    out[k] = 0;
    return k;
}

/* ---- words dropped ---------------------------------------------------- */

/* Honorifics and titles, and legal-form words: they say what someone or
 * something is, not who. Sorted for bsearch. */
static const char *const stopwords[] = {
    "ab", "ag", "alhaji", "ao", "aps", "bhd", "bv", "capt", "captain", "cjsc", "co", "col", "colonel",
    "company", "corp", "corporation", "dame", "doo", "dr", "fzco", "fze", "gen", "general", "gmbh", "haji",
    "hajji", "herr", "inc", "incorporated", "jr", "jsc", "kft", "kg", "lady", "liability", "limited", "llc",
    "llp", "lord", "ltd", "madam", "maulavi", "maulvi", "mawlawi", "miss", "mlle", "mme", "mr", "mrs", "ms",
    "mullah", "nv", "oao", "ojsc", "ooo", "oy", "pao", "pjsc", "plc", "prof", "pte", "pty", "qari", "rev",
    "sa", "sarl", "sas", "sdn", "shaikh", "sheikh", "sir", "spa", "sr", "srl", "tov", "zao",
};

static int cmp_word(const void *a, const void *b)
{
    return strcmp((const char *)a, *(const char *const *)b);
}

static int is_stopword(const char *w)
{
    return bsearch(w, stopwords, sizeof stopwords / sizeof stopwords[0], sizeof stopwords[0], cmp_word) != NULL;
}

/* ---- the name --------------------------------------------------------- */

static int is_ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

/* "LAST, First" -> "First LAST": one comma with words on both sides. */
static void comma_order(char *a, size_t n)
{
    char *c = memchr(a, ',', n);
    if (!c || memchr(c + 1, ',', n - (size_t)(c - a) - 1))
        return;
    size_t left = (size_t)(c - a), right = n - left - 1;
    int lw = 0, rw = 0;
    for (size_t i = 0; i < left; i++)
        lw |= isalnum((unsigned char)a[i]) != 0;
    for (size_t i = 0; i < right; i++)
        rw |= isalnum((unsigned char)c[1 + i]) != 0;
    if (!lw || !rw)
        return;
    char tmp[AML_SC_MAX_NAME * 2];
    memcpy(tmp, c + 1, right);
    tmp[right] = ' ';
    memcpy(tmp + right + 1, a, left);
    memcpy(a, tmp, n);
    a[right] = ' ';
}

void aml_sc_normalize(const char *s, size_t n, aml_sc_name *out)
{
    memset(out, 0, sizeof *out);
    if (n > AML_SC_MAX_NAME)
        n = AML_SC_MAX_NAME;
    char a[AML_SC_MAX_NAME * 2];
    size_t an;
    if (is_ascii(s, n)) {
        memcpy(a, s, n);
        an = n;
        a[an] = 0;
    } else {
        an = to_ascii(s, n, a, sizeof a);
        out->script = 1;
    }
    comma_order(a, an);
    /* Tokens: letters and digits, lower case; apostrophes and the '?' of a
     * lost character vanish inside a word; anything else separates. */
    char tok[AML_SC_MAX_TOKENS * 2][64];
    int nt = 0, len = 0;
    for (size_t i = 0; i <= an; i++) {
        unsigned char ch = i < an ? (unsigned char)a[i] : ' ';
        if (isalnum(ch)) {
            if (len < 63 && nt < AML_SC_MAX_TOKENS * 2)
                tok[nt][len++] = (char)tolower(ch);
        } else if (ch == '\'' || ch == '`' || ch == '?') {
            continue;
        } else if (len) {
            tok[nt][len] = 0;
            nt++;
            len = 0;
        }
    }
    int keep = 0;
    for (int i = 0; i < nt; i++)
        keep += !is_stopword(tok[i]);
    size_t pos = 0;
    for (int i = 0; i < nt && out->ntok < AML_SC_MAX_TOKENS; i++) {
        if (keep && is_stopword(tok[i])) {
            out->dropped++;
            continue;
        }
        size_t tl = strlen(tok[i]);
        if (pos + tl + 2 > sizeof out->text)
            break;
        if (pos)
            out->text[pos++] = ' ';
        out->off[out->ntok] = (uint16_t)pos;
        out->len[out->ntok] = (uint8_t)tl;
        memcpy(out->text + pos, tok[i], tl);
        pos += tl;
        out->ntok++;
    }
    out->text[pos] = 0;
}

/* ---- dates ------------------------------------------------------------ */

static int read_num(const char *s, size_t n, size_t *i, int maxd)
{
    int v = 0, d = 0;
    while (*i < n && isdigit((unsigned char)s[*i]) && d < maxd) {
        v = v * 10 + (s[*i] - '0');
        (*i)++;
        d++;
    }
    return d ? v : -1;
}

int32_t aml_sc_parse_date(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    int y = read_num(s, n, &i, 4);
    if (y < 1000 || y > 2999)
        return 0;
    int m = 0, d = 0;
    if (i < n && (s[i] == '-' || s[i] == '/' || s[i] == '.')) {
        i++;
        m = read_num(s, n, &i, 2);
        if (i < n && (s[i] == '-' || s[i] == '/' || s[i] == '.')) {
            i++;
            d = read_num(s, n, &i, 2);
        }
    }
    if (m < 1 || m > 12)
        m = d = 0;
    if (d < 1 || d > 31)
        d = 0;
    return y * 10000 + m * 100 + d;
}

/* ---- countries -------------------------------------------------------- */

typedef struct ctry {
    char key[48];  /* lower-case letters only */
    uint16_t code;
} ctry;

static ctry *ctab;
static size_t nctab;
static pthread_once_t ctab_once = PTHREAD_ONCE_INIT;

static void ckey(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        if (isalpha((unsigned char)s[i]))
            out[k++] = (char)tolower((unsigned char)s[i]);
    out[k] = 0;
}

static uint16_t pack2(const char *c)
{
    return (uint16_t)((tolower((unsigned char)c[0]) << 8) | tolower((unsigned char)c[1]));
}

static int cmp_ctry(const void *a, const void *b)
{
    return strcmp(((const ctry *)a)->key, ((const ctry *)b)->key);
}

/* Short forms ICU's English display names do not give. */
static const char *const aliases[][2] = {
    {"ivory coast", "ci"}, {"east timor", "tl"}, {"democratic republic of the congo", "cd"},
    {"republic of the congo", "cg"}, {"czech republic", "cz"}, {"north korea", "kp"}, {"south korea", "kr"},
    {"burma", "mm"}, {"myanmar", "mm"}, {"hong kong", "hk"}, {"macau", "mo"}, {"macao", "mo"},
    {"palestine", "ps"}, {"united states of america", "us"}, {"usa", "us"}, {"uk", "gb"},
    {"great britain", "gb"}, {"turkey", "tr"}, {"swaziland", "sz"}, {"cape verde", "cv"},
    {"vatican", "va"}, {"russian federation", "ru"}, {"kosovo", "xk"}, {"soviet union", "su"},
};

static void ctab_init(void)
{
    const char *const *codes = uloc_getISOCountries();
    size_t nc = 0;
    while (codes[nc])
        nc++;
    size_t na = sizeof aliases / sizeof aliases[0];
    ctab = calloc(nc + na, sizeof *ctab);
    if (!ctab)
        return;
    for (size_t i = 0; i < nc; i++) {
        char loc[8], name[96];
        UChar u[96];
        snprintf(loc, sizeof loc, "_%s", codes[i]);
        UErrorCode st = U_ZERO_ERROR;
        int32_t ul = uloc_getDisplayCountry(loc, "en", u, 96, &st);
        if (U_FAILURE(st) || ul <= 0)
            continue;
        size_t k = 0;
        for (int32_t j = 0; j < ul && j < 95; j++)
            name[k++] = u[j] < 0x80 ? (char)u[j] : 'x';
        /* "Myanmar (Burma)", "Hong Kong SAR China": the part before '(' too. */
        char *paren = memchr(name, '(', k);
        ckey(name, paren ? (size_t)(paren - name) : k, ctab[nctab].key, sizeof ctab[nctab].key);
        ctab[nctab++].code = pack2(codes[i]);
    }
    for (size_t i = 0; i < na; i++) {
        ckey(aliases[i][0], strlen(aliases[i][0]), ctab[nctab].key, sizeof ctab[nctab].key);
        ctab[nctab++].code = pack2(aliases[i][1]);
    }
    qsort(ctab, nctab, sizeof *ctab, cmp_ctry);
}

uint16_t aml_sc_country(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 2 && isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]))
        return pack2(s);
    if (n == 0 || n > 60)
        return 0;
    pthread_once(&ctab_once, ctab_init);
    if (!ctab)
        return 0;
    ctry k;
    ckey(s, n, k.key, sizeof k.key);
    const ctry *c = bsearch(&k, ctab, nctab, sizeof *ctab, cmp_ctry);
    return c ? c->code : 0;
}

void aml_sc_country_text(uint16_t code, char *out)
{
    out[0] = (char)(code >> 8);
    out[1] = (char)(code & 0xff);
    out[2] = 0;
}

/* ---- schemata --------------------------------------------------------- */

static const char *const schema_names[] = {"", "Person", "Organization", "Company", "Vessel", "LegalEntity"};

int aml_sc_schema_parse(const char *s)
{
    if (!s || !*s)
        return AML_SC_ANY;
    for (int i = 1; i < (int)(sizeof schema_names / sizeof schema_names[0]); i++)
        if (!strcmp(s, schema_names[i]))
            return i;
    return -1;
}

const char *aml_sc_schema_name(int schema)
{
    if (schema <= 0 || schema >= (int)(sizeof schema_names / sizeof schema_names[0]))
        return "LegalEntity";
    return schema_names[schema];
}
