/*
 * Alert suppression (docs/aml.md, "Suppressing an alert"): a reviewer
 * records that an account's alert was reviewed and is not suspicious, for
 * a period: either a pattern (the account and a typology) or a pair (the
 * account and a counterparty, optionally for one typology). Until the date
 * (inclusive, compared with the scan's detection date) the scan does not
 * alert on it: a pattern drops the typology's finding on the account; a
 * pair drops a finding whose trigger evidence is entirely between the two
 * accounts (an alert that other counterparties also explain still fires).
 */
#ifndef AML_SUPPRESS_H
#define AML_SUPPRESS_H

#include "engine/cases.h"

#define AML_SUPPRESS_MAX_DAYS 366

/* A suppression to record. */
typedef struct aml_suppression {
    const char *case_id;         /* the reviewed case (required) */
    const char *account_id;      /* one of its focus accounts (required) */
    const char *counterparty_id; /* a pair, or NULL */
    const char *typology;        /* a typology id or code, or NULL (then counterparty_id is required) */
    const char *until;           /* YYYY-MM-DD, today to AML_SUPPRESS_MAX_DAYS ahead */
    const char *reason;          /* why (required) */
} aml_suppression;

/**
 * Records a suppression, with a case_events row on the case.
 * @return 0 (its id in *id), 1 when refused (err says why), -1 on a store error.
 */
int aml_suppress_add(aml_store *s, const aml_suppression *in, const char *actor, int64_t *id, aml_err *err);

/**
 * The scan's hook: drops the matched findings of `a` (the assessment of
 * account `acct` alone) that an active suppression covers on `as_of`
 * (YYYY-MM-DD), and updates a->matched. @return how many were dropped.
 */
int aml_suppress_filter(aml_store *s, int64_t acct, const char *as_of, aml_assessment *a);

#endif /* AML_SUPPRESS_H */
