/*
 * SAR drafts (see sar.h). The narrative follows FinCEN's guidance as
 * summarised in FFIEC BSA/AML Manual Appendix L: introduction (what, why,
 * total, period, who, accounts, how the case arose), a chronological body
 * with individual dates and amounts, and a conclusion (why filed, amounts,
 * where documentation is kept). Every value printed comes from the store:
 * customer and holder names, account ids, locations, countries, dates and
 * amounts of the evidence transactions, and sums over them; the remaining
 * words are fixed template text. No tables in the narrative: the
 * transaction list goes to the CSV attachment.
 */
#include "engine/sar.h"

#include <stdlib.h>
#include <string.h>

/* One evidence transaction, with what the narrative says about it. */
typedef struct etxn {
    int64_t no, at, usd, amount, from, to;
    char ref[96], cur[8], channel[12], from_id[128], to_id[128], from_name[128], to_name[128], loc[64],
        from_country[8], to_country[8];
    int typ;        /* the finding it came from */
    int focus_side; /* 1 in, 2 out, 0 related */
} etxn;

static int load_txn(aml_store *s, int64_t no, etxn *t)
{
    static const char *const sql =
        "SELECT t.txn_ref, t.booked_at, t.amount_minor, t.currency, t.amount_base_minor, t.channel, t.from_acct, "
        "t.to_acct, fa.account_id, ta.account_id, coalesce(t.location_id, ''), "
        "coalesce((SELECT c.full_name FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
        "WHERE p.acct_no = t.from_acct ORDER BY p.role <> 'primary', c.customer_id LIMIT 1), fa.holder_name, ''), "
        "coalesce((SELECT c.full_name FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
        "WHERE p.acct_no = t.to_acct ORDER BY p.role <> 'primary', c.customer_id LIMIT 1), ta.holder_name, ''), "
        "coalesce(fa.country, ''), coalesce(ta.country, '') "
        "FROM transactions t LEFT JOIN accounts fa ON fa.acct_no = t.from_acct "
        "LEFT JOIN accounts ta ON ta.acct_no = t.to_acct WHERE t.txn_no = ?";
    aml_st *st = aml_stmt(s, sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, no);
    if (aml_step(st) != AML_ROW) {
        aml_reset(st);
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->no = no;
    if (!aml_col_null(st, 0))
        snprintf(t->ref, sizeof t->ref, "%s", aml_col_text(st, 0));
    else
        snprintf(t->ref, sizeof t->ref, "#%lld", (long long)no);
    t->at = aml_col_int(st, 1);
    t->amount = aml_col_int(st, 2);
    snprintf(t->cur, sizeof t->cur, "%s", aml_col_text(st, 3));
    t->usd = aml_col_int(st, 4);
    snprintf(t->channel, sizeof t->channel, "%s", aml_col_text(st, 5));
    t->from = aml_col_int(st, 6);
    t->to = aml_col_int(st, 7);
    snprintf(t->from_id, sizeof t->from_id, "%s", aml_col_text(st, 8));
    snprintf(t->to_id, sizeof t->to_id, "%s", aml_col_text(st, 9));
    snprintf(t->loc, sizeof t->loc, "%s", aml_col_text(st, 10));
    snprintf(t->from_name, sizeof t->from_name, "%s", aml_col_text(st, 11));
    snprintf(t->to_name, sizeof t->to_name, "%s", aml_col_text(st, 12));
    snprintf(t->from_country, sizeof t->from_country, "%s", aml_col_text(st, 13));
    snprintf(t->to_country, sizeof t->to_country, "%s", aml_col_text(st, 14));
    aml_reset(st);
    return 0;
}

static int in_case(const aml_case *c, int64_t acct)
{
    for (size_t i = 0; i < c->naccts; i++)
        if (c->accts[i] == acct)
            return 1;
    return 0;
}

/* "$9,800.00", or "EUR 1,000.00 ($1,080.00 at the stored rate)" for other currencies. */
static void amount_text(const etxn *t, char *out, size_t n)
{
    char u[48];
    aml_fmt_usd(t->usd, u, sizeof u);
    if (strcmp(t->cur, "USD") == 0) {
        snprintf(out, n, "%s", u);
        return;
    }
    const aml_currency *c = aml_currency_find(t->cur, strlen(t->cur));
    char a[48];
    aml_fmt_amount(t->amount, c ? c->exponent : 2, a, sizeof a);
    snprintf(out, n, "%s %s (%s at the stored exchange rate)", t->cur, a, u);
}

static const char *channel_words(const char *ch)
{
    if (strcmp(ch, "wire") == 0)
        return "wire transfer";
    if (strcmp(ch, "ach") == 0)
        return "ACH (automated clearing house) transfer";
    if (strcmp(ch, "check") == 0)
        return "check";
    if (strcmp(ch, "internal") == 0)
        return "internal transfer";
    if (strcmp(ch, "crypto") == 0)
        return "virtual currency transfer";
    if (strcmp(ch, "card") == 0)
        return "card payment";
    return "transfer";
}

static void party(const char *id, const char *name, char *out, size_t n)
{
    if (name[0])
        snprintf(out, n, "%s (%s)", id, name);
    else
        snprintf(out, n, "%s", id);
}

/* One sentence about a transaction, relative to the case's accounts. */
static void txn_sentence(const etxn *t, mcp_buf *b)
{
    char when[11], amt[128], from[300], to[300];
    aml_fmt_date(t->at, when);
    amount_text(t, amt, sizeof amt);
    party(t->from_id, t->from_name, from, sizeof from);
    party(t->to_id, t->to_name, to, sizeof to);
    if (strcmp(t->channel, "cash") == 0 && !t->from)
        aml_buf_printf(b, "On %s, %s in cash was deposited into account %s%s%s (%s).", when, amt, t->to_id,
                       t->loc[0] ? " at " : "", t->loc, t->ref);
    else if (strcmp(t->channel, "cash") == 0 && !t->to)
        aml_buf_printf(b, "On %s, %s in cash was withdrawn from account %s%s%s (%s).", when, amt, t->from_id,
                       t->loc[0] ? " at " : "", t->loc, t->ref);
    else
        aml_buf_printf(b, "On %s, account %s sent %s by %s to account %s (%s).", when, from, amt,
                       channel_words(t->channel), to, t->ref);
}

typedef struct strset {
    char items[32][128];
    int n;
} strset;

static void set_add(strset *s, const char *v)
{
    if (!v || !*v)
        return;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->items[i], v) == 0)
            return;
    if (s->n < 32)
        snprintf(s->items[s->n++], sizeof s->items[0], "%s", v);
}

