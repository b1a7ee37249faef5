/*
 * A JSON-RPC 2.0 loop over stdio built on libmcp's foundation (json.h and
 * rpc.h): one message per line on stdin, one answer per line on stdout.
 * It answers `ping` with an empty result, every other request with
 * -32601, and every malformed frame with its -32700/-32600 error; it
 * ignores notifications and responses. Frames longer than 4 MiB are
 * answered with an error and skipped up to the next newline.
 *
 * It shows the two lowest layers on their own: a program that speaks
 * JSON-RPC without MCP needs nothing else from libmcp.
 */
#include <mcp/mcp.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAME ((size_t)4 << 20)

static void answer(mcp_buf *out, const char *line, size_t len)
{
    mcp_rpc_msg msg;
    mcp_error err;
    mcp_jw w;
    mcp_buf_reset(out);
    mcp_jw_init(&w, out);
    if (mcp_rpc_decode(&msg, line, len, NULL, &err) != MCP_OK) {
        mcp_rpc_write_decode_error(&w, &err);
    } else if (msg.kind != MCP_RPC_REQUEST) {
        mcp_rpc_msg_cleanup(&msg);
        return; /* notifications and responses get no answer */
    } else if (mcp_rpc_method_is(&msg, "ping")) {
        mcp_rpc_begin_result(&w, &msg.id);
        mcp_jw_object_begin(&w);
        mcp_jw_object_end(&w);
        mcp_rpc_end(&w);
    } else {
        char text[160];
        snprintf(text, sizeof text, "Method not found: %.100s", msg.method);
        mcp_rpc_write_error(&w, &msg.id, MCP_RPC_METHOD_NOT_FOUND, text, NULL);
    }
    mcp_rpc_msg_cleanup(&msg);
    if (mcp_jw_finish(&w) == MCP_OK) {
        fwrite(out->data, 1, out->len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "mcp-example-jsonrpc (libmcp %s): JSON-RPC over stdio; try "
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", mcp_version());
    mcp_buf line, out;
    mcp_buf_init(&line, 0);
    mcp_buf_init(&out, 0);
    int skipping = 0, c;
    while ((c = getchar()) != EOF) {
        if (c != '\n') {
            if (skipping)
                continue;
            if (line.len >= MAX_FRAME) {
                /* Over the limit: answer now, drop the rest of the line. */
                const char *msg = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                                  "\"message\":\"frame exceeds 4194304 bytes\"}}\n";
                fputs(msg, stdout);
                fflush(stdout);
                mcp_buf_reset(&line);
                skipping = 1;
                continue;
            }
            char ch = (char)c;
            if (mcp_buf_append(&line, &ch, 1) != MCP_OK)
                return 1;
            continue;
        }
        if (!skipping) {
            size_t n = line.len;
            if (n && line.data[n - 1] == '\r')
                n--;
            if (n)
                answer(&out, line.data, n);
        }
        skipping = 0;
        mcp_buf_reset(&line);
    }
    mcp_buf_cleanup(&line);
    mcp_buf_cleanup(&out);
    return 0;
}
