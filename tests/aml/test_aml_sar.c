/*
 * SAR drafts. For every injected case of a generated bank: the narrative
 * answers who, what, when, where, why and how from the case data; every
 * amount, date and name it quotes is traceable to the store (a transaction,
 * a profile or account field, a rule threshold, or an aggregate recorded in
 * the assessment metrics, recomputed here from the evidence where it is a
 * plain sum); it stays under the 20,000-character limit; the cited
 * transactions exist. Plus: no draft for a case with no match, a stable
 * draft id, and the length limit with hundreds of evidence transactions.
 */
#include "amltest.h"
#include "engine/sar.h"

#include <ctype.h>
#include <regex.h>

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_add(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = aml_strdup(s);
}

static int sl_has(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

static void sl_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void add_usd(strlist *l, int64_t cents)
{
    char b[48];
    aml_fmt_usd(cents < 0 ? -cents : cents, b, sizeof b);
    sl_add(l, b);
}

static void add_date_of(strlist *l, int64_t t)
{
    char d[11];
    aml_fmt_date(t, d);
    sl_add(l, d);
}

/* Numbers under "...Minor" keys and date-shaped strings anywhere in a JSON value. */
static void harvest(const mcp_json *v, strlist *amounts, strlist *dates)
{
    if (mcp_json_typeof(v) == MCP_JSON_OBJECT) {
        for (size_t i = 0; i < mcp_json_len(v); i++) {
            size_t kl;
            const char *k = mcp_json_key_at(v, i, &kl);
            const mcp_json *x = mcp_json_value_at(v, i);
            if (kl > 5 && strcmp(k + kl - 5, "Minor") == 0 && mcp_json_typeof(x) == MCP_JSON_INT)
                add_usd(amounts, mcp_json_int(x));
            harvest(x, amounts, dates);
        }
    } else if (mcp_json_typeof(v) == MCP_JSON_ARRAY) {
        for (size_t i = 0; i < mcp_json_len(v); i++)
            harvest(mcp_json_at(v, i), amounts, dates);
    } else if (mcp_json_typeof(v) == MCP_JSON_STRING) {
        size_t n;
        const char *s = mcp_json_str(v, &n);
        int64_t t;
        if (n >= 10 && aml_parse_time(s, 10, &t, NULL) == 0) {
            char d[11];
            memcpy(d, s, 10);
            d[10] = '\0';
            sl_add(dates, d);
        }
    }
}

/* Words of a text (letters, digits, '-', '.', '\''), for the name check. */
static void words_of(const char *s, strlist *out)
{
    char w[128];
    size_t n = 0;
    for (;; s++) {
        if (*s && (isalnum((unsigned char)*s) || *s == '-' || *s == '\'' || *s == '&')) {
            if (n < sizeof w - 1)
                w[n++] = *s;
            continue;
        }
        if (n) {
            w[n] = '\0';
            sl_add(out, w);
            n = 0;
        }
        if (!*s)
            break;
    }
}

/* Fixed words of the narrative templates (sar.c) and the engine's explanations (engine.c). */
static const char *const template_words[] = {
    "This", "The", "Between", "On", "In", "Cash", "It", "Each", "Supporting", "Bank", "Secrecy", "Act", "ACH",
    "U", "S", "Currency", "Funds", "Other", "Personal", "Business", "No", "All", "A", "An", "FATF", "SAR", "USD",
    "EUR", "GBP", "CAD", "JPY", "CNY", "Transaction", "Suspicious", "EFT", "Trade", "Based", "Money", "Laundering",
    "Black", "Market", "Peso", "Exchange", "CTR", NULL};

typedef struct check {
    int checked, amounts_bad, dates_bad, names_bad, over_limit, coverage_bad, w5_bad, cited_bad;
} check;

static void check_case(aml_store *s, const char *case_id, check *ck)
{
    aml_case c;
    aml_err err = {{0}};
    if (aml_case_load(s, case_id, &c, &err))
        return;
    aml_assessment a;
    if (run_case(s, case_id, NULL, AML_ALL_TYPOLOGIES, &a)) {
        aml_case_free(&c);
        return;
    }
    if (!a.matched) {
        aml_assessment_free(&a);
        aml_case_free(&c);
        return;
    }
    aml_recommendation r;
    aml_recommend(s, &c, &a, &r);
    mcp_buf out, text;
    mcp_jw w;
    mcp_buf_init(&out, 0);
    mcp_buf_init(&text, 0);
    mcp_jw_init(&w, &out);
    /* As draftSar does: the draft cites a stored assessment (PostgreSQL checks the foreign key). */
    int rc = aml_assessment_record(s, &c, &a, &r, "tester", &err) ||
             aml_sar_build(s, &c, &a, &r, "tester", &w, &text, &err);
    mcp_json_doc *d = NULL;
    if (rc || mcp_jw_finish(&w) != MCP_OK || mcp_json_parse(&d, out.data, out.len, NULL, NULL) != MCP_OK) {
        fprintf(stderr, "  %s: no draft: %s\n", case_id, err.msg);
        ck->coverage_bad++;
        goto done;
    }
    ck->checked++;
    const mcp_json *root = mcp_json_doc_root(d), *nar = mcp_json_get(root, "narrative");
    size_t nlen;
    const char *nt = mcp_json_str(mcp_json_get(nar, "text"), &nlen);
    if (!nt || nlen > AML_SAR_NARRATIVE_MAX)
        ck->over_limit++;
    const mcp_json *cov = mcp_json_get(nar, "coverage");
    static const char *const ws[] = {"who", "what", "when", "where", "why", "how"};
    for (int i = 0; i < 6; i++)
        if (!mcp_json_bool(mcp_json_get(cov, ws[i]))) {
            ck->coverage_bad++;
            fprintf(stderr, "  %s: coverage.%s is false\n", case_id, ws[i]);
        }

    /* The data the narrative may quote, straight from the store. */
    strlist amounts = {0}, dates = {0}, names = {0};
    int64_t first = 0;
    for (size_t i = 0; i < c.naccts; i++) {
        aml_st *st = aml_stmt(s, "SELECT amount_base_minor, booked_at, coalesce(txn_ref, '') FROM transactions "
                                       "WHERE from_acct = ?1 UNION ALL SELECT amount_base_minor, booked_at, "
                                       "coalesce(txn_ref, '') FROM transactions WHERE to_acct = ?1");
        aml_bind_int(st, 1, c.accts[i]);
        while (aml_step(st) == AML_ROW) {
            add_usd(&amounts, aml_col_int(st, 0));
            add_date_of(&dates, aml_col_int(st, 1));
            words_of(aml_col_text(st, 2), &names);
        }
        aml_reset(st);
        st = aml_stmt(s, "SELECT coalesce(c.expected_monthly_volume_minor, 0), coalesce(c.expected_monthly_cash_minor, 0), "
                         "c.full_name, coalesce(c.occupation, ''), coalesce(c.onboarded_at, ''), coalesce(a.opened_at, ''), "
                         "a.account_id FROM accounts a LEFT JOIN account_parties p ON p.acct_no = a.acct_no "
                         "LEFT JOIN customers c ON c.customer_id = p.customer_id WHERE a.acct_no = ?");
        aml_bind_int(st, 1, c.accts[i]);
        while (aml_step(st) == AML_ROW) {
            add_usd(&amounts, aml_col_int(st, 0));
            add_usd(&amounts, aml_col_int(st, 1));
            words_of(aml_col_text(st, 2), &names);
            words_of(aml_col_text(st, 3), &names);
            words_of(aml_col_text(st, 6), &names);
            sl_add(&dates, aml_col_text(st, 4));
            sl_add(&dates, aml_col_text(st, 5));
        }
        aml_reset(st);
    }
    add_date_of(&dates, c.from);
    add_date_of(&dates, c.to);
    sl_add(&dates, c.detection_date);
    char op[11];
    snprintf(op, sizeof op, "%.10s", c.opened_at);
    sl_add(&dates, op);
    sl_add(&dates, r.due_date);
    add_usd(&amounts, r.amount_usd);
    /* Rule thresholds. */
    for (int t = 0; t < AML_NTYP; t++)
        for (size_t k = 0; k < aml_catalog()[t].nparams; k++)
            if (aml_catalog()[t].params[k].kind == AML_P_MONEY)
                add_usd(&amounts, (int64_t)a.params.v[t][k]);
    add_usd(&amounts, 10000);
    /* Per finding: the metrics aggregates, and sums of the trigger evidence recomputed here. */
    for (int t = 0; t < AML_NTYP; t++) {
        if (a.f[t].status != AML_MATCHED)
            continue;
        mcp_json_doc *md;
        if (mcp_json_parse(&md, a.f[t].metrics_json, strlen(a.f[t].metrics_json), NULL, NULL) == MCP_OK) {
            harvest(mcp_json_doc_root(md), &amounts, &dates);
            mcp_json_doc_free(md);
        }
        int64_t tot = 0, in = 0, outv = 0;
        for (size_t e = 0; e < a.f[t].nev; e++) {
            if (a.f[t].ev[e].role != AML_ROLE_TRIGGER)
                continue;
            int64_t fa = 0, ta = 0, usd = 0, at = 0;
            aml_st *st = aml_stmt(s, "SELECT from_acct, to_acct, amount_base_minor, booked_at FROM transactions "
                                           "WHERE txn_no = ?");
            aml_bind_int(st, 1, a.f[t].ev[e].no);
            if (aml_step(st) == AML_ROW) {
                fa = aml_col_int(st, 0);
                ta = aml_col_int(st, 1);
                usd = aml_col_int(st, 2);
                at = aml_col_int(st, 3);
            }
            aml_reset(st);
            add_usd(&amounts, usd);
            add_date_of(&dates, at);
            if (!first || at < first)
                first = at;
            tot += usd;
            int focus_in = 0;
            for (size_t k = 0; k < c.naccts; k++)
                focus_in |= c.accts[k] == ta;
            if (focus_in)
                in += usd;
            else
                outv += usd;
            (void)fa;
            /* Names of the counterparties (holders) of evidence transactions. */
            st = aml_stmt(s, "SELECT coalesce(a.holder_name, ''), a.account_id, coalesce(a.country, '') FROM accounts a "
                             "WHERE a.acct_no IN (?, ?)");
            aml_bind_int(st, 1, fa);
            aml_bind_int(st, 2, ta);
            while (aml_step(st) == AML_ROW) {
                words_of(aml_col_text(st, 0), &names);
                words_of(aml_col_text(st, 1), &names);
                words_of(aml_col_text(st, 2), &names);
            }
            aml_reset(st);
            st = aml_stmt(s, "SELECT coalesce(location_id, ''), coalesce(txn_ref, '') FROM transactions WHERE txn_no = ?");
            aml_bind_int(st, 1, a.f[t].ev[e].no);
            if (aml_step(st) == AML_ROW) {
                words_of(aml_col_text(st, 0), &names);
                words_of(aml_col_text(st, 1), &names);
            }
            aml_reset(st);
        }
        add_usd(&amounts, tot);
        add_usd(&amounts, in);
        add_usd(&amounts, outv);
        add_usd(&amounts, in - outv);
    }
    /* Catalog and template vocabulary. */
    for (int t = 0; t < AML_NTYP; t++) {
        words_of(aml_catalog()[t].name, &names);
        words_of(aml_catalog()[t].subtype, &names);
        words_of(aml_catalog()[t].why, &names);
        words_of(aml_catalog()[t].how, &names);
    }
    for (int i = 0; template_words[i]; i++)
        sl_add(&names, template_words[i]);
    words_of(c.case_id, &names);
    words_of(a.assessment_id, &names);

    /* Every amount quoted. */
    regex_t re;
    regmatch_t m;
    regcomp(&re, "\\$[0-9][0-9,]*\\.[0-9][0-9]", REG_EXTENDED);
    for (const char *p = nt; nt && regexec(&re, p, 1, &m, 0) == 0; p += m.rm_eo) {
        char q[64];
        snprintf(q, sizeof q, "%.*s", (int)(m.rm_eo - m.rm_so), p + m.rm_so);
        if (!sl_has(&amounts, q)) {
            ck->amounts_bad++;
            fprintf(stderr, "  %s: amount %s is not in the data\n", case_id, q);
        }
    }
    regfree(&re);
    regcomp(&re, "[0-9]{4}-[0-9]{2}-[0-9]{2}", REG_EXTENDED);
    for (const char *p = nt; nt && regexec(&re, p, 1, &m, 0) == 0; p += m.rm_eo) {
        char q[16];
        snprintf(q, sizeof q, "%.*s", (int)(m.rm_eo - m.rm_so), p + m.rm_so);
        if (!sl_has(&dates, q)) {
            ck->dates_bad++;
            fprintf(stderr, "  %s: date %s is not in the data\n", case_id, q);
        }
    }
    regfree(&re);
    /* Every capitalised word is data or template vocabulary. */
    strlist nw = {0};
    words_of(nt ? nt : "", &nw);
    for (size_t i = 0; i < nw.n; i++) {
        const char *x = nw.v[i];
        if (!isupper((unsigned char)x[0]) || sl_has(&names, x))
            continue;
        /* Sentence starts of template words ("Cash", "Funds") are covered; account ids too. */
        int found = 0;
        for (size_t k = 0; k < names.n && !found; k++)
            found = strcasecmp(names.v[k], x) == 0;
        if (!found) {
            ck->names_bad++;
            fprintf(stderr, "  %s: word '%s' is neither data nor template text\n", case_id, x);
        }
    }
    sl_free(&nw);
    /* The five W's and how, checked on the text against the data. */
    const mcp_json *subj = mcp_json_get(root, "subjects");
    const char *sname = NULL;
    if (mcp_json_len(subj)) {
        const mcp_json *s0 = mcp_json_at(subj, 0);
        sname = mcp_json_str(mcp_json_get(s0, "entityName"), NULL);
        if (!sname)
            sname = mcp_json_str(mcp_json_get(s0, "lastName"), NULL);
    }
    char fd[11] = "", acct[128];
    if (first)
        aml_fmt_date(first, fd);
    aml_account_id(s, c.accts[0], acct, sizeof acct);
    int who = sname && strstr(nt, sname), when = fd[0] && strstr(nt, fd), where = strstr(nt, acct) != NULL;
    int what = strstr(nt, "cash") || strstr(nt, "transfer") || strstr(nt, "check");
    int why = strstr(nt, "This is unusual because") != NULL, how = strstr(nt, "The method:") != NULL;
    if (!who || !what || !when || !where || !why || !how) {
        ck->w5_bad++;
        fprintf(stderr, "  %s: who %d what %d when %d where %d why %d how %d\n", case_id, who, !!what, !!when, where,
                why, how);
    }
    /* Cited transactions exist. */
    const mcp_json *cited = mcp_json_get(root, "evidenceCited");
    for (size_t i = 0; i < mcp_json_len(cited); i++) {
        const char *ref = mcp_json_str(mcp_json_at(cited, i), NULL);
        aml_st *st = aml_stmt(s, "SELECT 1 FROM transactions WHERE txn_ref = ?");
        aml_bind_text(st, 1, ref);
        if (aml_step(st) != AML_ROW || !strstr(nt, ref))
            ck->cited_bad++;
        aml_reset(st);
    }
    sl_free(&amounts);
    sl_free(&dates);
    sl_free(&names);
done:
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&out);
    mcp_buf_cleanup(&text);
    aml_assessment_free(&a);
    aml_case_free(&c);
}

