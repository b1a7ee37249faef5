/*
 * Detection-quality evaluation: see eval.h.
 */
#include "commands/eval.h"
#include "commands/gen.h"

#include <stdlib.h>
#include <string.h>

/* ---- over generated cases ------------------------------------------------------------ */

/* A case the generator built: the typology injected (or imitated by a look-alike). */
typedef struct inst {
    char case_id[AML_CASE_ID_MAX + 1];
    int typ, lookalike;
} inst;

static int load_instances(aml_store *s, inst **out, size_t *np, aml_err *err)
{
    inst *ins = NULL;
    size_t n = 0, cap = 0;
    aml_st *st = aml_stmt(s, "SELECT case_id, typology_id, kind FROM gt_instances WHERE case_id IS NOT NULL "
                                   "ORDER BY instance_id");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    while (aml_step(st) == AML_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            inst *ni = realloc(ins, cap * sizeof *ni);
            if (!ni) {
                aml_reset(st);
                free(ins);
                return aml_errf(err, "out of memory");
            }
            ins = ni;
        }
        const char *tid = aml_col_text(st, 1);
        snprintf(ins[n].case_id, sizeof ins[n].case_id, "%s", aml_col_text(st, 0));
        ins[n].typ = aml_typology_index(tid, strlen(tid));
        ins[n].lookalike = strcmp(aml_col_text(st, 2), "lookalike") == 0;
        if (ins[n].typ >= 0)
            n++;
    }
    aml_reset(st);
    *out = ins;
    *np = n;
    return 0;
}

/* Counts one case's matches: a hit for its own typology, an overlap, or a false alarm. */
static void tally(const inst *in, const aml_case *c, const aml_assessment *a, aml_quality q[AML_NTYP], FILE *out)
{
    int x = in->typ;
    unsigned overlap = in->lookalike ? 0 : aml_gen_overlap(x);
    if (in->lookalike)
        q[x].lookalikes++;
    else
        q[x].injected++;
    for (int t = 0; t < AML_NTYP; t++) {
        int hit = a->f[t].status == AML_MATCHED;
        if (t == x && !in->lookalike) {
            q[t].detected += hit;
            q[t].alerts += hit;
            continue;
        }
        if (!hit)
            continue;
        if (overlap & (1u << t)) {
            q[t].overlap_hits++;
            continue;
        }
        q[t].alerts++;
        q[t].false_pos++;
        if (in->lookalike && t == x)
            q[t].lookalike_hits++;
        if (out && getenv("AML_EVAL_VERBOSE"))
            fprintf(out, "  false alarm: %s matched on %s (%s %s)\n", aml_catalog()[t].code, c->case_id,
                    aml_catalog()[x].code, in->lookalike ? "look-alike" : "instance");
    }
    if (out && getenv("AML_EVAL_VERBOSE") && !in->lookalike && a->f[x].status != AML_MATCHED)
        fprintf(out, "  missed: %s on %s: %s\n", aml_catalog()[x].code, c->case_id, a->f[x].explanation);
}

/* Assesses the case of one instance and counts it. */
static int score_instance(aml_store *s, const inst *in, const aml_params *p, aml_quality q[AML_NTYP], FILE *out,
                          aml_err *err)
{
    aml_case c;
    int lr = aml_case_load(s, in->case_id, &c, err);
    if (lr)
        return lr > 0 ? aml_errf(err, "ground truth names unknown case %s", in->case_id) : -1;
    aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
    aml_assessment a;
    int rc = aml_engine_run(s, &cs, p, AML_ALL_TYPOLOGIES, "case", &a, err);
    if (!rc) {
        tally(in, &c, &a, q, out);
        aml_assessment_free(&a);
    }
    aml_case_free(&c);
    return rc;
}

