/*
 * The case workflow (see workflow.h).
 *
 *   state             assignCase            closeCase                 reviewClosure
 *   open              -> in_review          -> pending_approval       refused
 *   in_review         reassign              -> pending_approval       refused
 *   pending_approval  refused               refused                   approve -> closed, reject -> in_review
 *   closed            refused               refused                   refused
 *
 * reviewClosure by the principal who requested the closure is refused (four
 * eyes). Each step runs in one transaction: the workflow row, the case's
 * status kept in step (so the listCases status filter agrees) and a
 * case_events row.
 */
#include "engine/workflow.h"

#include <string.h>

static const char *const implied_state_sql =
    "SELECT CASE c.status WHEN 'open' THEN 'open' WHEN 'closed_no_action' THEN 'closed' WHEN 'sar_filed' THEN "
    "'closed' ELSE 'in_review' END, c.detection_date, EXISTS (SELECT 1 FROM case_accounts ca JOIN account_parties p "
    "ON p.acct_no = ca.acct_no WHERE ca.case_id = c.case_id) FROM cases c WHERE c.case_id = ?";

/* The SAR deadline from the detection date: 30 days, 60 without a suspect. */
static void deadline(aml_workflow *w, const char *detected, int has_suspect)
{
    w->due_days = has_suspect ? 30 : 60;
    w->due_date[0] = '\0';
    int64_t t;
    if (detected && detected[0] && aml_parse_time(detected, strlen(detected), &t, NULL) == 0)
        aml_fmt_date(t + (int64_t)w->due_days * AML_DAY, w->due_date);
}

int aml_wf_load(aml_store *s, const char *case_id, aml_workflow *w, aml_err *err)
{
    memset(w, 0, sizeof *w);
    aml_st *st = aml_stmt(s, implied_state_sql);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, case_id);
    int rc = aml_step(st);
    if (rc != AML_ROW) {
        aml_reset(st);
        return rc == AML_DONE ? 1 : aml_errf(err, "%s", aml_errmsg(s));
    }
    snprintf(w->state, sizeof w->state, "%s", aml_col_text(st, 0));
    deadline(w, aml_col_text(st, 1), (int)aml_col_int(st, 2));
    aml_reset(st);
    st = aml_stmt(s, "SELECT state, coalesce(assignee, ''), coalesce(disposition, ''), coalesce(sar_id, ''), "
                     "coalesce(requested_by, ''), coalesce(reviewed_by, '') FROM case_workflow WHERE case_id = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, case_id);
    if (aml_step(st) == AML_ROW) {
        snprintf(w->state, sizeof w->state, "%s", aml_col_text(st, 0));
        snprintf(w->assignee, sizeof w->assignee, "%s", aml_col_text(st, 1));
        snprintf(w->disposition, sizeof w->disposition, "%s", aml_col_text(st, 2));
        snprintf(w->sar_id, sizeof w->sar_id, "%s", aml_col_text(st, 3));
        snprintf(w->requested_by, sizeof w->requested_by, "%s", aml_col_text(st, 4));
        snprintf(w->reviewed_by, sizeof w->reviewed_by, "%s", aml_col_text(st, 5));
    }
    aml_reset(st);
    char today[11];
    aml_fmt_date(aml_now(), today);
    w->overdue = strcmp(w->state, "closed") != 0 && w->due_date[0] && strcmp(w->due_date, today) < 0;
    return 0;
}

