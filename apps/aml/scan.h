/*
 * Monitoring scan and detection-quality evaluation.
 *
 * The scan turns transactions into case work: every typology over every
 * internal account with new activity in the window; accounts that match
 * and are linked through their evidence become one case (or join the open
 * case one of them already has); each such case is assessed and stored.
 * A re-scan of the same window only revisits accounts touched by
 * transactions added since (scan_runs keeps the high-water mark).
 *
 * The evaluations read the ground truth the generator or the dataset left
 * (gt_instances, transactions.gt_*); the engine never does.
 */
#ifndef AML_SCAN_H
#define AML_SCAN_H

#include "cases.h"

typedef struct aml_scan_opts {
    int64_t from, to;       /* window; 0/0 = all data */
    const char *detected;   /* detection date for new cases (YYYY-MM-DD); NULL = the window's last day */
    int progress;           /* progress bar on a terminal */
    const char *actor;      /* for the audit log */
} aml_scan_opts;

typedef struct aml_scan_stats {
    int64_t accounts_evaluated, accounts_skipped, accounts_matched, cases_opened, cases_updated;
    int64_t matched_by_typology[AML_NTYP];
    double seconds;
} aml_scan_stats;

int aml_scan(aml_store *s, const aml_scan_opts *o, FILE *out, aml_scan_stats *st, aml_err *err);

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

#endif /* AML_SCAN_H */
