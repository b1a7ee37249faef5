/*
 * The monitoring scan.
 *
 * The scan turns transactions into case work: every typology over every
 * internal account with new activity in the window; accounts that match
 * and are linked through their evidence become one case (or join the open
 * case one of them already has); each such case is assessed and stored.
 * A re-scan of the same window only revisits accounts touched by
 * transactions added since (scan_runs keeps the high-water mark).
 */
#ifndef AML_SCAN_H
#define AML_SCAN_H

#include "engine/cases.h"

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

#endif /* AML_SCAN_H */