int aml_wf_event(aml_store *s, const char *case_id, const char *actor, const char *action, const char *from_state,
                 const char *to_state, const char *detail, aml_err *err)
{
    aml_st *st = aml_stmt(s, "INSERT INTO case_events(case_id, at, actor, action, from_state, to_state, detail) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    char now[21];
    aml_fmt_time(aml_now(), now);
    aml_bind_text(st, 1, case_id);
    aml_bind_text(st, 2, now);
    aml_bind_text(st, 3, actor);
    aml_bind_text(st, 4, action);
    aml_bind_text(st, 5, from_state);
    aml_bind_text(st, 6, to_state);
    aml_bind_text(st, 7, detail);
    return aml_step_done(s, st, err);
}

/* The row after a step (every column; NULL for ""). */
static int wf_save(aml_store *s, const char *case_id, const aml_workflow *w, const char *rationale,
                   const char *comment, aml_err *err)
{
    aml_st *st = aml_stmt(
        s, "INSERT INTO case_workflow(case_id, state, assignee, disposition, rationale, sar_id, requested_by, "
           "requested_at, reviewed_by, reviewed_at, review_comment, updated_at) VALUES (CAST(?1 AS TEXT), "
           "CAST(?2 AS TEXT), CAST(?3 AS TEXT), CAST(?4 AS TEXT), CAST(?5 AS TEXT), CAST(?6 AS TEXT), "
           "CAST(?7 AS TEXT), CASE WHEN CAST(?7 AS TEXT) IS NULL THEN NULL ELSE CAST(?10 AS TEXT) END, "
           "CAST(?8 AS TEXT), CASE WHEN CAST(?8 AS TEXT) IS NULL THEN NULL ELSE CAST(?10 AS TEXT) END, "
           "CAST(?9 AS TEXT), CAST(?10 AS TEXT)) "
           "ON CONFLICT(case_id) DO UPDATE SET state = excluded.state, assignee = excluded.assignee, "
           "disposition = excluded.disposition, rationale = coalesce(excluded.rationale, case_workflow.rationale), "
           "sar_id = excluded.sar_id, "
           "requested_at = CASE WHEN excluded.requested_by IS NULL THEN NULL "
           "WHEN excluded.state = 'pending_approval' THEN excluded.updated_at ELSE case_workflow.requested_at END, "
           "requested_by = excluded.requested_by, "
           "reviewed_at = CASE WHEN excluded.reviewed_by IS NULL THEN NULL "
           "WHEN case_workflow.reviewed_by IS NOT DISTINCT FROM excluded.reviewed_by THEN case_workflow.reviewed_at "
           "ELSE excluded.updated_at END, "
           "reviewed_by = excluded.reviewed_by, "
           "review_comment = coalesce(excluded.review_comment, case_workflow.review_comment), "
           "updated_at = excluded.updated_at");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    char now[21];
    aml_fmt_time(aml_now(), now);
    aml_bind_text(st, 1, case_id);
    aml_bind_text(st, 2, w->state);
    aml_bind_text(st, 3, w->assignee[0] ? w->assignee : NULL);
    aml_bind_text(st, 4, w->disposition[0] ? w->disposition : NULL);
    aml_bind_text(st, 5, rationale);
    aml_bind_text(st, 6, w->sar_id[0] ? w->sar_id : NULL);
    aml_bind_text(st, 7, w->requested_by[0] ? w->requested_by : NULL);
    aml_bind_text(st, 8, w->reviewed_by[0] ? w->reviewed_by : NULL);
    aml_bind_text(st, 9, comment);
    aml_bind_text(st, 10, now);
    return aml_step_done(s, st, err);
}

/* Keeps cases.status in step with the workflow state. */
static int status_save(aml_store *s, const char *case_id, const char *status, aml_err *err)
{
    aml_st *st = aml_stmt(s, "UPDATE cases SET status = ? WHERE case_id = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, status);
    aml_bind_text(st, 2, case_id);
    return aml_step_done(s, st, err);
}

/* Saves a step: the workflow row, the case status (NULL: unchanged) and the event, in one transaction. */
static int commit_step(aml_store *s, const char *case_id, const aml_workflow *w, const char *status,
                       const char *rationale, const char *comment, const char *actor, const char *action,
                       const char *from, const char *detail, aml_err *err)
{
    int own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        return -1;
    int rc = wf_save(s, case_id, w, rationale, comment, err);
    if (!rc && status)
        rc = status_save(s, case_id, status, err);
    if (!rc)
        rc = aml_wf_event(s, case_id, actor, action, from, w->state, detail, err);
    if (own) {
        if (rc)
            aml_rollback(s);
        else if (aml_commit(s, err))
            rc = -1;
    }
    return rc ? -1 : 0;
}

/* Loads the case's workflow; 1 (with the message) for an unknown case. */
static int load_for_step(aml_store *s, const char *case_id, aml_workflow *w, aml_err *err)
{
    int rc = aml_wf_load(s, case_id, w, err);
    if (rc > 0)
        aml_errf(err, "Unknown caseId '%.64s': no such case. Use listCases to find case ids.", case_id);
    return rc;
}

int aml_wf_assign(aml_store *s, const char *case_id, const char *assignee, const char *actor, aml_err *err)
{
    aml_workflow w;
    int rc = load_for_step(s, case_id, &w, err);
    if (rc)
        return rc;
    if (strcmp(w.state, "open") && strcmp(w.state, "in_review"))
        return aml_errf(err,
                        "Case %s is %s: only an open or in-review case can be assigned (a closure request is "
                        "decided with reviewClosure first; a closed case stays closed).",
                        case_id, w.state),
               1;
    char from[20], detail[300];
    snprintf(from, sizeof from, "%s", w.state);
    snprintf(detail, sizeof detail, "assigned to %s%s%s", assignee, w.assignee[0] ? " (was " : "",
             w.assignee[0] ? w.assignee : "");
    if (w.assignee[0])
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail), ")");
    snprintf(w.assignee, sizeof w.assignee, "%s", assignee);
    snprintf(w.state, sizeof w.state, "in_review");
    return commit_step(s, case_id, &w, "in_review", NULL, NULL, actor, "assign", from, detail, err);
}