static void print_quality(FILE *out, const aml_quality q[AML_NTYP])
{
    fprintf(out, "%-28s %8s %8s %7s %10s %7s %6s %9s %8s\n", "typology", "injected", "detected", "recall",
            "lookalikes", "alerts", "false", "precision", "overlap");
    for (int t = 0; t < AML_GEN_NTYP; t++) /* T15 has no ground truth: the generator does not inject it */
        fprintf(out, "%-28s %8d %8d %6.1f%% %10d %7d %6d %8.1f%% %8d\n", aml_catalog()[t].id, q[t].injected,
                q[t].detected, 100 * q[t].recall, q[t].lookalikes, q[t].alerts, q[t].false_pos, 100 * q[t].precision,
                q[t].overlap_hits);
    fprintf(out, "(overlap: matches on instances of another typology whose construction also meets this one; "
                 "counted neither way)\n");
}

int aml_eval_cases(aml_store *s, FILE *out, aml_quality q[AML_NTYP], aml_err *err)
{
    memset(q, 0, sizeof(aml_quality) * AML_NTYP);
    inst *ins;
    size_t n;
    if (load_instances(s, &ins, &n, err))
        return -1;
    aml_params p;
    aml_params_default(&p);
    for (size_t i = 0; i < n; i++)
        if (score_instance(s, &ins[i], &p, q, out, err)) {
            free(ins);
            return -1;
        }
    free(ins);
    for (int t = 0; t < AML_NTYP; t++) {
        q[t].recall = q[t].injected ? (double)q[t].detected / q[t].injected : 0;
        q[t].precision = q[t].alerts ? (double)(q[t].alerts - q[t].false_pos) / q[t].alerts : 1;
    }
    if (out)
        print_quality(out, q);
    return 0;
}

/* ---- the scan's alerts over a generated bank ---------------------------------------------- */

/* An (account, instance) pair of the ground truth: the instance's typology, kind and overlap. */
typedef struct gt_link {
    int64_t acct;
    int typ, lookalike;
} gt_link;

static int cmp_link(const void *a, const void *b)
{
    const gt_link *x = a, *y = b;
    return x->acct < y->acct ? -1 : x->acct > y->acct;
}

static int load_links(aml_store *s, gt_link **out, size_t *np, aml_err *err)
{
    gt_link *l = NULL;
    size_t n = 0, cap = 0;
    aml_st *st = aml_stmt(s, "SELECT a.acct_no, i.typology_id, i.kind FROM gt_accounts a "
                                   "JOIN gt_instances i ON i.instance_id = a.instance_id "
                                   "ORDER BY a.instance_id, a.acct_no");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    while (aml_step(st) == AML_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            gt_link *nl = realloc(l, cap * sizeof *nl);
            if (!nl) {
                aml_reset(st);
                free(l);
                return aml_errf(err, "out of memory");
            }
            l = nl;
        }
        const char *tid = aml_col_text(st, 1);
        l[n].acct = aml_col_int(st, 0);
        l[n].typ = aml_typology_index(tid, strlen(tid));
        l[n].lookalike = strcmp(aml_col_text(st, 2), "lookalike") == 0;
        if (l[n].typ >= 0)
            n++;
    }
    aml_reset(st);
    aml_sort(l, n, sizeof *l, cmp_link);
    *out = l;
    *np = n;
    return 0;
}

/* The links of acct: [*lo, return). */
static size_t links_of(const gt_link *l, size_t n, int64_t acct, size_t *lo)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (l[mid].acct < acct)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    while (b < n && l[b].acct == acct)
        b++;
    return a < n && l[a].acct == acct ? b : a;
}

/* One flagged (account, typology): true, overlap, or a false alarm on an instance or the background. */
static void tally_alert(aml_scan_quality *q, const gt_link *l, size_t n, int64_t acct, int t)
{
    size_t lo, hi = links_of(l, n, acct, &lo);
    int truth = 0, over = 0;
    for (size_t k = lo; k < hi; k++) {
        truth |= !l[k].lookalike && l[k].typ == t;
        over |= !l[k].lookalike && (aml_gen_overlap(l[k].typ) & (1u << t));
    }
    q->alerts++;
    if (truth)
        q->true_alerts++;
    else if (over)
        q->overlap++;
    else if (hi > lo)
        q->false_instance++;
    else
        q->false_background++;
}

