/*
 * Sanctions and PEP screening: name normalisation, an in-memory index for
 * candidate generation and explainable per-feature scoring (docs/aml.md,
 * "Screening"). The matching half (this header down to aml_sc_search) uses
 * only util and ICU; lists.h keeps the lists in the store.
 *
 * Two stages, as in yente: a query's normalised name is cut into keys
 * (whole tokens, Double Metaphone codes, character trigrams); the index
 * maps each key to the names holding it, and the names sharing the most
 * informative keys (inverse document frequency) become candidates, at most
 * AML_SC_CANDIDATES of them. Only candidates are scored: a query never
 * compares against the whole list.
 *
 * Thread-safety: an index is read-only once built (aml_sc_index_build)
 * and may be searched from several threads at once, each with its own
 * aml_sc_scratch. Adding entities is single-threaded.
 */
#ifndef AML_SCREEN_H
#define AML_SCREEN_H

#include "util/util.h"

#include <stdint.h>

/* ---- normalisation --------------------------------------------------- */

#define AML_SC_MAX_TOKENS 12 /* tokens of a name kept for matching */
#define AML_SC_MAX_NAME 512  /* bytes of a name read; longer names are cut */

/* A normalised name: lower-case ASCII tokens, name order resolved. */
typedef struct aml_sc_name {
    char text[AML_SC_MAX_NAME];      /* the tokens joined by single spaces */
    uint16_t off[AML_SC_MAX_TOKENS]; /* where each token starts in text */
    uint8_t len[AML_SC_MAX_TOKENS];  /* token lengths */
    int ntok;                        /* tokens */
    int dropped;                     /* honorific / legal-form words removed */
    int script;                      /* 1 when the input was not Latin script (transliterated) */
} aml_sc_name;

/**
 * Normalises a name: transliteration of any script to Latin ASCII (ICU
 * "Any-Latin; Latin-ASCII"), lower case, accents and marks removed,
 * apostrophes dropped, other punctuation a separator, "LAST, First"
 * turned to "First LAST", honorifics and legal-form words removed (unless
 * nothing else is left). `n` bytes of `s`.
 */
void aml_sc_normalize(const char *s, size_t n, aml_sc_name *out);

/** Double Metaphone of one lower-case ASCII token: primary and alternate
 *  codes of up to 4 letters packed into 32 bits (0 when empty). */
void aml_sc_metaphone(const char *tok, size_t n, uint32_t *primary, uint32_t *alternate);
/** Writes a packed code as text (out >= 5 bytes). */
void aml_sc_code_text(uint32_t code, char *out);

/** Jaro-Winkler similarity in [0, 1] (prefix scale 0.1, up to 4 letters). */
double aml_sc_jaro_winkler(const char *a, size_t na, const char *b, size_t nb);
/** Levenshtein distance with adjacent transpositions as one edit (optimal
 *  string alignment; strings up to 255 bytes, longer are cut). */
int aml_sc_levenshtein(const char *a, size_t na, const char *b, size_t nb);

/**
 * A birth date as y*10000 + m*100 + d; month and day 0 when unknown.
 * Reads YYYY, YYYY-MM, YYYY-MM-DD and unpadded or impossible parts
 * ("1969-7-16", "1974-01-32": the part that cannot be a date is dropped,
 * keeping the year). @return 0 for nothing readable.
 */
int32_t aml_sc_parse_date(const char *s, size_t n);

/**
 * An ISO 3166-1 alpha-2 code packed in 16 bits for a country code or an
 * English country name ("af", "IR", "United Arab Emirates", "Russia",
 * "Ivory Coast"); 0 when unknown. Names come from ICU's English display
 * names plus a few common short forms.
 */
uint16_t aml_sc_country(const char *s, size_t n);
/** The code as two lower-case letters (out >= 3 bytes). */
void aml_sc_country_text(uint16_t code, char *out);

/* Entity types (FollowTheMoney schemata screened). */
typedef enum aml_sc_schema {
    AML_SC_ANY = 0,
    AML_SC_PERSON,
    AML_SC_ORGANIZATION,
    AML_SC_COMPANY,
    AML_SC_VESSEL,
    AML_SC_LEGALENTITY,
} aml_sc_schema;
/** The schema named s, or -1 when it is not one we screen. */
int aml_sc_schema_parse(const char *s);
const char *aml_sc_schema_name(int schema);

/* ---- the index ------------------------------------------------------- */

/* An entity to add: every name and alias, dates, countries, identifiers. */
typedef struct aml_sc_entity {
    const char *id;                /* unique within the index */
    const char *caption;           /* display name */
    int schema;                    /* aml_sc_schema */
    const char *const *names;      /* names and aliases */
    size_t nnames;
    const char *const *dates;      /* birth (or incorporation) dates */
    size_t ndates;
    const char *const *countries;  /* nationality / country / jurisdiction */
    size_t ncountries;
    const char *const *ids;        /* identifiers (passport, registration, IMO ...) */
    size_t nids;
    char gender;                   /* 'm', 'f' or 0 */
    uint16_t list;                 /* the caller's list number (filtering) */
    int64_t user;                  /* the caller's handle (a store row) */
} aml_sc_entity;

typedef struct aml_sc_index aml_sc_index;

