/*
 * mcp-server-aml: 16 concurrent assessCase calls on different cases
 * against the same 16 one at a time (issue 18, "Concurrent tool calls";
 * target: concurrent wall time at most 0.6x the serial one on 2 cores).
 *
 * The server is libmcp's with the aml tools over a connection pool
 * (store/pool.h), driven through the sans-I/O connection, so the figure
 * is the server's (JSON, schema validation, engine, stored assessment,
 * audit) without a transport. A generated bank (gen --seed 3 --customers
 * 20000 --days 90 --instances 3, the 1.7M-transaction bank;
 * --customers N for another size; --quick: 1000 customers) in a SQLite file
 * (WAL), its 16 cases with the busiest focus accounts; with AML_BENCH_PG=postgresql://... the same on PostgreSQL (a
 * fresh bank generated into that database). Each round: the 16 calls
 * serially, then all at once; rounds alternate so load from other
 * processes hits both alike; medians are reported with the CPU time the
 * process used and the load average, since the machine is shared.
 * A third line runs the 16 at once on a pool of one connection (the
 * model before the pool: calls take turns on one connection).
 *
 * usage: bench_concurrent WORKDIR [--quick] [--rounds N] [--customers N]
 */
#include "benchaml.h"
#include "tools/tools.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NCALLS 16

static char cases[NCALLS][AML_CASE_ID_MAX + 1];

/* One server over a pool of `pool` connections to `where`, `workers` tool threads. */
typedef struct rig {
    aml_app app;
    mcp_server *srv;
    mcp_conn *conn;
    bench_waiter w;
    int next_id;
} rig;

static int rig_open(rig *r, const char *where, unsigned pool, unsigned workers)
{
    memset(r, 0, sizeof *r);
    bench_waiter_init(&r->w);
    r->app.actor = "bench";
    aml_store *first;
    aml_err err = {{0}};
    if (aml_store_open(&first, where, 0, &err) || aml_pool_new(&r->app.pool, first, where, 0, pool, &err)) {
        fprintf(stderr, "bench_concurrent: %s\n", err.msg);
        return -1;
    }
    r->app.store = aml_pool_first(r->app.pool);
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = workers;
    so.log = bench_quiet;
    so.max_message = (size_t)64 << 20;
    mcp_error e;
    if (mcp_server_new(&r->srv, &so, &e) || aml_tools_register(r->srv, &r->app, &e) ||
        mcp_conn_new(&r->conn, r->srv, bench_on_frame, &r->w))
        return -1;
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
    mcp_conn_recv(r->conn, init, strlen(init));
    bench_wait_got(&r->w, 1);
    r->next_id = 10;
    return 0;
}

static void rig_close(rig *r)
{
    mcp_conn_close(r->conn, 5000);
    mcp_conn_free(r->conn);
    mcp_server_free(r->srv);
    aml_pool_free(r->app.pool);
}

static void send_assess(rig *r, int i)
{
    char frame[300];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"assessCase\","
             "\"arguments\":{\"caseId\":\"%s\"}}}",
             r->next_id++, cases[i]);
    mcp_conn_recv(r->conn, frame, strlen(frame));
}

/* The 16 calls, all at once or one at a time; wall ms, and CPU ms in *cpu. */
static double round_of(rig *r, int concurrent, double *cpu)
{
    int base = r->w.got;
    double t0 = bench_now_ms(), c0 = bench_cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < NCALLS; i++) {
        send_assess(r, i);
        if (!concurrent)
            bench_wait_got(&r->w, base + i + 1);
    }
    bench_wait_got(&r->w, base + NCALLS);
    *cpu = bench_cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return bench_now_ms() - t0;
}

/* A fresh bank in `where`, and the 16 cases whose focus accounts have the most transactions. */
static int bank_customers = 20000;

static int make_bank(const char *where, int quick)
{
    aml_store *s;
    aml_err err = {{0}};
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 3;
    o.customers = quick ? 1000 : bank_customers;
    o.days = 90;
    o.instances = quick ? 2 : 3;
    double t0 = bench_now_ms();
    if (aml_store_open(&s, where, AML_OPEN_CREATE, &err) || aml_gen_store(s, &o, NULL, &err)) {
        fprintf(stderr, "bench_concurrent: gen: %s\n", err.msg);
        aml_store_close(s);
        return -1;
    }
    aml_st *st = aml_prepare(s, "SELECT ca.case_id, sum((SELECT count(*) FROM transactions t WHERE t.from_acct = "
                                "ca.acct_no) + (SELECT count(*) FROM transactions t WHERE t.to_acct = ca.acct_no)) AS n "
                                "FROM case_accounts ca GROUP BY ca.case_id ORDER BY n DESC, ca.case_id");
    int n = 0;
    while (st && n < NCALLS && aml_step(st) == AML_ROW)
        snprintf(cases[n++], sizeof cases[0], "%s", aml_col_text(st, 0));
    aml_finalize(st);
    aml_store_close(s);
    fprintf(stderr, "bank generated in %.1f s (%d cases used)\n", (bench_now_ms() - t0) / 1e3, n);
    return n == NCALLS ? 0 : -1;
}