/* Recall: injected instances of each typology with an account flagged for it. */
static int scan_recall(aml_store *s, aml_scan_quality q[AML_NTYP], aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT i.typology_id, EXISTS (SELECT 1 FROM gt_accounts a JOIN scan_matches m "
                                   "ON m.acct_no = a.acct_no AND m.typology_id = i.typology_id "
                                   "WHERE a.instance_id = i.instance_id) FROM gt_instances i WHERE i.kind = 'injected' "
                                   "ORDER BY i.instance_id");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    while (aml_step(st) == AML_ROW) {
        const char *tid = aml_col_text(st, 0);
        int t = aml_typology_index(tid, strlen(tid));
        if (t < 0)
            continue;
        q[t].injected++;
        q[t].detected += (int)aml_col_int(st, 1);
    }
    aml_reset(st);
    return 0;
}

/* Customers with no injected instance: how many are active, how many the scan flagged. */
static int scan_volume(aml_store *s, aml_scan_volume *vol, aml_err *err)
{
    static const char *const sql =
        "SELECT count(*), sum(flagged) FROM (SELECT p.customer_id, "
        "max(CASE WHEN EXISTS (SELECT 1 FROM scan_matches m WHERE m.acct_no = p.acct_no) THEN 1 ELSE 0 END) "
        "AS flagged, "
        "max(CASE WHEN EXISTS (SELECT 1 FROM transactions WHERE from_acct = p.acct_no) OR "
        "EXISTS (SELECT 1 FROM transactions WHERE to_acct = p.acct_no) THEN 1 ELSE 0 END) AS active, "
        "max(CASE WHEN EXISTS (SELECT 1 FROM gt_accounts a JOIN gt_instances i ON i.instance_id = a.instance_id "
        "WHERE a.acct_no = p.acct_no AND i.kind = 'injected') THEN 1 ELSE 0 END) AS injected "
        "FROM account_parties p GROUP BY p.customer_id) AS v WHERE active = 1 AND injected = 0";
    aml_st *st = aml_stmt(s, sql);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    if (aml_step(st) == AML_ROW) {
        vol->active = aml_col_int(st, 0);
        vol->alerted = aml_col_int(st, 1);
    }
    aml_reset(st);
    vol->rate = vol->active ? (double)vol->alerted / (double)vol->active : 0;
    return 0;
}

static void print_scan_quality(FILE *out, const aml_scan_quality q[AML_NTYP], const aml_scan_volume *vol)
{
    fprintf(out, "%-28s %8s %8s %7s %7s %6s %8s %9s %10s %9s\n", "typology", "injected", "detected", "recall",
            "alerts", "true", "overlap", "false:inst", "false:bg", "precision");
    for (int t = 0; t < AML_GEN_NTYP; t++)
        fprintf(out, "%-28s %8d %8d %6.1f%% %7d %6d %8d %9d %10d %8.1f%%\n", aml_catalog()[t].id, q[t].injected,
                q[t].detected, 100 * q[t].recall, q[t].alerts, q[t].true_alerts, q[t].overlap, q[t].false_instance,
                q[t].false_background, 100 * q[t].precision);
    for (int t = AML_GEN_NTYP; t < AML_NTYP; t++)
        fprintf(out, "not injected: %s, %d alerts (it depends on the loaded screening lists)\n",
                aml_catalog()[t].id, q[t].alerts);
    fprintf(out, "alert rate: %lld of %lld active customers with no injected instance flagged (%.2f%%)\n",
            (long long)vol->alerted, (long long)vol->active, 100 * vol->rate);
}

