/*
 * The case workflow (docs/aml.md, "Case workflow"): states open ->
 * in_review -> pending_approval -> closed, a disposition
 * (false_positive, confirmed_suspicious, inconclusive) with a rationale,
 * and closure under the four-eyes rule: the principal who requests the
 * closure may not be the one who approves it. Every step is a row of the
 * case's history (case_events); the tools audit it too. The SAR deadline
 * (30 days from detection, 60 without a suspect) is worked out here.
 */
#ifndef AML_WORKFLOW_H
#define AML_WORKFLOW_H

#include "engine/cases.h"

#define AML_WF_PRINCIPAL_MAX 128
#define AML_WF_RATIONALE_MIN 10
#define AML_WF_RATIONALE_MAX 4000

/* A case's workflow as stored (or implied by its status when never worked). */
typedef struct aml_workflow {
    char state[20];                              /* open | in_review | pending_approval | closed */
    char assignee[AML_WF_PRINCIPAL_MAX + 1];     /* "" when unassigned */
    char disposition[24];                        /* "" until a closure is requested */
    char sar_id[128];                            /* the SAR of a confirmed_suspicious closure */
    char requested_by[AML_WF_PRINCIPAL_MAX + 1]; /* who requested the closure */
    char reviewed_by[AML_WF_PRINCIPAL_MAX + 1];  /* who approved or rejected it */
    char due_date[11];                           /* SAR due date, "" without a detection date */
    int due_days;                                /* 30, or 60 without a suspect */
    int overdue;                                 /* not closed and past due_date */
} aml_workflow;

/** Loads the workflow of a case. @return 0, 1 when no such case, -1 on a store error. */
int aml_wf_load(aml_store *s, const char *case_id, aml_workflow *w, aml_err *err);

/*
 * The steps. Each returns 0 when done, 1 when a rule refuses it (err says
 * which, in words the caller can show), -1 on a store error. `actor` is the
 * principal (the token's subject over authorized HTTP, --actor on stdio).
 */
int aml_wf_assign(aml_store *s, const char *case_id, const char *assignee, const char *actor, aml_err *err);
int aml_wf_request_close(aml_store *s, const char *case_id, const char *disposition, const char *rationale,
                         const char *sar_id, const char *actor, aml_err *err);
int aml_wf_review(aml_store *s, const char *case_id, int approve, const char *comment, const char *actor,
                  aml_err *err);

/** Appends a row to the case's history (case_events). @return 0 or -1. */
int aml_wf_event(aml_store *s, const char *case_id, const char *actor, const char *action, const char *from_state,
                 const char *to_state, const char *detail, aml_err *err);

/** Writes {"state", "assignee", "disposition", "sarId", "closureRequestedBy", ..., "sarDueDate", "overdue"}. */
void aml_wf_write(mcp_jw *w, const aml_workflow *wf);
/** Writes the member "workflow": {aml_wf_write's members, and "history" when asked} of a case object. */
void aml_wf_member(aml_store *s, mcp_jw *w, const char *case_id, int with_history);
/** Writes the case's history (case_events) as a JSON array, oldest first. */
void aml_wf_history_write(aml_store *s, mcp_jw *w, const char *case_id);

/*
 * listCases: the SQL condition on `c` (cases) for the workflow filters, bound as ?6-?11
 * (aml_wf_bind_filter). Written for both backends: parameters cast where their type is not
 * implied, and "overdue" as the detection date before today's date less 30 (?10) or 60 (?11)
 * days, computed by the caller instead of SQLite's date().
 */
#define AML_WF_STATE_SQL                                                                                       \
    "coalesce((SELECT wf.state FROM case_workflow wf WHERE wf.case_id = c.case_id), "                          \
    "CASE c.status WHEN 'open' THEN 'open' WHEN 'closed_no_action' THEN 'closed' WHEN 'sar_filed' THEN 'closed' " \
    "ELSE 'in_review' END)"
#define AML_WF_FILTER                                                                                          \
    "AND (CAST(?6 AS TEXT) IS NULL OR " AML_WF_STATE_SQL " = CAST(?6 AS TEXT)) "                               \
    "AND (CAST(?7 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM case_workflow wf WHERE wf.case_id = c.case_id "    \
    "AND wf.assignee = CAST(?7 AS TEXT))) "                                                                    \
    "AND (CAST(?8 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM case_workflow wf WHERE wf.case_id = c.case_id "   \
    "AND wf.disposition = CAST(?8 AS TEXT))) "                                                                \
    "AND (?9 = 0 OR (" AML_WF_STATE_SQL " <> 'closed' AND c.detection_date IS NOT NULL AND "                  \
    "substr(c.detection_date, 1, 10) < CASE WHEN EXISTS (SELECT 1 FROM case_accounts ca JOIN account_parties p " \
    "ON p.acct_no = ca.acct_no WHERE ca.case_id = c.case_id) THEN CAST(?10 AS TEXT) ELSE CAST(?11 AS TEXT) END)) "

/** Binds the workflow filters (state, assignee, disposition, overdue) of a listCases query. */
void aml_wf_bind_filter(aml_st *st, const char *state, const char *assignee, const char *disposition,
                        int overdue);

#endif /* AML_WORKFLOW_H */