static void set_join(const strset *s, mcp_buf *b, const char *last_sep)
{
    for (int i = 0; i < s->n; i++) {
        if (i)
            aml_buf_puts(b, i == s->n - 1 ? last_sep : ", ");
        aml_buf_puts(b, s->items[i]);
    }
}

static const char *instrument_of(const char *ch)
{
    if (strcmp(ch, "cash") == 0)
        return "U.S. Currency";
    if (strcmp(ch, "check") == 0)
        return "Personal/Business check";
    if (strcmp(ch, "wire") == 0 || strcmp(ch, "ach") == 0 || strcmp(ch, "internal") == 0)
        return "Funds transfer";
    return "Other";
}

static int cmp_etxn(const void *a, const void *b)
{
    const etxn *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static void mask_account(const char *id, char *out, size_t n)
{
    size_t l = strlen(id);
    snprintf(out, n, "****%s", l > 4 ? id + l - 4 : id);
}

/* ---- subjects ------------------------------------------------------------------------- */

static const char *const subjects_sql =
    "SELECT c.customer_id, c.customer_type, c.full_name, c.first_name, c.last_name, "
    "c.occupation, c.naics_code, c.onboarded_at, c.date_of_birth, c.region "
    "FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
    "WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id";

/* One subject (a row of the subjects query) holding account acc. */
static void subject_write(mcp_jw *w, aml_st *st, const char *acc, int entity, int dir_in, int dir_out)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "customerId");
    mcp_jw_string(w, aml_col_text(st, 0));
    mcp_jw_key(w, "entityOrIndividual");
    mcp_jw_string(w, entity ? "entity" : "individual");
    if (entity) {
        mcp_jw_key(w, "entityName");
        mcp_jw_string(w, aml_col_text(st, 2));
    } else {
        mcp_jw_key(w, "lastName");
        mcp_jw_string(w, aml_col_text(st, 4));
        mcp_jw_key(w, "firstName");
        mcp_jw_string(w, aml_col_text(st, 3));
    }
    mcp_jw_key(w, "occupation");
    aml_jw_col_text(w, st, 5);
    mcp_jw_key(w, "naics");
    aml_jw_col_text(w, st, 6);
    mcp_jw_key(w, "relationshipToInstitution");
    mcp_jw_string(w, "customer");
    mcp_jw_key(w, "customerSince");
    aml_jw_col_text(w, st, 7);
    mcp_jw_key(w, "accounts");
    mcp_jw_array_begin(w);
    char masked[140];
    mask_account(acc, masked, sizeof masked);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "accountId");
    mcp_jw_string(w, acc);
    mcp_jw_key(w, "accountNumberMasked");
    mcp_jw_string(w, masked);
    mcp_jw_key(w, "closed");
    mcp_jw_bool(w, 0);
    mcp_jw_object_end(w);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "roleInTransaction");
    mcp_jw_string(w, dir_in && dir_out ? "both" : dir_out ? "purchaser_sender" : "payee_receiver");
    mcp_jw_key(w, "unknownFields");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "address");
    mcp_jw_string(w, "tin");
    mcp_jw_string(w, "phone");
    mcp_jw_string(w, "identification");
    if (!entity && aml_col_null(st, 8))
        mcp_jw_string(w, "date_of_birth");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
}

