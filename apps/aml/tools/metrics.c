/*
 * mcp-server-aml's own Prometheus metrics, beside libmcp's: the progress
 * of scans and imports, read from the counters every aml_progress moves
 * (util.h). Registered as a libmcp metrics collector (mcp_server_add_metrics).
 */
#include "tools/tools.h"

#include <string.h>

/* "scanning" -> "scan", "importing" -> "import"; other labels as they are. */
static const char *job_name(const char *label)
{
    if (strcmp(label, "scanning") == 0)
        return "scan";
    if (strcmp(label, "importing") == 0)
        return "import";
    return label;
}

static void write_family(mcp_metrics_out *out, const char *name, const char *type, const char *help, int which)
{
    if (mcp_metrics_family(out, name, type, help) != MCP_OK)
        return;
    aml_progress_counts c;
    for (int i = 0; aml_progress_stats(i, &c); i++) {
        const char *labels[] = {"job", job_name(c.label), NULL};
        double v = which == 0   ? (double)(c.running < 0 ? 0 : c.running)
                   : which == 1 ? (double)c.expected
                   : which == 2 ? (double)c.done_total
                                : (double)c.finished_total;
        mcp_metrics_sample(out, labels, v);
    }
}

static void aml_collect(mcp_metrics_out *out, void *ud)
{
    (void)ud;
    write_family(out, "aml_jobs_running", "gauge", "Scans and imports running now, by job.", 0);
    write_family(out, "aml_job_units_expected", "gauge",
                 "Units the running jobs expect in all (scan: accounts; import: bytes of input).", 1);
    write_family(out, "aml_job_units_done_total", "counter",
                 "Units done by jobs, ever (scan: accounts; import: bytes of input).", 2);
    write_family(out, "aml_jobs_finished_total", "counter", "Scans and imports that ended, by job.", 3);
}

mcp_status aml_metrics_register(mcp_server *srv)
{
    return mcp_server_add_metrics(srv, aml_collect, NULL, NULL);
}