int aml_eval_scan(aml_store *s, FILE *out, aml_scan_quality q[AML_NTYP], aml_scan_volume *vol, aml_err *err)
{
    memset(q, 0, sizeof(aml_scan_quality) * AML_NTYP);
    memset(vol, 0, sizeof *vol);
    gt_link *l;
    size_t n;
    if (load_links(s, &l, &n, err))
        return -1;
    aml_st *st = aml_stmt(s, "SELECT DISTINCT acct_no, typology_id FROM scan_matches ORDER BY acct_no, typology_id");
    if (!st) {
        free(l);
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    while (aml_step(st) == AML_ROW) {
        const char *tid = aml_col_text(st, 1);
        int t = aml_typology_index(tid, strlen(tid));
        if (t >= 0)
            tally_alert(&q[t], l, n, aml_col_int(st, 0), t);
    }
    aml_reset(st);
    free(l);
    if (scan_recall(s, q, err) || scan_volume(s, vol, err))
        return -1;
    for (int t = 0; t < AML_NTYP; t++) {
        q[t].recall = q[t].injected ? (double)q[t].detected / q[t].injected : 0;
        int judged = q[t].alerts - q[t].overlap;
        q[t].precision = judged ? (double)q[t].true_alerts / judged : 1;
    }
    if (out)
        print_scan_quality(out, q, vol);
    return 0;
}

/* ---- AMLworld patterns after a scan ----------------------------------------------------- */

static const struct {
    const char *pattern;
    int typ;
    const char *variant;
} pattern_map[AML_NPATTERNS] = {
    {"FAN-IN", AML_T03, NULL},
    {"FAN-OUT", AML_T04, NULL},
    {"CYCLE", AML_T07, NULL},
    {"SCATTER-GATHER", AML_T08, "scatter_gather"},
    {"GATHER-SCATTER", AML_T08, "gather_scatter"},
    {"STACK", AML_T08, "stack"},
    {"BIPARTITE", AML_T08, "bipartite"},
};

/* A labelled laundering attempt and its accounts. */
typedef struct attempt {
    char id[128];
    int pattern; /* index into pattern_map, -1 for unmapped */
    aml_ivec accts;
} attempt;

/* A scan case and the patterns its latest assessment supports. */
typedef struct scase {
    char id[AML_CASE_ID_MAX + 1];
    aml_ivec accts;
    unsigned hits; /* bit per pattern_map entry */
} scase;

static int variant_ok(const char *metrics, const char *variant)
{
    if (!variant)
        return 1;
    mcp_json_doc *d;
    if (mcp_json_parse(&d, metrics, strlen(metrics), NULL, NULL) != MCP_OK)
        return 0;
    const mcp_json *root = mcp_json_doc_root(d);
    int ok = mcp_json_str_eq(mcp_json_get(root, "variant"), variant);
    static const char *const keys[] = {"otherVariantsMatched", "variantsInCase"};
    for (int k = 0; k < 2 && !ok; k++) {
        const char *others = mcp_json_str(mcp_json_get(root, keys[k]), NULL);
        const char *p = others ? strstr(others, variant) : NULL;
        size_t l = strlen(variant);
        ok = p && (p == others || p[-1] == ',') && (p[l] == '\0' || p[l] == ',');
    }
    mcp_json_doc_free(d);
    return ok;
}

static int intersects(const aml_ivec *a, const aml_ivec *b)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (a->v[i] == b->v[j])
            return 1;
        if (a->v[i] < b->v[j])
            i++;
        else
            j++;
    }
    return 0;
}

/* The labelled attempts, with the accounts of their transactions. */
static int load_attempts(aml_store *s, attempt **out, size_t *np, aml_err *err)
{
    attempt *at = NULL;
    size_t nat = 0, capat = 0;
    aml_st *st = aml_stmt(s, "SELECT gt_attempt_id, gt_label, from_acct, to_acct FROM transactions "
                                   "WHERE gt_attempt_id IS NOT NULL AND gt_label IS NOT NULL "
                                   "ORDER BY gt_attempt_id, txn_no");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    while (aml_step(st) == AML_ROW) {
        const char *id = aml_col_text(st, 0);
        if (!nat || strcmp(at[nat - 1].id, id) != 0) {
            if (nat == capat) {
                capat = capat ? capat * 2 : 64;
                attempt *na = realloc(at, capat * sizeof *na);
                if (!na)
                    break;
                at = na;
            }
            attempt *a = &at[nat++];
            memset(a, 0, sizeof *a);
            snprintf(a->id, sizeof a->id, "%s", id);
            a->pattern = -1;
            for (int k = 0; k < AML_NPATTERNS; k++)
                if (strcmp(pattern_map[k].pattern, aml_col_text(st, 1)) == 0)
                    a->pattern = k;
        }
        for (int k = 2; k <= 3; k++)
            if (!aml_col_null(st, k))
                aml_ivec_push(&at[nat - 1].accts, aml_col_int(st, k));
    }
    aml_reset(st);
    for (size_t i = 0; i < nat; i++)
        aml_ivec_uniq(&at[i].accts);
    *out = at;
    *np = nat;
    return 0;
}

