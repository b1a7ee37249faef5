/*
 * Screening search: candidate generation over the index's key postings,
 * then per-feature scoring of each candidate name with qualifiers, and
 * the explanation of a hit. Weights and their reasons: docs/aml.md,
 * "Screening".
 */
#include "screen/index_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct aml_sc_scratch {
    float *acc;        /* candidate weight per name */
    uint32_t *touched; /* names with acc != 0 */
    size_t ntouched, cap;
    aml_sc_name q;     /* the last query, normalised */
    uint32_t qphon[2 * AML_SC_MAX_TOKENS];
};

aml_sc_scratch *aml_sc_scratch_new(const aml_sc_index *ix)
{
    aml_sc_scratch *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    sc->cap = ix->nnames ? ix->nnames : 1;
    sc->acc = calloc(sc->cap, sizeof *sc->acc);
    sc->touched = malloc(sc->cap * sizeof *sc->touched);
    if (!sc->acc || !sc->touched) {
        aml_sc_scratch_free(sc);
        return NULL;
    }
    return sc;
}

void aml_sc_scratch_free(aml_sc_scratch *sc)
{
    if (!sc)
        return;
    free(sc->acc);
    free(sc->touched);
    free(sc);
}

const aml_sc_name *aml_sc_scratch_query(const aml_sc_scratch *sc)
{
    return &sc->q;
}

/* ---- weights ---------------------------------------------------------- */

static const char *const feat_names[AML_SC_NFEAT] = {
    "name_literal_match", "name_jaro_winkler", "name_levenshtein", "name_phonetic_match", "identifier_match",
};
/* Blend of the fuzzy name features (they add up to 1); a literal match
 * scores 1 on its own; an identifier match 0.98. */
static const double feat_weight[AML_SC_NFEAT] = {1.0, 0.60, 0.25, 0.15, 0.98};
static const char *const qual_names[AML_SC_NQUAL] = {
    "dob_mismatch", "country_mismatch", "gender_mismatch", "schema_generic",
};

const char *aml_sc_feature_name(int f)
{
    return f >= 0 && f < AML_SC_NFEAT ? feat_names[f] : "";
}

const char *aml_sc_qualifier_name(int q)
{
    return q >= 0 && q < AML_SC_NQUAL ? qual_names[q] : "";
}

double aml_sc_feature_weight(int f)
{
    return f >= 0 && f < AML_SC_NFEAT ? feat_weight[f] : 0;
}

#define SC_CAND_FLOOR 0.15f /* candidates sharing less of the query's key weight are not scored */
#define SC_EXTRA 0.3        /* weight of entity tokens the query does not have (middle names, patronymics) */
#define SC_PAIR_MIN 0.70   /* token pairs less alike than this are not aligned */
#define SC_DOB_DAY -0.05   /* same year, month or day differ */
#define SC_DOB_YEAR1 -0.10 /* years one apart: a typing error or a calendar conversion */
#define SC_DOB_FAR -0.20   /* years further apart: lists give several dates; often another person */
#define SC_COUNTRY -0.10   /* nationalities disjoint */
#define SC_GENDER -0.10    /* genders differ */
#define SC_GENERIC -0.05   /* the entity is an untyped LegalEntity, the query a specific type */

/* ---- name features ---------------------------------------------------- */

typedef struct tokv {
    const char *p[AML_SC_MAX_TOKENS];
    int n[AML_SC_MAX_TOKENS];
    int ntok, total; /* tokens, letters */
} tokv;

static void split(const char *s, tokv *t)
{
    t->ntok = t->total = 0;
    while (*s && t->ntok < AML_SC_MAX_TOKENS) {
        const char *e = strchr(s, ' ');
        int n = e ? (int)(e - s) : (int)strlen(s);
        t->p[t->ntok] = s;
        t->n[t->ntok++] = n;
        t->total += n;
        s += n + (e != NULL);
    }
}

static int phon_agree(const uint32_t *a, const uint32_t *b)
{
    return (a[0] && (a[0] == b[0] || a[0] == b[1])) || (a[1] && (a[1] == b[0] || a[1] == b[1]));
}

/* Greedy alignment of query tokens to entity tokens by Jaro-Winkler, then
 * the four name features of the aligned name. */
