/*
 * The screening index: entities and their normalised names in flat
 * arrays, and key postings (token, phonetic code, character trigram,
 * identifier -> name numbers) in one sorted array for candidate
 * generation. Scoring lives in score.c.
 */
#include "screen/index_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable arrays -------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int64_t arena_put(aml_sc_index *ix, const char *s, size_t n)
{
    if (ix->arena_len + n + 1 > UINT32_MAX)
        return -1;
    if (grow((void **)&ix->arena, &ix->arena_cap, ix->arena_len + n + 1, 1))
        return -1;
    uint32_t off = (uint32_t)ix->arena_len;
    if (n)
        memcpy(ix->arena + off, s, n);
    ix->arena[off + n] = 0;
    ix->arena_len += n + 1;
    return off;
}

static int attr_push(aml_sc_index *ix, uint32_t v)
{
    if (grow((void **)&ix->attrs, &ix->attrs_cap, ix->nattrs + 1, sizeof *ix->attrs))
        return -1;
    ix->attrs[ix->nattrs++] = v;
    return 0;
}

/* ---- keys ------------------------------------------------------------- */

uint32_t sc_key(char kind, const char *s, size_t n)
{
    uint32_t h = 2166136261u ^ (unsigned char)kind;
    h *= 16777619u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

int sc_name_keys(const aml_sc_name *nm, sc_qkey *keys, int max)
{
    int n = 0;
    for (int t = 0; t < nm->ntok && n < max; t++) {
        const char *tok = nm->text + nm->off[t];
        size_t len = nm->len[t];
        keys[n++] = (sc_qkey){sc_key('T', tok, len), SC_W_TOKEN, SC_DF_TOKEN};
        uint32_t p, a;
        aml_sc_metaphone(tok, len, &p, &a);
        if (p && n < max)
            keys[n++] = (sc_qkey){sc_key('P', (const char *)&p, sizeof p), SC_W_PHON, SC_DF_PHON};
        if (a && a != p && n < max)
            keys[n++] = (sc_qkey){sc_key('P', (const char *)&a, sizeof a), SC_W_PHON, SC_DF_PHON};
        if (len >= 3 && len < 64 && n < max) { /* letters in order: catches swapped letters */
            char sorted[64];
            memcpy(sorted, tok, len);
            for (size_t i = 1; i < len; i++)
                for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                    char c = sorted[j];
                    sorted[j] = sorted[j - 1];
                    sorted[j - 1] = c;
                }
            keys[n++] = (sc_qkey){sc_key('S', sorted, len), SC_W_SORTED, SC_DF_PHON};
        }
        for (size_t i = 0; len >= 4 && i + 3 <= len && n < max; i++)
            keys[n++] = (sc_qkey){sc_key('G', tok + i, 3), SC_W_GRAM, SC_DF_GRAM};
    }
    /* The same key twice in one name counts once. */
    int m = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < m && !dup; j++)
            dup = keys[j].key == keys[i].key;
        if (!dup)
            keys[m++] = keys[i];
    }
    return m;
}

void sc_ident_norm(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'a' && c <= 'z')
            out[k++] = (char)(c - 'a' + 'A');
        else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            out[k++] = (char)c;
    }
    out[k] = 0;
}

static int pair_push(aml_sc_index *ix, uint32_t key, uint32_t name)
{
    if (grow((void **)&ix->pairs, &ix->pairs_cap, ix->npairs + 1, sizeof *ix->pairs))
        return -1;
    ix->pairs[ix->npairs++] = (uint64_t)key << 32 | name;
    return 0;
}

/* ---- adding ----------------------------------------------------------- */

aml_sc_index *aml_sc_index_new(void)
{
    return calloc(1, sizeof(aml_sc_index));
}

void aml_sc_index_free(aml_sc_index *ix)
{
    if (!ix)
        return;
    free(ix->ents);
    free(ix->names);
    free(ix->arena);
    free(ix->attrs);
    free(ix->phon);
    free(ix->pairs);
    free(ix->keys);
    free(ix->koff);
    free(ix->post);
    free(ix);
}

