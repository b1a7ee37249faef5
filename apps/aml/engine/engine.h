/*
 * The typology engine: evaluates T01-T15 over a case's focus accounts and
 * review window, and renders the assessment as JSON.
 *
 * Deterministic by construction: the engine reads nothing but the store
 * (transactions, accounts, KYC, FX rates, jurisdiction lists, trade
 * documents), sorts every set it iterates by (booked_at, txn_no), bounds
 * every graph search with counted limits rather than time, and uses no
 * clock and no randomness. The same data and parameters give the same
 * bytes. The generator's ground-truth columns are never read.
 */
#ifndef AML_ENGINE_H
#define AML_ENGINE_H

#include "engine/catalog.h"
#include "store/store.h"

/* Finding status. */
#define AML_NOT_MATCHED 0
#define AML_MATCHED 1
#define AML_NOT_EVALUABLE 2

/* Evidence roles. */
#define AML_ROLE_TRIGGER 0
#define AML_ROLE_CONTEXT 1

/* Evidence kept per finding (the rest is counted in metrics). */
#define AML_MAX_EVIDENCE 200

/* One evidence transaction. */
typedef struct aml_evidence {
    int64_t at;   /* booked_at (sort key) */
    int64_t no;   /* txn_no */
    int64_t usd;  /* amount in USD cents */
    int role;     /* AML_ROLE_* */
} aml_evidence;

/* The result of one typology (over the best focus account). */
typedef struct aml_finding {
    int typ;              /* catalog index */
    int status;           /* AML_MATCHED, ... */
    int score;            /* 0-100 */
    char *explanation;    /* plain language (malloc) */
    char *metrics_json;   /* JSON object text (malloc) */
    char *missing_json;   /* JSON array of missing inputs, or NULL (malloc) */
    aml_evidence *ev;     /* ordered by (at, no) (malloc) */
    size_t nev;           /* evidence kept */
    int64_t focus_acct;   /* the account the finding is about */
    char variant[32];     /* T01/T08 variant, "" otherwise */
    char variants[128];   /* T08: every variant matched, over all focus accounts (comma list) */
    int64_t amount_usd;   /* sum of trigger evidence in USD cents */
    int64_t first_at, last_at; /* span of the trigger evidence */
} aml_finding;

/*
 * T15's screening of parties against the loaded lists: the process's
 * shared index of the store's current list versions, a search scratch and
 * a cache of answers per party name (sanctions.c). One per thread; a scan
 * batch keeps one for all its accounts, so a name is screened once.
 */
typedef struct aml_screener aml_screener;

/**
 * A screener for the store's current lists (none loaded: a screener that
 * finds T15 not evaluable). @return 0, or -1 on a store error or out of
 * memory (err).
 */
int aml_screener_new(aml_store *s, aml_screener **out, aml_err *err);
void aml_screener_free(aml_screener *sc);

/* What to assess. */
typedef struct aml_case_spec {
    const char *case_id;   /* for the assessment id */
    const int64_t *accts;  /* focus acct_nos, ascending */
    size_t naccts;
    int64_t from, to;      /* review window, seconds, inclusive */
    aml_screener *screener; /* T15's, or NULL: the run makes its own */
} aml_case_spec;

/* A whole assessment. */
typedef struct aml_assessment {
    aml_finding f[AML_NTYP]; /* by catalog index; only those in mask are set */
    unsigned mask;           /* typologies evaluated (bit per index) */
    int matched;             /* how many matched */
    int not_evaluable;       /* how many not evaluable */
    int case_score;          /* max matched score */
    const char *risk_level;  /* "low" | "medium" | "high" */
    const char *outcome;     /* typologies_matched | no_typology_matched | partial_not_evaluable */
    char params_sha[65];     /* effective parameters */
    char data_sha[65];       /* transactions read */
    char assessment_id[32];  /* "asm_" + 24 hex, from case, kind, mask, params, data */
    aml_params params;       /* the parameters used */
    int64_t edges_read;      /* transactions read in total */
} aml_assessment;

/**
 * Runs the typologies in `mask` over the case. `kind` ("case" or
 * "typology") enters the assessment id; "scan" is the monitoring scan's
 * first pass: only each finding's status, score, variant and evidence are
 * built (no metrics, explanations or data digest), since every account
 * that matched is assessed again in full within its case. Caller holds the
 * store lock.
 * @return 0, or -1 on a store error (err says which).
 */
