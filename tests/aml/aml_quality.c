/*
 * Detection quality: several seeds of the generator, every typology
 * injected at least 20 times beside as many clean look-alikes, every case
 * assessed with the default parameters. Per typology, recall over the
 * injected instances must be at least 95% and precision over the cases it
 * matched at least 90% (a match on an instance of another typology whose
 * construction also satisfies this one, aml_gen_overlap(), counts neither
 * way; it is reported in the "overlap" column). The table is printed.
 */
#include "amltest.h"

#define SEEDS 3
#define PER_SEED 7

static void test_quality(void)
{
    aml_quality total[AML_NTYP];
    memset(total, 0, sizeof total);
    for (int k = 0; k < SEEDS; k++) {
        aml_store *s;
        aml_err err = {{0}};
        T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
        aml_gen_opts o;
        aml_gen_defaults(&o);
        o.seed = 1000 + (uint64_t)k * 7919;
        o.customers = 100;
        o.days = 150;
        o.instances = PER_SEED;
        o.lookalikes = PER_SEED;
        aml_gen_stats gs;
        T_EQ_INT(aml_gen_store(s, &o, &gs, &err), 0);
        aml_quality q[AML_NTYP];
        T_EQ_INT(aml_eval_cases(s, NULL, q, &err), 0);
        printf("seed %llu: %llu transactions, %llu cases\n", (unsigned long long)o.seed,
               (unsigned long long)gs.transactions, (unsigned long long)gs.cases);
        for (int t = 0; t < AML_NTYP; t++) {
            total[t].injected += q[t].injected;
            total[t].detected += q[t].detected;
            total[t].lookalikes += q[t].lookalikes;
            total[t].lookalike_hits += q[t].lookalike_hits;
            total[t].alerts += q[t].alerts;
            total[t].false_pos += q[t].false_pos;
            total[t].overlap_hits += q[t].overlap_hits;
        }
        aml_store_close(s);
    }
    printf("\nDetection quality over %d seeds (default parameters)\n", SEEDS);
    printf("%-28s %8s %8s %7s %10s %7s %6s %9s %8s\n", "typology", "injected", "detected", "recall", "lookalikes",
           "alerts", "false", "precision", "overlap");
    int bad = 0;
    for (int t = 0; t < AML_GEN_NTYP; t++) { /* T15 is not injected (it depends on loaded lists) */
        aml_quality *q = &total[t];
        q->recall = q->injected ? (double)q->detected / q->injected : 0;
        q->precision = q->alerts ? (double)(q->alerts - q->false_pos) / q->alerts : 1;
        printf("%-28s %8d %8d %6.1f%% %10d %7d %6d %8.1f%% %8d\n", aml_catalog()[t].id, q->injected, q->detected,
               100 * q->recall, q->lookalikes, q->alerts, q->false_pos, 100 * q->precision, q->overlap_hits);
        if (q->injected < 20 || q->recall < 0.95 || q->precision < 0.90)
            bad++;
    }
    T_EQ_INT(bad, 0);
}

TEST_MAIN(TEST(test_quality))
