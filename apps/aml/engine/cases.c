/*
 * Cases: see cases.h.
 */
#include "engine/cases.h"
#include "engine/workflow.h"

#include <stdlib.h>
#include <string.h>

int aml_case_load(aml_store *s, const char *case_id, aml_case *out, aml_err *err)
{
    memset(out, 0, sizeof *out);
    aml_st *st = aml_stmt(s, "SELECT case_id, title, status, coalesce(priority, ''), coalesce(origin, ''), "
                                   "opened_at, coalesce(detection_date, ''), window_from, window_to "
                                   "FROM cases WHERE case_id = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, case_id);
    int rc = aml_step(st);
    if (rc != AML_ROW) {
        aml_reset(st);
        if (rc == AML_DONE)
            return 1;
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    snprintf(out->case_id, sizeof out->case_id, "%s", aml_col_text(st, 0));
    snprintf(out->title, sizeof out->title, "%s", aml_col_text(st, 1));
    snprintf(out->status, sizeof out->status, "%s", aml_col_text(st, 2));
    snprintf(out->priority, sizeof out->priority, "%s", aml_col_text(st, 3));
    snprintf(out->origin, sizeof out->origin, "%s", aml_col_text(st, 4));
    snprintf(out->opened_at, sizeof out->opened_at, "%s", aml_col_text(st, 5));
    snprintf(out->detection_date, sizeof out->detection_date, "%s", aml_col_text(st, 6));
    out->from = aml_col_int(st, 7);
    out->to = aml_col_int(st, 8);
    aml_reset(st);
    st = aml_stmt(s, "SELECT acct_no FROM case_accounts WHERE case_id = ? ORDER BY acct_no");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, case_id);
    size_t cap = 0;
    while (aml_step(st) == AML_ROW) {
        if (out->naccts == cap) {
            cap = cap ? cap * 2 : 4;
            int64_t *n = realloc(out->accts, cap * sizeof *n);
            if (!n) {
                aml_reset(st);
                aml_case_free(out);
                return aml_errf(err, "out of memory");
            }
            out->accts = n;
        }
        out->accts[out->naccts++] = aml_col_int(st, 0);
    }
    aml_reset(st);
    return 0;
}

void aml_case_free(aml_case *c)
{
    free(c->accts);
    c->accts = NULL;
    c->naccts = 0;
}

static int64_t matched_amount(const aml_assessment *a)
{
    size_t n = 0;
    for (int t = 0; t < AML_NTYP; t++)
        if (a->f[t].status == AML_MATCHED)
            n += a->f[t].nev;
    int64_t *nos = malloc((n ? n : 1) * 2 * sizeof *nos);
    if (!nos)
        return 0;
    size_t k = 0;
    for (int t = 0; t < AML_NTYP; t++) {
        if (a->f[t].status != AML_MATCHED)
            continue;
        for (size_t i = 0; i < a->f[t].nev; i++)
            if (a->f[t].ev[i].role == AML_ROLE_TRIGGER) {
                nos[2 * k] = a->f[t].ev[i].no;
                nos[2 * k + 1] = a->f[t].ev[i].usd;
                k++;
            }
    }
    /* Sort pairs by txn_no (each pair is two int64, sorted by the first). */
    for (size_t i = 1; i < k; i++) {
        int64_t no = nos[2 * i], usd = nos[2 * i + 1];
        size_t j = i;
        while (j > 0 && nos[2 * (j - 1)] > no) {
            nos[2 * j] = nos[2 * (j - 1)];
            nos[2 * j + 1] = nos[2 * (j - 1) + 1];
            j--;
        }
        nos[2 * j] = no;
        nos[2 * j + 1] = usd;
    }
    int64_t sum = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || nos[2 * i] != nos[2 * (i - 1)])
            sum += nos[2 * i + 1];
    free(nos);
    return sum;
}

static int has_subject(aml_store *s, const aml_case *c)
{
    for (size_t i = 0; i < c->naccts; i++) {
        aml_st *st = aml_stmt(s, "SELECT 1 FROM account_parties WHERE acct_no = ? LIMIT 1");
        if (!st)
            return 0;
        aml_bind_int(st, 1, c->accts[i]);
        int found = aml_step(st) == AML_ROW;
        aml_reset(st);
        if (found)
            return 1;
    }
    return 0;
}