aml_sc_index *aml_sc_index_new(void);
void aml_sc_index_free(aml_sc_index *ix);
/** Adds an entity (before build). @return 0, or -1 on OOM or after build. */
int aml_sc_index_add(aml_sc_index *ix, const aml_sc_entity *e);
/** Builds the key postings; the index is read-only afterwards. */
int aml_sc_index_build(aml_sc_index *ix);
size_t aml_sc_index_entities(const aml_sc_index *ix);
size_t aml_sc_index_names(const aml_sc_index *ix);
/** Bytes the built index holds (entities, names, postings). */
size_t aml_sc_index_memory(const aml_sc_index *ix);
/** An entity's id, caption, schema and handle. */
const char *aml_sc_entity_id(const aml_sc_index *ix, uint32_t ent);
const char *aml_sc_entity_caption(const aml_sc_index *ix, uint32_t ent);
int aml_sc_entity_schema(const aml_sc_index *ix, uint32_t ent);
int64_t aml_sc_entity_user(const aml_sc_index *ix, uint32_t ent);
uint16_t aml_sc_entity_list(const aml_sc_index *ix, uint32_t ent);

/* ---- search ---------------------------------------------------------- */

#define AML_SC_CANDIDATES 64   /* names scored per query at most */
#define AML_SC_DEFAULT_THRESHOLD 0.70
#define AML_SC_MAX_IDS 8

typedef struct aml_sc_query {
    const char *name;          /* required */
    int schema;                /* aml_sc_schema; AML_SC_ANY for any */
    const char *birth_date;    /* or NULL */
    const char *country;       /* nationality or country, code or English name; or NULL */
    char gender;               /* 'm', 'f' or 0 */
    const char *const *ids;    /* identifiers, or NULL */
    size_t nids;
    double threshold;          /* results below are not returned */
    const uint16_t *lists;     /* only these list numbers, or NULL for all */
    size_t nlists;
} aml_sc_query;

/* Features and qualifiers: their names in explanations. */
enum {
    AML_SC_F_LITERAL,   /* name_literal_match */
    AML_SC_F_JW,        /* name_jaro_winkler */
    AML_SC_F_LEV,       /* name_levenshtein */
    AML_SC_F_PHONETIC,  /* name_phonetic_match */
    AML_SC_F_IDENT,     /* identifier_match */
    AML_SC_NFEAT
};
enum {
    AML_SC_Q_DOB,       /* birth date agrees or not */
    AML_SC_Q_COUNTRY,   /* nationality / country disjoint */
    AML_SC_Q_GENDER,    /* gender differs */
    AML_SC_Q_SCHEMA,    /* entity type differs (LegalEntity vs Vessel) */
    AML_SC_NQUAL
};
/** "name_literal_match", ... and "dob_mismatch", ... */
const char *aml_sc_feature_name(int f);
const char *aml_sc_qualifier_name(int q);
/** The weight of a feature (the name score is the best weighted feature). */
double aml_sc_feature_weight(int f);

/* One aligned token pair of the best name. */
typedef struct aml_sc_pair {
    int8_t q, e;     /* token of the query, token of the entity name (-1: unmatched) */
    float sim;       /* Jaro-Winkler of the pair */
} aml_sc_pair;

typedef struct aml_sc_hit {
    uint32_t ent;                    /* entity number in the index */
    double score;                    /* final, in [0, 1] */
    double name_score;               /* best weighted name feature */
    double feat[AML_SC_NFEAT];       /* raw feature scores in [0, 1] */
    double qual[AML_SC_NQUAL];       /* qualifier adjustments (<= 0, or small boosts) */
    uint32_t name;                   /* the entity's name that matched best */
    aml_sc_pair pairs[2 * AML_SC_MAX_TOKENS];
    int npairs;
    int32_t q_date, e_date;          /* dates compared (0 when not) */
    uint16_t q_country, e_country;   /* countries compared (0 when not) */
} aml_sc_hit;

/* Per-thread search memory (sized for one index). */
typedef struct aml_sc_scratch aml_sc_scratch;
aml_sc_scratch *aml_sc_scratch_new(const aml_sc_index *ix);
void aml_sc_scratch_free(aml_sc_scratch *sc);

/**
 * Screens one query: candidates from the index, each scored, best name
 * per entity, sorted by score (then id). Fills at most `max` hits at or
 * above q->threshold. @return the number of hits at or above the
 * threshold (may exceed max), or -1 on a bad query (empty name).
 */
int aml_sc_search(const aml_sc_index *ix, aml_sc_scratch *sc, const aml_sc_query *q, aml_sc_hit *out, int max);

/** The normalised text of an entity name and the original as loaded. */
const char *aml_sc_name_norm(const aml_sc_index *ix, uint32_t name);
const char *aml_sc_name_orig(const aml_sc_index *ix, uint32_t name);
/** The normalised query name a search compared (valid until the next search on sc). */
const aml_sc_name *aml_sc_scratch_query(const aml_sc_scratch *sc);

/**
 * Writes a hit's explanations as a JSON object: the matched name, the
 * token pairs, each feature (score, weight, weighted) and each qualifier
 * (adjustment and why).
 */
void aml_sc_explain(const aml_sc_index *ix, const aml_sc_scratch *sc, const aml_sc_hit *h, mcp_jw *w);

#endif /* AML_SCREEN_H */
