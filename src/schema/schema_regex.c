/*
 * Regular expressions (`pattern`, `patternProperties`, the `regex` format):
 * ECMA-262 patterns translated to PCRE2 and compiled once with the schema,
 * and the direct matcher that takes short anchored patterns without PCRE2.
 * Every pattern is compiled by PCRE2, so both agree on what is valid; fuzz
 * builds check every direct match against PCRE2's answer.
 */
#include "schema/schema_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ======================================================================== */
/* PCRE2 glue                                                                */

static void *re_malloc(PCRE2_SIZE n, void *ud)
{
    (void)ud;
    return mcp_malloc(n ? n : 1);
}

static void re_free(void *p, void *ud)
{
    (void)ud;
    mcp_free(p);
}

/* Caps on one pattern match, so a hostile pattern cannot run away. */
#define RE_MATCH_LIMIT 1000000u
#define RE_HEAP_LIMIT_KIB 32768u

/* ECMA-262 whitespace (\s), as the body of a PCRE2 class under PCRE2_ALT_BSUX. */
#define ECMA_SPACE                                                                      \
    "\\t\\n\\x0b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000" \
    "\\ufeff"

/* ECMA-262 long Unicode property names PCRE2 10.42 only knows by short name. */
static const char *const prop_alias[][2] = {
    {"Letter", "L"},
    {"Cased_Letter", "L&"},
    {"LC", "L&"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"},
    {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* Writes `\p{NAME}` with ECMA's long and prefixed names mapped to PCRE2's. */
static void put_property(sbuf *out, char e, const char *name, size_t n)
{
    static const char *const prefixes[] = {"General_Category=", "gc=", "Script=", "sc="};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t pl = strlen(prefixes[i]);
        if (n > pl && memcmp(name, prefixes[i], pl) == 0) {
            name += pl;
            n -= pl;
            break;
        }
    }
    sb_putc(out, '\\');
    sb_putc(out, e);
    sb_putc(out, '{');
    for (size_t i = 0; i < sizeof(prop_alias) / sizeof(prop_alias[0]); i++) {
        if (strlen(prop_alias[i][0]) == n && memcmp(prop_alias[i][0], name, n) == 0) {
            sb_puts(out, prop_alias[i][1]);
            sb_putc(out, '}');
            return;
        }
    }
    sb_put(out, name, n);
    sb_putc(out, '}');
}

/*
 * Rewrites an ECMA-262 pattern into PCRE2 syntax. Most of the syntax is
 * shared; what differs: `\s`/`\S` (Unicode whitespace in ECMA), `\v` (one
 * character in ECMA, a class in PCRE2), and escapes of letters ECMA does not
 * define (`\a`, `\e`, `\z`, `\Z`, `\A`, `\h`, ...) which ECMA's Unicode mode
 * rejects but PCRE2 would accept with another meaning.
 * Returns 1 on success, 0 for a pattern ECMA rejects (out->nomem on OOM).
 */
static int ecma_translate(sbuf *out, const char *s, size_t n)
{
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 >= n)
                return 0;
            char e = s[++i];
            if (e == 's') {
                if (in_class)
                    sb_puts(out, ECMA_SPACE);
                else
                    sb_puts(out, "[" ECMA_SPACE "]");
            } else if (e == 'S' && !in_class) {
                sb_puts(out, "[^" ECMA_SPACE "]");
            } else if (e == 'v') {
                sb_puts(out, "\\x0b");
            } else if ((e == 'p' || e == 'P') && i + 1 < n && s[i + 1] == '{') {
                const char *close = memchr(s + i + 2, '}', n - i - 2);
                if (!close)
                    return 0;
                put_property(out, e, s + i + 2, (size_t)(close - (s + i + 2)));
                i = (size_t)(close - s);
            } else if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
                if (!strchr("dDwWsSbBfnrtcxukpP", e))
                    return 0;
                sb_putc(out, '\\');
                sb_putc(out, e);
            } else {
                sb_putc(out, '\\');
                sb_putc(out, e);
            }
            continue;
        }
        if (c == '(' && !in_class && i + 1 < n && s[i + 1] == '?') {
            /* ECMA groups: (?:  (?=  (?!  (?<=  (?<!  (?<name>. Inline flags
               such as (?i) and Python's (?P<name>) are not ECMA-262. */
            char g = i + 2 < n ? s[i + 2] : '\0';
            if (g != ':' && g != '=' && g != '!' && g != '<')
                return 0;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            sb_putc(out, c);
            if (i + 1 < n && s[i + 1] == '^')
                sb_putc(out, s[++i]);
            continue;
        }
        if (c == ']' && in_class)
            in_class = 0;
        sb_putc(out, c);
    }
    return 1;
}