static int add_name(aml_sc_index *ix, uint32_t ent, const char *orig)
{
    aml_sc_name nm;
    aml_sc_normalize(orig, strlen(orig), &nm);
    if (!nm.ntok)
        return 0;
    /* Aliases that normalise alike are one name. */
    const sc_ent *e = &ix->ents[ent];
    for (uint32_t k = e->name0; k < ix->nnames; k++)
        if (!strcmp(ix->arena + ix->names[k].norm, nm.text))
            return 0;
    if (ix->nnames >= UINT32_MAX - 1 ||
        grow((void **)&ix->names, &ix->names_cap, ix->nnames + 1, sizeof *ix->names) ||
        grow((void **)&ix->phon, &ix->phon_cap, ix->nphon + 2 * (size_t)nm.ntok, sizeof *ix->phon))
        return -1;
    int64_t norm = arena_put(ix, nm.text, strlen(nm.text));
    int64_t o = arena_put(ix, orig, strlen(orig) < AML_SC_MAX_NAME ? strlen(orig) : AML_SC_MAX_NAME);
    if (norm < 0 || o < 0)
        return -1;
    uint32_t id = (uint32_t)ix->nnames;
    ix->names[ix->nnames++] = (sc_nm){ent, (uint32_t)norm, (uint32_t)o, (uint32_t)ix->nphon, (uint8_t)nm.ntok};
    for (int t = 0; t < nm.ntok; t++) {
        aml_sc_metaphone(nm.text + nm.off[t], nm.len[t], &ix->phon[ix->nphon], &ix->phon[ix->nphon + 1]);
        ix->nphon += 2;
    }
    sc_qkey keys[SC_MAX_KEYS];
    int nk = sc_name_keys(&nm, keys, SC_MAX_KEYS);
    for (int k = 0; k < nk; k++)
        if (pair_push(ix, keys[k].key, id))
            return -1;
    return 0;
}

static int add_attrs(aml_sc_index *ix, sc_ent *e, const aml_sc_entity *in)
{
    e->attr0 = (uint32_t)ix->nattrs;
    for (size_t i = 0; i < in->ndates && e->ndates < 255; i++) {
        int32_t d = aml_sc_parse_date(in->dates[i], strlen(in->dates[i]));
        if (d && attr_push(ix, (uint32_t)d) == 0)
            e->ndates++;
    }
    for (size_t i = 0; i < in->ncountries && e->nctry < 255; i++) {
        uint16_t c = aml_sc_country(in->countries[i], strlen(in->countries[i]));
        if (c && attr_push(ix, c) == 0)
            e->nctry++;
    }
    for (size_t i = 0; i < in->nids && e->nids < 255; i++) {
        char buf[128];
        sc_ident_norm(in->ids[i], strlen(in->ids[i]), buf, sizeof buf);
        if (strlen(buf) < 4)
            continue; /* too short to identify anything */
        int64_t off = arena_put(ix, buf, strlen(buf));
        if (off < 0 || attr_push(ix, (uint32_t)off))
            return -1;
        e->nids++;
    }
    return 0;
}

int aml_sc_index_add(aml_sc_index *ix, const aml_sc_entity *in)
{
    if (ix->built || !in->id || ix->nents >= UINT32_MAX - 1)
        return -1;
    if (grow((void **)&ix->ents, &ix->ents_cap, ix->nents + 1, sizeof *ix->ents))
        return -1;
    uint32_t ent = (uint32_t)ix->nents;
    sc_ent *e = &ix->ents[ent];
    memset(e, 0, sizeof *e);
    int64_t id = arena_put(ix, in->id, strlen(in->id));
    const char *cap = in->caption ? in->caption : (in->nnames ? in->names[0] : in->id);
    int64_t c = arena_put(ix, cap, strlen(cap));
    if (id < 0 || c < 0)
        return -1;
    e->id = (uint32_t)id;
    e->caption = (uint32_t)c;
    e->schema = (uint8_t)(in->schema > 0 ? in->schema : AML_SC_LEGALENTITY);
    e->gender = in->gender;
    e->list = in->list;
    e->user = in->user;
    e->name0 = (uint32_t)ix->nnames;
    ix->nents++;
    if (add_attrs(ix, e, in))
        return -1;
    for (size_t i = 0; i < in->nnames; i++)
        if (add_name(ix, ent, in->names[i]))
            return -1;
    e = &ix->ents[ent];
    e->nnames = (uint32_t)(ix->nnames - e->name0);
    /* Identifiers are keys too, pointing at the entity's first name. */
    for (uint32_t i = 0; i < e->nids && e->nnames; i++) {
        const char *idn = ix->arena + ix->attrs[e->attr0 + e->ndates + e->nctry + i];
        if (pair_push(ix, sc_key('I', idn, strlen(idn)), e->name0))
            return -1;
    }
    return 0;
}