/* "Who" for the narrative: the subject, what it does, since when, and its account. */
static void who_append(mcp_buf *who, aml_st *st, const char *acc, int entity)
{
    if (who->len)
        aml_buf_puts(who, "; ");
    aml_buf_printf(who, "%s, %s", aml_col_text(st, 2), entity ? "a business customer" : "an individual customer");
    if (!aml_col_null(st, 5))
        aml_buf_printf(who, " (%s: %s)", entity ? "business" : "occupation", aml_col_text(st, 5));
    if (!aml_col_null(st, 7))
        aml_buf_printf(who, ", a customer since %s", aml_col_text(st, 7));
    aml_buf_printf(who, ", holding account %s", acc);
}

/* Writes the subjects array (SAR Part I) and collects their names and the "who" of the narrative. */
static void subjects_write(aml_store *s, mcp_jw *w, const aml_case *c, int dir_in, int dir_out, strset *names,
                           mcp_buf *who)
{
    mcp_jw_array_begin(w);
    strset seen = {0};
    for (size_t i = 0; i < c->naccts; i++) {
        aml_st *st = aml_stmt(s, subjects_sql);
        if (!st)
            break;
        aml_bind_int(st, 1, c->accts[i]);
        while (aml_step(st) == AML_ROW) {
            const char *id = aml_col_text(st, 0);
            int dup = 0;
            for (int k = 0; k < seen.n; k++)
                dup |= strcmp(seen.items[k], id) == 0;
            if (dup)
                continue;
            set_add(&seen, id);
            int entity = strcmp(aml_col_text(st, 1), "entity") == 0;
            set_add(names, aml_col_text(st, 2));
            char acc[128];
            aml_account_id(s, c->accts[i], acc, sizeof acc);
            subject_write(w, st, acc, entity, dir_in, dir_out);
            who_append(who, st, acc, entity);
        }
        aml_reset(st);
    }
    mcp_jw_array_end(w);
}

/* ---- the draft ------------------------------------------------------------------------- */

static const char confidentiality[] =
    "SAR information is confidential under 31 U.S.C. 5318(g)(2); do not disclose the existence of this report "
    "to any person involved in the transactions.";

/* Everything a draft is built from, and its parts as they are built. */
typedef struct draft {
    aml_store *s;
    const aml_case *c;
    const aml_assessment *a;
    const aml_recommendation *r;
    const aml_typology_def *cat;
    /* the previous version, if any */
    int64_t prev_version;
    char prev_hash[65], prev_id[96];
    /* the matched findings, strongest first, and their trigger evidence */
    int order[AML_NTYP], no;
    etxn *tx;
    size_t ntx;
    int dir_in, dir_out;
    strset instruments, locations, countries, names, accts;
    char dfrom[11], dto[11], amount[48], detection[16], opened[32], csvname[160];
    /* the narrative */
    mcp_buf intro, concl, who, paras[AML_NTYP], cited;
    size_t listed, omitted;
    /* the attachment */
    mcp_buf csv;
    size_t rows;
    /* identity: the sections as JSON and the version they make */
    mcp_buf nj;
    int same;
    int64_t version;
    char id[128];
    /* SAR categories, one per subtype */
    int seen_sub[AML_NTYP], nsub;
} draft;

/* The latest stored draft of the case. */
static int previous_draft(draft *d, aml_err *err)
{
    aml_st *st = aml_stmt(d->s, "SELECT version, sar_draft_id, narrative_json FROM sar_drafts WHERE case_id = ? "
                                      "ORDER BY version DESC LIMIT 1");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(d->s));
    aml_bind_text(st, 1, d->c->case_id);
    if (aml_step(st) == AML_ROW) {
        d->prev_version = aml_col_int(st, 0);
        snprintf(d->prev_id, sizeof d->prev_id, "%s", aml_col_text(st, 1));
        const char *nj = aml_col_text(st, 2);
        aml_sha256_hex(nj, strlen(nj), d->prev_hash);
    }
    aml_reset(st);
    return 0;
}

/* The first members of every draft result: sarDraftId, caseId, assessmentId, status. */
static void draft_head(mcp_jw *w, const char *id, const aml_case *c, const aml_assessment *a, const char *status)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "sarDraftId");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, c->case_id);
    mcp_jw_key(w, "assessmentId");
    mcp_jw_string(w, a->assessment_id);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, status);
}