/* A scan case's accounts, and the patterns the matched findings of assessment asm_id support. */
static void load_scan_case(aml_store *s, scase *c, const char *case_id, const char *asm_id)
{
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", case_id);
    aml_st *st = aml_stmt(s, "SELECT acct_no FROM case_accounts WHERE case_id = ?");
    if (st) {
        aml_bind_text(st, 1, c->id);
        while (aml_step(st) == AML_ROW)
            aml_ivec_push(&c->accts, aml_col_int(st, 0));
        aml_reset(st);
    }
    aml_ivec_uniq(&c->accts);
    st = aml_stmt(s, "SELECT typology_id, metrics_json FROM assessment_findings WHERE assessment_id = ? "
                     "AND status = 'matched'");
    if (st) {
        aml_bind_text(st, 1, asm_id);
        while (aml_step(st) == AML_ROW) {
            const char *tid = aml_col_text(st, 0);
            int t = aml_typology_index(tid, strlen(tid));
            for (int k = 0; k < AML_NPATTERNS; k++)
                if (pattern_map[k].typ == t && variant_ok(aml_col_text(st, 1), pattern_map[k].variant))
                    c->hits |= 1u << k;
        }
        aml_reset(st);
    }
}

/* The cases the scan opened, with their latest assessment. */
static int load_scan_cases(aml_store *s, scase **out, size_t *np, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT case_id, last_assessment_id FROM cases WHERE origin = 'scan' "
                                   "ORDER BY case_id");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    typedef struct pair {
        char c[AML_CASE_ID_MAX + 1], a[40];
    } pair;
    pair *pairs = NULL;
    size_t np2 = 0, capp = 0;
    while (aml_step(st) == AML_ROW) {
        if (np2 == capp) {
            capp = capp ? capp * 2 : 64;
            pair *nw = realloc(pairs, capp * sizeof *nw);
            if (!nw)
                break;
            pairs = nw;
        }
        snprintf(pairs[np2].c, sizeof pairs[np2].c, "%s", aml_col_text(st, 0));
        snprintf(pairs[np2].a, sizeof pairs[np2].a, "%s", aml_col_text(st, 1));
        np2++;
    }
    aml_reset(st);
    scase *cs = NULL;
    size_t ncs = 0, capcs = 0;
    for (size_t i = 0; i < np2; i++) {
        if (ncs == capcs) {
            capcs = capcs ? capcs * 2 : 64;
            scase *nc = realloc(cs, capcs * sizeof *nc);
            if (!nc)
                break;
            cs = nc;
        }
        load_scan_case(s, &cs[ncs++], pairs[i].c, pairs[i].a);
    }
    free(pairs);
    *out = cs;
    *np = ncs;
    return 0;
}

/* Recall over the attempts of pattern k, precision over the cases that support it. */
static void score_pattern(aml_pattern_quality *q, int k, const attempt *at, size_t nat, const scase *cs, size_t ncs)
{
    for (size_t i = 0; i < nat; i++) {
        if (at[i].pattern != k)
            continue;
        q->attempts++;
        for (size_t j = 0; j < ncs; j++)
            if ((cs[j].hits & (1u << k)) && intersects(&cs[j].accts, &at[i].accts)) {
                q->detected++;
                break;
            }
    }
    for (size_t j = 0; j < ncs; j++) {
        if (!(cs[j].hits & (1u << k)))
            continue;
        q->alerts++;
        for (size_t i = 0; i < nat; i++)
            if (at[i].pattern == k && intersects(&cs[j].accts, &at[i].accts)) {
                q->true_alerts++;
                break;
            }
        for (size_t i = 0; i < nat; i++)
            if (intersects(&cs[j].accts, &at[i].accts)) {
                q->laundering_alerts++;
                break;
            }
    }
    q->recall = q->attempts ? (double)q->detected / q->attempts : 0;
    q->precision = q->alerts ? (double)q->true_alerts / q->alerts : 0;
}