void aml_recommend(aml_store *s, const aml_case *c, const aml_assessment *a, aml_recommendation *r)
{
    memset(r, 0, sizeof *r);
    const aml_typology_def *cat = aml_catalog();
    r->amount_usd = matched_amount(a);
    r->suspect_identified = has_subject(s, c);
    r->due_days = r->suspect_identified ? 30 : 60;
    if (c->detection_date[0]) {
        int64_t t;
        if (aml_parse_time(c->detection_date, strlen(c->detection_date), &t, NULL) == 0)
            aml_fmt_date(t + (int64_t)r->due_days * AML_DAY, r->due_date);
    }
    char amount[48], floor[48];
    aml_fmt_usd(r->amount_usd, amount, sizeof amount);
    aml_fmt_usd(AML_SAR_FLOOR_MINOR, floor, sizeof floor);
#define REASON(...)                                                                  \
    do {                                                                             \
        if (r->nreasons < 8)                                                         \
            snprintf(r->reasons[r->nreasons++], sizeof r->reasons[0], __VA_ARGS__); \
    } while (0)
    if (!a->matched) {
        /* Trade documents (T14) and screening lists (T15) are not data a case waits for. */
        int open_question = 0;
        for (int t = 0; t < AML_NTYP; t++)
            if ((a->mask & (1u << t)) && a->f[t].status == AML_NOT_EVALUABLE && t != AML_T14 && t != AML_T15)
                open_question = 1;
        REASON("No typology matched the transactions of the focus accounts between the window dates.");
        if (open_question) {
            r->action = "monitor";
            for (int t = 0; t < AML_NTYP; t++)
                if ((a->mask & (1u << t)) && a->f[t].status == AML_NOT_EVALUABLE && t != AML_T14 && t != AML_T15)
                    REASON("%s could not be evaluated: %s", cat[t].name, a->f[t].explanation);
            REASON("Keep the accounts under monitoring until the missing data is available.");
        } else {
            r->action = "close";
            REASON("Close the case with no action; the rule results are recorded in the assessment.");
        }
        return;
    }
    for (int t = 0; t < AML_NTYP; t++)
        if (a->f[t].status == AML_MATCHED)
            REASON("%s matched with score %d.", cat[t].name, a->f[t].score);
    if (a->case_score >= 70 && r->amount_usd >= AML_SAR_FLOOR_MINOR) {
        r->action = "file_sar";
        REASON("High risk (score %d) and %s involved, at or above the %s SAR threshold (31 CFR 1020.320).",
               a->case_score, amount, floor);
        if (r->due_date[0])
            REASON("File by %s: %d calendar days after the detection date %s.", r->due_date, r->due_days,
                   c->detection_date);
        else
            REASON("Set the detection date on the case to start the %d-day filing clock.", r->due_days);
    } else if (a->case_score >= 40) {
        r->action = "escalate";
        if (r->amount_usd < AML_SAR_FLOOR_MINOR)
            REASON("The amount involved, %s, is below the %s SAR threshold; an investigator should decide.", amount,
                   floor);
        else
            REASON("Medium risk (score %d): an investigator should review before a SAR decision.", a->case_score);
    } else {
        r->action = "monitor";
        REASON("Low risk (score %d): keep the accounts under monitoring.", a->case_score);
    }
#undef REASON
}

void aml_subjects_write(aml_store *s, mcp_jw *w, const aml_case *c)
{
    mcp_jw_array_begin(w);
    char seen[16][64];
    int nseen = 0;
    for (size_t i = 0; i < c->naccts; i++) {
        aml_st *st = aml_stmt(s, "SELECT c.customer_id, c.full_name, p.role, c.customer_type FROM "
                                       "account_parties p JOIN customers c ON c.customer_id = p.customer_id "
                                       "WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id, p.role");
        if (!st)
            break;
        aml_bind_int(st, 1, c->accts[i]);
        while (aml_step(st) == AML_ROW) {
            const char *id = aml_col_text(st, 0);
            int dup = 0;
            for (int k = 0; k < nseen; k++)
                dup |= strcmp(seen[k], id) == 0;
            if (dup || nseen == 16)
                continue;
            snprintf(seen[nseen++], sizeof seen[0], "%s", id);
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "customerId");
            mcp_jw_string(w, id);
            mcp_jw_key(w, "name");
            mcp_jw_string(w, aml_col_text(st, 1));
            mcp_jw_key(w, "role");
            mcp_jw_string(w, strcmp(aml_col_text(st, 2), "primary") == 0 ? "subject" : aml_col_text(st, 2));
            mcp_jw_key(w, "type");
            mcp_jw_string(w, aml_col_text(st, 3));
            mcp_jw_object_end(w);
        }
        aml_reset(st);
    }
    mcp_jw_array_end(w);
}

static void accounts_write(aml_acct_map *ids, mcp_jw *w, const aml_case *c)
{
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < c->naccts; i++) {
        const char *id = aml_acct_map_get(ids, c->accts[i]);
        mcp_jw_string(w, id ? id : "");
    }
    mcp_jw_array_end(w);
}

/* "window": {"from": ..., "to": ...} */
static void window_write(mcp_jw *w, int64_t from, int64_t to)
{
    char t[21];
    mcp_jw_key(w, "window");
    mcp_jw_object_begin(w);
    aml_fmt_time(from, t);
    mcp_jw_key(w, "from");
    mcp_jw_string(w, t);
    aml_fmt_time(to, t);
    mcp_jw_key(w, "to");
    mcp_jw_string(w, t);
    mcp_jw_object_end(w);
}

/* "key": v when it is set, else null */
static void opt_member(mcp_jw *w, const char *key, int has, const char *v)
{
    mcp_jw_key(w, key);
    has ? mcp_jw_string(w, v) : mcp_jw_null(w);
}

/* "key": string, or null when empty */
static void opt_string(mcp_jw *w, const char *key, const char *v)
{
    opt_member(w, key, v[0] != '\0', v);
}

