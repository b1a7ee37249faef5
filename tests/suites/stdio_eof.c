/*
 * End of input over stdio: a client that writes its calls and closes its
 * end of the pipe gets an answer to every one. Spawns the fixture server
 * (mcp-test-server) with two workers, writes `initialize` and N calls of
 * `slow` in one go, closes the server's stdin and reads until the server
 * exits.
 *
 * 1. Few calls (8 x 300 ms on 2 workers): they finish within the grace
 *    period (5 s), so every answer is the tool's result.
 * 2. More work than the grace period holds (56 x 500 ms on 2 workers): the
 *    calls that finish in time answer with their result, the rest are
 *    cancelled and answered with a -32603 error; every id exactly once.
 *
 * usage: stdio_eof SERVER [WRAPPER...]
 */
#include <mcp/mcp.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_testlib.h"

#define MAX_ID 128

typedef struct tally {
    int answers[MAX_ID]; /* answers seen per id */
    int errors[MAX_ID];  /* of which JSON-RPC errors with -32603 */
    int other;           /* lines that are not an answer to a call id */
} tally;

static void count_line(tally *t, const char *line, size_t len)
{
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, line, len, NULL, NULL) != MCP_OK) {
        t->other++;
        return;
    }
    const mcp_json *r = mcp_json_doc_root(d);
    long id = (long)mcp_json_int(mcp_json_get(r, "id"));
    if (id > 0 && id < MAX_ID) {
        t->answers[id]++;
        const mcp_json *e = mcp_json_get(r, "error");
        if (e && mcp_json_int(mcp_json_get(e, "code")) == MCP_RPC_INTERNAL_ERROR)
            t->errors[id]++;
    } else if (id != 1000) { /* 1000: initialize */
        t->other++;
    }
    mcp_json_doc_free(d);
}

static void count_one(const char *s, size_t n, double t, void *ud)
{
    (void)t;
    count_line(ud, s, n);
}

/*
 * Runs the server, writes initialize and `n` calls of `slow` (`ms` each),
 * closes its stdin, reads all it writes. Returns its exit status; *secs is
 * how long from closing stdin to the server's exit.
 */
static int pipe_calls(char **argv, int argc, int n, int ms, tally *t, double *secs)
{
    char *args[64], *workers[] = {"--workers", "2", NULL};
    server_args(args, 64, argc, argv, workers);
    piped c;
    if (piped_start(&c, args))
        return -1;
    mcp_buf all;
    mcp_buf_init(&all, 0);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1000,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"eof\",\"version\":\"1\"}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    mcp_buf_append(&all, init, strlen(init));
    for (int id = 1; id <= n; id++) {
        char line[200];
        int len = snprintf(line, sizeof line,
                           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                           "\"arguments\":{\"ms\":%d}}}\n",
                           id, ms);
        mcp_buf_append(&all, line, (size_t)len);
    }
    write_all(c.in, all.data, all.len); /* the pipe holds it all: no reader needed meanwhile */
    mcp_buf_cleanup(&all);
    close(c.in);
    double t0 = now_s();
    read_lines(c.out, count_one, t); /* counting answers by id, until EOF */
    close(c.out);
    int status = 0;
    waitpid(c.pid, &status, 0);
    *secs = now_s() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void check_every_answer(const tally *t, int n, int *results, int *errors)
{
    *results = *errors = 0;
    for (int id = 1; id <= n; id++) {
        CHECK(t->answers[id] == 1, "call %d answered once (%d answers)", id, t->answers[id]);
        *errors += t->errors[id];
        *results += t->answers[id] - t->errors[id];
    }
    CHECK(t->other == 0, "no other output (%d lines)", t->other);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: stdio_eof SERVER [WRAPPER...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    static tally few, many;
    double secs = 0;
    int results, errors;

    /* 1. Within the grace period: every answer is a result. */
    int rc = pipe_calls(argv, argc, 8, 300, &few, &secs);
    CHECK(rc == 0, "the server exits 0 at end of input (status %d)", rc);
    check_every_answer(&few, 8, &results, &errors);
    CHECK(results == 8 && errors == 0, "8 results (%d results, %d errors)", results, errors);

    /* 2. More than the grace period holds: the rest are cancelled, with an answer each. */
    rc = pipe_calls(argv, argc, 56, 500, &many, &secs);
    CHECK(rc == 0, "the server exits 0 at end of input (status %d)", rc);
    check_every_answer(&many, 56, &results, &errors);
    CHECK(results + errors == 56 && errors > 0, "56 answers: %d results, %d cancelled", results, errors);
    CHECK(secs < 30, "the server exits %.1f s after its input ends (grace 5 s)", secs);
    return check_summary("stdio_eof");
}
