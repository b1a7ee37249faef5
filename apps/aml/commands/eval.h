/*
 * Detection-quality evaluation against ground truth: the generator's
 * (gt_instances: which typology each case was built to show) or a
 * dataset's labels (transactions.gt_*: AMLworld and AMLSim attempts).
 * Only the evaluation reads ground truth; the engine never does.
 */
#ifndef AML_EVAL_H
#define AML_EVAL_H

#include "engine/cases.h"

/* Per-typology quality over generated cases. */
typedef struct aml_quality {
    int injected, detected, lookalikes, lookalike_hits, alerts, false_pos, overlap_hits;
    double recall, precision;
} aml_quality;

/**
 * Assesses every case that has generator ground truth and scores each
 * typology: recall over injected instances, precision over the cases it
 * matched, where a match on an instance of another typology whose
 * construction also satisfies this one (aml_gen_overlap) is neither a hit
 * nor a false alarm. Prints the table to `out` (may be NULL).
 */
int aml_eval_cases(aml_store *s, FILE *out, aml_quality q[AML_NTYP], aml_err *err);

/* Per-typology quality of the monitoring scan's alerts over a generated bank. */
typedef struct aml_scan_quality {
    int injected, detected;  /* injected instances; those with an account the scan flagged for the typology */
    int alerts;              /* accounts flagged for the typology */
    int true_alerts;         /* on an account of an injected instance of it */
    int overlap;             /* on an instance whose construction also meets it (counted neither way) */
    int false_instance;      /* on a look-alike or another typology's instance */
    int false_background;    /* on an account of no instance */
    double recall, precision;
} aml_scan_quality;

/* The alert volume of the scan over customers with no injected instance. */
typedef struct aml_scan_volume {
    int64_t active;          /* customers with no injected instance and some activity */
    int64_t alerted;         /* of them, with an account the scan flagged */
    double rate;             /* alerted / active */
} aml_scan_volume;

/**
 * Scores the monitoring scan's alerts (scan_matches, every run) against the
 * generator's ground truth: per typology, recall over injected instances
 * and precision over flagged accounts; and the alert rate on customers with
 * no injected instance. Prints the table to `out` (may be NULL).
 */
int aml_eval_scan(aml_store *s, FILE *out, aml_scan_quality q[AML_NTYP], aml_scan_volume *vol, aml_err *err);

/* AMLworld patterns, scored after import + scan. */
#define AML_NPATTERNS 7
typedef struct aml_pattern_quality {
    const char *pattern;   /* FAN-IN ... */
    int attempts, detected, alerts, true_alerts;
    int laundering_alerts; /* alerts whose case covers an attempt of any pattern */
    double recall, precision;
} aml_pattern_quality;

/**
 * For each labelled pattern: recall = attempts with a scan case on one of
 * their accounts matching the corresponding typology (and, for the layering
 * shapes, that variant); precision = such cases that do cover an attempt of
 * the pattern. Prints the table to `out`.
 */
int aml_eval_patterns(aml_store *s, FILE *out, aml_pattern_quality q[AML_NPATTERNS], aml_err *err);


/* Transaction-level quality on the laundering class (AMLworld-style labels). */
typedef struct aml_txn_quality {
    int64_t split_from;        /* booked_at of the first transaction of the test split */
    int64_t transactions;      /* in the split */
    int64_t laundering;        /* labelled laundering in the split */
    int64_t tp, fp, fn;
    double precision, recall, f1;
} aml_txn_quality;

/**
 * Scores the scan at transaction level on the time-ordered last 20% of the
 * transactions (by booked_at, then txn_no), the split of the published
 * AMLworld baselines: a transaction is predicted laundering when it is
 * trigger evidence of a matched finding in the latest assessment of a scan
 * case (at most AML_MAX_EVIDENCE are stored per finding); the truth is
 * gt_is_laundering. Prints a summary to `out` (may be NULL).
 */
int aml_eval_txn_level(aml_store *s, FILE *out, aml_txn_quality *q, aml_err *err);

/**
 * The `eval` command: aml_eval_cases when the store has generator ground
 * truth, else aml_eval_patterns when it has labelled transactions, each
 * with a heading on `out`. @return 0, 1 when there is no ground truth
 * (said on stderr), -1 on a store error.
 */
int aml_eval(aml_store *s, FILE *out, aml_err *err);

#endif /* AML_EVAL_H */