/* Nothing matched: no narrative, the reason instead. */
static void write_not_warranted(const draft *d, mcp_jw *w, mcp_buf *text)
{
    char id[128], reason[600];
    snprintf(id, sizeof id, "sar_%s_v%lld", d->c->case_id, (long long)(d->prev_version + 1));
    snprintf(reason, sizeof reason,
             "No typology matched the data of case %s (assessment %s), so the rule results give no basis for a "
             "Suspicious Activity Report. An investigator may still file one on other grounds.",
             d->c->case_id, d->a->assessment_id);
    draft_head(w, id, d->c, d->a, "not_warranted");
    mcp_jw_key(w, "reason");
    mcp_jw_string(w, reason);
    mcp_jw_key(w, "confidentiality");
    mcp_jw_string(w, confidentiality);
    mcp_jw_key(w, "humanReviewRequired");
    mcp_jw_bool(w, 1);
    mcp_jw_object_end(w);
    aml_buf_printf(text, "SAR not warranted for case %s: %s\n", d->c->case_id, reason);
}

/* The matched typologies, strongest first (stable). */
static void order_findings(draft *d)
{
    const aml_assessment *a = d->a;
    d->no = 0;
    for (int t = 0; t < AML_NTYP; t++)
        if (a->f[t].status == AML_MATCHED)
            d->order[d->no++] = t;
    for (int i = 1; i < d->no; i++)
        for (int j = i; j > 0 && a->f[d->order[j]].score > a->f[d->order[j - 1]].score; j--) {
            int tmp = d->order[j];
            d->order[j] = d->order[j - 1];
            d->order[j - 1] = tmp;
        }
}

/* The trigger evidence of the matched findings, with what the narrative says about it. */
static int collect_evidence(draft *d, aml_err *err)
{
    size_t ntx = 0;
    for (int i = 0; i < d->no; i++)
        ntx += d->a->f[d->order[i]].nev;
    d->tx = calloc(ntx ? ntx : 1, sizeof *d->tx);
    if (!d->tx)
        return aml_errf(err, "out of memory");
    size_t k = 0;
    int64_t first = 0, last = 0;
    for (int i = 0; i < d->no; i++) {
        const aml_finding *f = &d->a->f[d->order[i]];
        for (size_t e = 0; e < f->nev; e++) {
            if (f->ev[e].role != AML_ROLE_TRIGGER || load_txn(d->s, f->ev[e].no, &d->tx[k]))
                continue;
            etxn *t = &d->tx[k];
            const aml_case *c = d->c;
            t->typ = d->order[i];
            t->focus_side = in_case(c, t->to) && !in_case(c, t->from) ? 1 : in_case(c, t->from) && !in_case(c, t->to) ? 2 : 0;
            d->dir_in |= t->focus_side == 1;
            d->dir_out |= t->focus_side == 2;
            set_add(&d->instruments, instrument_of(t->channel));
            set_add(&d->locations, t->loc);
            if (t->focus_side == 1 && t->from_country[0] && strcmp(t->from_country, "US") != 0)
                set_add(&d->countries, t->from_country);
            if (t->focus_side == 2 && t->to_country[0] && strcmp(t->to_country, "US") != 0)
                set_add(&d->countries, t->to_country);
            if (!first || t->at < first)
                first = t->at;
            if (t->at > last)
                last = t->at;
            k++;
        }
    }
    d->ntx = k;
    if (first) {
        aml_fmt_date(first, d->dfrom);
        aml_fmt_date(last, d->dto);
    }
    aml_fmt_usd(d->r->amount_usd, d->amount, sizeof d->amount);
    snprintf(d->detection, sizeof d->detection, "%s", d->c->detection_date);
    snprintf(d->opened, sizeof d->opened, "%.10s", d->c->opened_at);
    snprintf(d->csvname, sizeof d->csvname, "%s_transactions.csv", d->c->case_id);
    return 0;
}

/* Introduction: what, who, when, how much, on which accounts, how it arose, instruments, places. */
static void write_intro(draft *d)
{
    mcp_buf *b = &d->intro;
    strset typ_names = {0};
    for (int i = 0; i < d->no; i++)
        set_add(&typ_names, d->cat[d->order[i]].name);
    for (size_t i = 0; i < d->c->naccts; i++) {
        char id[128];
        aml_account_id(d->s, d->c->accts[i], id, sizeof id);
        set_add(&d->accts, id);
    }
    aml_buf_printf(b, "This initial report concerns suspected ");
    for (int i = 0; i < typ_names.n; i++)
        aml_buf_printf(b, "%s%s", i ? (i == typ_names.n - 1 ? " and " : ", ") : "", typ_names.items[i]);
    aml_buf_printf(b, " involving %s. Between %s and %s, %s in transactions on account",
                   d->who.data ? d->who.data : "the account holder", d->dfrom, d->dto, d->amount);
    aml_buf_printf(b, "%s ", d->accts.n > 1 ? "s" : "");
    set_join(&d->accts, b, " and ");
    aml_buf_printf(b, " showed this pattern. The activity was identified by transaction monitoring; case %s was "
                      "opened on %s",
                   d->c->case_id, d->opened);
    if (d->detection[0])
        aml_buf_printf(b, " and the facts that may require a report were detected on %s", d->detection);
    aml_buf_printf(b, ". The instruments involved were ");
    set_join(&d->instruments, b, " and ");
    aml_buf_puts(b, ".");
    if (d->locations.n) {
        aml_buf_puts(b, " Cash activity took place at ");
        set_join(&d->locations, b, " and ");
        aml_buf_puts(b, ".");
    }
    if (d->countries.n) {
        aml_buf_puts(b, " The activity involved accounts held in ");
        set_join(&d->countries, b, " and ");
        aml_buf_puts(b, " (country codes).");
    }
}