static void print_patterns(FILE *out, const aml_pattern_quality q[AML_NPATTERNS])
{
    fprintf(out, "(precision: alerts of that typology/variant whose case covers an attempt of the pattern; "
                 "on laundering: ... of any pattern)\n");
    fprintf(out, "%-16s %-22s %8s %8s %7s %7s %6s %9s %13s\n", "pattern", "typology (variant)", "attempts",
            "detected", "recall", "alerts", "true", "precision", "on laundering");
    for (int k = 0; k < AML_NPATTERNS; k++) {
        char tv[48];
        snprintf(tv, sizeof tv, "%s%s%s%s", aml_catalog()[pattern_map[k].typ].code, pattern_map[k].variant ? " (" : "",
                 pattern_map[k].variant ? pattern_map[k].variant : "", pattern_map[k].variant ? ")" : "");
        fprintf(out, "%-16s %-22s %8d %8d %6.1f%% %7d %6d %8.1f%% %12.1f%%\n", q[k].pattern, tv, q[k].attempts,
                q[k].detected, 100 * q[k].recall, q[k].alerts, q[k].true_alerts, 100 * q[k].precision,
                q[k].alerts ? 100.0 * q[k].laundering_alerts / q[k].alerts : 0.0);
    }
}

int aml_eval_patterns(aml_store *s, FILE *out, aml_pattern_quality q[AML_NPATTERNS], aml_err *err)
{
    memset(q, 0, sizeof(aml_pattern_quality) * AML_NPATTERNS);
    for (int i = 0; i < AML_NPATTERNS; i++)
        q[i].pattern = pattern_map[i].pattern;
    attempt *at = NULL;
    scase *cs = NULL;
    size_t nat = 0, ncs = 0;
    if (load_attempts(s, &at, &nat, err))
        return -1;
    if (load_scan_cases(s, &cs, &ncs, err)) {
        free(at);
        return -1;
    }
    for (int k = 0; k < AML_NPATTERNS; k++)
        score_pattern(&q[k], k, at, nat, cs, ncs);
    if (out)
        print_patterns(out, q);
    for (size_t i = 0; i < nat; i++)
        free(at[i].accts.v);
    free(at);
    for (size_t j = 0; j < ncs; j++)
        free(cs[j].accts.v);
    free(cs);
    return 0;
}

/* ---- transaction level, laundering class ------------------------------------------------- */

/* The transactions the scan's cases flag: trigger evidence of matched findings of their latest assessment. */
static int flagged_txns(aml_store *s, aml_ivec *out, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT fe.txn_no FROM cases c JOIN assessment_findings af "
                                   "ON af.assessment_id = c.last_assessment_id AND af.status = 'matched' "
                                   "JOIN finding_evidence fe ON fe.assessment_id = af.assessment_id "
                                   "AND fe.typology_id = af.typology_id AND fe.role = 'trigger' "
                                   "WHERE c.origin = 'scan' ORDER BY fe.txn_no");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    while (aml_step(st) == AML_ROW)
        if (aml_ivec_push(out, aml_col_int(st, 0))) {
            aml_reset(st);
            return aml_errf(err, "out of memory");
        }
    aml_reset(st);
    aml_ivec_uniq(out);
    return 0;
}

/* The first transaction of the time-ordered last 20%: its (booked_at, txn_no). */
static int split_point(aml_store *s, int64_t *at, int64_t *no, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT booked_at, txn_no FROM transactions ORDER BY booked_at, txn_no "
                                   "LIMIT 1 OFFSET (SELECT count(*) * 8 / 10 FROM transactions)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    int ok = aml_step(st) == AML_ROW;
    if (ok) {
        *at = aml_col_int(st, 0);
        *no = aml_col_int(st, 1);
    }
    aml_reset(st);
    return ok ? 0 : aml_errf(err, "no transactions to split");
}

