/*
 * The synthetic data generator: a deterministic bank (customers with KYC
 * profiles, accounts, everyday activity) with injected typology instances,
 * their ground truth, an alert case around each, and clean look-alikes
 * that resemble a typology without meeting its definition (salaried
 * customers, payroll and landlord accounts, cash-heavy shops that file
 * CTRs, loans repaid late, ...). Same options, same bytes.
 *
 * Two shapes: the native model (everything the engine can use), or the
 * IBM AMLworld file format (transactions, accounts and a Patterns.txt with
 * FAN-IN, FAN-OUT, CYCLE, SCATTER-GATHER, GATHER-SCATTER, STACK and
 * BIPARTITE attempts), for the import-and-scan evaluation.
 */
#ifndef AML_GEN_H
#define AML_GEN_H

#include "engine/cases.h"
#include "commands/ingest.h"

typedef struct aml_gen_opts {
    uint64_t seed;        /* everything follows from it */
    int customers;        /* background customers (AMLworld: accounts) */
    int days;             /* days of everyday activity */
    unsigned inject;      /* typologies to inject (bit per catalog index) */
    int instances;        /* injected instances per typology (AMLworld: per pattern) */
    int lookalikes;       /* look-alikes per typology; -1 = as many as instances */
    const char *start;    /* first day, YYYY-MM-DD; NULL = 2025-01-01 (AMLworld 2022-09-01) */
    int amlworld;         /* write the AMLworld shape */
} aml_gen_opts;

typedef struct aml_gen_stats {
    uint64_t customers, accounts, transactions, cases, instances, lookalikes, laundering_rows;
} aml_gen_stats;

void aml_gen_defaults(aml_gen_opts *o);

/** Generates straight into a store, in one transaction. */
int aml_gen_store(aml_store *s, const aml_gen_opts *o, aml_gen_stats *st, aml_err *err);

/** Writes the native CSV (one file). */
int aml_gen_native(FILE *out, const aml_gen_opts *o, aml_gen_stats *st, aml_err *err);

/**
 * Writes AMLworld files: `trans_path` (…_Trans.csv), and beside it the
 * accounts and patterns files (…_accounts.csv, …_Patterns.txt; or
 * trans_path + ".accounts.csv" / ".patterns.txt" when the name does not
 * end in _Trans.csv). The paths written are returned in acc_out/pat_out.
 */
int aml_gen_amlworld(const char *trans_path, const aml_gen_opts *o, aml_gen_stats *st, char *acc_out,
                     char *pat_out, size_t n, aml_err *err);

/** Overlap typologies an injected instance of `typ` may also match by construction (bit mask). */
unsigned aml_gen_overlap(int typ);

/**
 * The demo store the server answers from without --db: an in-memory store
 * with the generator's bank for seed 20260728 (60 customers, one instance
 * and one look-alike per typology), every case assessed once.
 */
int aml_demo_store(aml_store **out, aml_err *err);

/**
 * Fills `s`, an empty store (in memory: the server's demo store), with the
 * demo bank of aml_demo_store. 0, or -1 with err.
 */
int aml_demo_fill(aml_store *s, aml_err *err);

#endif /* AML_GEN_H */