int aml_engine_run(aml_store *s, const aml_case_spec *cs, const aml_params *p, unsigned mask, const char *kind,
                   aml_assessment *out, aml_err *err);

/*
 * The reference data every run reads first (jurisdiction lists, the
 * accounts in listed countries, FX rates, store flags), loaded once for
 * many runs: the scan evaluates a batch of accounts over one context
 * (on PostgreSQL, six round trips per account fewer). Results are those of
 * aml_engine_run as long as that data does not change meanwhile. Read-only
 * once loaded; one store at a time, like the runs.
 */
typedef struct aml_engine_ctx aml_engine_ctx;
/** Loads the context from the store; 0, or -1 with err. */
int aml_engine_ctx_load(aml_store *s, aml_engine_ctx **out, aml_err *err);
/** Frees a context; NULL is a no-op. */
void aml_engine_ctx_free(aml_engine_ctx *c);
/** aml_engine_run over a loaded context (NULL: load one for this run). */
int aml_engine_run_ctx(aml_store *s, const aml_engine_ctx *ctx, const aml_case_spec *cs, const aml_params *p,
                       unsigned mask, const char *kind, aml_assessment *out, aml_err *err);

/** Frees what a run allocated; safe on a zeroed or half-filled assessment. */
void aml_assessment_free(aml_assessment *a);

/** "matched" / "not_matched" / "not_evaluable". */
const char *aml_status_name(int status);

/** Risk level of a case score: < 40 low, 40-69 medium, >= 70 high. */
const char *aml_risk_level(int score);

/* One evidence transaction as the JSON shows it (aml_evidence_write). */
typedef struct aml_ev_row {
    int64_t txn_no;       /* the key */
    int64_t booked_at;    /* seconds */
    int64_t amount_minor; /* in its currency */
    int64_t usd_minor;    /* amount_base_minor */
    int64_t from_acct;    /* 0 when none */
    int64_t to_acct;      /* 0 when none */
    const char *txt[7];   /* txn_ref, currency, channel, from and to account ids, location_id, time_precision:
                           * each NULL when NULL; they point into mem */
    char *mem;            /* the texts (malloc), or NULL when they belong to a statement */
} aml_ev_row;

/*
 * What writing an assessment reads besides the assessment (its evidence
 * transactions with their accounts' ids, and the ids of the focus
 * accounts), read for the whole assessment at once: on PostgreSQL one
 * statement each instead of one round trip per evidence transaction and
 * per finding. On SQLite (no round trips) nothing is read ahead, and each
 * row is read when written, as before. Lives for one write; owned by its
 * caller.
 */
typedef struct aml_asm_rows {
    aml_acct_map ids; /* account ids (AML_ACCT_ID) */
    aml_ev_row *ev;   /* evidence rows, ascending by txn_no (malloc), or NULL */
    size_t nev;       /* rows in ev */
} aml_asm_rows;

/**
 * Reads ahead the rows of assessment a and of the focus accounts accts[0,
 * n) (PostgreSQL; on SQLite only initialises). A failure is not an error
 * of the write: rows not read ahead are read when written. Always call
 * aml_asm_rows_cleanup after.
 */
void aml_asm_rows_load(aml_store *s, aml_asm_rows *r, const aml_assessment *a, const int64_t *accts, size_t n);
/** Frees what aml_asm_rows_load read. */
void aml_asm_rows_cleanup(aml_asm_rows *r);

/**
 * Writes one evidence transaction object (txnId, role, bookedAt, amount,
 * currency, amountUsdMinor, channel, direction relative to `focus`,
 * accountId, counterpartyAccountId, locationId), from `rows` when they hold
 * it (may be NULL), else read now. @return 0, -1 if gone.
 */
int aml_evidence_write(aml_store *s, const aml_asm_rows *rows, mcp_jw *w, int64_t txn_no, int role, int64_t focus);

/** Public transaction id of a txn_no: its source id, or "#<txn_no>". */
void aml_txn_id(aml_store *s, int64_t txn_no, char *out, size_t n);

/** Writes a finding object (the shape of aml-domain.md section 5); rows as for aml_evidence_write. */
void aml_finding_write(aml_store *s, aml_asm_rows *rows, mcp_jw *w, const aml_assessment *a, int typ);

#endif /* AML_ENGINE_H */
