/*
 * Principals (who a verified token speaks for) and the space-separated
 * scope lists they hold: what the server core needs from authorization.
 * Kept apart from the verifier (auth.c) so that a program which never
 * creates an mcp_auth, linked statically, does not pull in the key
 * fetcher and with it libcurl and its dependencies.
 */
#include "auth/auth_internal.h"
#include "util/util.h"
#include "util/crypto_api.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Words: space-separated lists                                              */

/* Next word of a space-separated list; 0 at the end. */
int mcp__next_word(const char **p, const char **w, size_t *n)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return 0;
    const char *e = s;
    while (*e && *e != ' ')
        e++;
    *w = s;
    *n = (size_t)(e - s);
    *p = e;
    return 1;
}

/* 1 when the space-separated `list` holds the word w[0..n). */
int mcp__list_has(const char *list, const char *w, size_t n)
{
    const char *p = list, *x;
    size_t xl;
    while (p && mcp__next_word(&p, &x, &xl))
        if (xl == n && memcmp(x, w, n) == 0)
            return 1;
    return 0;
}

/* Copies a list with single spaces; NULL or blank gives NULL. Refuses
 * control characters, quotes and backslashes (the values end up in JSON
 * and in quoted header parameters). */
mcp_status mcp__words_dup(const char *in, char **out)
{
    *out = NULL;
    if (!in)
        return MCP_OK;
    mcp_buf b;
    mcp_buf_init(&b, MCP__SCOPES_MAX_LEN * 4);
    const char *p = in, *w;
    size_t n;
    mcp_status st = MCP_OK;
    while (!st && mcp__next_word(&p, &w, &n)) {
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)w[i] < 0x21 || w[i] == '"' || w[i] == '\\' || w[i] == 0x7f)
                st = MCP_ERR_INVALID_ARG;
        if (!st && b.len)
            st = mcp_buf_append(&b, " ", 1);
        if (!st)
            st = mcp_buf_append(&b, w, n);
    }
    if (st) {
        mcp_buf_cleanup(&b);
        return st;
    }
    *out = b.data; /* NULL when nothing was appended */
    return MCP_OK;
}

mcp_status mcp__scopes_normalize(const char *in, char **out)
{
    *out = NULL;
    if (!in)
        return MCP_OK;
    const char *p = in, *w;
    size_t n, count = 0, total = 0;
    while (mcp__next_word(&p, &w, &n)) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)w[i];
            /* RFC 6749 section 3.3: %x21 / %x23-5B / %x5D-7E */
            if (c < 0x21 || c == 0x22 || c == 0x5C || c > 0x7E)
                return MCP_ERR_INVALID_ARG;
        }
        count++;
        total += n + 1;
    }
    if (count > MCP__SCOPES_MAX || total > MCP__SCOPES_MAX_LEN)
        return MCP_ERR_LIMIT;
    return mcp__words_dup(in, out);
}

/* ------------------------------------------------------------------------ */
/* Principals                                                                */

mcp_principal *mcp__principal_ref(const mcp_principal *p)
{
    mcp_principal *m = (mcp_principal *)p;
    if (m)
        atomic_fetch_add(&m->refs, 1);
    return m;
}

void mcp_principal_free(mcp_principal *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    mcp_free(p->scopes);
    mcp_free(p->held);
    mcp_json_doc_free(p->claims);
    mcp_free(p);
}

const char *mcp_principal_subject(const mcp_principal *p)
{
    return p ? p->sub : NULL;
}

const char *mcp_principal_client_id(const mcp_principal *p)
{
    return p ? p->client_id : NULL;
}

const char *mcp_principal_issuer(const mcp_principal *p)
{
    return p ? p->iss : NULL;
}

const char *mcp_principal_scopes(const mcp_principal *p)
{
    return p && p->scopes ? p->scopes : "";
}

int64_t mcp_principal_expires(const mcp_principal *p)
{
    return p ? p->exp : 0;
}

const mcp_json *mcp_principal_claims(const mcp_principal *p)
{
    return p ? mcp_json_doc_root(p->claims) : NULL;
}

int mcp_principal_has_scope(const mcp_principal *p, const char *scope)
{
    if (!p || !scope || !*scope)
        return 0;
    return mcp__list_has(p->held, scope, strlen(scope));
}

int mcp_principal_has_scopes(const mcp_principal *p, const char *scopes)
{
    const char *s = scopes, *w;
    size_t n;
    while (s && mcp__next_word(&s, &w, &n))
        if (!p || !mcp__list_has(p->held, w, n))
            return 0;
    return 1;
}

void mcp__principal_key(const mcp_principal *p, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = '\0';
    if (!p || cap < MCP__PRINCIPAL_KEY_SIZE)
        return;
    /* SHA-256 over the kind (a subject, or a client acting for itself) and
     * the SHA-256 of the issuer and of the name: fixed-size fields, so none
     * can run into the next (one-shot SHA256(), which allocates nothing). */
    const char *name = p->sub ? p->sub : p->client_id;
    unsigned char in[1 + 2 * SHA256_DIGEST_LENGTH];
    in[0] = p->sub ? 's' : 'c';
    SHA256((const unsigned char *)(p->iss ? p->iss : ""), p->iss ? strlen(p->iss) : 0, in + 1);
    SHA256((const unsigned char *)(name ? name : ""), name ? strlen(name) : 0, in + 1 + SHA256_DIGEST_LENGTH);
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(in, sizeof in, md);
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof md; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[2 * sizeof md] = '\0';
}