/* One body paragraph: the typology, its explanation, why and how, then its transactions in time order
 * while the budget lasts (the rest are left to the attachment). */
static void write_paragraph(draft *d, int i, size_t budget, size_t *used)
{
    int t = d->order[i];
    const aml_typology_def *cat = d->cat;
    mcp_buf *p = &d->paras[i];
    aml_buf_printf(p, "%s (%s). %s This is unusual because %s. The method: %s.", cat[t].name, cat[t].subtype,
                   d->a->f[t].explanation, cat[t].why, cat[t].how);
    etxn *mine = calloc(d->ntx ? d->ntx : 1, sizeof *mine);
    size_t nm = 0;
    for (size_t e = 0; mine && e < d->ntx; e++)
        if (d->tx[e].typ == t)
            mine[nm++] = d->tx[e];
    if (mine)
        aml_sort(mine, nm, sizeof *mine, cmp_etxn);
    size_t here = 0;
    for (size_t e = 0; e < nm; e++) {
        mcp_buf sent;
        mcp_buf_init(&sent, 0);
        txn_sentence(&mine[e], &sent);
        if (*used + p->len + sent.len + 2 > budget || here >= 40) {
            d->omitted += nm - e;
            mcp_buf_cleanup(&sent);
            aml_buf_printf(p, " %zu further transactions of this pattern are listed in the attached file.", nm - e);
            break;
        }
        aml_buf_puts(p, " ");
        mcp_buf_append(p, sent.data, sent.len);
        mcp_buf_cleanup(&sent);
        aml_buf_printf(&d->cited, "%s%s", d->cited.len ? "\n" : "", mine[e].ref);
        here++;
        d->listed++;
    }
    *used += p->len + 2;
    free(mine);
}

/* Conclusion: why filed, the amount and period, where the documentation is kept. */
static void write_conclusion(draft *d)
{
    mcp_buf *b = &d->concl;
    aml_buf_printf(b, "The institution is filing this report because the activity matched ");
    for (int i = 0; i < d->no; i++)
        aml_buf_printf(b, "%s%s (score %d)", i ? (i == d->no - 1 ? " and " : ", ") : "", d->cat[d->order[i]].name,
                       d->a->f[d->order[i]].score);
    aml_buf_printf(b,
                   ", with %s involved between %s and %s, and no lawful purpose for it is apparent from the account "
                   "records. The transactions are listed in the attached file %s. Supporting documentation is kept "
                   "with case %s and is available to law enforcement on request. This draft was produced from "
                   "assessment %s and must be reviewed by the Bank Secrecy Act officer before filing.",
                   d->amount, d->dfrom, d->dto, d->csvname, d->c->case_id, d->a->assessment_id);
}

/* The narrative, into text: introduction, one paragraph per matched typology, conclusion. */
static void write_narrative(draft *d, mcp_buf *text)
{
    /* Subjects are written to the JSON later; collect "who" first with a throwaway writer. */
    mcp_buf tmp;
    mcp_jw tw;
    mcp_buf_init(&tmp, 0);
    mcp_jw_init(&tw, &tmp);
    subjects_write(d->s, &tw, d->c, d->dir_in, d->dir_out, &d->names, &d->who);
    mcp_buf_cleanup(&tmp);
    write_intro(d);
    size_t budget = AML_SAR_NARRATIVE_MAX - 2500 - d->intro.len, used = 0;
    for (int i = 0; i < d->no; i++)
        write_paragraph(d, i, budget, &used);
    write_conclusion(d);
    mcp_buf_append(text, d->intro.data, d->intro.len);
    for (int i = 0; i < d->no; i++) {
        aml_buf_puts(text, "\n\n");
        mcp_buf_append(text, d->paras[i].data, d->paras[i].len);
    }
    aml_buf_puts(text, "\n\n");
    mcp_buf_append(text, d->concl.data, d->concl.len);
}

/* "12.34" for minor units of `exponent` digits. */
static void fmt_minor(int64_t v, int exponent, char *out, size_t n)
{
    int64_t sc = 1;
    for (int z = 0; z < exponent; z++)
        sc *= 10;
    if (exponent)
        snprintf(out, n, "%lld.%0*lld", (long long)(v / sc), exponent, (long long)(v % sc));
    else
        snprintf(out, n, "%lld", (long long)v);
}

