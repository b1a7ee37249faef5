/*
 * The typology catalog: the 14 typologies of aml-domain.md section 1 and
 * T15 sanctions exposure (docs/aml.md), with
 * their parameters (defaults, bounds and where each default comes from),
 * the FinCEN SAR category each maps to, and their sources. listTypologies,
 * the parameter-override schema and docs/aml.md are all generated from or
 * checked against this one table.
 */
#ifndef AML_CATALOG_H
#define AML_CATALOG_H

#include "util/util.h"

#define AML_NTYP 15
#define AML_MAX_PARAMS 16
#define AML_CATALOG_VERSION "2026.1"
#define AML_ENGINE_VERSION "1.0.0"

/* What kind of number a parameter is (decides its JSON type and unit). */
typedef enum aml_param_kind {
    AML_P_COUNT, /* integer count */
    AML_P_MONEY, /* integer USD cents (minor units of the base currency) */
    AML_P_RATIO, /* real number */
    AML_P_DAYS,  /* integer days */
    AML_P_HOURS  /* integer hours */
} aml_param_kind;

typedef struct aml_param_def {
    const char *name;        /* camelCase key */
    aml_param_kind kind;     /* unit */
    double def, min, max;    /* default and accepted range */
    const char *origin;      /* REG | GUID | IND | DS | our default | engine bound */
    const char *description; /* one line, with the source when there is one */
} aml_param_def;

typedef struct aml_source {
    const char *title; /* what it is */
    const char *url;   /* where */
} aml_source;

typedef struct aml_typology_def {
    const char *id;                  /* "T01_STRUCTURING" */
    const char *code;                /* "T01" */
    const char *version;             /* definition version */
    const char *name;                /* display name */
    const char *summary;             /* one paragraph */
    const char *why;                 /* why it is suspicious (used in SAR narratives) */
    const char *how;                 /* modus operandi in one sentence (SAR narratives) */
    const char *required_inputs[6];  /* NULL-terminated */
    const char *optional_inputs[6];  /* NULL-terminated */
    aml_param_def params[AML_MAX_PARAMS];
    size_t nparams;
    int type_code;                   /* FinCEN SAR Part II type */
    const char *type;
    int subtype_code;                /* FinCEN SAR Part II subtype */
    const char *subtype;
    const char *instrument;          /* SAR item 46 wording for the usual instrument */
    aml_source sources[4];           /* title NULL terminates */
    const char *dataset_labels;      /* AMLSim / AMLworld / SAML-D labels */
} aml_typology_def;

/* Typology indexes (catalog order). */
enum {
    AML_T01, AML_T02, AML_T03, AML_T04, AML_T05, AML_T06, AML_T07,
    AML_T08, AML_T09, AML_T10, AML_T11, AML_T12, AML_T13, AML_T14,
    AML_T15
};

/* Parameter indexes, per typology, in the order of the catalog. */
enum { P01_CTR, P01_BAND, P01_WINDOW, P01_MIN_NEAR, P01_SAME_DAY_MIN };
enum { P02_CTR, P02_WINDOW, P02_MIN_DEPOSITS, P02_MIN_CONDUCTORS, P02_MIN_OOR_LOCATIONS, P02_OUT_HOURS,
       P02_MIN_OUT_RATIO };
enum { P03_WINDOW, P03_MIN_PARTIES, P03_MIN_TOTAL, P03_NEW_LOOKBACK, P03_SIMILAR_CV, P03_FORWARD_DAYS,
       P03_FORWARD_RATIO, P03_MIN_TRANSFER, P03_WARMUP };
enum { P05_MIN_CREDIT, P05_EXIT_HOURS, P05_WINDOW, P05_MIN_MATCHED, P05_RATIO_LOW, P05_RATIO_HIGH,
       P05_MAX_BALANCE_CHANGE, P05_WARMUP, P05_KNOWN_DAYS };
enum { P06_MAX_AGE, P06_EXIT_HOURS, P06_FWD_LOW, P06_FWD_HIGH, P06_MIN_INFLOW, P06_MIN_TOTAL };
enum { P07_MAX_HOPS, P07_WINDOW, P07_MIN_RETENTION, P07_MAX_GROWTH, P07_MIN_AMOUNT, P07_MAX_EXPANSIONS,
       P07_MAX_EDGES };
enum { P08_WINDOW, P08_MIN_INTERMEDIATES, P08_FWD_RATIO, P08_FWD_HOURS, P08_CHAIN_HOPS, P08_CHAIN_RATIO,
       P08_CHAIN_HOURS, P08_MIN_BRANCHES, P08_HUB_MAX_IN, P08_MIN_EDGE, P08_MAX_EXPANSIONS, P08_MAX_EDGES,
       P08_NEW_LOOKBACK, P08_WARMUP };
enum { P09_WINDOW, P09_MIN_AGGREGATE, P09_CFA_SCORE, P09_IM_SCORE };
enum { P10_DORMANT_DAYS, P10_REACT_DAYS, P10_MIN_TOTAL, P10_PRIOR_MULTIPLE };
enum { P11_PERIOD, P11_CASH_MULT, P11_VOLUME_MULT, P11_MIN_AMOUNT, P11_SPIKE_MULT, P11_BASELINE_DAYS,
       P11_SPIKE_DAYS, P11_MIN_HISTORY, P11_CASH_SHARE };
enum { P12_WINDOW, P12_MIN_AMOUNT, P12_ROUND_UNIT, P12_MIN_COUNT, P12_MIN_TOTAL };
enum { P13_WINDOW, P13_KNOWN_LOOKBACK, P13_MIN_PAYERS, P13_MIN_SHARE, P13_MIN_CREDIT, P13_WARMUP, P13_MIN_TOTAL };
enum { P14_MISMATCH };
enum { P15_THRESHOLD, P15_MAX_PARTIES };

#define AML_ALL_TYPOLOGIES ((1u << AML_NTYP) - 1)
/* The typologies the generator injects: T15 depends on the screening lists
 * a store has loaded, which a generated bank has not. */
#define AML_GEN_TYPOLOGIES ((1u << AML_T15) - 1)
#define AML_GEN_NTYP AML_T15 /* how many: T01-T14 */

/** The AML_NTYP definitions, in order. */
const aml_typology_def *aml_catalog(void);

/** Index of a typology by "T01" or "T01_STRUCTURING"; -1 when unknown. */
int aml_typology_index(const char *id, size_t n);

/* Effective parameters of every typology. */
typedef struct aml_params {
    double v[AML_NTYP][AML_MAX_PARAMS]; /* values, by the P* indexes */
} aml_params;

void aml_params_default(aml_params *p);

/**
 * Applies overrides {"T01_STRUCTURING": {"windowDays": 30}, "T03": {...}}.
 * Unknown typologies or parameters, wrong types and out-of-range values are
 * errors naming the offender. @return 0 or -1.
 */
int aml_params_apply(aml_params *p, const mcp_json *overrides, aml_err *err);

/** Writes the parameters of one typology as a JSON object. */
void aml_params_write(mcp_jw *w, const aml_params *p, int typ);

/** SHA-256 over every typology's effective parameters (canonical JSON). */
void aml_params_sha256(const aml_params *p, char *out);

/** Writes the listTypologies structured result. */
void aml_catalog_write(mcp_jw *w);

/** Writes the SAR category object of a typology. */
void aml_sar_category_write(mcp_jw *w, int typ, int with_labels);

/**
 * Writes the JSON Schema of the parameter-overrides object (one property
 * per typology id and code, each an object of its typed, bounded params).
 */
void aml_params_schema_write(mcp_jw *w);

#endif /* AML_CATALOG_H */
