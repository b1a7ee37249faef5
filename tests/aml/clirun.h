/*
 * Running the mcp-server-aml binary from a test: argv in, exit status,
 * stdout and stderr out (files in a scratch directory), an MCP stdio
 * session as JSON lines, and the response with a given id.
 */
#ifndef AML_CLIRUN_H
#define AML_CLIRUN_H

#include "amltest.h"
#include "runbin.h"

#include <fcntl.h>
#include <sys/wait.h>

static const char *cr_bin;
static char cr_dir[512];

typedef struct cr_ran {
    int status; /* exit status, or 128 + signal */
    char *out;  /* stdout (malloc) */
    char *err;  /* stderr (malloc) */
} cr_ran;

/* Runs the binary with args (NULL-terminated, without argv[0]) and `input` on stdin. */
static inline cr_ran cr_run(const char *const *args, const char *input)
{
    char in[700], out[700], err[700];
    snprintf(in, sizeof in, "%s/stdin", cr_dir);
    snprintf(out, sizeof out, "%s/stdout", cr_dir);
    snprintf(err, sizeof err, "%s/stderr", cr_dir);
    FILE *f = fopen(in, "wb");
    if (f) {
        fputs(input ? input : "", f);
        fclose(f);
    }
    cr_ran r = {0, NULL, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int i0 = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(i0, 0);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[40];
        size_t n = 0;
        argv[n++] = cr_bin;
        for (size_t k = 0; args[k] && n < 39; k++)
            argv[n++] = args[k];
        argv[n] = NULL;
        execv(cr_bin, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = rb_slurp(out);
    r.err = rb_slurp(err);
    return r;
}

static inline void cr_free(cr_ran *r)
{
    free(r->out);
    free(r->err);
}

/* The JSON-RPC response with this id in the output, or NULL. */
static inline mcp_json_doc *cr_response(const char *out, int id)
{
    for (const char *line = out; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        mcp_json_doc *d;
        if (mcp_json_parse(&d, line, n, NULL, NULL) == MCP_OK) {
            const mcp_json *v = mcp_json_get(mcp_json_doc_root(d), "id");
            if (mcp_json_typeof(v) == MCP_JSON_INT && mcp_json_int(v) == id)
                return d;
            mcp_json_doc_free(d);
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* An MCP stdio session: initialize, then one tools/call per {name, arguments-JSON} pair, ids 2, 3, ... */
static inline char *cr_session(const char *const *calls)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    aml_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
                       "\"capabilities\":{},\"clientInfo\":{\"name\":\"cli-test\",\"version\":\"1\"}}}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
                   MCP_PROTOCOL_2025_11_25);
    for (int i = 0; calls[i] && calls[i + 1]; i += 2)
        aml_buf_printf(&b,
                       "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                       "\"arguments\":%s}}\n",
                       2 + i / 2, calls[i], calls[i + 1]);
    char *s = aml_strndup(b.data, b.len);
    mcp_buf_cleanup(&b);
    return s;
}

/* The result of response `id`; *is_error and the first text block. */
static inline const mcp_json *cr_result(mcp_json_doc *d, int *is_error, const char **text)
{
    const mcp_json *r = mcp_json_get(mcp_json_doc_root(d), "result");
    *is_error = mcp_json_bool(mcp_json_get(r, "isError"));
    *text = "";
    const mcp_json *content = mcp_json_get(r, "content");
    for (size_t i = 0; i < mcp_json_len(content); i++)
        if (mcp_json_str_eq(mcp_json_get(mcp_json_at(content, i), "type"), "text")) {
            *text = mcp_json_str(mcp_json_get(mcp_json_at(content, i), "text"), NULL);
            break;
        }
    return r;
}

static inline void cr_cleanup(void)
{
    static const char *const leftovers[] = {"stdin", "stdout", "stderr"};
    char p[700];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", cr_dir, leftovers[i]);
        unlink(p);
    }
}

#endif /* AML_CLIRUN_H */
