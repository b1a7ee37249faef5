/*
 * mcp-cli internals: the pieces of the command-line client that do not
 * talk to a server, kept apart from main.c so tests/cli can check them
 * directly.
 *
 *   args.c      command-line words -> JSON argument objects (key=value typing)
 *   pretty.c    JSON values -> indented text (libmcp's writer is compact only)
 *   authorize.c the browser part of the OAuth code flow (print the URL, wait
 *               for the redirect on a loopback listener or a pasted address)
 *   main.c      options, connecting, one command, exit status
 */
#ifndef MCP_CLI_H
#define MCP_CLI_H

#include <mcp/mcp.h>

/* Exit statuses: the contract of the program (mcp-cli.1, EXIT STATUS). */
enum {
    CLI_EXIT_OK = 0,         /* a result */
    CLI_EXIT_TOOL_ERROR = 1, /* tools/call answered with isError: true */
    CLI_EXIT_RPC_ERROR = 2,  /* the server answered with a JSON-RPC error */
    CLI_EXIT_FAILURE = 3     /* usage error, or no answer (connection, time limit) */
};

/* How the words after a command's fixed arguments become a JSON object. */
typedef enum cli_arg_mode {
    CLI_ARGS_TYPED,  /* key=value: a value that parses as JSON is that JSON, else a string;
                        a single word starting with '{' is the whole object */
    CLI_ARGS_STRINGS /* key=value: every value is a string (prompt and completion arguments) */
} cli_arg_mode;

/**
 * Appends to `out` the compact JSON object that `words` describe.
 *
 * @param out   receives the object text (the buffer is appended to).
 * @param words the words, each "key=value" (or, in CLI_ARGS_TYPED mode, one
 *              word that is a whole JSON object); `n` may be 0 ({}).
 * @param mode  see cli_arg_mode.
 * @param msg   receives a one-line reason on failure (cap bytes).
 * @return MCP_OK; MCP_ERR_INVALID_ARG for a word without '=', an empty key,
 *         a key given twice, or a '{' word that is not one JSON object
 *         (msg says which); MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
mcp_status cli_build_object(mcp_buf *out, char *const *words, int n, cli_arg_mode mode, char *msg, size_t cap);

/**
 * Appends `v` to `out` as indented JSON: two spaces per level, one member
 * or element per line, "key": value with one space, empty containers as
 * {} and [], numbers as their source text, strings re-escaped. No newline
 * after the last line.
 *
 * @return MCP_OK; MCP_ERR_INVALID_ARG (v is NULL); MCP_ERR_NOMEM; MCP_ERR_LIMIT.
 * Thread-safety: safe on a document no one is freeing.
 */
mcp_status cli_json_pretty(mcp_buf *out, const mcp_json *v);

/**
 * Appends `v` to `out` as compact JSON (libmcp's writer), or indented when
 * `pretty` is nonzero.
 */
mcp_status cli_json_write(mcp_buf *out, const mcp_json *v, int pretty);

/* ---- authorization (authorize.c) ---------------------------------------------- */

/* Where the browser comes back after the authorization server. */
typedef struct cli_redirect {
    int fd;         /* loopback listener for the redirect, or -1 (the address is pasted) */
    char uri[512];  /* the redirect URI in use */
    unsigned wait_s; /* how long cli_authorize() waits for the browser */
} cli_redirect;

/**
 * Prepares the redirect: with `uri` NULL, listens on 127.0.0.1 on a port
 * the system picks and uses "http://127.0.0.1:PORT/callback"; with an http
 * URI on 127.0.0.1 or localhost, listens on its port (when the port is
 * taken, the address must be pasted instead); any other URI is only pasted
 * back. `wait_s` is kept.
 * @return 0, or -1 with a reason in `msg` (no listener could be had for
 *         the default, or the URI is too long).
 * Thread-safety: safe on distinct objects.
 */
int cli_redirect_init(cli_redirect *r, const char *uri, char *msg, size_t cap);

/** Closes the listener. */
void cli_redirect_close(cli_redirect *r);

/**
 * An mcp_oauth_authorize_fn (user_data: the cli_redirect): prints the
 * authorization URL on stderr for a person to open, then waits up to
 * wait_s for the browser on the listener (answering it with a short page)
 * or for the address pasted on stdin, whichever comes first.
 * @return MCP_OK with the address in `out`; MCP_ERR_TIMEOUT; MCP_ERR_IO.
 */
mcp_status cli_authorize(mcp_client *c, const char *url, const char *redirect_uri, char *out, size_t cap, void *ud);

#endif /* MCP_CLI_H */