/* The attachment: every trigger transaction as a CSV row. */
static void write_attachment(draft *d)
{
    mcp_buf_init(&d->csv, 1 << 20);
    aml_buf_puts(&d->csv,
                 "txn_id,date,amount_usd,currency,amount,channel,direction,account,counterparty,location,typology\n");
    for (size_t e = 0; e < d->ntx; e++) {
        const etxn *t = &d->tx[e];
        char when[21], u[48], am[48];
        aml_fmt_time(t->at, when);
        snprintf(u, sizeof u, "%lld.%02lld", (long long)(t->usd / 100), (long long)(t->usd % 100));
        const aml_currency *cu = aml_currency_find(t->cur, strlen(t->cur));
        fmt_minor(t->amount, cu ? cu->exponent : 2, am, sizeof am);
        const char *acct = t->focus_side == 1 ? t->to_id : t->from_id;
        const char *cp = t->focus_side == 1 ? t->from_id : t->to_id;
        if (aml_buf_printf(&d->csv, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", t->ref, when, u, t->cur, am, t->channel,
                           t->focus_side == 1 ? "in" : t->focus_side == 2 ? "out" : "related", acct, cp, t->loc,
                           d->cat[t->typ].id) != MCP_OK)
            break;
        d->rows++;
    }
}

/* The sections as JSON; a new version only when they changed. */
static void draft_identity(draft *d)
{
    mcp_jw njw;
    mcp_buf_init(&d->nj, 0);
    mcp_jw_init(&njw, &d->nj);
    mcp_jw_object_begin(&njw);
    mcp_jw_key(&njw, "introduction");
    mcp_jw_stringn(&njw, d->intro.data ? d->intro.data : "", d->intro.len);
    mcp_jw_key(&njw, "body");
    mcp_jw_array_begin(&njw);
    for (int i = 0; i < d->no; i++)
        mcp_jw_stringn(&njw, d->paras[i].data ? d->paras[i].data : "", d->paras[i].len);
    mcp_jw_array_end(&njw);
    mcp_jw_key(&njw, "conclusion");
    mcp_jw_stringn(&njw, d->concl.data ? d->concl.data : "", d->concl.len);
    mcp_jw_object_end(&njw);
    char hash[65];
    aml_sha256_hex(d->nj.data ? d->nj.data : "", d->nj.len, hash);
    d->same = d->prev_version && strcmp(hash, d->prev_hash) == 0;
    d->version = d->same ? d->prev_version : d->prev_version + 1;
    if (d->same)
        snprintf(d->id, sizeof d->id, "%s", d->prev_id);
    else
        snprintf(d->id, sizeof d->id, "sar_%s_v%lld", d->c->case_id, (long long)d->version);
}

/* SAR categories: the first matched typology of each subtype, strongest first. */
static void pick_categories(draft *d)
{
    d->nsub = 0;
    for (int i = 0; i < d->no; i++) {
        int dup = 0;
        for (int z = 0; z < d->nsub; z++)
            dup |= d->cat[d->seen_sub[z]].subtype_code == d->cat[d->order[i]].subtype_code;
        if (!dup)
            d->seen_sub[d->nsub++] = d->order[i];
    }
}

static void write_filing(const draft *d, mcp_jw *w)
{
    mcp_jw_key(w, "filing");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "initial");
    mcp_jw_key(w, "priorBsaId");
    mcp_jw_null(w);
    mcp_jw_key(w, "detectionDate");
    d->detection[0] ? mcp_jw_string(w, d->detection) : mcp_jw_null(w);
    mcp_jw_key(w, "dueDate");
    d->r->due_date[0] ? mcp_jw_string(w, d->r->due_date) : mcp_jw_null(w);
    mcp_jw_key(w, "dueRule");
    mcp_jw_string(w, "30 calendar days from initial detection (60 if no suspect is identified)");
    mcp_jw_key(w, "belowReportingThreshold");
    mcp_jw_bool(w, d->r->amount_usd < AML_SAR_FLOOR_MINOR);
    mcp_jw_object_end(w);
}

static void write_activity(const draft *d, mcp_jw *w)
{
    mcp_jw_key(w, "suspiciousActivity");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "amountInvolvedUsd");
    mcp_jw_int(w, (d->r->amount_usd + 50) / 100);
    mcp_jw_key(w, "dateFrom");
    mcp_jw_string(w, d->dfrom);
    mcp_jw_key(w, "dateTo");
    mcp_jw_string(w, d->dto);
    mcp_jw_key(w, "cumulativeAmountUsd");
    mcp_jw_null(w);
    mcp_jw_key(w, "categories");
    mcp_jw_array_begin(w);
    for (int z = 0; z < d->nsub; z++)
        aml_sar_category_write(w, d->seen_sub[z], 1);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "instruments");
    mcp_jw_array_begin(w);
    for (int i = 0; i < d->instruments.n; i++)
        mcp_jw_string(w, d->instruments.items[i]);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "products");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "Deposit account");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
}