static void name_features(const aml_sc_index *ix, const aml_sc_scratch *sc, uint32_t name, aml_sc_hit *h)
{
    const sc_nm *nm = &ix->names[name];
    tokv q, e;
    split(sc->q.text, &q);
    split(ix->arena + nm->norm, &e);
    float sim[AML_SC_MAX_TOKENS][AML_SC_MAX_TOKENS];
    for (int i = 0; i < q.ntok; i++)
        for (int j = 0; j < e.ntok; j++)
            sim[i][j] = (float)aml_sc_jaro_winkler(q.p[i], (size_t)q.n[i], e.p[j], (size_t)e.n[j]);
    int qa[AML_SC_MAX_TOKENS], ea[AML_SC_MAX_TOKENS];
    memset(qa, -1, sizeof qa);
    memset(ea, -1, sizeof ea);
    h->npairs = 0;
    for (;;) {
        int bi = -1, bj = -1;
        float best = (float)SC_PAIR_MIN;
        for (int i = 0; i < q.ntok; i++)
            for (int j = 0; j < e.ntok && qa[i] < 0; j++)
                if (ea[j] < 0 && sim[i][j] >= best && (bi < 0 || sim[i][j] > best)) {
                    best = sim[i][j];
                    bi = i;
                    bj = j;
                }
        if (bi < 0)
            break;
        qa[bi] = bj;
        ea[bj] = bi;
    }
    double jw = 0, ph = 0;
    int exact = q.ntok == e.ntok;
    char qs[AML_SC_MAX_NAME], es[AML_SC_MAX_NAME];
    size_t nq = 0, ne = 0;
    for (int i = 0; i < q.ntok; i++) {
        memcpy(qs + nq, q.p[i], (size_t)q.n[i]);
        nq += (size_t)q.n[i];
        int j = qa[i];
        h->pairs[h->npairs++] = (aml_sc_pair){(int8_t)i, (int8_t)j, j >= 0 ? sim[i][j] : 0};
        if (j < 0) {
            exact = 0;
            continue;
        }
        memcpy(es + ne, e.p[j], (size_t)e.n[j]);
        ne += (size_t)e.n[j];
        int w = q.n[i] + e.n[j];
        jw += sim[i][j] * w;
        exact &= sim[i][j] >= 1.0f;
        ph += phon_agree(sc->qphon + 2 * i, ix->phon + nm->phon0 + 2 * j) * w;
    }
    int extra = 0; /* letters of entity tokens left unaligned */
    for (int j = 0; j < e.ntok; j++)
        if (ea[j] < 0) {
            extra += e.n[j];
            h->pairs[h->npairs++] = (aml_sc_pair){-1, (int8_t)j, 0};
        }
    double total = q.total + (e.total - extra) + SC_EXTRA * extra;
    h->feat[AML_SC_F_LITERAL] = exact && !extra ? 1.0 : 0.0;
    h->feat[AML_SC_F_JW] = total > 0 ? jw / total : 0;
    h->feat[AML_SC_F_PHONETIC] = total > 0 ? ph / total : 0;
    /* Spelling distance of the aligned name; extra entity letters count SC_EXTRA each. */
    double mx = (double)(nq > ne ? nq : ne) + SC_EXTRA * extra;
    double d = aml_sc_levenshtein(qs, nq, es, ne) + SC_EXTRA * extra;
    h->feat[AML_SC_F_LEV] = mx > 0 ? 1.0 - d / mx : 0;
}

static double name_score(const aml_sc_hit *h)
{
    double s = feat_weight[AML_SC_F_JW] * h->feat[AML_SC_F_JW] + feat_weight[AML_SC_F_LEV] * h->feat[AML_SC_F_LEV] +
               feat_weight[AML_SC_F_PHONETIC] * h->feat[AML_SC_F_PHONETIC];
    if (h->feat[AML_SC_F_LITERAL] > 0)
        s = 1.0;
    return s;
}

/* ---- qualifiers ------------------------------------------------------- */

static double dob_adjust(int32_t q, int32_t e)
{
    int qy = q / 10000, ey = e / 10000;
    if (qy != ey)
        return abs(qy - ey) == 1 ? SC_DOB_YEAR1 : SC_DOB_FAR;
    int qm = q / 100 % 100, em = e / 100 % 100, qd = q % 100, ed = e % 100;
    if (qm && em && qm != em)
        return SC_DOB_DAY;
    if (qm && em && qd && ed && qd != ed)
        return SC_DOB_DAY;
    return 0;
}

