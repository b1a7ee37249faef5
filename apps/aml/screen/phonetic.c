/*
 * Phonetic keys and string similarity for screening.
 *
 * aml_sc_metaphone follows Lawrence Philips' Double Metaphone: a primary
 * and an alternate code of up to four letters per word, where the
 * alternate carries a second reading of ambiguous spellings (G before
 * E/I as K or J, TH as 0 or T, initial W as a vowel or F, SZ ...). It
 * keeps the rules that matter for names transliterated into ASCII
 * (silent initial letters, CH/SH/TH/PH/GH, soft C and G, DG, TIO/SIO,
 * doubled letters, vowels only at the start) and leaves out the long
 * tails of language-specific exceptions of the original (Italian,
 * Germanic, Slavic, French endings); two spellings of one sound in those
 * tails are still caught by the Jaro-Winkler and Levenshtein features.
 */
#include "screen/screen.h"

#include <string.h>

typedef struct mp {
    char p[5], a[5]; /* primary, alternate */
    int np, na;
} mp;

static void add(mp *m, const char *prim, const char *alt)
{
    for (const char *c = prim; *c && m->np < 4; c++)
        m->p[m->np++] = *c;
    for (const char *c = alt; *c && m->na < 4; c++)
        m->a[m->na++] = *c;
}

static int vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

static char at(const char *s, size_t n, size_t i)
{
    return i < n ? s[i] : 0;
}

static int front(char c) /* e, i, y soften c and g */
{
    return c == 'e' || c == 'i' || c == 'y';
}

/* One letter at position i; returns how many letters it consumed. */
static size_t step_c(mp *m, const char *s, size_t n, size_t i)
{
    char n1 = at(s, n, i + 1), n2 = at(s, n, i + 2);
    if (n1 == 'h') {
        if (n2 == 'r' || n2 == 'l' || (i == 0 && (n2 == 'a' || n2 == 'o') && at(s, n, i + 3) == 'r'))
            add(m, "K", "K");
        else
            add(m, "X", i == 0 ? "K" : "X");
        return 2;
    }
    if (n1 == 'i' && n2 == 'a') {
        add(m, "X", "X");
        return 3;
    }
    if (n1 == 'c' && front(n2)) {
        add(m, "KS", "KS");
        return 3;
    }
    if (front(n1)) {
        add(m, "S", "S");
        return 2;
    }
    add(m, "K", "K");
    return (n1 == 'k' || n1 == 'q' || n1 == 'c') ? 2 : 1;
}

static size_t step_g(mp *m, const char *s, size_t n, size_t i)
{
    char n1 = at(s, n, i + 1);
    if (n1 == 'h') {
        if (i == 0 || !vowel(s[i - 1]))
            add(m, "K", "K");
        return 2;
    }
    if (n1 == 'n' && i + 2 == n) {
        add(m, "N", "KN");
        return 2;
    }
    if (front(n1)) {
        add(m, "J", "K");
        return 2;
    }
    add(m, "K", "K");
    return n1 == 'g' ? 2 : 1;
}

static size_t step_st(mp *m, const char *s, size_t n, size_t i)
{
    char c = s[i], n1 = at(s, n, i + 1), n2 = at(s, n, i + 2);
    if (c == 's') {
        if (n1 == 'h') {
            add(m, "X", "X");
            return 2;
        }
        if (n1 == 'c' && n2 == 'h') {
            add(m, "SK", "X");
            return 3;
        }
        if (n1 == 'i' && (n2 == 'o' || n2 == 'a')) {
            add(m, "X", "S");
            return 3;
        }
        if (n1 == 'z') {
            add(m, "S", "X");
            return 2;
        }
        add(m, "S", "S");
        return n1 == 's' ? 2 : 1;
    }
    if (n1 == 'h') {
        add(m, "0", "T");
        return 2;
    }
    if ((n1 == 'i' && (n2 == 'o' || n2 == 'a')) || (n1 == 'c' && n2 == 'h')) {
        add(m, "X", "X");
        return 3;
    }
    add(m, "T", "T");
    return (n1 == 't' || n1 == 'd') ? 2 : 1;
}