static void bool_member(mcp_jw *w, const char *key, int v)
{
    mcp_jw_key(w, key);
    mcp_jw_bool(w, v);
}

/* The narrative object: text, sections, and the coverage and style checks on the text as written. */
static void write_narrative_json(const draft *d, mcp_jw *w, const mcp_buf *text)
{
    const char *nt = text->data ? text->data : "";
    mcp_jw_key(w, "narrative");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "text");
    mcp_jw_stringn(w, nt, text->len);
    mcp_jw_key(w, "characters");
    mcp_jw_int(w, (int64_t)text->len);
    mcp_jw_key(w, "limit");
    mcp_jw_int(w, AML_SAR_NARRATIVE_MAX);
    mcp_jw_key(w, "sections");
    mcp_jw_raw(w, d->nj.data, d->nj.len);
    mcp_jw_key(w, "coverage");
    mcp_jw_object_begin(w);
    bool_member(w, "who", d->names.n > 0 && strstr(nt, d->names.items[0]) != NULL);
    bool_member(w, "what", d->instruments.n > 0);
    bool_member(w, "when", d->dfrom[0] && strstr(nt, d->dfrom) != NULL);
    bool_member(w, "where", d->accts.n > 0 && strstr(nt, d->accts.items[0]) != NULL);
    bool_member(w, "why", strstr(nt, "This is unusual because") != NULL);
    bool_member(w, "how", strstr(nt, "The method:") != NULL);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "styleChecks");
    mcp_jw_object_begin(w);
    bool_member(w, "noTablesInNarrative", !strchr(nt, '|') && !strchr(nt, '\t'));
    bool_member(w, "individualDatesAndAmounts", d->listed > 0);
    mcp_jw_key(w, "transactionsListed");
    mcp_jw_int(w, (int64_t)d->listed);
    mcp_jw_key(w, "transactionsInAttachmentOnly");
    mcp_jw_int(w, (int64_t)d->omitted);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

static void write_attachment_json(const draft *d, mcp_jw *w)
{
    mcp_jw_key(w, "attachmentCsv");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "filename");
    mcp_jw_string(w, d->csvname);
    mcp_jw_key(w, "rows");
    mcp_jw_int(w, (int64_t)d->rows);
    mcp_jw_key(w, "bytes");
    mcp_jw_int(w, (int64_t)d->csv.len);
    mcp_jw_key(w, "content");
    mcp_jw_stringn(w, d->csv.data ? d->csv.data : "", d->csv.len);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "evidenceCited");
    mcp_jw_array_begin(w);
    for (char *p = d->cited.data; p && *p;) {
        char *nl = strchr(p, '\n');
        mcp_jw_stringn(w, p, nl ? (size_t)(nl - p) : strlen(p));
        p = nl ? nl + 1 : p + strlen(p);
    }
    mcp_jw_array_end(w);
}

/* The structured result of a draft. */
static void write_draft(const draft *d, mcp_jw *w, const mcp_buf *text)
{
    draft_head(w, d->id, d->c, d->a, "draft");
    mcp_jw_key(w, "version");
    mcp_jw_int(w, d->version);
    mcp_jw_key(w, "templateVersion");
    mcp_jw_string(w, AML_SAR_TEMPLATE_VERSION);
    mcp_jw_key(w, "confidentiality");
    mcp_jw_string(w, confidentiality);
    mcp_jw_key(w, "humanReviewRequired");
    mcp_jw_bool(w, 1);
    write_filing(d, w);
    mcp_jw_key(w, "subjects");
    strset dummy = {0};
    mcp_buf dw;
    mcp_buf_init(&dw, 0);
    subjects_write(d->s, w, d->c, d->dir_in, d->dir_out, &dummy, &dw);
    mcp_buf_cleanup(&dw);
    write_activity(d, w);
    write_narrative_json(d, w, text);
    write_attachment_json(d, w);
    mcp_jw_key(w, "sources");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "FinCEN Guidance on Preparing a Complete & Sufficient SAR Narrative (Nov 2003)");
    mcp_jw_string(w, "FFIEC BSA/AML Examination Manual, Appendix L (SAR quality guidance)");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
}

