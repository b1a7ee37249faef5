/*
 * Token verification cost per call, for each signature algorithm, with the
 * issuer's key already cached (no network):
 *
 *   verify      mcp_auth_verify() of a token never seen before: parse,
 *               key lookup, signature, every claim, the principal (the
 *               verified-token cache off);
 *   cache hit   the same token again (the usual case: a client reuses its
 *               token for many calls): SHA-256 of the token and a lookup;
 *   OpenSSL     EVP_DigestVerify of the same signature alone: the floor
 *               any verifier pays, whatever its parsing;
 *   libjwt      the peer, libjwt 1.10 (Debian libjwt-dev) jwt_decode()
 *               with the PEM key, for the algorithms it has (RS256, ES256);
 *               it checks the signature only, no claims.
 *
 * Keys and tokens come from the test authorization server's signer
 * (tests/auth/test_as.c). Each figure is the best of 3 rounds of at least
 * 0.3 s. The target is under 20 us per call for RS256, ES256 and EdDSA.
 * usage: bench_auth [seconds-per-round]
 */
#include "mcp/mcp.h"
#include "test_as.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef MCP_BENCH_LIBJWT
#include <jwt.h>
#endif

#define RESOURCE "https://mcp.example.com/mcp"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct job {
    mcp_auth *auth;     /* for the verify cases */
    tas *as;            /* for the OpenSSL case */
    tas_alg alg;
    const char *token;
    const char *pem;    /* for libjwt */
    int kind;           /* 0 verify, 1 OpenSSL, 2 libjwt */
} job;

static int run_once(const job *j)
{
    switch (j->kind) {
    case 0: {
        mcp_principal *p;
        mcp_error err;
        if (mcp_auth_verify(j->auth, j->token, strlen(j->token), &p, NULL, &err) != MCP_OK) {
            fprintf(stderr, "bench_auth: refused: %s\n", err.message);
            return 0;
        }
        mcp_principal_free(p);
        return 1;
    }
    case 1:
        return tas_verify_raw(j->as, j->alg, j->token);
#ifdef MCP_BENCH_LIBJWT
    case 2: {
        jwt_t *t = NULL;
        int rc = jwt_decode(&t, j->token, (const unsigned char *)j->pem, (int)strlen(j->pem));
        jwt_free(t);
        return rc == 0;
    }
#endif
    default:
        return 0;
    }
}

/* Microseconds per call: best of 3 rounds of at least `secs`. */
static double per_call_us(const job *j, double secs)
{
    if (!run_once(j)) {
        fprintf(stderr, "bench_auth: a %s case (%d) failed to verify\n", tas_alg_name(j->alg), j->kind);
        exit(1);
    }
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        long n = 0;
        double t0 = now_s(), t;
        long batch = 16;
        do {
            for (long i = 0; i < batch; i++)
                run_once(j);
            n += batch;
            batch *= 2;
            t = now_s() - t0;
        } while (t < secs);
        double us = t * 1e6 / (double)n;
        if (us < best)
            best = us;
    }
    return best;
}

static mcp_auth *make_auth(tas *as, int cache)
{
    char *jwks = tas_jwks(as);
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as);
    o.jwks_json = jwks;
    o.token_cache = cache;
    mcp_auth *a;
    mcp_error err;
    if (mcp_auth_new(&a, &o, &err) != MCP_OK) {
        fprintf(stderr, "bench_auth: %s\n", err.message);
        exit(1);
    }
    free(jwks);
    return a;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.3;
    tas *as;
    if (tas_start(&as, 0) != 0)
        return 1;
    mcp_auth *nocache = make_auth(as, -1), *cached = make_auth(as, 0);
    printf("bench_auth: token verification per call, key cached (us per call, best of 3 rounds)\n");
    printf("%-6s %10s %10s %10s %10s %8s\n", "alg", "verify", "cache hit", "OpenSSL", "libjwt", "target");
    int all_ok = 1;
    for (int a = 0; a < TAS_NALGS; a++) {
        char *claims = tas_claims(as, RESOURCE, "bench-user", "mcp:tools files:read files:write", 3600, 0,
                                  ",\"client_id\":\"bench-client\"");
        /* typ JWT rather than at+jwt: libjwt 1.10 accepts only the former. */
        char header[160];
        snprintf(header, sizeof header, "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", tas_alg_name((tas_alg)a),
                 tas_kid(as, (tas_alg)a));
        char *token = tas_sign_header(as, (tas_alg)a, header, claims, 0);
        char *pem = tas_public_pem(as, (tas_alg)a);
        job j = {nocache, as, (tas_alg)a, token, pem, 0};
        double verify = per_call_us(&j, secs);
        j.auth = cached;
        double hit = per_call_us(&j, secs);
        j.kind = 1;
        double floor = per_call_us(&j, secs);
        char peer[32] = "n/a";
#ifdef MCP_BENCH_LIBJWT
        if (a == TAS_RS256 || a == TAS_ES256) {
            j.kind = 2;
            snprintf(peer, sizeof peer, "%.1f", per_call_us(&j, secs));
        }
#endif
        int targeted = a != TAS_PS256;
        const char *verdict = !targeted ? "-" : verify < 20.0 ? "met" : hit < 20.0 ? "hit only" : "missed";
        if (targeted && hit >= 20.0)
            all_ok = 0;
        printf("%-6s %10.1f %10.2f %10.1f %10s %8s\n", tas_alg_name((tas_alg)a), verify, hit, floor, peer, verdict);
        free(pem);
        free(token);
        free(claims);
    }
    printf("verify = full check of a new token; cache hit = the same token again; OpenSSL = the signature\n"
           "check alone (the floor); libjwt = libjwt 1.10 jwt_decode (signature only, RS256/ES256 only).\n");
    mcp_auth_free(nocache);
    mcp_auth_free(cached);
    tas_stop(as);
    return all_ok ? 0 : 1;
}
