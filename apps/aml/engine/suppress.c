/*
 * Alert suppression (see suppress.h).
 */
#include "engine/suppress.h"
#include "engine/workflow.h"

#include <string.h>

static int in_case(aml_store *s, const char *case_id, int64_t acct)
{
    aml_st *st = aml_stmt(s, "SELECT 1 FROM case_accounts WHERE case_id = ? AND acct_no = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, case_id);
    aml_bind_int(st, 2, acct);
    int found = aml_step(st) == AML_ROW;
    aml_reset(st);
    return found;
}

/* Checks the request; fills the account numbers and the typology id. @return 0, or 1 with the reason. */
static int check(aml_store *s, const aml_suppression *in, int64_t *acct, int64_t *cp, const char **typ, aml_err *err)
{
    aml_case c;
    int rc = aml_case_load(s, in->case_id, &c, err);
    if (rc)
        return rc < 0 ? -1 : (aml_errf(err, "Unknown caseId '%.64s': no such case.", in->case_id), 1);
    aml_case_free(&c);
    *acct = aml_account_no(s, in->account_id);
    if (!*acct || !in_case(s, in->case_id, *acct))
        return aml_errf(err, "Account '%.64s' is not a focus account of case %s.", in->account_id, in->case_id), 1;
    *cp = 0;
    if (in->counterparty_id && in->counterparty_id[0]) {
        *cp = aml_account_no(s, in->counterparty_id);
        if (!*cp || *cp == *acct)
            return aml_errf(err, "Unknown counterparty account '%.64s'.", in->counterparty_id), 1;
    }
    *typ = NULL;
    if (in->typology && in->typology[0]) {
        int t = aml_typology_index(in->typology, strlen(in->typology));
        if (t < 0)
            return aml_errf(err, "Unknown typology '%.40s': see listTypologies.", in->typology), 1;
        *typ = aml_catalog()[t].id;
    }
    if (!*typ && !*cp)
        return aml_errf(err, "Name what was reviewed: a typology (a pattern), a counterpartyId (a pair), or both."), 1;
    int64_t until, now = aml_day_start(aml_now());
    int prec = 0;
    if (!in->until || strlen(in->until) != 10 || aml_parse_time(in->until, 10, &until, &prec) || until < now ||
        until > now + (int64_t)AML_SUPPRESS_MAX_DAYS * AML_DAY)
        return aml_errf(err, "'until' must be a date (YYYY-MM-DD) from today to %d days ahead: a suppression ends.",
                        AML_SUPPRESS_MAX_DAYS),
               1;
    if (!in->reason || strlen(in->reason) < 10)
        return aml_errf(err, "Give the reason the activity is not suspicious (10 characters or more)."), 1;
    return 0;
}

int aml_suppress_add(aml_store *s, const aml_suppression *in, const char *actor, int64_t *id, aml_err *err)
{
    int64_t acct, cp;
    const char *typ;
    int rc = check(s, in, &acct, &cp, &typ, err);
    if (rc)
        return rc;
    int own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        return -1;
    aml_st *st = aml_stmt(s, "INSERT INTO suppressions(acct_no, counterparty_acct, typology_id, until, reason, "
                                   "case_id, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                                   "RETURNING suppression_id");
    char now[21], detail[400];
    aml_fmt_time(aml_now(), now);
    if (!st) {
        rc = aml_errf(err, "%s", aml_errmsg(s));
    } else {
        aml_bind_int(st, 1, acct);
        aml_bind_int_opt(st, 2, cp, cp != 0);
        aml_bind_text(st, 3, typ);
        aml_bind_text(st, 4, in->until);
        aml_bind_text(st, 5, in->reason);
        aml_bind_text(st, 6, in->case_id);
        aml_bind_text(st, 7, actor);
        aml_bind_text(st, 8, now);
        rc = aml_step_id(s, st, id, err);
    }
    if (!rc) {
        snprintf(detail, sizeof detail, "suppressed %s%s%s%s%s until %s: %.200s", in->account_id,
                 typ ? " " : "", typ ? typ : "", cp ? " with " : "", cp ? in->counterparty_id : "", in->until,
                 in->reason);
        rc = aml_wf_event(s, in->case_id, actor, "suppress", NULL, NULL, detail, err);
    }
    if (own) {
        if (rc)
            aml_rollback(s);
        else if (aml_commit(s, err))
            rc = -1;
    }
    return rc ? -1 : 0;
}

/* Is every trigger transaction of the finding between acct and cp? */
static int all_with(aml_store *s, const aml_finding *f, int64_t acct, int64_t cp)
{
    int any = 0;
    for (size_t e = 0; e < f->nev; e++) {
        if (f->ev[e].role != AML_ROLE_TRIGGER)
            continue;
        aml_st *st = aml_stmt(s, "SELECT coalesce(from_acct, 0), coalesce(to_acct, 0) FROM transactions "
                                       "WHERE txn_no = ?");
        if (!st)
            return 0;
        aml_bind_int(st, 1, f->ev[e].no);
        int between = 0;
        if (aml_step(st) == AML_ROW) {
            int64_t a = aml_col_int(st, 0), b = aml_col_int(st, 1);
            between = (a == acct && b == cp) || (a == cp && b == acct);
        }
        aml_reset(st);
        if (!between)
            return 0;
        any = 1;
    }
    return any;
}

int aml_suppress_filter(aml_store *s, int64_t acct, const char *as_of, aml_assessment *a)
{
    if (!a->matched)
        return 0;
    aml_st *st = aml_stmt(s, "SELECT coalesce(counterparty_acct, 0), typology_id FROM suppressions "
                                   "WHERE acct_no = ? AND until >= ?");
    if (!st)
        return 0;
    aml_bind_int(st, 1, acct);
    aml_bind_text(st, 2, as_of);
    int64_t cps[64];
    int typs[64], n = 0;
    while (n < 64 && aml_step(st) == AML_ROW) {
        cps[n] = aml_col_int(st, 0);
        const char *t = aml_col_null(st, 1) ? NULL : aml_col_text(st, 1);
        typs[n++] = t ? aml_typology_index(t, strlen(t)) : -1;
    }
    aml_reset(st);
    int dropped = 0;
    for (int t = 0; t < AML_NTYP; t++) {
        if (a->f[t].status != AML_MATCHED)
            continue;
        for (int k = 0; k < n; k++) {
            if (typs[k] >= 0 && typs[k] != t)
                continue;
            if (cps[k] && !all_with(s, &a->f[t], acct, cps[k]))
                continue;
            a->f[t].status = AML_NOT_MATCHED;
            a->matched--;
            dropped++;
            break;
        }
    }
    return dropped;
}
