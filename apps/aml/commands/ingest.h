/*
 * Ingest: writing records into the case store, and the importers built on
 * it (the project's native CSV, IBM AMLworld, IBM AMLSim).
 *
 * An ingest is one SQLite transaction: aml_ingest_commit() makes all of it
 * visible, aml_ingest_abort() (or any failure) leaves the store exactly as
 * it was. Account ids are resolved to acct_no through an in-memory map
 * loaded at the start, so a row costs one INSERT.
 */
#ifndef AML_INGEST_H
#define AML_INGEST_H

#include "store/store.h"
#include "tools/tools.h"

typedef struct aml_ingest aml_ingest;

/* Optional integer: `has` says whether `v` is set. */
typedef struct aml_opt_int {
    int has;
    int64_t v;
} aml_opt_int;

typedef struct aml_customer_rec {
    const char *customer_id, *customer_type, *full_name, *first_name, *last_name, *date_of_birth, *country,
        *occupation, *naics_code, *region, *city, *risk_rating, *onboarded_at, *source_dataset;
    int pep, cash_intensive;
    aml_opt_int expected_monthly_cash, expected_monthly_volume, declared_annual_income;
} aml_customer_rec;

typedef struct aml_account_rec {
    const char *account_id, *bank_id, *institution_name, *account_type, *currency, *status, *opened_at,
        *home_branch_id, *home_region, *country, *holder_name;
    int is_internal;
    aml_opt_int opening_deposit;
} aml_account_rec;

typedef struct aml_txn_rec {
    const char *txn_ref;       /* source id, or NULL */
    int64_t booked_at;         /* seconds */
    int precision;             /* AML_PREC_* */
    const char *from_account;  /* account id, NULL for cash in */
    const char *to_account;    /* account id, NULL for cash out */
    int64_t from_no, to_no;    /* acct_no when already known (importers), else 0: resolved from the ids */
    int64_t amount_minor;      /* in `currency` */
    const char *currency;      /* ISO code */
    aml_opt_int amount_received;
    const char *currency_received;
    const char *channel;       /* cash wire ach check card internal crypto other */
    const char *txn_type, *conductor_id, *location_id, *location_region, *location_country, *counterparty_name,
        *memo;
    aml_opt_int gt_is_laundering;
    const char *gt_label, *gt_attempt_id;
} aml_txn_rec;

typedef struct aml_trade_rec {
    const char *doc_id, *txn_ref, *buyer_name, *seller_name, *currency, *goods_description, *hs_code,
        *origin_country, *destination_country;
    int64_t invoice_amount_minor;
} aml_trade_rec;

typedef struct aml_case_rec {
    const char *case_id, *title, *status, *priority, *origin, *opened_at, *detection_date;
    int64_t window_from, window_to;
    const char *const *accounts; /* focus account ids */
    size_t naccounts;
} aml_case_rec;

typedef struct aml_truth_rec {
    const char *instance_id, *typology_id, *kind, *variant, *case_id, *overlap;
    const char *const *accounts;
    size_t naccounts;
} aml_truth_rec;

/* Import options. */
typedef struct aml_ingest_opts {
    int skip_bad;          /* report a bad row and go on (default: fail the import) */
    int progress;          /* draw a progress bar when stderr is a terminal */
    const char *source;    /* source_dataset / audit detail; the data source of the coverage rows */
    /* Observation coverage of the accounts the import touches (docs/aml.md "Observation coverage"):
     * AML_HISTORY_IMPORT_START (default) the import's earliest transaction, AML_HISTORY_FIRST_ACTIVITY
     * each account's own first transaction in it, AML_HISTORY_DECLARED history_from. */
    int history_mode;
    int64_t history_from;  /* seconds, for AML_HISTORY_DECLARED */
    /* aml_import: called every 4,096 rows and once before the commit with the bytes read so far and
     * the files' total; a nonzero return cancels the import, which fails ("cancelled") and keeps
     * nothing. NULL: not called. */
    int (*on_progress)(void *ud, uint64_t done_bytes, uint64_t total_bytes);
    void *progress_ud;     /* passed to on_progress */
} aml_ingest_opts;