static void qualify(const aml_sc_index *ix, const sc_ent *e, const aml_sc_query *q, int32_t qdate, uint16_t qc,
                    aml_sc_hit *h)
{
    memset(h->qual, 0, sizeof h->qual);
    h->q_date = h->e_date = 0;
    h->q_country = h->e_country = 0;
    if (qdate && e->ndates) {
        double best = -1;
        for (int i = 0; i < e->ndates; i++) {
            int32_t d = (int32_t)ix->attrs[e->attr0 + i];
            double a = dob_adjust(qdate, d);
            if (a > best || !h->e_date) {
                best = a;
                h->e_date = d;
            }
        }
        h->q_date = qdate;
        h->qual[AML_SC_Q_DOB] = best;
    }
    if (qc && e->nctry) {
        int agree = 0;
        for (int i = 0; i < e->nctry && !agree; i++)
            agree = (uint16_t)ix->attrs[e->attr0 + e->ndates + i] == qc;
        h->q_country = qc;
        h->e_country = (uint16_t)ix->attrs[e->attr0 + e->ndates];
        if (agree)
            h->e_country = qc;
        else
            h->qual[AML_SC_Q_COUNTRY] = SC_COUNTRY;
    }
    if (q->gender && e->gender && q->gender != e->gender)
        h->qual[AML_SC_Q_GENDER] = SC_GENDER;
    if (q->schema != AML_SC_ANY && q->schema != AML_SC_LEGALENTITY && e->schema == AML_SC_LEGALENTITY)
        h->qual[AML_SC_Q_SCHEMA] = SC_GENERIC;
}

/* May an entity of schema `es` answer a query for `qs`? */
static int schema_ok(int qs, int es)
{
    if (qs == AML_SC_ANY)
        return 1;
    if (qs == AML_SC_VESSEL || es == AML_SC_VESSEL)
        return qs == es;
    if (qs == es || qs == AML_SC_LEGALENTITY || es == AML_SC_LEGALENTITY)
        return 1;
    return (qs == AML_SC_ORGANIZATION && es == AML_SC_COMPANY) || (qs == AML_SC_COMPANY && es == AML_SC_ORGANIZATION);
}

static int ident_match(const aml_sc_index *ix, const sc_ent *e, const aml_sc_query *q)
{
    for (size_t i = 0; i < q->nids && i < AML_SC_MAX_IDS; i++) {
        char buf[128];
        sc_ident_norm(q->ids[i], strlen(q->ids[i]), buf, sizeof buf);
        if (strlen(buf) < 4)
            continue;
        for (int k = 0; k < e->nids; k++)
            if (!strcmp(buf, ix->arena + ix->attrs[e->attr0 + e->ndates + e->nctry + k]))
                return 1;
    }
    return 0;
}

/* ---- candidates ------------------------------------------------------- */

/* Adds a key's weight to the names holding it; returns the weight. A key
 * on more than max_df names (0: no limit) is left out and its number of
 * names returned in *skipped. */
static float accumulate(const aml_sc_index *ix, aml_sc_scratch *sc, uint32_t key, float w, size_t max_df,
                        size_t *skipped)
{
    const uint32_t *post;
    size_t n;
    if (!sc_lookup(ix, key, &post, &n))
        return 0;
    if (max_df && n > max_df) {
        if (skipped)
            *skipped = n;
        return 0;
    }
    float add = w * (float)sc_idf(ix, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t nm = post[i];
        if (sc->acc[nm] == 0)
            sc->touched[sc->ntouched++] = nm;
        sc->acc[nm] += add;
    }
    return add;
}

/* The names with the highest candidate weight (at most AML_SC_CANDIDATES),
 * leaving out those below `floor`. */
static int top_candidates(aml_sc_scratch *sc, float floor, uint32_t *out)
{
    int n = 0;
    for (size_t i = 0; i < sc->ntouched; i++) {
        uint32_t nm = sc->touched[i];
        float w = sc->acc[nm];
        if (w < floor)
            continue;
        if (n < AML_SC_CANDIDATES) {
            int k = n++;
            while (k > 0 && sc->acc[out[k - 1]] < w) {
                out[k] = out[k - 1];
                k--;
            }
            out[k] = nm;
        } else if (w > sc->acc[out[n - 1]]) {
            int k = n - 1;
            while (k > 0 && sc->acc[out[k - 1]] < w) {
                out[k] = out[k - 1];
                k--;
            }
            out[k] = nm;
        }
    }
    return n;
}

static int list_ok(const aml_sc_query *q, uint16_t list)
{
    if (!q->lists)
        return 1;
    for (size_t i = 0; i < q->nlists; i++)
        if (q->lists[i] == list)
            return 1;
    return 0;
}

