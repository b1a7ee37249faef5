/*
 * Fuzz target: the client's OAuth parsers (src/client/oauth.c) on peer-controlled
 * bytes. The first byte picks the parser: WWW-Authenticate challenges,
 * the authorization response (the URL the browser landed on), Protected
 * Resource Metadata, authorization server metadata, token answers, and
 * the URL helpers. Whatever the input, every call must return cleanly,
 * leave NUL-terminated strings, and keep its promises (a returned code
 * only with the right state; metadata only for the right issuer).
 */
#include "client/oauth.h"

#include <mcp/mcp.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SERVER "https://mcp.example/mcp"
#define ISSUER "https://as.example/t"
#define RURI "http://127.0.0.1:8976/callback"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned which = data[0] % 6;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    char *z = malloc(n + 1); /* a NUL-terminated copy for the string APIs */
    if (!z)
        return 0;
    memcpy(z, text, n);
    z[n] = '\0';
    char why[200];
    switch (which) {
    case 0: {
        mcp__challenge ch;
        if (mcp__oauth_parse_challenge(text, n, &ch) == MCP_OK) {
            const char *v[] = {ch.resource_metadata, ch.scope, ch.error, ch.error_description};
            for (size_t i = 0; i < 4; i++)
                if (v[i] && strlen(v[i]) > n)
                    abort();
        }
        mcp__challenge_cleanup(&ch);
        break;
    }
    case 1: {
        char *code = NULL;
        mcp_status st = mcp__oauth_check_redirect(z, RURI, "state-1", ISSUER, data[0] & 8, &code, why, sizeof why);
        if ((st == MCP_OK) != (code != NULL))
            abort();
        /* A code only for an address on the redirect URI. */
        if (st == MCP_OK && (strncmp(z, RURI, strlen(RURI)) != 0 || (z[strlen(RURI)] != '?' && z[strlen(RURI)] != '#')))
            abort();
        mcp__oauth_wipe_free(code);
        break;
    }
    case 2: {
        mcp__prm p;
        if (mcp__oauth_parse_prm(text, n, SERVER, data[0] & 8, &p, why, sizeof why) == MCP_OK) {
            if (!mcp__oauth_resource_covers(p.resource, SERVER) || !p.servers || !p.servers[0])
                abort();
            mcp__prm_cleanup(&p);
        }
        break;
    }
    case 3: {
        mcp__asmeta m;
        if (mcp__oauth_parse_as(text, n, ISSUER, data[0] & 8, &m, why, sizeof why) == MCP_OK) {
            if (strcmp(m.issuer, ISSUER) != 0 || !m.token_endpoint)
                abort();
            mcp__asmeta_cleanup(&m);
        }
        break;
    }
    case 4: {
        mcp__tokens t;
        if (mcp__oauth_parse_tokens(data[0] & 8 ? 400 : 200, text, n, &t, why, sizeof why) == MCP_OK) {
            if (!t.access || !t.access[0])
                abort();
            mcp__tokens_cleanup(&t);
        }
        break;
    }
    default: {
        char *c = mcp__oauth_canonical_uri(z);
        mcp_free(c);
        (void)mcp__oauth_resource_covers(z, SERVER);
        (void)mcp__oauth_url_allowed(z, 0);
        char *u[3];
        size_t k = 0;
        if (mcp__oauth_as_urls(z, u, &k) == MCP_OK)
            for (size_t i = 0; i < k; i++)
                mcp_free(u[i]);
        if (mcp__oauth_prm_urls(z, u, &k) == MCP_OK)
            for (size_t i = 0; i < k; i++)
                mcp_free(u[i]);
        int nomem = 0;
        mcp_free(mcp__oauth_scope_union(z, "a b", &nomem));
        break;
    }
    }
    free(z);
    return 0;
}