static aml_store *generated(uint64_t seed, int instances)
{
    aml_store *s;
    aml_err err = {{0}};
    if (amltest_open(&s, &err))
        return NULL;
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = seed;
    o.customers = 80;
    o.days = 130;
    o.instances = instances;
    o.lookalikes = 1;
    if (aml_gen_store(s, &o, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        aml_store_close(s);
        return NULL;
    }
    return s;
}

static void test_narratives(void)
{
    aml_store *s = generated(11, 2);
    T_NOT_NULL(s);
    aml_st *st = aml_stmt(s, "SELECT case_id FROM gt_instances WHERE kind = 'injected' ORDER BY case_id");
    strlist ids = {0};
    while (aml_step(st) == AML_ROW)
        sl_add(&ids, aml_col_text(st, 0));
    aml_reset(st);
    check ck = {0};
    for (size_t i = 0; i < ids.n; i++)
        check_case(s, ids.v[i], &ck);
    printf("SAR narratives: %d drafts checked (every injected case of seed 11): amounts not in data %d, dates %d, "
           "names %d, over the limit %d, coverage flags false %d, five W's + how missing %d, bad citations %d\n",
           ck.checked, ck.amounts_bad, ck.dates_bad, ck.names_bad, ck.over_limit, ck.coverage_bad, ck.w5_bad,
           ck.cited_bad);
    sl_free(&ids);
    aml_store_close(s);
    T_EQ_INT(ck.checked, 2 * AML_GEN_NTYP);
    T_EQ_INT(ck.amounts_bad, 0);
    T_EQ_INT(ck.dates_bad, 0);
    T_EQ_INT(ck.names_bad, 0);
    T_EQ_INT(ck.over_limit, 0);
    T_EQ_INT(ck.coverage_bad, 0);
    T_EQ_INT(ck.w5_bad, 0);
    T_EQ_INT(ck.cited_bad, 0);
}

static void test_not_warranted_and_stable_id(void)
{
    aml_store *s = generated(12, 1);
    T_NOT_NULL(s);
    /* A look-alike with no match gets no narrative. */
    aml_st *st = aml_stmt(s, "SELECT case_id FROM gt_instances WHERE kind = 'lookalike' ORDER BY case_id");
    strlist ids = {0};
    while (aml_step(st) == AML_ROW)
        sl_add(&ids, aml_col_text(st, 0));
    aml_reset(st);
    int not_warranted = 0, stable = 0, drafts = 0;
    for (size_t i = 0; i < ids.n; i++) {
        aml_case c;
        aml_err err;
        aml_assessment a;
        if (aml_case_load(s, ids.v[i], &c, &err) || run_case(s, ids.v[i], NULL, AML_ALL_TYPOLOGIES, &a))
            continue;
        aml_recommendation r;
        aml_recommend(s, &c, &a, &r);
        char first_id[128] = "";
        for (int round = 0; round < 2; round++) {
            mcp_buf out, text;
            mcp_jw w;
            mcp_buf_init(&out, 0);
            mcp_buf_init(&text, 0);
            mcp_jw_init(&w, &out);
            if (aml_assessment_record(s, &c, &a, &r, "tester", &err) == 0)
                aml_sar_build(s, &c, &a, &r, "tester", &w, &text, &err);
            mcp_json_doc *d;
            if (mcp_jw_finish(&w) == MCP_OK && mcp_json_parse(&d, out.data, out.len, NULL, NULL) == MCP_OK) {
                const mcp_json *root = mcp_json_doc_root(d);
                const char *id = mcp_json_str(mcp_json_get(root, "sarDraftId"), NULL);
                if (!a.matched && round == 0)
                    not_warranted += mcp_json_str_eq(mcp_json_get(root, "status"), "not_warranted") &&
                                     !mcp_json_get(root, "narrative");
                if (a.matched && round == 0) {
                    snprintf(first_id, sizeof first_id, "%s", id);
                    drafts++;
                }
                if (a.matched && round == 1)
                    stable += strcmp(first_id, id) == 0;
                mcp_json_doc_free(d);
            }
            mcp_buf_cleanup(&out);
            mcp_buf_cleanup(&text);
        }
        aml_assessment_free(&a);
        aml_case_free(&c);
    }
    int unmatched = (int)ids.n - drafts;
    sl_free(&ids);
    aml_store_close(s);
    T_TRUE(unmatched > 0);
    T_EQ_INT(not_warranted, unmatched);
    T_EQ_INT(stable, drafts);
}

/* Hundreds of structuring deposits: the narrative lists some and points to the attachment. */
static void test_length_limit(void)
{
    fx f;
    fx_begin(&f);
    fx_cust(&f, "C1", "Pat Quinn", "individual", "Clerk", 3000, 300, 0);
    fx_acct(&f, "A1", "C1", -500, "CA", "US", NULL);
    for (int i = 0; i < 400; i++) {
        char ref[16], loc[16];
        snprintf(ref, sizeof ref, "S%03d", i);
        snprintf(loc, sizeof loc, "BR-CA-%d", i % 3 + 1);
        fx_tx(&f, ref, 100 + i / 30, 8 + i % 10, NULL, "A1", 9000.00 + i, "cash", "C1", loc, "CA");
    }
    fx_case(&f, "CASE-FX", 99, 113, "A1");
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    check ck = {0};
    check_case(s, "CASE-FX", &ck);
    aml_store_close(s);
    T_EQ_INT(ck.checked, 1);
    T_EQ_INT(ck.over_limit, 0);
    T_EQ_INT(ck.amounts_bad, 0);
    T_EQ_INT(ck.dates_bad, 0);
    T_EQ_INT(ck.names_bad, 0);
    T_EQ_INT(ck.w5_bad, 0);
}

TEST_MAIN(TEST(test_narratives), TEST(test_not_warranted_and_stable_id), TEST(test_length_limit))