static int cmp_hit(const void *a, const void *b)
{
    const aml_sc_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->ent < y->ent ? -1 : x->ent > y->ent;
}

/* Adds the query's keys to the candidates; returns the weight a name
 * sharing every key would have. When every key was too common (a short
 * name of common words on a large list), the least common token keys are
 * read anyway, rarest first, until some name is a candidate. */
static float gather(const aml_sc_index *ix, aml_sc_scratch *sc, const aml_sc_query *q)
{
    sc_qkey keys[SC_MAX_KEYS];
    size_t skipped[SC_MAX_KEYS];
    int nk = sc_name_keys(&sc->q, keys, SC_MAX_KEYS);
    float full = 0;
    for (int k = 0; k < nk; k++) {
        skipped[k] = 0;
        full += accumulate(ix, sc, keys[k].key, keys[k].w, keys[k].max_df, &skipped[k]);
    }
    while (sc->ntouched == 0) {
        int best = -1;
        for (int k = 0; k < nk; k++)
            if (skipped[k] && keys[k].max_df == SC_DF_TOKEN && (best < 0 || skipped[k] < skipped[best]))
                best = k;
        if (best < 0)
            break;
        full += accumulate(ix, sc, keys[best].key, keys[best].w, 0, NULL);
        skipped[best] = 0;
    }
    for (size_t i = 0; i < q->nids && i < AML_SC_MAX_IDS; i++) {
        char buf[128];
        sc_ident_norm(q->ids[i], strlen(q->ids[i]), buf, sizeof buf);
        if (strlen(buf) >= 4)
            accumulate(ix, sc, sc_key('I', buf, strlen(buf)), SC_W_IDENT, 0, NULL);
    }
    return full;
}

int aml_sc_search(const aml_sc_index *ix, aml_sc_scratch *sc, const aml_sc_query *q, aml_sc_hit *out, int max)
{
    if (!q->name || !ix->built)
        return -1;
    aml_sc_normalize(q->name, strlen(q->name), &sc->q);
    if (!sc->q.ntok)
        return -1;
    for (int t = 0; t < sc->q.ntok; t++)
        aml_sc_metaphone(sc->q.text + sc->q.off[t], sc->q.len[t], &sc->qphon[2 * t], &sc->qphon[2 * t + 1]);
    int32_t qdate = q->birth_date ? aml_sc_parse_date(q->birth_date, strlen(q->birth_date)) : 0;
    uint16_t qc = q->country ? aml_sc_country(q->country, strlen(q->country)) : 0;
    sc->ntouched = 0;
    float full = gather(ix, sc, q);
    uint32_t cand[AML_SC_CANDIDATES];
    int nc = top_candidates(sc, SC_CAND_FLOOR * full, cand);
    for (size_t i = 0; i < sc->ntouched; i++)
        sc->acc[sc->touched[i]] = 0;
    sc->ntouched = 0;

    aml_sc_hit hits[AML_SC_CANDIDATES];
    int nh = 0;
    for (int c = 0; c < nc; c++) {
        const sc_nm *nm = &ix->names[cand[c]];
        const sc_ent *e = &ix->ents[nm->ent];
        if (!list_ok(q, e->list) || !schema_ok(q->schema, e->schema))
            continue;
        aml_sc_hit h;
        memset(&h, 0, sizeof h);
        h.ent = nm->ent;
        h.name = cand[c];
        name_features(ix, sc, cand[c], &h);
        h.feat[AML_SC_F_IDENT] = ident_match(ix, e, q);
        h.name_score = name_score(&h);
        double base = h.name_score;
        if (h.feat[AML_SC_F_IDENT] > 0 && feat_weight[AML_SC_F_IDENT] > base)
            base = feat_weight[AML_SC_F_IDENT];
        qualify(ix, e, q, qdate, qc, &h);
        double s = base;
        for (int k = 0; k < AML_SC_NQUAL; k++)
            s += h.qual[k];
        h.score = s < 0 ? 0 : s > 1 ? 1 : s;
        int k = 0;
        while (k < nh && hits[k].ent != h.ent)
            k++;
        if (k == nh)
            hits[nh++] = h;
        else if (h.score > hits[k].score)
            hits[k] = h;
    }
    qsort(hits, (size_t)nh, sizeof hits[0], cmp_hit);
    int above = 0;
    for (int k = 0; k < nh; k++) {
        if (hits[k].score < q->threshold)
            break;
        if (above < max)
            out[above] = hits[k];
        above++;
    }
    return above;
}