int aml_eval_txn_level(aml_store *s, FILE *out, aml_txn_quality *q, aml_err *err)
{
    memset(q, 0, sizeof *q);
    aml_ivec flagged = {0};
    int64_t at0, no0;
    if (flagged_txns(s, &flagged, err) || split_point(s, &at0, &no0, err)) {
        free(flagged.v);
        return -1;
    }
    q->split_from = at0;
    aml_st *st = aml_stmt_stream(s, "SELECT txn_no, coalesce(gt_is_laundering, 0) FROM transactions "
                                    "WHERE booked_at > ?1 OR (booked_at = ?1 AND txn_no >= ?2)");
    if (!st) {
        free(flagged.v);
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    aml_bind_int(st, 1, at0);
    aml_bind_int(st, 2, no0);
    while (aml_step(st) == AML_ROW) {
        int pred = aml_ivec_find(&flagged, aml_col_int(st, 0)) >= 0;
        int truth = (int)aml_col_int(st, 1) != 0;
        q->transactions++;
        q->laundering += truth;
        q->tp += pred && truth;
        q->fp += pred && !truth;
        q->fn += !pred && truth;
    }
    aml_reset(st);
    free(flagged.v);
    q->precision = q->tp + q->fp ? (double)q->tp / (double)(q->tp + q->fp) : 0;
    q->recall = q->tp + q->fn ? (double)q->tp / (double)(q->tp + q->fn) : 0;
    q->f1 = q->precision + q->recall > 0 ? 2 * q->precision * q->recall / (q->precision + q->recall) : 0;
    if (out) {
        char d[11];
        aml_fmt_date(at0, d);
        fprintf(out,
                "\nTransaction level, laundering class, on the time-ordered last 20%% (%lld transactions from %s, "
                "%lld laundering):\nprecision %.1f%%, recall %.1f%%, F1 %.1f%% (%lld true positives, %lld false "
                "positives, %lld missed)\n(published baselines on this split, laundering-class F1: HI-Small 63.2%% "
                "XGBoost with graph features, 68.2%% best GNN; LI-Small 27.3%% and 33.1%%)\n",
                (long long)q->transactions, d, (long long)q->laundering, 100 * q->precision, 100 * q->recall,
                100 * q->f1, (long long)q->tp, (long long)q->fp, (long long)q->fn);
    }
    return 0;
}

/* ---- the eval command ---------------------------------------------------------------------- */

int aml_eval(aml_store *s, FILE *out, aml_err *err)
{
    aml_st *q = aml_stmt(s, "SELECT (SELECT count(*) FROM gt_instances), "
                                  "(SELECT count(*) FROM transactions WHERE gt_attempt_id IS NOT NULL)");
    int64_t ninst = 0, nlab = 0;
    if (q && aml_step(q) == AML_ROW) {
        ninst = aml_col_int(q, 0);
        nlab = aml_col_int(q, 1);
    }
    if (q)
        aml_reset(q);
    if (ninst) {
        aml_quality qq[AML_NTYP];
        fprintf(out, "Detection quality over generated cases (ground truth: gt_instances)\n");
        if (aml_eval_cases(s, out, qq, err))
            return -1;
        aml_st *r = aml_stmt(s, "SELECT count(*) FROM scan_runs");
        int64_t runs = 0;
        if (r && aml_step(r) == AML_ROW)
            runs = aml_col_int(r, 0);
        if (r)
            aml_reset(r);
        if (!runs)
            return 0;
        aml_scan_quality sq[AML_NTYP];
        aml_scan_volume vol;
        fprintf(out, "\nThe monitoring scan's alerts (scan_matches), per flagged account and typology\n");
        return aml_eval_scan(s, out, sq, &vol, err);
    }
    if (nlab) {
        aml_pattern_quality pq[AML_NPATTERNS];
        fprintf(out, "Pattern recall and precision over labelled attempts (cases from scan)\n");
        if (aml_eval_patterns(s, out, pq, err))
            return -1;
        aml_txn_quality tq;
        return aml_eval_txn_level(s, out, &tq, err);
    }
    fprintf(stderr, "mcp-server-aml: the store has no ground truth to evaluate against\n");
    return 1;
}