/*
 * key: the rows of a query on the case (bound to ?1) as an array of objects,
 * table-driven: member i is named keys[i] and its column written as types[i]:
 * 's' a string, 'S' a string or null, 'i' an integer.
 */
static void rows_write(aml_store *s, mcp_jw *w, const char *key, const char *sql, const char *case_id,
                       const char *const *keys, const char *types)
{
    mcp_jw_key(w, key);
    mcp_jw_array_begin(w);
    aml_st *st = aml_stmt(s, sql);
    if (st) {
        aml_bind_text(st, 1, case_id);
        while (aml_step(st) == AML_ROW) {
            mcp_jw_object_begin(w);
            for (int i = 0; keys[i]; i++) {
                mcp_jw_key(w, keys[i]);
                if (types[i] == 'i')
                    mcp_jw_int(w, aml_col_int(st, i));
                else if (types[i] == 'S')
                    aml_jw_col_text(w, st, i);
                else
                    mcp_jw_string(w, aml_col_text(st, i));
            }
            mcp_jw_object_end(w);
        }
        aml_reset(st);
    }
    mcp_jw_array_end(w);
}

/* key: the first column of a query on the case (bound to ?1) as an array of strings. */
static void strings_write(aml_store *s, mcp_jw *w, const char *key, const char *sql, const char *case_id)
{
    mcp_jw_key(w, key);
    mcp_jw_array_begin(w);
    aml_st *st = aml_stmt(s, sql);
    if (st) {
        aml_bind_text(st, 1, case_id);
        while (aml_step(st) == AML_ROW)
            mcp_jw_string(w, aml_col_text(st, 0));
        aml_reset(st);
    }
    mcp_jw_array_end(w);
}

/* The risk level, score and latest assessment stored on the case. */
static void case_risk_write(aml_store *s, mcp_jw *w, const aml_case *c)
{
    aml_st *st = aml_stmt(s, "SELECT risk_level, case_score, last_assessment_id FROM cases WHERE case_id = ?");
    if (!st)
        return;
    aml_bind_text(st, 1, c->case_id);
    if (aml_step(st) == AML_ROW) {
        mcp_jw_key(w, "riskLevel");
        aml_jw_col_text(w, st, 0);
        mcp_jw_key(w, "caseScore");
        aml_jw_col_int(w, st, 1);
        mcp_jw_key(w, "lastAssessmentId");
        aml_jw_col_text(w, st, 2);
    }
    aml_reset(st);
}

void aml_case_write(aml_store *s, mcp_jw *w, const aml_case *c)
{
    static const char *const typology_keys[] = {"typologyId", "score", NULL};
    static const char *const assessment_keys[] = {"assessmentId", "kind", "createdAt", "outcome", "caseScore",
                                                  "riskLevel", NULL};
    static const char *const sar_keys[] = {"sarDraftId", "version", "status", "createdAt", "filingDueDate", NULL};
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, c->case_id);
    mcp_jw_key(w, "title");
    mcp_jw_string(w, c->title);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, c->status);
    opt_string(w, "priority", c->priority);
    opt_string(w, "origin", c->origin);
    mcp_jw_key(w, "openedAt");
    mcp_jw_string(w, c->opened_at);
    opt_string(w, "detectionDate", c->detection_date);
    window_write(w, c->from, c->to);
    aml_acct_map ids;
    aml_acct_map_init(&ids, s, AML_ACCT_ID);
    aml_acct_map_load(&ids, c->accts, c->naccts);
    mcp_jw_key(w, "focusAccounts");
    accounts_write(&ids, w, c);
    aml_acct_map_cleanup(&ids);
    mcp_jw_key(w, "subjects");
    aml_subjects_write(s, w, c);
    case_risk_write(s, w, c);
    rows_write(s, w, "matchedTypologies",
               "SELECT typology_id, score FROM case_typologies WHERE case_id = ? ORDER BY typology_id", c->case_id,
               typology_keys, "si");
    rows_write(s, w, "assessments",
               "SELECT assessment_id, kind, created_at, outcome, case_score, risk_level FROM assessments "
               "WHERE case_id = ? ORDER BY created_at, assessment_id",
               c->case_id, assessment_keys, "ssssis");
    rows_write(s, w, "sarDrafts",
               "SELECT sar_draft_id, version, status, created_at, filing_due_date FROM sar_drafts "
               "WHERE case_id = ? ORDER BY version",
               c->case_id, sar_keys, "sissS");
    aml_wf_member(s, w, c->case_id, 1);
    mcp_jw_object_end(w);
}

/* The engine that produced an assessment and the digests that identify its inputs. */
static void engine_write(mcp_jw *w, const aml_assessment *a)
{
    mcp_jw_key(w, "engine");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "version");
    mcp_jw_string(w, AML_ENGINE_VERSION);
    mcp_jw_key(w, "catalogVersion");
    mcp_jw_string(w, AML_CATALOG_VERSION);
    mcp_jw_key(w, "paramsSha256");
    mcp_jw_string(w, a->params_sha);
    mcp_jw_key(w, "dataSha256");
    mcp_jw_string(w, a->data_sha);
    mcp_jw_key(w, "transactionsRead");
    mcp_jw_int(w, a->edges_read);
    mcp_jw_key(w, "deterministic");
    mcp_jw_bool(w, 1);
    mcp_jw_object_end(w);
}