#define AML_HISTORY_IMPORT_START 0
#define AML_HISTORY_FIRST_ACTIVITY 1
#define AML_HISTORY_DECLARED 2

/* Counters of an ingest. */
typedef struct aml_ingest_stats {
    uint64_t rows, customers, accounts, transactions, cases, trades, truths, skipped, labels;
    double seconds;
} aml_ingest_stats;

int aml_ingest_begin(aml_ingest **out, aml_store *s, const aml_ingest_opts *o, aml_err *err);
int aml_ingest_customer(aml_ingest *in, const aml_customer_rec *c, aml_err *err);
/** Inserts an account, or returns the acct_no of an existing one (no update). */
int aml_ingest_account(aml_ingest *in, const aml_account_rec *a, int64_t *acct_no, aml_err *err);
int aml_ingest_party(aml_ingest *in, const char *account_id, const char *customer_id, const char *role, aml_err *err);
/** Inserts a transaction; accounts named but unknown are created as external accounts. */
int aml_ingest_txn(aml_ingest *in, const aml_txn_rec *t, int64_t *txn_no, aml_err *err);
int aml_ingest_trade(aml_ingest *in, const aml_trade_rec *t, aml_err *err);
int aml_ingest_case(aml_ingest *in, const aml_case_rec *c, aml_err *err);
int aml_ingest_truth(aml_ingest *in, const aml_truth_rec *t, aml_err *err);
int aml_ingest_fx(aml_ingest *in, const char *currency, const char *date, int64_t num, int64_t den, const char *source,
                  aml_err *err);
/** Declares that the store holds the complete history of an internal account from `from` (seconds) on.
 * Accounts declared in an ingest keep their declaration; the others get the import's default. */
int aml_ingest_coverage(aml_ingest *in, const char *account_id, int64_t from, aml_err *err);
int aml_ingest_jurisdiction(aml_ingest *in, const char *list, const char *country, const char *from, const char *to,
                            const char *url, aml_err *err);
/** Makes everything visible; frees the ingest either way. */
int aml_ingest_commit(aml_ingest *in, aml_ingest_stats *stats, aml_err *err);
/** Rolls everything back and frees the ingest; NULL is a no-op. */
void aml_ingest_abort(aml_ingest *in);

/* Formats the importers read. */
typedef enum aml_format { AML_FMT_NATIVE, AML_FMT_AMLWORLD, AML_FMT_AMLSIM } aml_format;

int aml_format_parse(const char *name, aml_format *out);

/**
 * Imports files in one transaction. AMLworld: *_Trans.csv, optionally
 * *_accounts.csv and *_Patterns.txt (labels). AMLSim: accounts.csv,
 * transactions.csv, cash_tx.csv, alert_accounts.csv / alert_transactions.csv
 * (recognised by their headers). Bad rows are reported on `report` with
 * their file and line.
 */
int aml_import(aml_store *s, aml_format fmt, const char *const *paths, size_t npaths, const aml_ingest_opts *o,
               FILE *report, aml_ingest_stats *stats, aml_err *err);

/**
 * The import of mcp-server-aml's importTransactions tool (an aml_import_fn,
 * tools/tools.h): aml_import of `paths` in `format` with on_progress, bad
 * rows fatal, no report.
 */
int aml_import_files(aml_store *s, const char *format, const char *const *paths, size_t npaths,
                     int (*on_progress)(void *ud, uint64_t done, uint64_t total), void *ud,
                     aml_import_counts *out, aml_err *err);

/* The native CSV record types, for writers (gen) and the docs. */
extern const char *const aml_native_headers[];

#endif /* AML_INGEST_H */
