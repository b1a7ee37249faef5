/*
 * The libmcp side of bench/http: one tool, `echo`, that returns its `text`
 * argument as a text block, served over Streamable HTTP (both protocol eras
 * on one endpoint, /mcp). The TypeScript peer (bench/http/ts_server.mjs)
 * exposes the same tool with the same input schema, so both servers parse,
 * validate, run and encode the same work.
 *
 * It binds 127.0.0.1 on a free port, prints "port N" on stdout, and serves
 * until SIGTERM or SIGINT.
 *
 * With --auth ALG it is an OAuth resource server (docs/auth.md): the test
 * authorization server's signer (tests/auth/test_as.c, no HTTP) makes a
 * key for ALG (RS256, PS256, ES256 or EdDSA) and a token for this server
 * with the echo tool's scope, printed as "token JWT" after the port; the
 * verifier trusts that key (the JWKS given as text, so it is cached from
 * the start). --no-token-cache makes it verify the signature on every
 * call, as it does for a token it has not seen; by default a token
 * verified once is remembered until it expires. --auth is built into
 * bench_http_server_auth only (BENCH_HTTP_AUTH): the signer links OpenSSL,
 * and the plain server's peak RSS must not count a library that libmcp
 * itself loads only on first use (src/util/crypto_api.h).
 *
 * usage: bench_http_server [--pool] [--threads N] [--workers N]
 *        bench_http_server_auth [--pool] [--threads N] [--workers N] [--auth ALG [--no-token-cache]]
 *   --pool       registers the tool plainly, so every call hops to the
 *                worker pool; without it the tool is MCP_TOOL_NONBLOCKING
 *                and runs on the HTTP thread that received the request
 *   --threads N  libmicrohttpd threads (default: the number of cores)
 *   --workers N  tool worker threads (default: the number of cores)
 */
#include <mcp/mcp.h>

#ifdef BENCH_HTTP_AUTH
#include "test_as.h"
#endif

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mcp_status echo(mcp_call *call, const mcp_json *args, void *user_data)
{
    (void)user_data;
    /* The input schema guarantees a string. */
    return mcp_call_text(call, mcp_json_str(mcp_json_get(args, "text"), NULL), NULL);
}

int main(int argc, char **argv)
{
    int pool = 0, token_cache = 1;
    unsigned threads = 0, workers = 0;
    const char *auth_alg = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pool") == 0) {
            pool = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            workers = (unsigned)strtoul(argv[++i], NULL, 10);
#ifdef BENCH_HTTP_AUTH
        } else if (strcmp(argv[i], "--auth") == 0 && i + 1 < argc) {
            auth_alg = argv[++i];
        } else if (strcmp(argv[i], "--no-token-cache") == 0) {
            token_cache = 0;
#endif
        } else {
            fprintf(stderr, "usage: %s [--pool] [--threads N] [--workers N]%s\n", argv[0],
#ifdef BENCH_HTTP_AUTH
                    " [--auth RS256|PS256|ES256|EdDSA [--no-token-cache]]"
#else
                    " (--auth: bench_http_server_auth)"
#endif
            );
            return 2;
        }
    }

    /* Block the stop signals before any thread starts, so they all inherit
     * the mask and sigwait() below is the only taker. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    mcp_server_opts opts = {0};
    opts.name = "libmcp-bench";
    opts.version = "1.0.0";
    opts.workers = workers;
    mcp_server *srv;
    mcp_error err;
    if (mcp_server_new(&srv, &opts, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        return 1;
    }
    mcp_tool_def tool = {0};
    tool.name = "echo";
    tool.description = "Returns its text argument.";
    tool.input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                        "\"required\":[\"text\"]}";
    tool.flags = pool ? 0 : MCP_TOOL_NONBLOCKING;
    tool.handler = echo;
    tool.scopes = auth_alg ? "bench.echo" : NULL;
    if (mcp_server_add_tool(srv, &tool, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }

    mcp_http_opts ho = {0};
    ho.host = "127.0.0.1";
    ho.port = 0; /* any free port; printed below */
    ho.threads = threads;
    ho.max_requests_per_address = 1024; /* every load connection comes from 127.0.0.1 */
    mcp_auth *auth = NULL;
#ifdef BENCH_HTTP_AUTH
    tas *as = NULL;
    char *jwks = NULL;
    int alg = -1;
    if (auth_alg) {
        for (int a = 0; a < TAS_NALGS; a++)
            if (!strcmp(tas_alg_name((tas_alg)a), auth_alg))
                alg = a;
        if (alg < 0 || tas_start(&as, 0) != 0) {
            fprintf(stderr, "bench_http_server: --auth takes RS256, PS256, ES256 or EdDSA\n");
            return 2;
        }
        jwks = tas_jwks(as);
        mcp_auth_opts ao = {0};
        ao.issuers = tas_issuer(as);
        ao.jwks_json = jwks;
        ao.token_cache = token_cache ? 0 : -1;
        if (mcp_auth_new(&auth, &ao, &err) != MCP_OK) {
            fprintf(stderr, "bench_http_server: %s\n", err.message);
            return 1;
        }
        ho.auth = auth;
    }
#else
    (void)token_cache;
#endif
    mcp_http_server *hs;
    if (mcp_http_server_start(&hs, srv, &ho, &err) != MCP_OK) {
        fprintf(stderr, "bench_http_server: %s\n", err.message);
        mcp_server_free(srv);
        return 1;
    }
    printf("port %u\n", mcp_http_server_port(hs));
#ifdef BENCH_HTTP_AUTH
    if (as) {
        char aud[64];
        snprintf(aud, sizeof aud, "http://127.0.0.1:%u/mcp", mcp_http_server_port(hs));
        char *claims = tas_claims(as, aud, "bench-client", "bench.echo", 3600, 0, NULL);
        char *tok = tas_sign(as, (tas_alg)alg, claims, 0);
        printf("token %s\n", tok);
        free(claims);
        free(tok);
    }
#endif
    fflush(stdout);

    int sig;
    sigwait(&stop, &sig);
    mcp_http_server_stop(hs, 1000);
    mcp_server_free(srv);
    mcp_auth_free(auth);
#ifdef BENCH_HTTP_AUTH
    free(jwks);
    if (as)
        tas_stop(as);
#endif
    return 0;
}