/* "2 of 14 typologies matched: ... . 11 not matched. 1 not evaluable (T14: missing data)." */
static void summary_write(mcp_jw *w, const aml_assessment *a)
{
    const aml_typology_def *cat = aml_catalog();
    mcp_buf sb;
    mcp_buf_init(&sb, 0);
    int requested = 0;
    for (int t = 0; t < AML_NTYP; t++)
        requested += (a->mask >> t) & 1;
    if (a->matched) {
        aml_buf_printf(&sb, "%d of %d typologies matched: ", a->matched, requested);
        int k = 0;
        for (int t = 0; t < AML_NTYP; t++)
            if (a->f[t].status == AML_MATCHED)
                aml_buf_printf(&sb, "%s%s (score %d)", k++ ? ", " : "", cat[t].name, a->f[t].score);
        aml_buf_puts(&sb, ".");
    } else {
        aml_buf_printf(&sb, "No typology matched (%d evaluated).", requested);
    }
    int nm = requested - a->matched - a->not_evaluable;
    if (nm)
        aml_buf_printf(&sb, " %d not matched.", nm);
    if (a->not_evaluable) {
        aml_buf_printf(&sb, " %d not evaluable (", a->not_evaluable);
        int k = 0;
        for (int t = 0; t < AML_NTYP; t++)
            if ((a->mask & (1u << t)) && a->f[t].status == AML_NOT_EVALUABLE)
                aml_buf_printf(&sb, "%s%s", k++ ? ", " : "", cat[t].code);
        aml_buf_puts(&sb, ": missing data).");
    }
    mcp_jw_key(w, "summary");
    mcp_jw_stringn(w, sb.data ? sb.data : "", sb.len);
    mcp_buf_cleanup(&sb);
}

static void matched_write(mcp_jw *w, const aml_assessment *a)
{
    const aml_typology_def *cat = aml_catalog();
    mcp_jw_key(w, "matchedTypologies");
    mcp_jw_array_begin(w);
    for (int t = 0; t < AML_NTYP; t++) {
        if (a->f[t].status != AML_MATCHED || !(a->mask & (1u << t)))
            continue;
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "typologyId");
        mcp_jw_string(w, cat[t].id);
        mcp_jw_key(w, "name");
        mcp_jw_string(w, cat[t].name);
        mcp_jw_key(w, "score");
        mcp_jw_int(w, a->f[t].score);
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
}

/* The recommendation and the SAR block (assessCase only). */
static void recommendation_write(mcp_jw *w, const aml_case *c, const aml_recommendation *r)
{
    mcp_jw_key(w, "recommendation");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "action");
    mcp_jw_string(w, r->action);
    mcp_jw_key(w, "reasons");
    mcp_jw_array_begin(w);
    for (int i = 0; i < r->nreasons; i++)
        mcp_jw_string(w, r->reasons[i]);
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "sar");
    mcp_jw_object_begin(w);
    opt_string(w, "detectionDate", c->detection_date);
    opt_string(w, "dueDate", r->due_date);
    mcp_jw_key(w, "dueRule");
    mcp_jw_string(w, "30 calendar days from initial detection; up to 60 if no suspect is identified "
                     "(FFIEC BSA/AML Manual; 12 CFR 21.11(d))");
    mcp_jw_key(w, "suspectIdentified");
    mcp_jw_bool(w, r->suspect_identified);
    mcp_jw_key(w, "amountInvolvedUsdMinor");
    mcp_jw_int(w, r->amount_usd);
    mcp_jw_key(w, "reportingFloorUsdMinor");
    mcp_jw_int(w, AML_SAR_FLOOR_MINOR);
    mcp_jw_object_end(w);
}

void aml_assessment_write(aml_store *s, mcp_jw *w, const aml_case *c, const aml_assessment *a, const char *kind,
                          const aml_recommendation *r)
{
    aml_asm_rows rows;
    aml_asm_rows_load(s, &rows, a, c->accts, c->naccts);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "assessmentId");
    mcp_jw_string(w, a->assessment_id);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, c->case_id);
    mcp_jw_key(w, "kind");
    mcp_jw_string(w, kind);
    mcp_jw_key(w, "outcome");
    mcp_jw_string(w, a->outcome);
    mcp_jw_key(w, "caseScore");
    mcp_jw_int(w, a->case_score);
    mcp_jw_key(w, "riskLevel");
    mcp_jw_string(w, a->risk_level);
    window_write(w, c->from, c->to);
    mcp_jw_key(w, "subjects");
    aml_subjects_write(s, w, c);
    mcp_jw_key(w, "focusAccounts");
    accounts_write(&rows.ids, w, c);
    engine_write(w, a);
    summary_write(w, a);
    matched_write(w, a);
    if (r)
        recommendation_write(w, c, r);
    mcp_jw_key(w, "findings");
    mcp_jw_array_begin(w);
    for (int t = 0; t < AML_NTYP; t++)
        if (a->mask & (1u << t))
            aml_finding_write(s, &rows, w, a, t);
    mcp_jw_array_end(w);
    aml_asm_rows_cleanup(&rows);
    mcp_jw_key(w, "caveats");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "Rule matches are indicators for human review, not determinations of illegality (FFIEC BSA/AML "
                     "Manual, Appendix F).");
    mcp_jw_string(w, "SAR information is confidential under 31 U.S.C. 5318(g)(2); do not disclose it to any person "
                     "involved in the transactions.");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
}