/* A SAR draft of this case with this id? */
static int sar_of_case(aml_store *s, const char *case_id, const char *sar_id)
{
    aml_st *st = aml_stmt(s, "SELECT 1 FROM sar_drafts WHERE sar_draft_id = ? AND case_id = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, sar_id);
    aml_bind_text(st, 2, case_id);
    int found = aml_step(st) == AML_ROW;
    aml_reset(st);
    return found;
}

static int closure_args_ok(aml_store *s, const char *case_id, const char *disposition, const char *rationale,
                           const char *sar_id, aml_err *err)
{
    if (strcmp(disposition, "false_positive") && strcmp(disposition, "confirmed_suspicious") &&
        strcmp(disposition, "inconclusive"))
        return aml_errf(err, "Unknown disposition '%.40s': use false_positive, confirmed_suspicious or inconclusive.",
                        disposition),
               1;
    size_t n = strlen(rationale);
    if (n < AML_WF_RATIONALE_MIN || n > AML_WF_RATIONALE_MAX)
        return aml_errf(err, "The rationale must say why, in %d to %d characters.", AML_WF_RATIONALE_MIN,
                        AML_WF_RATIONALE_MAX),
               1;
    if (!strcmp(disposition, "confirmed_suspicious") && !sar_id[0])
        return aml_errf(err, "Closing case %s as confirmed_suspicious needs sarId: the SAR filed for it (the "
                             "sarDraftId draftSar returned).", case_id),
               1;
    if (!strcmp(disposition, "false_positive") && sar_id[0])
        return aml_errf(err, "A false_positive closure files no SAR: leave sarId out, or use confirmed_suspicious."),
               1;
    if (sar_id[0] && !sar_of_case(s, case_id, sar_id))
        return aml_errf(err, "sarId '%.100s' is not a SAR draft of case %s (draftSar gives its id).", sar_id,
                        case_id),
               1;
    return 0;
}

int aml_wf_request_close(aml_store *s, const char *case_id, const char *disposition, const char *rationale,
                         const char *sar_id, const char *actor, aml_err *err)
{
    aml_workflow w;
    int rc = load_for_step(s, case_id, &w, err);
    if (rc)
        return rc;
    if (strcmp(w.state, "open") && strcmp(w.state, "in_review"))
        return aml_errf(err, "Case %s is %s: a closure can be requested only for an open or in-review case.",
                        case_id, w.state),
               1;
    if ((rc = closure_args_ok(s, case_id, disposition, rationale, sar_id ? sar_id : "", err)))
        return rc;
    char from[20], detail[300];
    snprintf(from, sizeof from, "%s", w.state);
    snprintf(w.state, sizeof w.state, "pending_approval");
    snprintf(w.disposition, sizeof w.disposition, "%s", disposition);
    snprintf(w.sar_id, sizeof w.sar_id, "%s", sar_id ? sar_id : "");
    snprintf(w.requested_by, sizeof w.requested_by, "%s", actor);
    w.reviewed_by[0] = '\0';
    snprintf(detail, sizeof detail, "closure requested: %s%s%.120s", disposition, w.sar_id[0] ? ", SAR " : "",
             w.sar_id);
    return commit_step(s, case_id, &w, NULL, rationale, NULL, actor, "request_closure", from, detail, err);
}

int aml_wf_review(aml_store *s, const char *case_id, int approve, const char *comment, const char *actor,
                  aml_err *err)
{
    aml_workflow w;
    int rc = load_for_step(s, case_id, &w, err);
    if (rc)
        return rc;
    if (strcmp(w.state, "pending_approval"))
        return aml_errf(err, "Case %s is %s: there is no closure request to review (closeCase requests one).",
                        case_id, w.state),
               1;
    if (!strcmp(w.requested_by, actor))
        return aml_errf(err,
                        "Four-eyes rule: the closure of case %s was requested by '%.128s', who cannot also review "
                        "it. Another principal with scope aml.approve must approve or reject it.",
                        case_id, w.requested_by),
               1;
    if (!approve && (!comment || !comment[0]))
        return aml_errf(err, "A rejected closure needs a comment saying what is missing."), 1;
    snprintf(w.reviewed_by, sizeof w.reviewed_by, "%s", actor);
    const char *status = "in_review";
    if (approve) {
        snprintf(w.state, sizeof w.state, "closed");
        status = w.sar_id[0] ? "sar_filed" : "closed_no_action";
    } else {
        snprintf(w.state, sizeof w.state, "in_review");
    }
    char detail[300];
    snprintf(detail, sizeof detail, "closure %s (%s, requested by %.100s)", approve ? "approved" : "rejected",
             w.disposition, w.requested_by);
    return commit_step(s, case_id, &w, status, NULL, comment && comment[0] ? comment : NULL, actor,
                       approve ? "approve_closure" : "reject_closure", "pending_approval", detail, err);
}

static void str_or_null(mcp_jw *w, const char *key, const char *v)
{
    mcp_jw_key(w, key);
    v[0] ? mcp_jw_string(w, v) : mcp_jw_null(w);
}

void aml_wf_write(mcp_jw *w, const aml_workflow *wf)
{
    mcp_jw_key(w, "state");
    mcp_jw_string(w, wf->state);
    str_or_null(w, "assignee", wf->assignee);
    str_or_null(w, "disposition", wf->disposition);
    str_or_null(w, "sarId", wf->sar_id);
    str_or_null(w, "closureRequestedBy", wf->requested_by);
    str_or_null(w, "closureReviewedBy", wf->reviewed_by);
    str_or_null(w, "sarDueDate", wf->due_date);
    mcp_jw_key(w, "sarDueDays");
    mcp_jw_int(w, wf->due_days);
    mcp_jw_key(w, "overdue");
    mcp_jw_bool(w, wf->overdue);
}

void aml_wf_history_write(aml_store *s, mcp_jw *w, const char *case_id)
{
    mcp_jw_array_begin(w);
    aml_st *st = aml_stmt(s, "SELECT at, actor, action, from_state, to_state, detail FROM case_events "
                                   "WHERE case_id = ? ORDER BY event_id LIMIT 500");
    if (st) {
        aml_bind_text(st, 1, case_id);
        while (aml_step(st) == AML_ROW) {
            mcp_jw_object_begin(w);
            static const char *const keys[] = {"at", "actor", "action", "fromState", "toState", "detail"};
            for (int i = 0; i < 6; i++) {
                mcp_jw_key(w, keys[i]);
                aml_jw_col_text(w, st, i);
            }
            mcp_jw_object_end(w);
        }
        aml_reset(st);
    }
    mcp_jw_array_end(w);
}

void aml_wf_bind_filter(aml_st *st, const char *state, const char *assignee, const char *disposition,
                        int overdue)
{
    char due30[11], due60[11];
    int64_t now = aml_now();
    aml_fmt_date(now - 30 * AML_DAY, due30);
    aml_fmt_date(now - 60 * AML_DAY, due60);
    aml_bind_text(st, 6, state);
    aml_bind_text(st, 7, assignee);
    aml_bind_text(st, 8, disposition);
    aml_bind_int(st, 9, overdue ? 1 : 0);
    aml_bind_text(st, 10, due30);
    aml_bind_text(st, 11, due60);
}

void aml_wf_member(aml_store *s, mcp_jw *w, const char *case_id, int with_history)
{
    aml_workflow wf;
    if (aml_wf_load(s, case_id, &wf, NULL))
        return;
    mcp_jw_key(w, "workflow");
    mcp_jw_object_begin(w);
    aml_wf_write(w, &wf);
    if (with_history) {
        mcp_jw_key(w, "history");
        aml_wf_history_write(s, w, case_id);
    }
    mcp_jw_object_end(w);
}
