/*
 * The screening index's layout, shared by index.c (building) and score.c
 * (searching and scoring) only.
 */
#ifndef AML_SCREEN_INDEX_INTERNAL_H
#define AML_SCREEN_INDEX_INTERNAL_H

#include "screen/screen.h"

/* An entity: strings are arena offsets; attrs holds its dates (int32),
 * then country codes, then identifier arena offsets. */
typedef struct sc_ent {
    uint32_t id, caption;
    uint32_t name0, nnames; /* its names: names[name0 .. name0 + nnames) */
    uint32_t attr0;
    uint8_t ndates, nctry, nids, schema;
    char gender;
    uint16_t list;
    int64_t user;
} sc_ent;

/* A normalised name of an entity. */
typedef struct sc_nm {
    uint32_t ent;
    uint32_t norm, orig; /* arena offsets */
    uint32_t phon0;      /* primary, alternate code per token in phon[] */
    uint8_t ntok;
} sc_nm;

struct aml_sc_index {
    sc_ent *ents;
    size_t nents, ents_cap;
    sc_nm *names;
    size_t nnames, names_cap;
    char *arena;
    size_t arena_len, arena_cap;
    uint32_t *attrs;
    size_t nattrs, attrs_cap;
    uint32_t *phon;
    size_t nphon, phon_cap;
    uint64_t *pairs; /* (key << 32 | name) while adding */
    size_t npairs, pairs_cap;
    uint32_t *keys;  /* sorted distinct keys */
    uint32_t *koff;  /* postings of keys[i]: post[koff[i] .. koff[i + 1]) */
    uint32_t *post;
    size_t nkeys, npost;
    int built;
};

/* Key kinds and their weight in candidate generation (times the key's
 * inverse document frequency): a whole token says most, a phonetic code
 * less, so do its letters sorted (a swap of two letters keeps them),
 * one trigram of a token little (a token has several). An
 * identifier is decisive. */
#define SC_W_TOKEN 1.0f
#define SC_W_PHON 0.6f
#define SC_W_SORTED 0.6f
#define SC_W_GRAM 0.25f
#define SC_W_IDENT 50.0f
#define SC_MAX_KEYS 160

/* The most names a key of each kind may be on and still generate
 * candidates: a common token still says something, a common trigram or
 * phonetic code nothing, and reading its postings is most of a query's
 * cost on a large list. */
#define SC_DF_TOKEN 20000
#define SC_DF_PHON 5000
#define SC_DF_GRAM 2000

typedef struct sc_qkey {
    uint32_t key;
    float w;
    uint32_t max_df; /* SC_DF_* of its kind, or 0: no limit (identifiers) */
} sc_qkey;

uint32_t sc_key(char kind, const char *s, size_t n);
/** The distinct keys of a normalised name. */
int sc_name_keys(const aml_sc_name *nm, sc_qkey *keys, int max);
/** An identifier for comparing: letters upper case and digits only. */
void sc_ident_norm(const char *s, size_t n, char *out, size_t cap);
/** The postings of a key; 0 when absent. */
int sc_lookup(const aml_sc_index *ix, uint32_t key, const uint32_t **post, size_t *n);
double sc_idf(const aml_sc_index *ix, size_t df);

#endif /* AML_SCREEN_INDEX_INTERNAL_H */