static size_t step(mp *m, const char *s, size_t n, size_t i)
{
    char c = s[i], n1 = at(s, n, i + 1);
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u': case 'y':
        if (i == 0)
            add(m, "A", "A");
        return 1;
    case 'b': add(m, "P", "P"); return n1 == 'b' ? 2 : 1;
    case 'c': return step_c(m, s, n, i);
    case 'd':
        if (n1 == 'g' && front(at(s, n, i + 2))) {
            add(m, "J", "J");
            return 3;
        }
        add(m, "T", "T");
        return (n1 == 't' || n1 == 'd') ? 2 : 1;
    case 'f': add(m, "F", "F"); return n1 == 'f' ? 2 : 1;
    case 'g': return step_g(m, s, n, i);
    case 'h':
        if ((i == 0 || vowel(s[i - 1])) && vowel(n1))
            add(m, "H", "H");
        return 1;
    case 'j': add(m, "J", "H"); return n1 == 'j' ? 2 : 1;
    case 'k': add(m, "K", "K"); return n1 == 'k' ? 2 : 1;
    case 'l': add(m, "L", "L"); return n1 == 'l' ? 2 : 1;
    case 'm': add(m, "M", "M"); return n1 == 'm' ? 2 : 1;
    case 'n': add(m, "N", "N"); return n1 == 'n' ? 2 : 1;
    case 'p':
        if (n1 == 'h') {
            add(m, "F", "F");
            return 2;
        }
        add(m, "P", "P");
        return (n1 == 'p' || n1 == 'b') ? 2 : 1;
    case 'q': add(m, "K", "K"); return n1 == 'q' ? 2 : 1;
    case 'r': add(m, "R", "R"); return n1 == 'r' ? 2 : 1;
    case 's': case 't': return step_st(m, s, n, i);
    case 'v': add(m, "F", "F"); return n1 == 'v' ? 2 : 1;
    case 'w':
        if (i == 0 && vowel(n1))
            add(m, "A", "F");
        return 1;
    case 'x': add(m, i == 0 ? "S" : "KS", i == 0 ? "S" : "KS"); return n1 == 'x' ? 2 : 1;
    case 'z':
        if (n1 == 'h') {
            add(m, "J", "J");
            return 2;
        }
        add(m, "S", "TS");
        return n1 == 'z' ? 2 : 1;
    default: /* digits */
        return 1;
    }
}

static uint32_t pack(const char *c, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | (uint32_t)(i < n ? (unsigned char)c[i] : 0);
    return v;
}

void aml_sc_metaphone(const char *tok, size_t n, uint32_t *primary, uint32_t *alternate)
{
    mp m;
    memset(&m, 0, sizeof m);
    size_t i = 0;
    /* Silent first letters: GN KN PN WR PS. */
    if (n >= 2 && ((tok[0] == 'g' && tok[1] == 'n') || (tok[0] == 'k' && tok[1] == 'n') ||
                   (tok[0] == 'p' && (tok[1] == 'n' || tok[1] == 's')) || (tok[0] == 'w' && tok[1] == 'r')))
        i = 1;
    while (i < n && (m.np < 4 || m.na < 4))
        i += step(&m, tok, n, i);
    *primary = pack(m.p, m.np);
    *alternate = pack(m.a, m.na);
}

void aml_sc_code_text(uint32_t code, char *out)
{
    int k = 0;
    for (int i = 3; i >= 0; i--) {
        char c = (char)((code >> (8 * i)) & 0xff);
        if (c)
            out[k++] = c;
    }
    out[k] = 0;
}

/* ---- similarity ------------------------------------------------------- */

double aml_sc_jaro_winkler(const char *a, size_t na, const char *b, size_t nb)
{
    if (na == 0 || nb == 0)
        return na == nb ? 1.0 : 0.0;
    if (na > 64)
        na = 64;
    if (nb > 64)
        nb = 64;
    size_t win = (na > nb ? na : nb) / 2;
    win = win ? win - 1 : 0;
    uint64_t ma = 0, mb = 0;
    int m = 0;
    for (size_t i = 0; i < na; i++) {
        size_t lo = i > win ? i - win : 0, hi = i + win + 1 < nb ? i + win + 1 : nb;
        for (size_t j = lo; j < hi; j++)
            if (!(mb >> j & 1) && a[i] == b[j]) {
                ma |= 1ull << i;
                mb |= 1ull << j;
                m++;
                break;
            }
    }
    if (!m)
        return 0.0;
    int t = 0;
    size_t j = 0;
    for (size_t i = 0; i < na; i++) {
        if (!(ma >> i & 1))
            continue;
        while (!(mb >> j & 1))
            j++;
        t += a[i] != b[j];
        j++;
    }
    double md = m;
    double jaro = (md / (double)na + md / (double)nb + (md - t / 2.0) / md) / 3.0;
    int l = 0;
    while (l < 4 && (size_t)l < na && (size_t)l < nb && a[l] == b[l])
        l++;
    return jaro + l * 0.1 * (1.0 - jaro);
}

int aml_sc_levenshtein(const char *a, size_t na, const char *b, size_t nb)
{
    /* Optimal string alignment: insertions, deletions, substitutions and
     * transpositions of two adjacent letters cost one edit each. */
    if (na > 255)
        na = 255;
    if (nb > 255)
        nb = 255;
    static _Thread_local int rows[3][256];
    int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
        }
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb];
}
