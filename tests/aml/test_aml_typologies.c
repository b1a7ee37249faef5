/*
 * One hand-built fixture per typology that must match, and a look-alike
 * that must not (aml-domain.md section 6), plus not-evaluable cases,
 * T08's variants, determinism, and parameter overrides. The fixtures are
 * written through the ingest API, independent of the generator.
 */
#include "amltest.h"

/* Builds a one-case store with `build`, runs typology `typ`, checks the status. */
static void expect(void (*build)(fx *f), int typ, int want, const char *variant)
{
    fx f;
    fx_begin(&f);
    T_TRUE(f.ok);
    build(&f);
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    aml_assessment a;
    T_EQ_INT(run_case(s, "CASE-FX", NULL, 1u << typ, &a), 0);
    int got = a.f[typ].status;
    if (got != want)
        fprintf(stderr, "  %s: %s (want %s): %s\n  metrics %s\n", aml_catalog()[typ].code, aml_status_name(got),
                aml_status_name(want), a.f[typ].explanation, a.f[typ].metrics_json);
    int vok = !variant || strcmp(a.f[typ].variant, variant) == 0;
    if (!vok)
        fprintf(stderr, "  variant %s, want %s\n", a.f[typ].variant, variant);
    int scored = want != AML_MATCHED || (a.f[typ].score >= 50 && a.f[typ].nev > 0);
    aml_assessment_free(&a);
    aml_store_close(s);
    T_EQ_INT(got, want);
    T_TRUE(vok);
    T_TRUE(scored);
}

/* A salaried subject with ordinary history: salary since day 0, rent, a few purchases. */
static void person(fx *f, const char *cust, const char *acct, const char *name, double exp_vol)
{
    char ref[64];
    fx_cust(f, cust, name, "individual", "Teacher", exp_vol, 500, 0);
    fx_acct(f, acct, cust, -900, "CA", "US", NULL);
    fx_acct(f, "EXT-EMPLOYER", NULL, 0, NULL, "US", "Example School District");
    fx_acct(f, "EXT-LANDLORD", NULL, 0, NULL, "US", "Oak Street Rentals");
    for (int m = 0; m < 5; m++) {
        snprintf(ref, sizeof ref, "%s-SAL-%d", acct, m);
        fx_tx(f, ref, m * 30, 7, "EXT-EMPLOYER", acct, 4100.37, "ach", NULL, NULL, NULL);
        snprintf(ref, sizeof ref, "%s-RENT-%d", acct, m);
        fx_tx(f, ref, m * 30 + 3, 10, acct, "EXT-LANDLORD", 1450.21, "ach", NULL, NULL, NULL);
    }
}

/* ---- T01 ------------------------------------------------------------------ */