/* LSD radix sort of the (key << 32 | name) pairs, 16 bits a pass. */
static int radix_sort(uint64_t *a, size_t n)
{
    uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!cnt) {
        free(tmp);
        return -1;
    }
    for (int pass = 0; pass < 4; pass++) {
        int sh = pass * 16;
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(a[i] >> sh) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[(a[i] >> sh) & 0xffff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
    free(cnt);
    free(tmp);
    return 0;
}

int aml_sc_index_build(aml_sc_index *ix)
{
    if (ix->built)
        return 0;
    if (radix_sort(ix->pairs, ix->npairs))
        return -1;
    size_t nk = 0, np = 0;
    for (size_t i = 0; i < ix->npairs; i++) {
        if (i && ix->pairs[i] == ix->pairs[i - 1])
            continue;
        np++;
        if (!i || (ix->pairs[i] >> 32) != (ix->pairs[i - 1] >> 32))
            nk++;
    }
    ix->keys = malloc((nk ? nk : 1) * sizeof *ix->keys);
    ix->koff = malloc((nk + 1) * sizeof *ix->koff);
    ix->post = malloc((np ? np : 1) * sizeof *ix->post);
    if (!ix->keys || !ix->koff || !ix->post)
        return -1;
    size_t k = 0, p = 0;
    for (size_t i = 0; i < ix->npairs; i++) {
        if (i && ix->pairs[i] == ix->pairs[i - 1])
            continue;
        uint32_t key = (uint32_t)(ix->pairs[i] >> 32);
        if (!k || ix->keys[k - 1] != key) {
            ix->keys[k] = key;
            ix->koff[k++] = (uint32_t)p;
        }
        ix->post[p++] = (uint32_t)ix->pairs[i];
    }
    ix->koff[k] = (uint32_t)p;
    ix->nkeys = nk;
    ix->npost = np;
    free(ix->pairs);
    ix->pairs = NULL;
    ix->npairs = ix->pairs_cap = 0;
    ix->built = 1;
    return 0;
}

int sc_lookup(const aml_sc_index *ix, uint32_t key, const uint32_t **post, size_t *n)
{
    size_t lo = 0, hi = ix->nkeys;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ix->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= ix->nkeys || ix->keys[lo] != key)
        return 0;
    *post = ix->post + ix->koff[lo];
    *n = ix->koff[lo + 1] - ix->koff[lo];
    return 1;
}

/* ---- accessors -------------------------------------------------------- */

size_t aml_sc_index_entities(const aml_sc_index *ix)
{
    return ix->nents;
}

size_t aml_sc_index_names(const aml_sc_index *ix)
{
    return ix->nnames;
}

size_t aml_sc_index_memory(const aml_sc_index *ix)
{
    return ix->ents_cap * sizeof *ix->ents + ix->names_cap * sizeof *ix->names + ix->arena_cap +
           ix->attrs_cap * sizeof *ix->attrs + ix->phon_cap * sizeof *ix->phon + ix->pairs_cap * sizeof *ix->pairs +
           ix->nkeys * (sizeof *ix->keys + sizeof *ix->koff) + ix->npost * sizeof *ix->post;
}

const char *aml_sc_entity_id(const aml_sc_index *ix, uint32_t ent)
{
    return ix->arena + ix->ents[ent].id;
}

const char *aml_sc_entity_caption(const aml_sc_index *ix, uint32_t ent)
{
    return ix->arena + ix->ents[ent].caption;
}

int aml_sc_entity_schema(const aml_sc_index *ix, uint32_t ent)
{
    return ix->ents[ent].schema;
}

int64_t aml_sc_entity_user(const aml_sc_index *ix, uint32_t ent)
{
    return ix->ents[ent].user;
}

uint16_t aml_sc_entity_list(const aml_sc_index *ix, uint32_t ent)
{
    return ix->ents[ent].list;
}

const char *aml_sc_name_norm(const aml_sc_index *ix, uint32_t name)
{
    return ix->arena + ix->names[name].norm;
}

const char *aml_sc_name_orig(const aml_sc_index *ix, uint32_t name)
{
    return ix->arena + ix->names[name].orig;
}

double sc_idf(const aml_sc_index *ix, size_t df)
{
    return log(1.0 + (double)ix->nnames / (double)(df ? df : 1));
}
