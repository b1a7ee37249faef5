/*
 * libmcp transports: adapters that move frames between a connection
 * (server.h) and the outside world.
 */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

/* stdio server options; zero-initialise and set what you need. */
typedef struct mcp_stdio_opts {
    int in_fd;          /* frames in; 0 = standard input (fd 0 is the default) */
    int out_fd;         /* frames out; 0 = standard output (1) */
    unsigned grace_ms;  /* at end of input, how long calls in flight may finish; 0 = 5000 */
} mcp_stdio_opts;

/**
 * Serves one MCP connection over stdio: newline-delimited JSON-RPC frames
 * on the input, answers on the output, until the input ends.
 *
 * - A trailing "\r" before the newline is dropped; empty lines are ignored.
 * - A frame longer than the server's max_message is answered with -32600
 *   and skipped up to the next newline; serving continues.
 * - Only protocol frames are written to the output; diagnostics go to the
 *   server's log callback (stderr by default).
 * - Answers leave as they complete, in any order.
 * - At end of input, calls in flight get `grace_ms` to finish (their
 *   answers are still written), then are cancelled.
 * - SIGPIPE is set to ignored if it was at its default disposition, so a
 *   client that goes away cannot kill the process; a failed write ends
 *   sending on this connection.
 *
 * Runs on the calling thread (the I/O thread); tool handlers run on the
 * server's workers.
 *
 * @param srv  the server; must not be NULL.
 * @param opts options, or NULL for the defaults.
 * @return MCP_OK at end of input (also after a write failure);
 *         MCP_ERR_IO when reading fails; MCP_ERR_INVALID_ARG; MCP_ERR_NOMEM.
 * Thread-safety: one call per connection; several may serve different fds.
 */
MCP_API mcp_status mcp_stdio_serve(mcp_server *srv, const mcp_stdio_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TRANSPORT_H */
