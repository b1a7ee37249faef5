/*
 * mcp-server-aml's own metrics (tools/metrics.c): the counters every
 * aml_progress moves (the scan's and the import's) appear in a scrape of
 * the server with the app's collector, per job; and libmcp's metrics API
 * refuses what would break the exposition format.
 */
#include "testlib.h"
#include "tools/tools.h"

#include <string.h>

static char *scrape(mcp_server *srv)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    if (mcp_server_metrics_text(srv, &b) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

static void test_progress_in_scrape(void)
{
    mcp_server *srv = NULL;
    T_OK(mcp_server_new(&srv, NULL, NULL));
    T_OK(aml_metrics_register(srv));
    aml_progress scan, import;
    aml_progress_start(&scan, "scanning", 10);
    aml_progress_update(&scan, 4);
    aml_progress_start(&import, "importing", 1000);
    aml_progress_update(&import, 300);
    char *t = scrape(srv);
    T_NOT_NULL(t);
    T_TRUE(strstr(t, "# TYPE aml_jobs_running gauge\n") != NULL);
    T_TRUE(strstr(t, "aml_jobs_running{job=\"scan\"} 1\n") != NULL);
    T_TRUE(strstr(t, "aml_job_units_expected{job=\"import\"} 1000\n") != NULL);
    T_TRUE(strstr(t, "aml_job_units_done_total{job=\"scan\"} 4\n") != NULL);
    mcp_free(t);
    aml_progress_update(&scan, 10);
    aml_progress_end(&scan);
    aml_progress_end(&import);
    t = scrape(srv);
    T_NOT_NULL(t);
    T_TRUE(strstr(t, "aml_jobs_running{job=\"scan\"} 0\n") != NULL);
    T_TRUE(strstr(t, "aml_job_units_expected{job=\"scan\"} 0\n") != NULL);
    T_TRUE(strstr(t, "aml_job_units_done_total{job=\"scan\"} 10\n") != NULL);
    T_TRUE(strstr(t, "aml_job_units_done_total{job=\"import\"} 300\n") != NULL);
    T_TRUE(strstr(t, "aml_jobs_finished_total{job=\"scan\"} 1\n") != NULL);
    mcp_free(t);
    mcp_server_free(srv);
}

/* Collectors that break one rule each: the call says so and the
 * collector's lines are left out of the scrape. ud: which rule; *seen is
 * set to the status the broken call returned. */
typedef struct rule_case {
    int rule;
    mcp_status seen;
} rule_case;

static void rule_collector(mcp_metrics_out *out, void *ud)
{
    rule_case *c = ud;
    const char *reserved[] = {"__x", "1", NULL};
    const char *twice[] = {"a", "1", "a", "2", NULL};
    if (c->rule == 0) {
        c->seen = mcp_metrics_sample(out, NULL, 1); /* before any family */
        return;
    }
    mcp_metrics_family(out, c->rule == 1 ? "mcp_mine" : "app_bad", "gauge", "h");
    mcp_metrics_sample(out, NULL, 2);
    c->seen = c->rule == 1   ? mcp_metrics_family(out, "app_bad", "gauge", "h")
              : c->rule == 2 ? mcp_metrics_sample(out, reserved, 1)
              : c->rule == 3 ? mcp_metrics_sample(out, twice, 1)
              : c->rule == 4 ? mcp_metrics_family(out, "app_bad", "gauge", "again")
                             : mcp_metrics_family(out, "9bad", "gauge", "h");
}

static void good_collector(mcp_metrics_out *out, void *ud)
{
    (void)ud;
    const char *labels[] = {"k", "a\"b", NULL};
    mcp_metrics_family(out, "app_good", "counter", "h");
    mcp_metrics_sample(out, labels, 1.5);
}

static void test_api_refusals(void)
{
    mcp_server *srv = NULL;
    T_OK(mcp_server_new(&srv, NULL, NULL));
    rule_case cases[6] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};
    static const mcp_status want[6] = {MCP_ERR_STATE,       MCP_ERR_EXISTS, MCP_ERR_INVALID_ARG,
                                       MCP_ERR_INVALID_ARG, MCP_ERR_EXISTS, MCP_ERR_INVALID_ARG};
    for (int i = 0; i < 6; i++)
        T_OK(mcp_server_add_metrics(srv, rule_collector, &cases[i], NULL));
    T_OK(mcp_server_add_metrics(srv, good_collector, NULL, NULL));
    T_STATUS(mcp_server_add_metrics(srv, NULL, NULL, NULL), MCP_ERR_INVALID_ARG);
    char *t = scrape(srv);
    T_NOT_NULL(t);
    for (int i = 0; i < 6; i++)
        T_EQ_INT(cases[i].seen, want[i]);
    T_TRUE(strstr(t, "# TYPE mcp_tool_calls_total counter\n") != NULL);
    T_TRUE(strstr(t, "app_bad") == NULL);
    T_TRUE(strstr(t, "mcp_mine") == NULL);
    T_TRUE(strstr(t, "app_good{k=\"a\\\"b\"} 1.5\n") != NULL);
    mcp_free(t);
    mcp_server_free(srv);
}

TEST_MAIN(TEST(test_progress_in_scrape), TEST(test_api_refusals))