/* ---- explanation ------------------------------------------------------ */

static void jw_num(mcp_jw *w, const char *k, double v)
{
    mcp_jw_key(w, k);
    mcp_jw_double(w, round(v * 1000) / 1000);
}

static void explain_date(mcp_jw *w, int32_t d)
{
    char b[16];
    if (d % 10000 == 0)
        snprintf(b, sizeof b, "%04d", d / 10000);
    else if (d % 100 == 0)
        snprintf(b, sizeof b, "%04d-%02d", d / 10000, d / 100 % 100);
    else
        snprintf(b, sizeof b, "%04d-%02d-%02d", d / 10000, d / 100 % 100, d % 100);
    mcp_jw_string(w, b);
}

static void explain_qualifiers(const aml_sc_hit *h, mcp_jw *w)
{
    static const char *const why[AML_SC_NQUAL] = {
        "birth dates compared: same date 0, same year -0.05, years one apart -0.10, further -0.20",
        "nationality or country disjoint: -0.10",
        "gender differs: -0.10",
        "the entity is an untyped LegalEntity: -0.05",
    };
    for (int k = 0; k < AML_SC_NQUAL; k++) {
        mcp_jw_key(w, qual_names[k]);
        mcp_jw_object_begin(w);
        jw_num(w, "score", h->qual[k]);
        mcp_jw_key(w, "explanation");
        mcp_jw_string(w, why[k]);
        if (k == AML_SC_Q_DOB && h->q_date) {
            mcp_jw_key(w, "query");
            explain_date(w, h->q_date);
            mcp_jw_key(w, "entity");
            explain_date(w, h->e_date);
        }
        if (k == AML_SC_Q_COUNTRY && h->q_country) {
            char c[3];
            aml_sc_country_text(h->q_country, c);
            mcp_jw_key(w, "query");
            mcp_jw_string(w, c);
            aml_sc_country_text(h->e_country, c);
            mcp_jw_key(w, "entity");
            mcp_jw_string(w, c);
        }
        mcp_jw_object_end(w);
    }
}

void aml_sc_explain(const aml_sc_index *ix, const aml_sc_scratch *sc, const aml_sc_hit *h, mcp_jw *w)
{
    static const char *const what[AML_SC_NFEAT] = {
        "the normalised query and entity names have the same tokens (any order)",
        "Jaro-Winkler of aligned token pairs, weighted by their letters; unaligned query tokens count 0, unaligned entity tokens weigh 0.3",
        "Levenshtein similarity of the name spelled in the aligned order; entity tokens the query lacks count 0.3 a letter",
        "share of letters in aligned tokens whose Double Metaphone codes agree",
        "an identifier of the query equals one of the entity",
    };
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "matched_name");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "entity_name");
    mcp_jw_string(w, aml_sc_name_orig(ix, h->name));
    mcp_jw_key(w, "entity_normalized");
    mcp_jw_string(w, aml_sc_name_norm(ix, h->name));
    mcp_jw_key(w, "query_normalized");
    mcp_jw_string(w, sc->q.text);
    mcp_jw_key(w, "tokens");
    mcp_jw_array_begin(w);
    tokv e;
    split(aml_sc_name_norm(ix, h->name), &e);
    for (int i = 0; i < h->npairs; i++) {
        const aml_sc_pair *p = &h->pairs[i];
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "query");
        if (p->q >= 0)
            mcp_jw_stringn(w, sc->q.text + sc->q.off[p->q], sc->q.len[p->q]);
        else
            mcp_jw_null(w);
        mcp_jw_key(w, "entity");
        if (p->e >= 0 && p->e < e.ntok)
            mcp_jw_stringn(w, e.p[p->e], (size_t)e.n[p->e]);
        else
            mcp_jw_null(w);
        jw_num(w, "similarity", p->sim);
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
    for (int f = 0; f < AML_SC_NFEAT; f++) {
        mcp_jw_key(w, feat_names[f]);
        mcp_jw_object_begin(w);
        jw_num(w, "score", h->feat[f]);
        jw_num(w, "weight", feat_weight[f]);
        mcp_jw_key(w, "explanation");
        mcp_jw_string(w, what[f]);
        mcp_jw_object_end(w);
    }
    jw_num(w, "name_score", h->name_score);
    explain_qualifiers(h, w);
    mcp_jw_object_end(w);
}
