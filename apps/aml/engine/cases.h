/*
 * Cases: loading them, assessing them (the engine plus risk level,
 * recommendation and SAR deadline), persisting assessments with their
 * findings and evidence, and listing cases for listCases.
 */
#ifndef AML_CASES_H
#define AML_CASES_H

#include "engine/engine.h"

#define AML_CASE_ID_MAX 64

/* A case as stored. */
typedef struct aml_case {
    char case_id[AML_CASE_ID_MAX + 1];
    char title[256];
    char status[24];
    char priority[16];
    char origin[16];
    char opened_at[32];
    char detection_date[16];  /* "" when not set */
    int64_t from, to;         /* review window */
    int64_t *accts;           /* focus accounts, ascending (malloc) */
    size_t naccts;
} aml_case;

/** Loads a case. @return 0, 1 when no such case, -1 on a store error. */
int aml_case_load(aml_store *s, const char *case_id, aml_case *out, aml_err *err);
void aml_case_free(aml_case *c);

/* SAR reporting floor for a bank with a suspect: USD 5,000 (31 CFR 1020.320(a)(2)). */
#define AML_SAR_FLOOR_MINOR 500000

/* The recommendation of a case assessment. */
typedef struct aml_recommendation {
    const char *action;       /* close | monitor | escalate | file_sar */
    char reasons[8][320];     /* plain-language reasons */
    int nreasons;
    int64_t amount_usd;       /* distinct trigger evidence of matched typologies, USD cents */
    int suspect_identified;   /* the focus accounts have known holders */
    char due_date[16];        /* "" when no detection date */
    int due_days;             /* 30, or 60 without a suspect */
} aml_recommendation;

/** Works out the recommendation and SAR deadline of an assessment. */
void aml_recommend(aml_store *s, const aml_case *c, const aml_assessment *a, aml_recommendation *r);

/**
 * Writes the assessment as JSON. `kind` "case" adds matchedTypologies,
 * the recommendation and the SAR block (assessCase); "typology" gives the
 * per-typology findings only (assessTypology).
 */
void aml_assessment_write(aml_store *s, mcp_jw *w, const aml_case *c, const aml_assessment *a, const char *kind,
                          const aml_recommendation *r);

/**
 * Stores an assessment (idempotent: the id is derived from its inputs) with
 * its findings and evidence, and for a full case assessment updates the
 * case's risk level, score and matched typologies. Opens its own
 * transaction unless one is open.
 */
int aml_assessment_store(aml_store *s, const aml_case *c, const aml_assessment *a, const char *kind,
                         const char *requested_json, const char *actor, const char *result_json, aml_err *err);

/**
 * Writes the assessCase result of a full assessment and stores it (kind "case", every typology
 * requested), as assessCase, draftSar and the scan do.
 */
int aml_assessment_record(aml_store *s, const aml_case *c, const aml_assessment *a, const aml_recommendation *r,
                          const char *actor, aml_err *err);

/**
 * Loads a case, assesses it with every typology and the parameters p, and records the assessment:
 * what the scan does to a case it opens or updates, and the demo store to every case.
 * @return 0, or -1 (err says why; an unknown case is an error too).
 */
int aml_case_reassess(aml_store *s, const char *case_id, const aml_params *p, const char *actor, aml_err *err);

/**
 * Writes the case as JSON (the aml://cases/{caseId} resource): its fields,
 * focus accounts, subjects, latest risk level and matched typologies, and
 * the lists of its assessments and SAR drafts.
 */
void aml_case_write(aml_store *s, mcp_jw *w, const aml_case *c);

/** Writes the subjects (holders of the focus accounts) as a JSON array. */
void aml_subjects_write(aml_store *s, mcp_jw *w, const aml_case *c);

/* listCases filters; NULL members are "any". */
typedef struct aml_case_filter {
    const char *status;       /* a status, "active" (default), or "any" */
    const char *risk_level;   /* low | medium | high | unassessed */
    const char *typology;     /* full typology id */
    const char *opened_from;  /* YYYY-MM-DD */
    const char *opened_to;    /* YYYY-MM-DD */
    const char *after;        /* keyset cursor: last case id of the previous page */
    int limit;                /* 1-100 */
    const char *state;        /* workflow state (engine/workflow.h) */
    const char *assignee;     /* workflow assignee */
    const char *disposition;  /* closure disposition */
    int overdue;              /* only cases past their SAR due date and not closed */
} aml_case_filter;

/**
 * Writes {"cases": [...], "total": N, "nextCursor": "..."?}.
 * @return 0, or -1 on a store error.
 */
int aml_cases_list(aml_store *s, mcp_jw *w, const aml_case_filter *f, int *count, char *next_cursor, size_t ncur,
                   aml_err *err);

/** Opaque cursor <-> last case id. @return 0, or -1 when the cursor is not one of ours. */
void aml_cursor_encode(const char *case_id, char *out, size_t n);
int aml_cursor_decode(const char *cursor, char *case_id, size_t n);

#endif /* AML_CASES_H */