/*
 * Compiles an ECMA-262 pattern. Returns MCP_OK, MCP_ERR_NOMEM, or
 * MCP_ERR_SCHEMA with a reason in `why`.
 */
static mcp_status re_compile(pcre2_general_context *gctx, const char *src, size_t n,
                             pcre2_code **out, char *why, size_t whycap)
{
    sbuf t;
    sb_dyn(&t);
    *out = NULL;
    if (!ecma_translate(&t, src, n)) {
        sb_release(&t);
        snprintf(why, whycap, "not an ECMA-262 regular expression (bad escape)");
        return MCP_ERR_SCHEMA;
    }
    if (t.nomem) {
        sb_release(&t);
        return MCP_ERR_NOMEM;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(gctx);
    if (!cc) {
        sb_release(&t);
        return MCP_ERR_NOMEM;
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
    int ec = 0;
    PCRE2_SIZE eo = 0;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)(t.p ? t.p : ""), t.len,
                      PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS |
                          PCRE2_NO_UTF_CHECK,
                      &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    sb_release(&t);
    if (!code) {
        if (ec == PCRE2_ERROR_HEAP_FAILED)
            return MCP_ERR_NOMEM;
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof(msg));
        snprintf(why, whycap, "%s", (const char *)msg);
        return MCP_ERR_SCHEMA;
    }
    /* JIT is a speed-up only: if it is unavailable the interpreter runs, but
       running out of memory is still reported as such. */
    if (pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == PCRE2_ERROR_NOMEMORY) {
        pcre2_code_free(code);
        return MCP_ERR_NOMEM;
    }
    *out = code;
    return MCP_OK;
}

int mcp__schema_regex_valid(const char *s, size_t n)
{
    pcre2_general_context *g = pcre2_general_context_create(re_malloc, re_free, NULL);
    if (!g)
        return -1;
    pcre2_code *code = NULL;
    char why[8];
    mcp_status st = re_compile(g, s, n, &code, why, sizeof(why));
    pcre2_code_free(code);
    pcre2_general_context_free(g);
    if (st == MCP_ERR_NOMEM)
        return -1;
    return st == MCP_OK;
}

/* ======================================================================== */
/* The direct matcher                                                        */

/*
 * Most `pattern`s in tool schemas are anchored runs of ASCII character
 * classes ("^CASE-[0-9]{4}-[0-9]{6}$", "^[A-Z]{3}$"), and calling PCRE2
 * for them cost several times the match itself; such patterns are matched
 * directly. A pattern qualifies when it is '^', then atoms, then an
 * optional '$'. An atom is a printable ASCII literal, an escaped ASCII
 * punctuation character, \d, \w, or a non-negated [class] of those and of
 * literal ranges, with an optional greedy quantifier (?, *, +, {n}, {n,},
 * {n,m}). An atom whose count may vary must share no character with any
 * atom after it: the greedy match is then the only possible one, so no
 * backtracking is needed. Anything else is left to PCRE2 (which compiles
 * every pattern anyway, so both agree on what is valid). The classes hold
 * ASCII only, so a non-ASCII byte of the subject matches no atom, exactly
 * as a non-ASCII character matches none of these classes.
 */