/* The engine alone on the 16 cases, one after the other (ms): the part of a call that is compute. */
static double engine_ms(const char *where)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, where, 0, &err))
        return -1;
    aml_params p;
    aml_params_default(&p);
    double best = 1e18;
    for (int round = 0; round < 3; round++) {
        double t0 = bench_now_ms();
        for (int i = 0; i < NCALLS; i++) {
            aml_case c;
            aml_assessment a;
            if (aml_case_load(s, cases[i], &c, &err))
                continue;
            aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
            if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, &err) == 0)
                aml_assessment_free(&a);
            aml_case_free(&c);
        }
        double dt = bench_now_ms() - t0;
        if (dt < best)
            best = dt;
    }
    aml_store_close(s);
    return best;
}

/* Runs the rounds on one store and prints the line. */
static int measure(const char *label, const char *where, unsigned workers, int rounds)
{
    double ser[32], con[32], one[32], ser_cpu = 0, con_cpu = 0, cpu;
    rig r, r1;
    if (rig_open(&r, where, workers, workers) || rig_open(&r1, where, 1, workers))
        return -1;
    double dummy;
    round_of(&r, 1, &dummy); /* warm the page cache and the statement caches */
    round_of(&r1, 1, &dummy);
    for (int k = 0; k < rounds; k++) {
        ser[k] = round_of(&r, 0, &cpu);
        ser_cpu += cpu;
        con[k] = round_of(&r, 1, &cpu);
        con_cpu += cpu;
        one[k] = round_of(&r1, 1, &cpu);
    }
    unsigned peak = aml_pool_peak(r.app.pool);
    int errors = r.w.errors + r1.w.errors;
    rig_close(&r);
    rig_close(&r1);
    double ms = bench_median(ser, rounds), mc = bench_median(con, rounds), m1 = bench_median(one, rounds), eng = engine_ms(where);
    printf("%-10s serial %8.1f ms  concurrent %8.1f ms  ratio %.2fx (target <= 0.60)  | pool of 1: %8.1f ms "
           "(%.2fx)  | CPU per round serial %.1f ms, concurrent %.1f ms  | %u workers, pool %u (peak %u lent), %d "
           "errors\n",
           label, ms, mc, mc / ms, m1, m1 / ms, ser_cpu / rounds, con_cpu / rounds, workers, workers, peak, errors);
    printf("%-10s the engine alone on the 16 cases, one after the other: %.1f ms (%.0f%% of the serial tool calls)\n",
           label, eng, 100 * eng / ms);
    return errors ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_concurrent WORKDIR [--quick] [--rounds N] [--customers N]\n");
        return 2;
    }
    int quick = 0, rounds = 7;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--customers") && i + 1 < argc)
            bank_customers = atoi(argv[++i]);
    }
    if (bank_customers < 100 || bank_customers > 1000000)
        bank_customers = 20000;
    if (rounds < 1 || rounds > 32)
        rounds = 7;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = ncpu > 0 ? (unsigned)ncpu : 2;
    mkdir(argv[1], 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/concurrent.db", argv[1]);
    unlink(path);
    printf("16 concurrent assessCase calls on different cases vs the same 16 serially (median of %d rounds); %ld "
           "cores, load average %.2f at start\n",
           rounds, ncpu, bench_loadavg());
    int rc = make_bank(path, quick) || measure("SQLite", path, workers, rounds);
    const char *pg = getenv("AML_BENCH_PG");
    if (pg && *pg) {
        if (make_bank(pg, quick) == 0)
            rc |= measure("PostgreSQL", pg, workers, rounds);
        else
            printf("PostgreSQL: skipped (the bank could not be generated there; see above)\n");
    } else {
        printf("PostgreSQL: skipped (set AML_BENCH_PG=postgresql://... to a database the bench may fill)\n");
    }
    printf("load average %.2f at the end\n", bench_loadavg());
    return rc ? 1 : 0;
}