/* Stores a new version of the draft; the previous one becomes superseded. */
static int store_draft(const draft *d, const mcp_buf *text, const char *actor, aml_err *err)
{
    aml_store *s = d->s;
    char now[21];
    aml_fmt_time(aml_now(), now);
    mcp_buf cats;
    mcp_jw cw;
    mcp_buf_init(&cats, 0);
    mcp_jw_init(&cw, &cats);
    mcp_jw_array_begin(&cw);
    for (int z = 0; z < d->nsub; z++)
        aml_sar_category_write(&cw, d->seen_sub[z], 1);
    mcp_jw_array_end(&cw);
    int rc = 0, own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        rc = -1;
    aml_st *st;
    if (!rc && d->prev_version) {
        st = aml_stmt(s, "UPDATE sar_drafts SET status = 'superseded' WHERE case_id = ? AND status = 'draft'");
        if (!st)
            rc = aml_errf(err, "%s", aml_errmsg(s));
        else {
            aml_bind_text(st, 1, d->c->case_id);
            rc = aml_step_done(s, st, err);
        }
    }
    if (!rc) {
        st = aml_stmt(s, "INSERT INTO sar_drafts(sar_draft_id, case_id, assessment_id, version, filing_type, "
                         "status, amount_involved_usd, activity_from, activity_to, categories_json, narrative_text, "
                         "narrative_json, attachment_csv, filing_due_date, created_at, created_by, result_json) "
                         "VALUES (?,?,?,?,'initial','draft',?,?,?,?,?,?,?,?,?,?,?)");
        if (!st)
            rc = aml_errf(err, "%s", aml_errmsg(s));
        else {
            const mcp_buf *nj = &d->nj;
            aml_bind_text(st, 1, d->id);
            aml_bind_text(st, 2, d->c->case_id);
            aml_bind_text(st, 3, d->a->assessment_id);
            aml_bind_int(st, 4, d->version);
            aml_bind_int(st, 5, (d->r->amount_usd + 50) / 100);
            aml_bind_text(st, 6, d->dfrom);
            aml_bind_text(st, 7, d->dto);
            aml_bind_textn(st, 8, cats.data ? cats.data : "[]", cats.data ? cats.len : 2);
            aml_bind_textn(st, 9, text->data ? text->data : "", text->len);
            aml_bind_textn(st, 10, nj->data ? nj->data : "{}", nj->data ? nj->len : 2);
            aml_bind_textn(st, 11, d->csv.data ? d->csv.data : "", d->csv.len);
            aml_bind_text(st, 12, d->r->due_date[0] ? d->r->due_date : NULL);
            aml_bind_text(st, 13, now);
            aml_bind_text(st, 14, actor);
            aml_bind_textn(st, 15, nj->data ? nj->data : "{}", nj->data ? nj->len : 2);
            rc = aml_step_done(s, st, err);
        }
    }
    if (own) {
        if (rc)
            aml_rollback(s);
        else if (aml_commit(s, err))
            rc = -1;
    }
    mcp_buf_cleanup(&cats);
    return rc;
}

/* The text block: a short header, then the narrative. */
static void text_header(const draft *d, mcp_buf *text)
{
    mcp_buf hdr;
    mcp_buf_init(&hdr, 0);
    aml_buf_printf(&hdr, "SAR draft %s for case %s (DRAFT for human review; confidential). Amount involved %s, "
                         "%s to %s. File by %s.\n\n",
                   d->id, d->c->case_id, d->amount, d->dfrom, d->dto,
                   d->r->due_date[0] ? d->r->due_date : "(set the detection date)");
    mcp_buf_append(&hdr, text->data, text->len);
    mcp_buf_cleanup(text);
    *text = hdr;
}

static void draft_free(draft *d)
{
    mcp_buf_cleanup(&d->nj);
    mcp_buf_cleanup(&d->csv);
    mcp_buf_cleanup(&d->cited);
    mcp_buf_cleanup(&d->intro);
    mcp_buf_cleanup(&d->concl);
    mcp_buf_cleanup(&d->who);
    for (int i = 0; i < AML_NTYP; i++)
        mcp_buf_cleanup(&d->paras[i]);
    free(d->tx);
}

int aml_sar_build(aml_store *s, const aml_case *c, const aml_assessment *a, const aml_recommendation *r,
                  const char *actor, mcp_jw *w, mcp_buf *text, aml_err *err)
{
    draft *d = calloc(1, sizeof *d);
    if (!d)
        return aml_errf(err, "out of memory");
    d->s = s;
    d->c = c;
    d->a = a;
    d->r = r;
    d->cat = aml_catalog();
    mcp_buf_init(&d->intro, 0);
    mcp_buf_init(&d->concl, 0);
    mcp_buf_init(&d->who, 0);
    mcp_buf_init(&d->cited, 0);
    for (int i = 0; i < AML_NTYP; i++)
        mcp_buf_init(&d->paras[i], 0);
    int rc = previous_draft(d, err);
    if (!rc && !a->matched) {
        write_not_warranted(d, w, text);
    } else if (!rc) {
        order_findings(d);
        rc = collect_evidence(d, err);
    }
    if (!rc && a->matched) {
        mcp_buf_init(text, text->max);
        write_narrative(d, text);
        write_attachment(d);
        draft_identity(d);
        pick_categories(d);
        write_draft(d, w, text);
        if (!d->same)
            rc = store_draft(d, text, actor, err);
        text_header(d, text);
    }
    draft_free(d);
    free(d);
    return rc;
}