typedef struct satom {
    uint64_t set[4]; /* bytes accepted, one bit each (ASCII only: the upper half stays 0) */
    const char *lit; /* or: these exact bytes (min of them), for a run of literals */
    const unsigned char *tab; /* set as a table: tab[byte] is 1 when accepted */
    int digits;               /* the set is exactly 0-9 (checked 8 bytes at a time) */
    uint32_t min;    /* fewest repetitions */
    uint32_t max;    /* most repetitions (UINT32_MAX: no limit) */
} satom;

/* Longest fixed-length pattern matched position by position. */
#define SIMPLE_MAX_FIXED 64

#define SIMPLE_MAX_ATOMS 64

static void set_add(uint64_t set[4], unsigned ch)
{
    set[ch >> 6] |= (uint64_t)1 << (ch & 63u);
}

static void set_range(uint64_t set[4], unsigned lo, unsigned hi)
{
    for (unsigned ch = lo; ch <= hi; ch++)
        set_add(set, ch);
}

static int is_punct_ascii(char ch)
{
    return ch > 0x20 && ch < 0x7f && !(ch >= '0' && ch <= '9') && !(ch >= 'A' && ch <= 'Z') &&
           !(ch >= 'a' && ch <= 'z');
}

/* Adds the escape `\e` to a set; 0 when it is not one the direct matcher knows. */
static int simple_escape(uint64_t set[4], char e)
{
    if (e == 'd') {
        set_range(set, '0', '9');
    } else if (e == 'w') {
        set_range(set, '0', '9');
        set_range(set, 'A', 'Z');
        set_range(set, 'a', 'z');
        set_add(set, '_');
    } else if (is_punct_ascii(e)) {
        set_add(set, (unsigned char)e);
    } else {
        return 0;
    }
    return 1;
}

/* Reads a decimal count of a {n,m} quantifier; 0 when there is none or it is too big. */
static int simple_count(const char *s, size_t n, size_t *i, uint32_t *out)
{
    size_t j = *i;
    uint32_t v = 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') {
        v = v * 10 + (uint32_t)(s[j] - '0');
        if (v > 100000)
            return 0;
        j++;
    }
    if (j == *i)
        return 0;
    *i = j;
    *out = v;
    return 1;
}

/* Parses a [class] from s[*ip] (just after its '[') to its ']' into t->set; 0 when it does not
   qualify. */
static int simple_class(const char *s, size_t n, size_t *ip, satom *t)
{
    size_t i = *ip;
    if (i >= n || s[i] == '^' || s[i] == ']')
        return 0;
    while (i < n && s[i] != ']') {
        char lo = s[i];
        if (lo == '\\') {
            if (i + 1 >= n || !simple_escape(t->set, s[i + 1]))
                return 0;
            /* An escape followed by '-' (not closing the class) starts a
               range, as in [\\-m] (from '\\' to 'm'): left to PCRE2. */
            if (i + 2 < n && s[i + 2] == '-' && (i + 3 >= n || s[i + 3] != ']'))
                return 0;
            i += 2;
            continue;
        }
        if (lo == '[' || lo < 0x20 || lo > 0x7e)
            return 0;
        if (i + 2 < n && s[i + 1] == '-' && s[i + 2] != ']') {
            char hi = s[i + 2];
            if (hi == '\\' || hi == '[' || hi < 0x20 || hi > 0x7e || hi < lo)
                return 0;
            set_range(t->set, (unsigned char)lo, (unsigned char)hi);
            i += 3;
        } else {
            set_add(t->set, (unsigned char)lo);
            i++;
        }
    }
    if (i >= n)
        return 0;
    *ip = i + 1; /* the ']' */
    return 1;
}

/* Parses the atom at s[*ip] (an escape, a [class] or a literal) into t; 0 when it does not
   qualify. */