static void t01_match(fx *f)
{
    person(f, "C1", "A1", "Jane Roe", 5000);
    static const double amt[] = {9100.00, 9450.50, 9800.00, 8900.25};
    static const char *const loc[] = {"BR-CA-1", "BR-CA-2", "BR-CA-1", "BR-CA-3"};
    for (int i = 0; i < 4; i++) {
        char ref[16];
        snprintf(ref, sizeof ref, "T01-%d", i);
        fx_tx(f, ref, 100 + 3 * i, 11, NULL, "A1", amt[i], "cash", "C1", loc[i], "CA");
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void t01_same_day(fx *f)
{
    person(f, "C1", "A1", "Jane Roe", 5000);
    fx_tx(f, "S1", 100, 10, NULL, "A1", 6000.00, "cash", "C1", "BR-CA-1", "CA");
    fx_tx(f, "S2", 100, 15, NULL, "A1", 5500.00, "cash", "C1", "BR-CA-2", "CA");
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

/* A grocery depositing over the threshold every day: CTRs are filed, nothing is split. */
static void t01_lookalike(fx *f)
{
    fx_cust(f, "C1", "Corner Grocery LLC", "entity", "Grocery store", 500000, 400000, 1);
    fx_acct(f, "A1", "C1", -900, "CA", "US", NULL);
    for (int d = 95; d <= 115; d++) {
        char ref[16];
        snprintf(ref, sizeof ref, "G-%d", d);
        fx_tx(f, ref, d, 18, NULL, "A1", 12000.00 + d * 13.37, "cash", "C1", "BR-CA-1", "CA");
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void test_t01_match(void) { expect(t01_match, AML_T01, AML_MATCHED, "multi_day_near_threshold"); }
static void test_t01_same_day(void) { expect(t01_same_day, AML_T01, AML_MATCHED, "same_day_split"); }

/* A same-day split with one deposit in the near-threshold band: the band's 5 points are in the
 * breakdown too (they were counted when choosing the set but left out of the score). */
static void t01_same_day_band(fx *f)
{
    person(f, "C1", "A1", "Jane Roe", 5000);
    fx_tx(f, "S1", 100, 10, NULL, "A1", 8600.00, "cash", "C1", "BR-CA-1", "CA");
    fx_tx(f, "S2", 100, 15, NULL, "A1", 2500.00, "cash", "C1", "BR-CA-1", "CA");
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void test_t01_same_day_band(void)
{
    fx f;
    fx_begin(&f);
    t01_same_day_band(&f);
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    aml_assessment a;
    T_EQ_INT(run_case(s, "CASE-FX", NULL, 1u << AML_T01, &a), 0);
    T_EQ_INT(a.f[AML_T01].status, AML_MATCHED);
    T_EQ_INT(a.f[AML_T01].score, 55);
    T_NOT_NULL(strstr(a.f[AML_T01].metrics_json, "near-threshold band"));
    aml_assessment_free(&a);
    aml_store_close(s);
}
static void test_t01_lookalike(void) { expect(t01_lookalike, AML_T01, AML_NOT_MATCHED, NULL); }

/* ---- T02 ------------------------------------------------------------------ */

static void t02(fx *f, int funnel)
{
    person(f, "C1", "A1", "Sam Poe", 2000);
    fx_acct(f, "EXT-D", NULL, 0, NULL, "US", "Eastside Trading Corp");
    static const char *const who[] = {"P-1", "P-2", "P-3", "P-1"};
    static const char *const loc[] = {"BR-NY-1", "BR-TX-1", "BR-NY-2", "BR-FL-1"};
    static const char *const reg[] = {"NY", "TX", "NY", "FL"};
    static const double amt[] = {4000.10, 3500.20, 5000.30, 4200.40};
    for (int i = 0; i < 4; i++) {
        char ref[16], out[16];
        snprintf(ref, sizeof ref, "D-%d", i);
        snprintf(out, sizeof out, "W-%d", i);
        fx_tx(f, ref, 100 + i, 10, NULL, "A1", amt[i], "cash", funnel ? who[i] : "C1", funnel ? loc[i] : "BR-CA-1",
              funnel ? reg[i] : "CA");
        fx_tx(f, out, funnel ? 100 + i : 114 + i, funnel ? 20 : 10, "A1", "EXT-D", amt[i] * 0.95, "wire", NULL, NULL,
              NULL);
    }
    fx_case(f, "CASE-FX", 95, 120, "A1");
}

static void t02_match(fx *f) { t02(f, 1); }
static void t02_lookalike(fx *f) { t02(f, 0); }
static void test_t02_match(void) { expect(t02_match, AML_T02, AML_MATCHED, NULL); }
static void test_t02_lookalike(void) { expect(t02_lookalike, AML_T02, AML_NOT_MATCHED, NULL); }

/* ---- T03 / T04 -------------------------------------------------------------- */

static void t03_match(fx *f)
{
    person(f, "C1", "A1", "Ann Fox", 6000);
    for (int i = 0; i < 6; i++) {
        char acct[16], ref[16];
        snprintf(acct, sizeof acct, "EXT-S%d", i);
        snprintf(ref, sizeof ref, "IN-%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Sender");
        fx_tx(f, ref, 100 + i, 12, acct, "A1", 2500.00 + i, "wire", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

/* A landlord: six long-standing tenants pay every month. */
static void t03_lookalike(fx *f)
{
    person(f, "C1", "A1", "Ann Fox", 20000);
    for (int i = 0; i < 6; i++) {
        char acct[16], ref[16];
        snprintf(acct, sizeof acct, "EXT-T%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Tenant");
        for (int m = 0; m < 4; m++) {
            snprintf(ref, sizeof ref, "R-%d-%d", i, m);
            fx_tx(f, ref, m * 30 + 10 + i, 12, acct, "A1", 2500.00 + i, "ach", NULL, NULL, NULL);
        }
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void t04_match(fx *f)
{
    person(f, "C1", "A1", "Bo Lin", 6000);
    for (int i = 0; i < 6; i++) {
        char acct[16], ref[16];
        snprintf(acct, sizeof acct, "EXT-B%d", i);
        snprintf(ref, sizeof ref, "OUT-%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Beneficiary");
        fx_tx(f, ref, 100 + i, 12, "A1", acct, 2000.00 + i, "wire", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

/* Payroll: the same eight employees every month. */
static void t04_lookalike(fx *f)
{
    fx_cust(f, "C1", "Acme Widgets Inc.", "entity", "Manufacturing", 60000, 1000, 0);
    fx_acct(f, "A1", "C1", -900, "CA", "US", NULL);
    for (int i = 0; i < 8; i++) {
        char acct[16], ref[16];
        snprintf(acct, sizeof acct, "EXT-E%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Employee");
        for (int m = 0; m < 4; m++) {
            snprintf(ref, sizeof ref, "P-%d-%d", i, m);
            fx_tx(f, ref, 10 + m * 30, 6, "A1", acct, 3000.00 + i, "ach", NULL, NULL, NULL);
        }
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void test_t03_match(void) { expect(t03_match, AML_T03, AML_MATCHED, NULL); }
static void test_t03_lookalike(void) { expect(t03_lookalike, AML_T03, AML_NOT_MATCHED, NULL); }
static void test_t04_match(void) { expect(t04_match, AML_T04, AML_MATCHED, NULL); }
static void test_t04_lookalike(void) { expect(t04_lookalike, AML_T04, AML_NOT_MATCHED, NULL); }

/* ---- T05 ---------------------------------------------------------------------- */

static void t05_match(fx *f)
{
    person(f, "C1", "A1", "Cy Dee", 6000);
    fx_acct(f, "EXT-X", NULL, 0, NULL, "US", "Source Co");
    fx_acct(f, "EXT-Y", NULL, 0, NULL, "US", "Sink Co");
    fx_tx(f, "X1", 100, 9, "EXT-X", "A1", 12000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "Y1", 100, 20, "A1", "EXT-Y", 11900.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "X2", 103, 9, "EXT-X", "A1", 9000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "Y2", 104, 8, "A1", "EXT-Y", 9050.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

/* A bonus in, and a large payment three weeks later. */
static void t05_lookalike(fx *f)
{
    person(f, "C1", "A1", "Cy Dee", 6000);
    fx_acct(f, "EXT-Y", NULL, 0, NULL, "US", "Car Dealer");
    fx_tx(f, "B1", 100, 7, "EXT-EMPLOYER", "A1", 5000.00, "ach", NULL, NULL, NULL);
    fx_tx(f, "Y1", 121, 12, "A1", "EXT-Y", 4800.00, "ach", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 125, "A1");
}

static void test_t05_match(void) { expect(t05_match, AML_T05, AML_MATCHED, NULL); }
static void test_t05_lookalike(void) { expect(t05_lookalike, AML_T05, AML_NOT_MATCHED, NULL); }

/* ---- T06 ----------------------------------------------------------------------- */

static void t06(fx *f, double share)
{
    fx_cust(f, "C1", "Dan Eve", "individual", "Student", 1500, 200, 0);
    fx_acct(f, "A1", "C1", 80, "CA", "US", NULL);
    fx_acct(f, "EXT-X1", NULL, 0, NULL, "US", "Payer One");
    fx_acct(f, "EXT-X2", NULL, 0, NULL, "US", "Payer Two");
    fx_acct(f, "EXT-F", NULL, 0, NULL, "GB", "Foreign Receiver");
    fx_tx(f, "I1", 100, 9, "EXT-X1", "A1", 4000.00, "ach", NULL, NULL, NULL);
    fx_tx(f, "O1", 101, 8, "A1", "EXT-F", 4000.00 * share, "wire", NULL, NULL, NULL);
    fx_tx(f, "I2", 104, 9, "EXT-X2", "A1", 5000.00, "ach", NULL, NULL, NULL);
    fx_tx(f, "O2", 105, 8, "A1", "EXT-F", 5000.00 * (share + 0.01), "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 90, 110, "A1");
}

static void t06_match(fx *f) { t06(f, 0.90); }
static void t06_lookalike(fx *f) { t06(f, 0.99); } /* passes everything on: no commission kept */
static void test_t06_match(void) { expect(t06_match, AML_T06, AML_MATCHED, NULL); }
static void test_t06_lookalike(void) { expect(t06_lookalike, AML_T06, AML_NOT_MATCHED, NULL); }

/* ---- T07 ----------------------------------------------------------------------- */

static void t07_match(fx *f)
{
    person(f, "C1", "A1", "Eve Fay", 6000);
    fx_acct(f, "EXT-P", NULL, 0, NULL, "US", "Peak Ltd");
    fx_acct(f, "EXT-Q", NULL, 0, NULL, "US", "Quay Ltd");
    fx_tx(f, "C-1", 100, 9, "A1", "EXT-P", 20000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "C-2", 102, 9, "EXT-P", "EXT-Q", 18500.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "C-3", 105, 9, "EXT-Q", "A1", 17200.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

/* A loan repaid after fifty days. */
static void t07_lookalike(fx *f)
{
    person(f, "C1", "A1", "Eve Fay", 6000);
    fx_acct(f, "EXT-P", NULL, 0, NULL, "US", "Friend");
    fx_tx(f, "L-1", 60, 9, "A1", "EXT-P", 20000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "L-2", 110, 9, "EXT-P", "A1", 20400.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 55, 115, "A1");
}

static void test_t07_match(void) { expect(t07_match, AML_T07, AML_MATCHED, NULL); }
static void test_t07_lookalike(void) { expect(t07_lookalike, AML_T07, AML_NOT_MATCHED, NULL); }

/* ---- T08 ----------------------------------------------------------------------- */

static void t08_sg(fx *f, int forward)
{
    person(f, "C1", "A1", "Gil Hay", 6000);
    fx_acct(f, "EXT-D", NULL, 0, NULL, "US", "Sink Ltd");
    for (int i = 0; i < 3; i++) {
        char acct[16], r1[16], r2[16];
        snprintf(acct, sizeof acct, "EXT-I%d", i);
        snprintf(r1, sizeof r1, "S-%d", i);
        snprintf(r2, sizeof r2, "G-%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Intermediary");
        fx_tx(f, r1, 100, 9 + i, "A1", acct, 5000.00, "wire", NULL, NULL, NULL);
        if (forward)
            fx_tx(f, r2, 101, 9 + i, acct, "EXT-D", 4800.00, "wire", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t08_match(fx *f) { t08_sg(f, 1); }
static void t08_lookalike(fx *f) { t08_sg(f, 0); } /* three suppliers who keep the money */

static void t08_gather_scatter(fx *f)
{
    person(f, "C1", "A1", "Gil Hay", 6000);
    for (int i = 0; i < 3; i++) {
        char o[16], b[16], r1[16], r2[16];
        snprintf(o, sizeof o, "EXT-O%d", i);
        snprintf(b, sizeof b, "EXT-B%d", i);
        snprintf(r1, sizeof r1, "GI-%d", i);
        snprintf(r2, sizeof r2, "GO-%d", i);
        fx_acct(f, o, NULL, 0, NULL, "US", "Originator");
        fx_acct(f, b, NULL, 0, NULL, "US", "Beneficiary");
        fx_tx(f, r1, 100, 8 + i, o, "A1", 6000.00, "wire", NULL, NULL, NULL);
        fx_tx(f, r2, 101, 8 + i, "A1", b, 5500.00, "wire", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t08_chain(fx *f)
{
    person(f, "C1", "A1", "Gil Hay", 6000);
    const char *hops[] = {"A1", "EXT-H1", "EXT-H2", "EXT-H3"};
    double amt = 15000;
    for (int i = 1; i < 4; i++)
        fx_acct(f, hops[i], NULL, 0, NULL, "US", "Hop");
    for (int i = 0; i < 3; i++) {
        char r[16];
        snprintf(r, sizeof r, "H-%d", i);
        fx_tx(f, r, 100 + i, 9, hops[i], hops[i + 1], amt, "wire", NULL, NULL, NULL);
        amt *= 0.92;
    }
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t08_bipartite(fx *f)
{
    person(f, "C1", "A1", "Gil Hay", 6000);
    const char *orig[] = {"A1", "EXT-O1"}, *ben[] = {"EXT-B1", "EXT-B2", "EXT-B3"};
    fx_acct(f, "EXT-O1", NULL, 0, NULL, "US", "Co-originator");
    for (int b = 0; b < 3; b++)
        fx_acct(f, ben[b], NULL, 0, NULL, "US", "Beneficiary");
    for (int o = 0; o < 2; o++)
        for (int b = 0; b < 3; b++) {
            char r[16];
            snprintf(r, sizeof r, "BP-%d-%d", o, b);
            fx_tx(f, r, 100 + o + b, 9, orig[o], ben[b], 2500.00 + 100 * b + o, "wire", NULL, NULL, NULL);
        }
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void test_t08_match(void) { expect(t08_match, AML_T08, AML_MATCHED, "scatter_gather"); }
static void test_t08_lookalike(void) { expect(t08_lookalike, AML_T08, AML_NOT_MATCHED, NULL); }
static void test_t08_gather_scatter(void) { expect(t08_gather_scatter, AML_T08, AML_MATCHED, "gather_scatter"); }
static void test_t08_chain(void) { expect(t08_chain, AML_T08, AML_MATCHED, "chain"); }
static void test_t08_bipartite(void) { expect(t08_bipartite, AML_T08, AML_MATCHED, "bipartite"); }

/* ---- T09 ---------------------------------------------------------------------- */

static void t09(fx *f, const char *country)
{
    person(f, "C1", "A1", "Ida Jay", 6000);
    fx_acct(f, "EXT-F", NULL, 0, NULL, country, "Overseas Trading");
    fx_tx(f, "F1", 100, 9, "A1", "EXT-F", 4000.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t09_match(fx *f) { t09(f, "IR"); }
static void t09_lookalike(fx *f) { t09(f, "DE"); }

static void t09_no_lists(fx *f)
{
    t09(f, "IR");
    aml_exec(f->s, "DELETE FROM jurisdiction_lists", NULL);
}

static void test_t09_match(void) { expect(t09_match, AML_T09, AML_MATCHED, NULL); }
static void test_t09_lookalike(void) { expect(t09_lookalike, AML_T09, AML_NOT_MATCHED, NULL); }
static void test_t09_not_evaluable(void) { expect(t09_no_lists, AML_T09, AML_NOT_EVALUABLE, NULL); }

/* ---- T10 ---------------------------------------------------------------------- */

static void t10(fx *f, int last_day)
{
    fx_cust(f, "C1", "Kai Lee", "individual", "Retired", 2000, 300, 0);
    fx_acct(f, "A1", "C1", -500, "CA", "US", NULL);
    fx_acct(f, "EXT-X", NULL, 0, NULL, "US", "Source");
    fx_acct(f, "EXT-Y", NULL, 0, NULL, "US", "Sink");
    fx_tx(f, "OLD", last_day, 9, "EXT-X", "A1", 320.00, "ach", NULL, NULL, NULL);
    fx_tx(f, "R1", 100, 9, "EXT-X", "A1", 15000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "R2", 101, 9, "A1", "EXT-Y", 14000.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t10_match(fx *f) { t10(f, -300); }
static void t10_lookalike(fx *f) { t10(f, 40); } /* quiet for two months only */
static void test_t10_match(void) { expect(t10_match, AML_T10, AML_MATCHED, NULL); }

/* A long-standing account whose first stored activity comes 40 days after the data starts: the
 * time before it is unobserved, not dormancy (it was matched from the opening date before). */
static void t10_unobserved(fx *f)
{
    person(f, "C2", "A2", "Ann Other", 5000); /* the import starts on day 0 */
    fx_cust(f, "C1", "Kai Lee", "individual", "Retired", 2000, 300, 0);
    fx_acct(f, "A1", "C1", -500, "CA", "US", NULL);
    fx_acct(f, "EXT-X", NULL, 0, NULL, "US", "Source");
    fx_acct(f, "EXT-Y", NULL, 0, NULL, "US", "Sink");
    fx_tx(f, "R1", 40, 9, "EXT-X", "A1", 15000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "R2", 41, 9, "A1", "EXT-Y", 14000.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 0, 60, "A1");
}
static void test_t10_unobserved(void) { expect(t10_unobserved, AML_T10, AML_NOT_EVALUABLE, NULL); }

/* A company paying six employees for the first time in the data, ten days after it starts: with no
 * month of observed history they cannot be told new (the first payday of every company matched). */
static void t04_first_payday(fx *f)
{
    fx_cust(f, "C1", "Cedar Foods LLC", "entity", "Manufacturing", 200000, 1000, 0);
    fx_acct(f, "A1", "C1", -900, "CA", "US", NULL);
    fx_acct(f, "EXT-C", NULL, 0, NULL, "US", "Client Corp");
    fx_tx(f, "IN0", 0, 9, "EXT-C", "A1", 30000.11, "wire", NULL, NULL, NULL);
    for (int i = 0; i < 6; i++) {
        char ref[16], who[16];
        snprintf(ref, sizeof ref, "PAY-%d", i);
        snprintf(who, sizeof who, "EXT-E%d", i);
        fx_acct(f, who, NULL, 0, NULL, "US", "Employee");
        fx_tx(f, ref, 10, 7, "A1", who, 2500.00 + i * 17.31, "ach", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 0, 20, "A1");
}
static void test_t04_first_payday(void) { expect(t04_first_payday, AML_T04, AML_NOT_EVALUABLE, NULL); }
static void test_t10_lookalike(void) { expect(t10_lookalike, AML_T10, AML_NOT_MATCHED, NULL); }

/* ---- T11 ---------------------------------------------------------------------- */

static void t11(fx *f, double declared)
{
    fx_cust(f, "C1", "Lou May", "individual", "Cashier", declared, 300, 0);
    fx_acct(f, "A1", "C1", -900, "CA", "US", NULL);
    fx_acct(f, "EXT-R", NULL, 0, NULL, "US", "Relative");
    for (int m = 0; m < 3; m++) {
        char r[16];
        snprintf(r, sizeof r, "FAM-%d", m);
        fx_tx(f, r, m * 30 + 5, 9, "EXT-R", "A1", 150.00, "ach", NULL, NULL, NULL);
    }
    for (int i = 0; i < 4; i++) {
        char r[16];
        snprintf(r, sizeof r, "BIG-%d", i);
        fx_tx(f, r, 96 + 5 * i, 9, "EXT-R", "A1", 5000.00 + i, "wire", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 90, 120, "A1");
}

static void t11_match(fx *f) { t11(f, 3000); }
static void t11_lookalike(fx *f) { t11(f, 30000); } /* the profile declares this volume */

static void t11_no_profile(fx *f)
{
    fx_cust(f, "C1", "Lou May", "individual", NULL, -1, -1, 0);
    fx_acct(f, "A1", "C1", 100, "CA", "US", NULL);
    fx_acct(f, "EXT-R", NULL, 0, NULL, "US", "Relative");
    fx_tx(f, "BIG", 105, 9, "EXT-R", "A1", 25000.00, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 100, 120, "A1");
}

static void test_t11_match(void) { expect(t11_match, AML_T11, AML_MATCHED, NULL); }
static void test_t11_lookalike(void) { expect(t11_lookalike, AML_T11, AML_NOT_MATCHED, NULL); }
static void test_t11_not_evaluable(void) { expect(t11_no_profile, AML_T11, AML_NOT_EVALUABLE, NULL); }

/* ---- T12 ---------------------------------------------------------------------- */

static void t12(fx *f, int round)
{
    person(f, "C1", "A1", "Max Ng", 6000);
    fx_acct(f, "EXT-Z", NULL, 0, NULL, "US", "Zed Holdings");
    fx_tx(f, "Z1", 100, 9, "A1", "EXT-Z", 5000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "Z2", 105, 9, "A1", "EXT-Z", 10000.00, "wire", NULL, NULL, NULL);
    fx_tx(f, "Z3", 110, 9, "A1", "EXT-Z", round ? 7000.00 : 7000.37, "wire", NULL, NULL, NULL);
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void t12_match(fx *f) { t12(f, 1); }
static void t12_lookalike(fx *f) { t12(f, 0); } /* only two round amounts */
static void test_t12_match(void) { expect(t12_match, AML_T12, AML_MATCHED, NULL); }
static void test_t12_lookalike(void) { expect(t12_lookalike, AML_T12, AML_NOT_MATCHED, NULL); }

/* ---- T13 ---------------------------------------------------------------------- */

static void t13(fx *f, int known)
{
    person(f, "C1", "A1", "Ned Ott", 6000);
    for (int i = 0; i < 3; i++) {
        char acct[16], r[16];
        snprintf(acct, sizeof acct, "EXT-P%d", i);
        fx_acct(f, acct, NULL, 0, NULL, "US", "Payer");
        if (known)
            for (int m = 0; m < 3; m++) {
                snprintf(r, sizeof r, "K-%d-%d", i, m);
                fx_tx(f, r, 20 + 30 * m + i, 9, acct, "A1", 800.00, "ach", NULL, NULL, NULL);
            }
        snprintf(r, sizeof r, "U-%d", i);
        fx_tx(f, r, 100 + 2 * i, 9, acct, "A1", 1500.00, "ach", NULL, NULL, NULL);
    }
    fx_case(f, "CASE-FX", 95, 115, "A1");
}

static void t13_match(fx *f) { t13(f, 0); }
static void t13_lookalike(fx *f) { t13(f, 1); }
static void test_t13_match(void) { expect(t13_match, AML_T13, AML_MATCHED, NULL); }
static void test_t13_lookalike(void) { expect(t13_lookalike, AML_T13, AML_NOT_MATCHED, NULL); }

/* ---- T14 ---------------------------------------------------------------------- */

static void t14(fx *f, double invoice, const char *buyer)
{
    fx_cust(f, "C1", "Ola Exports Inc.", "entity", "Electronics exporter", 50000, 100, 0);
    fx_acct(f, "A1", "C1", -900, "CA", "US", NULL);
    fx_acct(f, "EXT-BUY", NULL, 0, NULL, "MX", "Buyer Co");
    fx_tx(f, "PAY-1", 100, 9, "EXT-BUY", "A1", 10000.00, "wire", NULL, NULL, NULL);
    if (invoice > 0) {
        aml_trade_rec t;
        memset(&t, 0, sizeof t);
        t.doc_id = "INV-1";
        t.txn_ref = "PAY-1";
        t.buyer_name = buyer;
        t.seller_name = "Ola Exports Inc.";
        t.invoice_amount_minor = (int64_t)(invoice * 100);
        t.currency = "USD";
        if (f->ok && aml_ingest_trade(f->in, &t, &f->err))
            f->ok = 0;
    }
    fx_case(f, "CASE-FX", 95, 110, "A1");
}

static void t14_match(fx *f) { t14(f, 7000.00, "Buyer Co"); }
static void t14_third_party(fx *f) { t14(f, 10000.00, "Someone Else SA"); }
static void t14_lookalike(fx *f) { t14(f, 10000.00, "Buyer Co"); }
static void t14_no_docs(fx *f) { t14(f, 0, NULL); }
static void test_t14_match(void) { expect(t14_match, AML_T14, AML_MATCHED, NULL); }
static void test_t14_third_party(void) { expect(t14_third_party, AML_T14, AML_MATCHED, NULL); }
static void test_t14_lookalike(void) { expect(t14_lookalike, AML_T14, AML_NOT_MATCHED, NULL); }
static void test_t14_not_evaluable(void) { expect(t14_no_docs, AML_T14, AML_NOT_EVALUABLE, NULL); }

/* ---- determinism, parameters --------------------------------------------------------- */

static char *assessment_json(aml_store *s, const aml_params *p)
{
    aml_assessment a;
    if (run_case(s, "CASE-FX", p, AML_ALL_TYPOLOGIES, &a))
        return NULL;
    aml_case c;
    aml_err err;
    aml_case_load(s, "CASE-FX", &c, &err);
    aml_recommendation r;
    aml_recommend(s, &c, &a, &r);
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_assessment_write(s, &w, &c, &a, "case", &r);
    char *out = mcp_jw_finish(&w) == MCP_OK ? aml_strndup(b.data, b.len) : NULL;
    mcp_buf_cleanup(&b);
    aml_assessment_free(&a);
    aml_case_free(&c);
    return out;
}

static void test_deterministic(void)
{
    fx f;
    fx_begin(&f);
    t08_match(&f);
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    char *a = assessment_json(s, NULL), *b = assessment_json(s, NULL);
    int same = a && b && strcmp(a, b) == 0;
    int has_id = a && strstr(a, "\"assessmentId\":\"asm_") != NULL;
    free(a);
    free(b);
    aml_store_close(s);
    T_TRUE(same);
    T_TRUE(has_id);
}

static void test_param_override(void)
{
    fx f;
    fx_begin(&f);
    t01_match(&f);
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    aml_params p;
    aml_params_default(&p);
    mcp_json_doc *d;
    const char *o = "{\"T01\":{\"minNearThresholdCount\":5}}";
    T_OK(mcp_json_parse(&d, o, strlen(o), NULL, NULL));
    aml_err err;
    int rc = aml_params_apply(&p, mcp_json_doc_root(d), &err);
    mcp_json_doc_free(d);
    aml_assessment a;
    int run = run_case(s, "CASE-FX", &p, 1u << AML_T01, &a);
    int status = run == 0 ? a.f[AML_T01].status : -1;
    int echoed = run == 0 && strstr(a.params_sha, "") != NULL;
    if (run == 0)
        aml_assessment_free(&a);
    aml_store_close(s);
    T_EQ_INT(rc, 0);
    T_EQ_INT(status, AML_NOT_MATCHED);
    T_TRUE(echoed);
}

static void test_param_errors(void)
{
    static const char *const bad[] = {
        "{\"T99\":{}}", "{\"T01\":{\"nope\":1}}", "{\"T01\":{\"windowDays\":0}}",
        "{\"T01\":{\"windowDays\":1.5}}", "{\"T01\":[]}", "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aml_params p;
        aml_params_default(&p);
        mcp_json_doc *d;
        T_OK(mcp_json_parse(&d, bad[i], strlen(bad[i]), NULL, NULL));
        aml_err err = {{0}};
        int rc = aml_params_apply(&p, mcp_json_doc_root(d), &err);
        mcp_json_doc_free(d);
        T_EQ_INT(rc, -1);
        T_TRUE(err.msg[0] != '\0');
    }
}

/* docs/aml.md lists every typology with every parameter and its current default. */
static void test_docs_in_sync(void)
{
    FILE *f = fopen(AML_DOCS, "rb");
    T_NOT_NULL(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *doc = malloc((size_t)n + 1);
    size_t got = fread(doc, 1, (size_t)n, f);
    doc[got] = '\0';
    fclose(f);
    int missing = 0;
    for (int t = 0; t < AML_NTYP; t++) {
        const aml_typology_def *d = &aml_catalog()[t];
        char head[96];
        snprintf(head, sizeof head, "#### %s:", d->id);
        char *sec = strstr(doc, head);
        if (!sec) {
            fprintf(stderr, "  docs/aml.md has no section %s\n", head);
            missing++;
            continue;
        }
        char *end = strstr(sec + 5, "\n#### ");
        size_t len = end ? (size_t)(end - sec) : strlen(sec);
        for (size_t i = 0; i < d->nparams; i++) {
            const aml_param_def *pd = &d->params[i];
            char row[160];
            if (pd->kind == AML_P_RATIO)
                snprintf(row, sizeof row, "| `%s` | %g |", pd->name, pd->def);
            else
                snprintf(row, sizeof row, "| `%s` | %lld ", pd->name, (long long)pd->def);
            char *hit = strstr(sec, row);
            if (!hit || (size_t)(hit - sec) > len) {
                fprintf(stderr, "  docs/aml.md, %s: no row starting %s\n", d->id, row);
                missing++;
            }
        }
    }
    free(doc);
    T_EQ_INT(missing, 0);
}

TEST_MAIN(TEST(test_docs_in_sync), TEST(test_t01_match), TEST(test_t01_same_day), TEST(test_t01_same_day_band), TEST(test_t10_unobserved), TEST(test_t04_first_payday), TEST(test_t01_lookalike), TEST(test_t02_match),
          TEST(test_t02_lookalike), TEST(test_t03_match), TEST(test_t03_lookalike), TEST(test_t04_match),
          TEST(test_t04_lookalike), TEST(test_t05_match), TEST(test_t05_lookalike), TEST(test_t06_match),
          TEST(test_t06_lookalike), TEST(test_t07_match), TEST(test_t07_lookalike), TEST(test_t08_match),
          TEST(test_t08_lookalike), TEST(test_t08_gather_scatter), TEST(test_t08_chain), TEST(test_t08_bipartite),
          TEST(test_t09_match), TEST(test_t09_lookalike), TEST(test_t09_not_evaluable), TEST(test_t10_match),
          TEST(test_t10_lookalike), TEST(test_t11_match), TEST(test_t11_lookalike), TEST(test_t11_not_evaluable),
          TEST(test_t12_match), TEST(test_t12_lookalike), TEST(test_t13_match), TEST(test_t13_lookalike),
          TEST(test_t14_match), TEST(test_t14_third_party), TEST(test_t14_lookalike), TEST(test_t14_not_evaluable),
          TEST(test_deterministic), TEST(test_param_override), TEST(test_param_errors))