/* The assessment row: *inserted is 0 when it was there already (the id derives from the inputs). */
static int insert_assessment(aml_store *s, const aml_case *c, const aml_assessment *a, const char *kind,
                             const char *requested_json, const char *actor, const char *result_json, int *inserted,
                             aml_err *err)
{
    char from[21], to[21], now[21];
    aml_fmt_time(c->from, from);
    aml_fmt_time(c->to, to);
    aml_fmt_time(aml_now(), now);
    aml_st *st = aml_stmt(s, "INSERT INTO assessments(assessment_id, case_id, kind, "
                                   "requested_typologies, engine_version, catalog_version, params_sha256, data_sha256, "
                                   "window_from, window_to, created_at, requested_by, outcome, case_score, risk_level, "
                                   "result_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, a->assessment_id);
    aml_bind_text(st, 2, c->case_id);
    aml_bind_text(st, 3, kind);
    aml_bind_text(st, 4, requested_json);
    aml_bind_text(st, 5, AML_ENGINE_VERSION);
    aml_bind_text(st, 6, AML_CATALOG_VERSION);
    aml_bind_text(st, 7, a->params_sha);
    aml_bind_text(st, 8, a->data_sha);
    aml_bind_text(st, 9, from);
    aml_bind_text(st, 10, to);
    aml_bind_text(st, 11, now);
    aml_bind_text(st, 12, actor);
    aml_bind_text(st, 13, a->outcome);
    aml_bind_int(st, 14, a->case_score);
    aml_bind_text(st, 15, a->risk_level);
    aml_bind_text(st, 16, result_json);
    if (aml_step_done(s, st, err))
        return -1;
    *inserted = aml_changes(s) == 1;
    return 0;
}

/* The parameters a finding of typology t was assessed with, as JSON (malloc), or NULL out of memory. */
static char *finding_params(const aml_assessment *a, int t)
{
    mcp_buf pb;
    mcp_jw pw;
    mcp_buf_init(&pb, 0);
    mcp_jw_init(&pw, &pb);
    aml_params_write(&pw, &a->params, t);
    char *out = pb.data ? aml_strndup(pb.data, pb.len) : aml_strdup("{}");
    mcp_buf_cleanup(&pb);
    return out;
}

/*
 * The findings of an assessment and their evidence on PostgreSQL: two statements over arrays (two round
 * trips instead of one per finding and one per evidence row). Rows go in the order of the row loop
 * (insert_finding), so a repeated transaction keeps its first ordinal and role as there.
 */
static int insert_findings_pg(aml_store *s, const aml_assessment *a, aml_err *err)
{
    const char *typ[AML_NTYP], *status[AML_NTYP], *expl[AML_NTYP], *metrics[AML_NTYP];
    char *params[AML_NTYP] = {0};
    int64_t score[AML_NTYP];
    size_t nf = 0, nev = 0;
    int rc = 0;
    for (int t = 0; t < AML_NTYP; t++) {
        if (!(a->mask & (1u << t)))
            continue;
        const aml_finding *f = &a->f[t];
        typ[nf] = aml_catalog()[t].id;
        status[nf] = aml_status_name(f->status);
        score[nf] = f->score;
        expl[nf] = f->explanation ? f->explanation : "";
        metrics[nf] = f->metrics_json ? f->metrics_json : "{}";
        if (!(params[nf] = finding_params(a, t)))
            rc = -1;
        nf++;
        nev += f->nev;
    }
    const char **evt = malloc((nev ? nev : 1) * sizeof *evt);
    int64_t *evn = malloc((nev ? nev : 1) * 3 * sizeof *evn);
    if (rc || !evt || !evn) {
        rc = aml_errf(err, "out of memory");
        goto done;
    }
    size_t k = 0;
    for (int t = 0; t < AML_NTYP; t++)
        for (size_t i = 0; (a->mask & (1u << t)) && i < a->f[t].nev; i++, k++) {
            evt[k] = aml_catalog()[t].id;
            evn[k] = a->f[t].ev[i].no;
            evn[nev + k] = (int64_t)i;
            evn[2 * nev + k] = a->f[t].ev[i].role == AML_ROLE_TRIGGER ? 0 : 1;
        }
    aml_st *st = aml_stmt(s, "INSERT INTO assessment_findings(assessment_id, typology_id, status, score, explanation, "
                             "metrics_json, params_json) SELECT ?1, x.t, x.st, x.sc, x.ex, x.m, x.p FROM "
                             "unnest(CAST(?2 AS text[]), CAST(?3 AS text[]), CAST(?4 AS bigint[]), CAST(?5 AS text[]), "
                             "CAST(?6 AS text[]), CAST(?7 AS text[])) WITH ORDINALITY AS x(t, st, sc, ex, m, p, k) "
                             "ORDER BY x.k ON CONFLICT DO NOTHING");
    if (!st) {
        rc = aml_errf(err, "%s", aml_errmsg(s));
        goto done;
    }
    aml_bind_text(st, 1, a->assessment_id);
    if (aml_bind_text_array(st, 2, typ, nf) || aml_bind_text_array(st, 3, status, nf) ||
        aml_bind_int_array(st, 4, score, nf) || aml_bind_text_array(st, 5, expl, nf) ||
        aml_bind_text_array(st, 6, metrics, nf) || aml_bind_text_array(st, 7, (const char *const *)params, nf)) {
        rc = aml_errf(err, "out of memory");
        goto done;
    }
    if ((rc = aml_step_done(s, st, err)) != 0 || !nev)
        goto done;
    st = aml_stmt(s, "INSERT INTO finding_evidence(assessment_id, typology_id, txn_no, ordinal, role) "
                     "SELECT ?1, x.t, x.no, x.ord, CASE WHEN x.r = 0 THEN 'trigger' ELSE 'context' END FROM "
                     "unnest(CAST(?2 AS text[]), CAST(?3 AS bigint[]), CAST(?4 AS bigint[]), CAST(?5 AS bigint[])) "
                     "WITH ORDINALITY AS x(t, no, ord, r, k) ORDER BY x.k ON CONFLICT DO NOTHING");
    if (!st) {
        rc = aml_errf(err, "%s", aml_errmsg(s));
        goto done;
    }
    aml_bind_text(st, 1, a->assessment_id);
    if (aml_bind_text_array(st, 2, evt, nev) || aml_bind_int_array(st, 3, evn, nev) ||
        aml_bind_int_array(st, 4, evn + nev, nev) || aml_bind_int_array(st, 5, evn + 2 * nev, nev)) {
        rc = aml_errf(err, "out of memory");
        goto done;
    }
    rc = aml_step_done(s, st, err);
done:
    for (size_t i = 0; i < nf; i++)
        free(params[i]);
    free(evt);
    free(evn);
    return rc ? -1 : 0;
}

/* One finding of an assessment, with its parameters and evidence. */
static int insert_finding(aml_store *s, const aml_assessment *a, int t, aml_err *err)
{
    const aml_finding *f = &a->f[t];
    mcp_buf pb;
    mcp_jw pw;
    mcp_buf_init(&pb, 0);
    mcp_jw_init(&pw, &pb);
    aml_params_write(&pw, &a->params, t);
    aml_st *st = aml_stmt(s, "INSERT INTO assessment_findings(assessment_id, typology_id, status, "
                                   "score, explanation, metrics_json, params_json) VALUES (?,?,?,?,?,?,?) "
                                   "ON CONFLICT DO NOTHING");
    if (!st) {
        mcp_buf_cleanup(&pb);
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    aml_bind_text(st, 1, a->assessment_id);
    aml_bind_text(st, 2, aml_catalog()[t].id);
    aml_bind_text(st, 3, aml_status_name(f->status));
    aml_bind_int(st, 4, f->score);
    aml_bind_text(st, 5, f->explanation ? f->explanation : "");
    aml_bind_text(st, 6, f->metrics_json ? f->metrics_json : "{}");
    aml_bind_textn(st, 7, pb.data ? pb.data : "{}", pb.data ? pb.len : 2);
    int bad = aml_step_done(s, st, err);
    mcp_buf_cleanup(&pb);
    if (bad)
        return -1;
    for (size_t i = 0; i < f->nev; i++) {
        st = aml_stmt(s, "INSERT INTO finding_evidence(assessment_id, typology_id, txn_no, ordinal, "
                         "role) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING");
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_text(st, 1, a->assessment_id);
        aml_bind_text(st, 2, aml_catalog()[t].id);
        aml_bind_int(st, 3, f->ev[i].no);
        aml_bind_int(st, 4, (int64_t)i);
        aml_bind_text(st, 5, f->ev[i].role == AML_ROLE_TRIGGER ? "trigger" : "context");
        if (aml_step_done(s, st, err))
            return -1;
    }
    return 0;
}

/* A full case assessment becomes the case's risk level, score and matched typologies. */
static int update_case_risk(aml_store *s, const aml_case *c, const aml_assessment *a, aml_err *err)
{
    aml_st *st = aml_stmt(s, "UPDATE cases SET risk_level = ?, case_score = ?, last_assessment_id = ? "
                                   "WHERE case_id = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, a->risk_level);
    aml_bind_int(st, 2, a->case_score);
    aml_bind_text(st, 3, a->assessment_id);
    aml_bind_text(st, 4, c->case_id);
    if (aml_step_done(s, st, err))
        return -1;
    st = aml_stmt(s, "DELETE FROM case_typologies WHERE case_id = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, c->case_id);
    if (aml_step_done(s, st, err))
        return -1;
    for (int t = 0; t < AML_NTYP; t++) {
        if (a->f[t].status != AML_MATCHED)
            continue;
        st = aml_stmt(s, "INSERT INTO case_typologies(case_id, typology_id, score) VALUES (?,?,?)");
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_text(st, 1, c->case_id);
        aml_bind_text(st, 2, aml_catalog()[t].id);
        aml_bind_int(st, 3, a->f[t].score);
        if (aml_step_done(s, st, err))
            return -1;
    }
    return 0;
}

int aml_assessment_store(aml_store *s, const aml_case *c, const aml_assessment *a, const char *kind,
                         const char *requested_json, const char *actor, const char *result_json, aml_err *err)
{
    int own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        return -1;
    int inserted = 0;
    int rc = insert_assessment(s, c, a, kind, requested_json, actor, result_json, &inserted, err);
    if (!rc && inserted && aml_store_backend(s) == AML_BACKEND_PG)
        rc = insert_findings_pg(s, a, err);
    for (int t = 0; !rc && inserted && aml_store_backend(s) != AML_BACKEND_PG && t < AML_NTYP; t++)
        if (a->mask & (1u << t))
            rc = insert_finding(s, a, t, err);
    if (!rc && strcmp(kind, "case") == 0 && a->mask == AML_ALL_TYPOLOGIES)
        rc = update_case_risk(s, c, a, err);
    if (!rc && own && aml_commit(s, err))
        rc = -1;
    if (rc && own)
        aml_rollback(s);
    return rc ? -1 : 0;
}

int aml_assessment_record(aml_store *s, const aml_case *c, const aml_assessment *a, const aml_recommendation *r,
                          const char *actor, aml_err *err)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_assessment_write(s, &w, c, a, "case", r);
    int rc = mcp_jw_finish(&w) != MCP_OK ||
             aml_assessment_store(s, c, a, "case", "[\"*\"]", actor, b.data, err);
    mcp_buf_cleanup(&b);
    return rc ? (err && err->msg[0] ? -1 : aml_errf(err, "cannot write the assessment")) : 0;
}

int aml_case_reassess(aml_store *s, const char *case_id, const aml_params *p, const char *actor, aml_err *err)
{
    aml_case c;
    int lr = aml_case_load(s, case_id, &c, err);
    if (lr)
        return lr > 0 ? aml_errf(err, "no such case %s", case_id) : -1;
    aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
    aml_assessment a;
    int rc = aml_engine_run(s, &cs, p, AML_ALL_TYPOLOGIES, "case", &a, err);
    if (!rc) {
        aml_recommendation r;
        aml_recommend(s, &c, &a, &r);
        rc = aml_assessment_record(s, &c, &a, &r, actor, err);
        aml_assessment_free(&a);
    }
    aml_case_free(&c);
    return rc;
}

/* ---- listing ------------------------------------------------------------------ */

void aml_cursor_encode(const char *case_id, char *out, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    size_t k = 0;
    if (n < 4) {
        if (n)
            out[0] = '\0';
        return;
    }
    memcpy(out, "c1.", 3);
    k = 3;
    for (const unsigned char *p = (const unsigned char *)case_id; *p && k + 2 < n; p++) {
        out[k++] = hx[*p >> 4];
        out[k++] = hx[*p & 15];
    }
    out[k] = '\0';
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int aml_cursor_decode(const char *cursor, char *case_id, size_t n)
{
    size_t len = strlen(cursor);
    if (len < 5 || strncmp(cursor, "c1.", 3) != 0 || (len - 3) % 2 || (len - 3) / 2 >= n)
        return -1;
    size_t k = 0;
    for (size_t i = 3; i < len; i += 2) {
        int h = unhex(cursor[i]), l = unhex(cursor[i + 1]);
        if (h < 0 || l < 0)
            return -1;
        char c = (char)(h << 4 | l);
        if (c == '\0')
            return -1;
        case_id[k++] = c;
    }
    case_id[k] = '\0';
    return 0;
}

/* One filter set, shared by the page query and the count query. */
#define CASE_FILTER                                                                                          \
    "(CAST(?1 AS TEXT) = 'any' OR (CAST(?1 AS TEXT) = 'active' AND c.status IN ('open','in_review','escalated')) " \
    "OR c.status = CAST(?1 AS TEXT)) "                                                                       \
    "AND (CAST(?2 AS TEXT) IS NULL OR (CAST(?2 AS TEXT) = 'unassessed' AND c.risk_level IS NULL) "           \
    "OR c.risk_level = CAST(?2 AS TEXT)) "                                                                   \
    "AND (CAST(?3 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM case_typologies t WHERE t.case_id = c.case_id "  \
    "AND t.typology_id = CAST(?3 AS TEXT))) "                                                                \
    "AND (CAST(?4 AS TEXT) IS NULL OR substr(c.opened_at, 1, 10) >= CAST(?4 AS TEXT)) "                      \
    "AND (CAST(?5 AS TEXT) IS NULL OR substr(c.opened_at, 1, 10) <= CAST(?5 AS TEXT)) "                      \
    AML_WF_FILTER

static void bind_filter(aml_st *st, const aml_case_filter *f)
{
    aml_bind_text(st, 1, f->status ? f->status : "active");
    aml_bind_text(st, 2, f->risk_level);
    aml_bind_text(st, 3, f->typology);
    aml_bind_text(st, 4, f->opened_from);
    aml_bind_text(st, 5, f->opened_to);
    aml_wf_bind_filter(st, f->state, f->assignee, f->disposition, f->overdue);
}

/* A case of a listCases page, copied out of the page query (per-row lookups reuse other statements). */
typedef struct case_row {
    char id[AML_CASE_ID_MAX + 1], title[256], status[24], priority[16], origin[16], opened[32], detected[16],
        risk[8];
    int64_t from, to, score;
    int has_priority, has_origin, has_detected, has_risk, has_score;
} case_row;

/* A text column into a row field; *has says whether it was set. */
static void col_copy(aml_st *st, int i, char *out, size_t n, int *has)
{
    if (has)
        *has = !aml_col_null(st, i);
    snprintf(out, n, "%s", aml_col_text(st, i));
}

/* Rows of the page: up to limit + 1 (one more says there is a next page). @return how many, or -1. */
static int fetch_page(aml_store *s, const aml_case_filter *f, int limit, case_row *rows, aml_err *err)
{
    static const char *const sql_page =
        "SELECT c.case_id, c.title, c.status, c.priority, c.origin, c.opened_at, c.detection_date, c.window_from, "
        "c.window_to, c.risk_level, c.case_score FROM cases c WHERE " CASE_FILTER
        "AND (CAST(?12 AS TEXT) IS NULL OR c.case_id > CAST(?12 AS TEXT)) ORDER BY c.case_id LIMIT ?13";
    aml_st *st = aml_stmt(s, sql_page);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    bind_filter(st, f);
    aml_bind_text(st, 12, f->after);
    aml_bind_int(st, 13, limit + 1);
    int n = 0, rc;
    while ((rc = aml_step(st)) == AML_ROW && n <= limit) {
        case_row *r = &rows[n++];
        col_copy(st, 0, r->id, sizeof r->id, NULL);
        col_copy(st, 1, r->title, sizeof r->title, NULL);
        col_copy(st, 2, r->status, sizeof r->status, NULL);
        col_copy(st, 3, r->priority, sizeof r->priority, &r->has_priority);
        col_copy(st, 4, r->origin, sizeof r->origin, &r->has_origin);
        col_copy(st, 5, r->opened, sizeof r->opened, NULL);
        col_copy(st, 6, r->detected, sizeof r->detected, &r->has_detected);
        r->from = aml_col_int(st, 7);
        r->to = aml_col_int(st, 8);
        col_copy(st, 9, r->risk, sizeof r->risk, &r->has_risk);
        r->has_score = !aml_col_null(st, 10);
        r->score = aml_col_int(st, 10);
    }
    aml_reset(st);
    if (rc != AML_ROW && rc != AML_DONE)
        return aml_errf(err, "%s", aml_errmsg(s));
    return n;
}

static void case_row_write(aml_store *s, mcp_jw *w, const case_row *r)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, r->id);
    mcp_jw_key(w, "title");
    mcp_jw_string(w, r->title);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, r->status);
    opt_member(w, "priority", r->has_priority, r->priority);
    opt_member(w, "origin", r->has_origin, r->origin);
    mcp_jw_key(w, "openedAt");
    mcp_jw_string(w, r->opened);
    opt_member(w, "detectionDate", r->has_detected, r->detected);
    window_write(w, r->from, r->to);
    opt_member(w, "riskLevel", r->has_risk, r->risk);
    mcp_jw_key(w, "caseScore");
    r->has_score ? mcp_jw_int(w, r->score) : mcp_jw_null(w);
    strings_write(s, w, "focusAccounts",
                  "SELECT a.account_id FROM case_accounts ca JOIN accounts a ON a.acct_no = ca.acct_no "
                  "WHERE ca.case_id = ? ORDER BY a.account_id",
                  r->id);
    strings_write(s, w, "matchedTypologies",
                  "SELECT typology_id FROM case_typologies WHERE case_id = ? ORDER BY typology_id", r->id);
    aml_wf_member(s, w, r->id, 0);
    mcp_jw_object_end(w);
}

int aml_cases_list(aml_store *s, mcp_jw *w, const aml_case_filter *f, int *count, char *next_cursor, size_t ncur,
                   aml_err *err)
{
    static const char *const sql_count = "SELECT count(*) FROM cases c WHERE " CASE_FILTER;
    int64_t total = 0;
    aml_st *st = aml_stmt(s, sql_count);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    bind_filter(st, f);
    if (aml_step(st) == AML_ROW)
        total = aml_col_int(st, 0);
    aml_reset(st);
    int limit = f->limit < 1 ? 20 : f->limit > 100 ? 100 : f->limit;
    case_row *rows = calloc((size_t)limit + 1, sizeof *rows);
    if (!rows)
        return aml_errf(err, "out of memory");
    int n = fetch_page(s, f, limit, rows, err);
    if (n < 0) {
        free(rows);
        return -1;
    }
    int more = n > limit;
    if (more)
        n = limit;
    next_cursor[0] = '\0';
    if (more)
        aml_cursor_encode(rows[n - 1].id, next_cursor, ncur);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "cases");
    mcp_jw_array_begin(w);
    for (int i = 0; i < n; i++)
        case_row_write(s, w, &rows[i]);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "total");
    mcp_jw_int(w, total);
    if (more) {
        mcp_jw_key(w, "nextCursor");
        mcp_jw_string(w, next_cursor);
    }
    mcp_jw_object_end(w);
    free(rows);
    *count = n;
    return 0;
}