static int simple_atom(const char *s, size_t n, size_t *ip, satom *t)
{
    static const char special[] = "^$\\.|?*+()[]{}";
    size_t i = *ip;
    char ch = s[i];
    memset(t, 0, sizeof(*t));
    t->min = t->max = 1;
    if (ch == '\\') {
        if (i + 1 >= n || !simple_escape(t->set, s[i + 1]))
            return 0;
        *ip = i + 2;
        return 1;
    }
    if (ch == '[') {
        *ip = i + 1;
        return simple_class(s, n, ip, t);
    }
    if (ch >= 0x20 && ch <= 0x7e && !strchr(special, ch)) {
        set_add(t->set, (unsigned char)ch);
        *ip = i + 1;
        return 1;
    }
    return 0;
}

/* Reads the optional greedy quantifier at s[*ip] into t->min and t->max; 0 when it does not
   qualify. */
static int simple_quantifier(const char *s, size_t n, size_t *ip, satom *t)
{
    size_t i = *ip;
    if (i < n && (s[i] == '?' || s[i] == '*' || s[i] == '+')) {
        t->min = s[i] == '+' ? 1 : 0;
        t->max = s[i] == '?' ? 1 : UINT32_MAX;
        i++;
    } else if (i < n && s[i] == '{') {
        i++;
        if (!simple_count(s, n, &i, &t->min))
            return 0;
        t->max = t->min;
        if (i < n && s[i] == ',') {
            i++;
            t->max = UINT32_MAX;
            if (i < n && s[i] != '}' && !simple_count(s, n, &i, &t->max))
                return 0;
        }
        if (i >= n || s[i] != '}' || t->max < t->min)
            return 0;
        i++;
    }
    if (i < n && (s[i] == '?' || s[i] == '*' || s[i] == '+' || s[i] == '{'))
        return 0; /* lazy or stacked quantifiers */
    *ip = i;
    return 1;
}

/* Parses the pattern into `a`; returns the atom count, or -1 when it does not qualify. */
static int simple_parse(const char *s, size_t n, satom *a, int *anchored_end)
{
    size_t i = 1, na = 0;
    if (n == 0 || s[0] != '^')
        return -1;
    *anchored_end = 0;
    while (i < n) {
        if (s[i] == '$') {
            if (i + 1 != n)
                return -1;
            *anchored_end = 1;
            break;
        }
        if (na == SIMPLE_MAX_ATOMS)
            return -1;
        satom *t = &a[na++];
        if (!simple_atom(s, n, &i, t) || !simple_quantifier(s, n, &i, t))
            return -1;
    }
    /* A variable atom must not share a character with any later atom. */
    for (size_t x = 0; x < na; x++) {
        if (a[x].min == a[x].max)
            continue;
        for (size_t y = x + 1; y < na; y++)
            if ((a[x].set[0] & a[y].set[0]) || (a[x].set[1] & a[y].set[1]))
                return -1;
    }
    return (int)na;
}

/* The single character of a set that has exactly one, or -1. */
static int set_single(const uint64_t set[4])
{
    for (int w = 0; w < 2; w++) {
        uint64_t x = set[w];
        if (x && !(x & (x - 1)) && !set[1 - w]) {
            int b = 0;
            while (!((x >> b) & 1u))
                b++;
            return w * 64 + b;
        }
    }
    return -1;
}

/*
 * Merges runs of single literal characters (each exactly once) into one
 * literal atom, compared as bytes. Returns the new atom count; the literal
 * bytes go to `lits` (at least na bytes).
 */
static size_t simple_merge(satom *a, size_t na, char *lits)
{
    size_t out = 0, used = 0;
    for (size_t i = 0; i < na;) {
        int ch = a[i].min == 1 && a[i].max == 1 ? set_single(a[i].set) : -1;
        size_t j = i;
        if (ch >= 0) {
            char *run = lits + used;
            while (j < na && a[j].min == 1 && a[j].max == 1 && (ch = set_single(a[j].set)) >= 0) {
                lits[used++] = (char)ch;
                j++;
            }
            if (j - i > 1) {
                memset(&a[out], 0, sizeof(a[out]));
                a[out].lit = run;
                a[out].min = a[out].max = (uint32_t)(j - i);
                out++;
                i = j;
                continue;
            }
            used -= j - i;
            j = i;
        }
        a[out++] = a[i++];
    }
    return out;
}

/* Does the direct matcher's pattern match the n bytes at s? */
int mcp__simple_match(const simple_re *r, const char *s, size_t n)
{
    if (r->blocks)
        return blocks_match(r, s, n);
    if (r->pos) {
        /* A fixed-length pattern ("^[A-Z]{3}$", "^CASE-[0-9]{4}-[0-9]{6}$"): one
           table lookup per character, no per-atom bookkeeping. */
        if (r->anchored_end ? n != r->len : n < r->len)
            return 0;
        for (size_t i = 0; i < r->len; i++)
            if (!r->pos[i][(unsigned char)s[i]])
                return 0;
        return 1;
    }
    size_t pos = 0;
    for (size_t i = 0; i < r->n; i++) {
        const satom *a = &r->atoms[i];
        if (a->min == a->max) {
            /* Literal runs and fixed counts: the length is known up front. */
            if (n - pos < a->min)
                return 0;
            if (a->lit) {
                if (!bytes_eq(s + pos, a->lit, a->min))
                    return 0;
            } else {
                uint32_t k = 0;
                if (a->digits) {
                    /* Eight digits at a time: each byte must be 0x30-0x39, i.e. have
                       the high nibble 3 and stay so when 6 is added to it. */
                    for (; k + 8 <= a->min; k += 8) {
                        uint64_t w = load64(s + pos + k);
                        if ((w & 0xF0F0F0F0F0F0F0F0ull) != 0x3030303030303030ull ||
                            ((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) !=
                                0x3030303030303030ull)
                            return 0;
                    }
                    if (k + 4 <= a->min) {
                        uint32_t w = load32(s + pos + k);
                        if ((w & 0xF0F0F0F0u) != 0x30303030u ||
                            ((w + 0x06060606u) & 0xF0F0F0F0u) != 0x30303030u)
                            return 0;
                        k += 4;
                    }
                }
                for (; k < a->min; k++)
                    if (!a->tab[(unsigned char)s[pos + k]])
                        return 0;
            }
            pos += a->min;
            continue;
        }
        uint32_t cnt = 0;
        while (cnt < a->max && pos < n && a->tab[(unsigned char)s[pos]]) {
            pos++;
            cnt++;
        }
        if (cnt < a->min)
            return 0;
    }
    return !r->anchored_end || pos == n;
}

/* ======================================================================== */
/* Compiling                                                                 */

/* Splits a fixed-length pattern (8 or more positions) into the blocks simple_match checks. */
static mcp_status simple_blocks(comp *c, simple_re *r, const satom *atoms, size_t na)
{
    size_t len = r->len, nb = (len + 7) / 8;
    /* What each position is: 1 a literal (its byte in lit), 2 a digit, 0 a table. */
    unsigned char kind[SIMPLE_MAX_FIXED], lit[SIMPLE_MAX_FIXED];
    size_t at = 0;
    for (size_t i = 0; i < na; i++) {
        int one = atoms[i].lit ? -1 : set_single(atoms[i].set);
        for (uint32_t k = 0; k < atoms[i].min; k++, at++) {
            kind[at] = 0;
            if (atoms[i].lit) {
                kind[at] = 1;
                lit[at] = (unsigned char)atoms[i].lit[k];
            } else if (one >= 0) {
                kind[at] = 1;
                lit[at] = (unsigned char)one;
            } else if (atoms[i].digits) {
                kind[at] = 2;
            }
        }
    }
    sblock *bl = (sblock *)mcp__ar_zalloc(&c->s->ar, nb * sizeof(sblock));
    if (!bl)
        return mcp__comp_nomem(c);
    for (size_t b = 0; b < nb; b++) {
        size_t off = b * 8 + 8 <= len ? b * 8 : len - 8;
        unsigned char lm[8], lv[8], dm[8];
        for (size_t j = 0; j < 8; j++) {
            lm[j] = kind[off + j] == 1 ? 0xFF : 0;
            lv[j] = kind[off + j] == 1 ? lit[off + j] : 0;
            dm[j] = kind[off + j] == 2 ? 0xFF : 0;
            if (kind[off + j] == 0)
                bl[b].tab_bits |= 1u << j;
        }
        memcpy(&bl[b].lit_mask, lm, 8);
        memcpy(&bl[b].lit_val, lv, 8);
        memcpy(&bl[b].dig_mask, dm, 8);
        bl[b].off = (uint32_t)off;
    }
    r->blocks = bl;
    r->nblocks = nb;
    return MCP_OK;
}

/* Gives each atom that is a set (not a literal run) its byte table. */
static mcp_status simple_tables(comp *c, satom *tmp, int na)
{
    for (int i = 0; i < na; i++) {
        if (tmp[i].lit)
            continue;
        unsigned char *tab = (unsigned char *)mcp__ar_alloc(&c->s->ar, 256);
        if (!tab)
            return mcp__comp_nomem(c);
        for (unsigned ch = 0; ch < 256; ch++)
            tab[ch] = (unsigned char)((tmp[i].set[ch >> 6] >> (ch & 63u)) & 1u);
        tmp[i].tab = tab;
        tmp[i].digits = tmp[i].set[0] == 0x03FF000000000000ull && !tmp[i].set[1];
    }
    return MCP_OK;
}

/*
 * Every count fixed and the total short: a table per position (a literal
 * character gets a table of its own, shared by its repeats), and for 8
 * positions or more the blocks too. Leaves r->pos NULL otherwise.
 */
static mcp_status simple_positions(comp *c, simple_re *r)
{
    const satom *atoms = r->atoms;
    size_t na = r->n, len = 0;
    int fixed = 1;
    for (size_t i = 0; i < na && fixed; i++) {
        fixed = atoms[i].min == atoms[i].max;
        len += atoms[i].min;
        if (len > SIMPLE_MAX_FIXED)
            fixed = 0;
    }
    if (!fixed || !len)
        return MCP_OK;
    const unsigned char **pos =
        (const unsigned char **)mcp__ar_alloc(&c->s->ar, len * sizeof(*pos));
    const unsigned char *one[128] = {NULL};
    if (!pos)
        return mcp__comp_nomem(c);
    size_t at = 0;
    for (size_t i = 0; i < na; i++) {
        for (uint32_t k = 0; k < atoms[i].min; k++, at++) {
            if (!atoms[i].lit) {
                pos[at] = atoms[i].tab;
                continue;
            }
            unsigned char ch = (unsigned char)atoms[i].lit[k];
            if (!one[ch & 127u]) {
                unsigned char *t = (unsigned char *)mcp__ar_zalloc(&c->s->ar, 256);
                if (!t)
                    return mcp__comp_nomem(c);
                t[ch] = 1;
                one[ch & 127u] = t;
            }
            pos[at] = one[ch & 127u];
        }
    }
    r->pos = pos;
    r->len = len;
    if (len >= 8)
        return simple_blocks(c, r, atoms, na);
    return MCP_OK;
}

/* Completes a compiled regex: the JIT flag and, when it qualifies, the direct-matcher form. */
static mcp_status re_prepare(comp *c, regex *re)
{
    mcp_status st;
    size_t jit_size = 0;
    re->jit = pcre2_pattern_info(re->code, PCRE2_INFO_JITSIZE, &jit_size) == 0 && jit_size > 0;
    satom tmp[SIMPLE_MAX_ATOMS];
    int anchored_end = 0;
    int na = simple_parse(re->src.s, re->src.n, tmp, &anchored_end);
    if (na < 0)
        return MCP_OK;
    simple_re *r = (simple_re *)mcp__ar_alloc(&c->s->ar, sizeof(*r));
    char *lits = (char *)mcp__ar_alloc(&c->s->ar, (size_t)na + 1);
    if (!r || !lits)
        return mcp__comp_nomem(c);
    na = (int)simple_merge(tmp, (size_t)na, lits);
    satom *atoms = na ? (satom *)mcp__ar_alloc(&c->s->ar, (size_t)na * sizeof(satom)) : NULL;
    if (na && !atoms)
        return mcp__comp_nomem(c);
    if ((st = simple_tables(c, tmp, na)) != MCP_OK)
        return st;
    if (na)
        memcpy(atoms, tmp, (size_t)na * sizeof(satom));
    r->atoms = atoms;
    r->n = (size_t)na;
    r->anchored_end = anchored_end;
    r->pos = NULL;
    r->len = 0;
    r->blocks = NULL;
    r->nblocks = 0;
    if ((st = simple_positions(c, r)) != MCP_OK)
        return st;
    re->fast = r;
    return MCP_OK;
}

mcp_status mcp__re_build(comp *c, node *n, const char *kwname, const char *src, size_t len,
                         regex *out)
{
    mcp_schema *s = c->s;
    if (s->ncodes == s->capcodes) {
        size_t cap = s->capcodes ? s->capcodes * 2 : 8;
        pcre2_code **t = (pcre2_code **)mcp_realloc(s->codes, cap * sizeof(*t));
        if (!t)
            return mcp__comp_nomem(c);
        s->codes = t;
        s->capcodes = cap;
    }
    char why[160];
    pcre2_code *code = NULL;
    mcp_status st = re_compile(s->gctx, src, len, &code, why, sizeof(why));
    if (st == MCP_ERR_NOMEM)
        return mcp__comp_nomem(c);
    if (st)
        return mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA,
                             "invalid regular expression \"%.*s\": %s",
                             (int)utf8_clip(src, len, 60), src, why);
    s->codes[s->ncodes++] = code;
    out->code = code;
    out->src.s = src;
    out->src.n = len;
    return re_prepare(c, out);
}

mcp_status mcp__re_contexts(comp *c)
{
    mcp_schema *s = c->s;
    s->gctx = pcre2_general_context_create(re_malloc, re_free, NULL);
    if (!s->gctx)
        return mcp__comp_nomem(c);
    s->mctx = pcre2_match_context_create(s->gctx);
    if (!s->mctx)
        return mcp__comp_nomem(c);
    pcre2_set_match_limit(s->mctx, RE_MATCH_LIMIT);
    pcre2_set_heap_limit(s->mctx, RE_HEAP_LIMIT_KIB);
    return MCP_OK;
}

/* ======================================================================== */
/* Matching                                                                  */

/* Does a regex match the bytes (through PCRE2)? 1/0, or -1 with c->status set. */
static int re_match_pcre2(vctx *c, const regex *re, const char *s, size_t n)
{
    if (!c->md) {
        pcre2_match_data *md = atomic_exchange(&((mcp_schema *)c->s)->md_cache, NULL);
        if (!md)
            md = pcre2_match_data_create(1, c->s->gctx);
        if (!md) {
            mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory matching a pattern");
            return -1;
        }
        c->md = md;
    }
    int rc = re->jit ? pcre2_jit_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, c->md,
                                       c->s->mctx)
                     : pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, c->md,
                                   c->s->mctx);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_NOMEMORY)
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory matching pattern \"%.*s\"",
                       (int)utf8_clip(re->src.s, re->src.n, 60), re->src.s);
    else
        mcp__hard_fail(c, MCP_ERR_LIMIT,
                       "pattern \"%.*s\" needs too much backtracking (PCRE2 error %d); "
                       "validation stopped",
                       (int)utf8_clip(re->src.s, re->src.n, 60), re->src.s, rc);
    return -1;
}

/* Does a regex match the bytes? 1/0, or -1 with c->status set. */
int mcp__re_match(vctx *c, const regex *re, const char *s, size_t n)
{
    if (!re->fast)
        return re_match_pcre2(c, re, s, n);
    int m = mcp__simple_match(re->fast, s, n);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* Fuzz builds hold the direct matcher to PCRE2's answer. */
    int ref = re_match_pcre2(c, re, s, n);
    if (ref >= 0 && ref != m)
        abort();
#endif
    return m;
}
