/*
 * OAuth 2.1 for the client: what happens between a 401 (or a 403
 * insufficient_scope) and the request sent again with a new token
 * (docs/client-http.md, "Authorization").
 *
 *   1. The challenge: WWW-Authenticate's Bearer parameters (resource_metadata,
 *      scope, error).
 *   2. Protected Resource Metadata (RFC 9728): the resource_metadata URL,
 *      else the well-known URL with the server's path inserted, then the
 *      root one. Its `resource` must identify this server; it names the
 *      authorization servers. Without any PRM the server's origin is taken
 *      as the authorization server (the 2025-03-26 rules).
 *   3. Authorization server metadata (RFC 8414, OpenID Connect discovery) at
 *      the well-known URLs in the spec's order; `issuer` must be identical
 *      to the issuer the URL was built from, or the document is not used.
 *   4. The client's identity at that issuer: pre-registered, a Client ID
 *      Metadata Document URL, or dynamic registration (RFC 7591), in that
 *      order; kept per issuer so credentials never travel to another one.
 *   5. Scopes: the challenge's, else the PRM's scopes_supported, else none;
 *      joined with what was requested before from the same issuer (step-up
 *      never loses a grant); offline_access when the issuer lists it.
 *   6. The grant: a refresh token when one is held for this issuer (401
 *      only); else authorization code with PKCE S256, state and the RFC
 *      9207 iss check, through the application's authorize callback; or
 *      client credentials. The resource (RFC 8707) goes in every
 *      authorization and token request.
 *
 * Every exchange with the authorization server (and the metadata fetches)
 * is one libcurl easy handle on the calling worker thread, with a time
 * limit, no redirects, http(s) only, and bounded answers. Tokens, secrets,
 * codes and verifiers never reach a log line or an error message, and are
 * overwritten before their memory is freed.
 *
 * Threads: the core runs one mcp__oauth_run() at a time, so the session's
 * state (registrations, refresh token, requested scopes) needs no lock;
 * only the abort flag is touched from other threads.
 */
#include "client/oauth.h"
#include "client/client_internal.h"
#include "util/util.h"

#include "util/curl_api.h"
#include "util/crypto_api.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_TIMEOUT_MS 10000L
#define DEFAULT_MAX_ATTEMPTS 3u
#define MAX_DOC (256u << 10)      /* metadata, registration and token answers */
#define MAX_TOKEN (16u << 10)     /* an access or refresh token */
#define MAX_REDIRECT_URL 8192u    /* what the authorize callback may return */
#define MAX_HOPS 10               /* redirects mcp_oauth_authorize_unattended follows */
#define MAX_SERVERS 16u           /* authorization_servers kept from a PRM */
#define WHY 200                   /* room for a reason */

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

void mcp__oauth_wipe_free(char *s)
{
    if (!s)
        return;
    volatile char *v = s;
    for (size_t i = 0; v[i]; i++)
        v[i] = 0;
    mcp_free(s);
}

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* ------------------------------------------------------------------------ */
/* URLs                                                                      */

/* The parts of an http(s) URL (curl_free'd strings; port NULL when not given). */
typedef struct url_parts {
    char *scheme, *host, *port, *path, *query, *fragment;
} url_parts;

static void parts_free(url_parts *u)
{
    curl_free(u->scheme);
    curl_free(u->host);
    curl_free(u->port);
    curl_free(u->path);
    curl_free(u->query);
    curl_free(u->fragment);
    memset(u, 0, sizeof *u);
}

/* 0 when `url` is an absolute http or https URL with a host. */
static int split(const char *url, url_parts *u)
{
    memset(u, 0, sizeof *u);
    if (!url || !mcp__visible_ascii(url, strlen(url)))
        return -1;
    CURLU *h = curl_url();
    if (!h)
        return -1;
    int bad = curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK ||
              curl_url_get(h, CURLUPART_SCHEME, &u->scheme, 0) != CURLUE_OK ||
              curl_url_get(h, CURLUPART_HOST, &u->host, 0) != CURLUE_OK ||
              curl_url_get(h, CURLUPART_PATH, &u->path, 0) != CURLUE_OK;
    if (!bad) {
        curl_url_get(h, CURLUPART_PORT, &u->port, 0);
        curl_url_get(h, CURLUPART_QUERY, &u->query, 0);
        curl_url_get(h, CURLUPART_FRAGMENT, &u->fragment, 0);
        bad = (strcasecmp(u->scheme, "http") != 0 && strcasecmp(u->scheme, "https") != 0) || !u->host[0];
    }
    curl_url_cleanup(h);
    if (bad)
        parts_free(u);
    return bad ? -1 : 0;
}

/* The port in effect: the explicit one, else the scheme's default. */
static long eff_port(const url_parts *u)
{
    if (u->port)
        return strtol(u->port, NULL, 10);
    return strcasecmp(u->scheme, "https") == 0 ? 443 : 80;
}

int mcp__oauth_is_loopback(const char *host)
{
    if (!host)
        return 0;
    size_t n = strlen(host);
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0)
        return 1;
    if (n > 10 && strcasecmp(host + n - 10, ".localhost") == 0)
        return 1;
    /* 127.0.0.0/8, written as a dotted quad. */
    if (strncmp(host, "127.", 4) != 0)
        return 0;
    int dots = 0;
    for (const char *p = host; *p; p++) {
        if (*p == '.')
            dots++;
        else if (*p < '0' || *p > '9')
            return 0;
    }
    return dots == 3;
}

int mcp__oauth_url_allowed(const char *url, int allow_http)
{
    url_parts u;
    if (split(url, &u) != 0)
        return 0;
    int ok = !u.fragment &&
             (strcasecmp(u.scheme, "https") == 0 || allow_http || mcp__oauth_is_loopback(u.host));
    parts_free(&u);
    return ok;
}

/* Appends "scheme://host[:port]" with scheme and host in lower case. */
static mcp_status origin_append(mcp_buf *b, const url_parts *u, int keep_default_port)
{
    mcp_status st = MCP_OK;
    for (const char *p = u->scheme; *p && !st; p++) {
        char ch = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        st = mcp_buf_append(b, &ch, 1);
    }
    if (!st)
        st = mcp_buf_append(b, "://", 3);
    for (const char *p = u->host; *p && !st; p++) {
        char ch = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        st = mcp_buf_append(b, &ch, 1);
    }
    long port = eff_port(u);
    int dflt = port == (strcasecmp(u->scheme, "https") == 0 ? 443 : 80);
    if (!st && u->port && (keep_default_port || !dflt)) {
        st = mcp_buf_append(b, ":", 1);
        if (!st)
            st = mcp_buf_append(b, u->port, strlen(u->port));
    }
    return st;
}

/* The path without a trailing "/" ("" for the root). */
static size_t trimmed_path_len(const char *path)
{
    size_t n = strlen(path);
    while (n && path[n - 1] == '/')
        n--;
    return n;
}

char *mcp__oauth_canonical_uri(const char *url)
{
    url_parts u;
    if (split(url, &u) != 0)
        return NULL;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = origin_append(&b, &u, 0);
    size_t pl = strlen(u.path);
    if (!st && !(pl == 1 && u.path[0] == '/'))
        st = mcp_buf_append(&b, u.path, pl);
    parts_free(&u);
    if (st) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

int mcp__oauth_resource_covers(const char *resource, const char *server_url)
{
    url_parts r, s;
    if (split(resource, &r) != 0)
        return 0;
    if (split(server_url, &s) != 0) {
        parts_free(&r);
        return 0;
    }
    int ok = !r.fragment && strcasecmp(r.scheme, s.scheme) == 0 && strcasecmp(r.host, s.host) == 0 &&
             eff_port(&r) == eff_port(&s);
    if (ok) {
        size_t rl = trimmed_path_len(r.path), sl = trimmed_path_len(s.path);
        ok = rl == 0 || (rl <= sl && memcmp(r.path, s.path, rl) == 0 && (rl == sl || s.path[rl] == '/'));
    }
    parts_free(&r);
    parts_free(&s);
    return ok;
}

/* origin + infix + tail, as a new string. */
static char *join3(const url_parts *u, const char *a, size_t al, const char *b, size_t bl)
{
    mcp_buf buf;
    mcp_buf_init(&buf, 0);
    mcp_status st = origin_append(&buf, u, 1);
    if (!st && al)
        st = mcp_buf_append(&buf, a, al);
    if (!st && bl)
        st = mcp_buf_append(&buf, b, bl);
    if (st) {
        mcp_buf_cleanup(&buf);
        return NULL;
    }
    return mcp_buf_take(&buf, NULL);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mcp_free(v[i]);
        v[i] = NULL;
    }
}

#define PRM_WK "/.well-known/oauth-protected-resource"
#define AS_WK "/.well-known/oauth-authorization-server"
#define OIDC_WK "/.well-known/openid-configuration"

mcp_status mcp__oauth_prm_urls(const char *server_url, char *out[2], size_t *n)
{
    *n = 0;
    url_parts u;
    if (split(server_url, &u) != 0)
        return MCP_ERR_INVALID_ARG;
    size_t pl = trimmed_path_len(u.path);
    mcp_status st = MCP_OK;
    if (pl) {
        if (!(out[(*n)++] = join3(&u, PRM_WK, sizeof PRM_WK - 1, u.path, pl)))
            st = MCP_ERR_NOMEM;
    }
    if (!st && !(out[(*n)++] = join3(&u, PRM_WK, sizeof PRM_WK - 1, NULL, 0)))
        st = MCP_ERR_NOMEM;
    parts_free(&u);
    if (st) {
        free_list(out, *n);
        *n = 0;
    }
    return st;
}

mcp_status mcp__oauth_as_urls(const char *issuer, char *out[3], size_t *n)
{
    *n = 0;
    url_parts u;
    if (split(issuer, &u) != 0)
        return MCP_ERR_INVALID_ARG;
    size_t pl = trimmed_path_len(u.path);
    mcp_status st = MCP_OK;
    if (pl) {
        out[0] = join3(&u, AS_WK, sizeof AS_WK - 1, u.path, pl);
        out[1] = join3(&u, OIDC_WK, sizeof OIDC_WK - 1, u.path, pl);
        out[2] = join3(&u, u.path, pl, OIDC_WK, sizeof OIDC_WK - 1);
        *n = 3;
    } else {
        out[0] = join3(&u, AS_WK, sizeof AS_WK - 1, NULL, 0);
        out[1] = join3(&u, OIDC_WK, sizeof OIDC_WK - 1, NULL, 0);
        *n = 2;
    }
    for (size_t i = 0; i < *n; i++)
        if (!out[i])
            st = MCP_ERR_NOMEM;
    parts_free(&u);
    if (st) {
        free_list(out, *n);
        *n = 0;
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* WWW-Authenticate                                                          */

static int tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* token68 adds "/" and trailing "="s to the token characters that matter here. */
static int t68char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("-._~+/", c));
}

typedef struct scan {
    const char *s;
    size_t n, i;
} scan;

static void skip_ws(scan *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
        p->i++;
}

/* Reads a token; its length (0 when none). */
static size_t read_token(scan *p, const char **tok)
{
    *tok = p->s + p->i;
    size_t start = p->i;
    while (p->i < p->n && tchar(p->s[p->i]))
        p->i++;
    return p->i - start;
}

/* Reads a quoted-string or token value into a new string; NULL on NOMEM. `*bad` when malformed. */
static char *read_value(scan *p, int *bad)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = MCP_OK;
    if (p->i < p->n && p->s[p->i] == '"') {
        p->i++;
        for (;;) {
            if (p->i >= p->n) {
                *bad = 1; /* unterminated: keep what was read */
                break;
            }
            char ch = p->s[p->i++];
            if (ch == '"')
                break;
            if (ch == '\\' && p->i < p->n)
                ch = p->s[p->i++];
            if (st == MCP_OK)
                st = mcp_buf_append(&b, &ch, 1);
        }
    } else {
        const char *tok;
        size_t tl = read_token(p, &tok);
        /* token68-like values (a "=" padded base64) are not auth-params of
         * interest; keep the token part. */
        if (tl)
            st = mcp_buf_append(&b, tok, tl);
        while (p->i < p->n && p->s[p->i] == '=')
            p->i++;
    }
    if (st == MCP_OK && !b.data)
        st = mcp_buf_append(&b, "", 0);
    if (st) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

/* Is the text at the cursor "token [ws] =" (an auth-param) rather than a new challenge? */
static int at_param(const scan *p)
{
    size_t i = p->i;
    size_t start = i;
    while (i < p->n && tchar(p->s[i]))
        i++;
    if (i == start)
        return 0;
    while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t'))
        i++;
    if (i >= p->n || p->s[i] != '=')
        return 0;
    /* "abc==" is a token68, "name=value" a parameter. */
    i++;
    while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t'))
        i++;
    return i < p->n && p->s[i] != '=' && p->s[i] != ',';
}

void mcp__challenge_cleanup(mcp__challenge *ch)
{
    if (!ch)
        return;
    mcp_free(ch->resource_metadata);
    mcp_free(ch->scope);
    mcp_free(ch->error);
    mcp_free(ch->error_description);
    memset(ch, 0, sizeof *ch);
}

static void keep(char **slot, char *v)
{
    /* RFC 9110: a parameter name appears once; the first one counts. */
    if (*slot)
        mcp_free(v);
    else
        *slot = v;
}

mcp_status mcp__oauth_parse_challenge(const char *value, size_t len, mcp__challenge *out)
{
    memset(out, 0, sizeof *out);
    scan p = {value ? value : "", value ? len : 0, 0};
    int bad = 0;
    while (p.i < p.n && !bad) {
        /* Between challenges: commas and spaces. */
        while (p.i < p.n && (p.s[p.i] == ',' || p.s[p.i] == ' ' || p.s[p.i] == '\t'))
            p.i++;
        const char *scheme;
        size_t sl = read_token(&p, &scheme);
        if (!sl) {
            if (p.i < p.n)
                p.i++; /* junk: skip a byte and look again */
            continue;
        }
        int bearer = sl == 6 && strncasecmp(scheme, "Bearer", 6) == 0 && !out->bearer;
        if (bearer)
            out->bearer = 1;
        skip_ws(&p);
        /* token68 (e.g. "Negotiate abc==") instead of parameters. */
        if (p.i < p.n && p.s[p.i] != ',' && !at_param(&p)) {
            while (p.i < p.n && (t68char(p.s[p.i]) || p.s[p.i] == '='))
                p.i++;
            continue;
        }
        /* auth-params, separated by commas, until something that is not one. */
        for (;;) {
            skip_ws(&p);
            while (p.i < p.n && p.s[p.i] == ',') {
                p.i++;
                skip_ws(&p);
            }
            if (p.i >= p.n || !at_param(&p))
                break;
            const char *name;
            size_t nl = read_token(&p, &name);
            skip_ws(&p);
            p.i++; /* '=' */
            skip_ws(&p);
            char *v = read_value(&p, &bad);
            if (!v) {
                mcp__challenge_cleanup(out);
                return MCP_ERR_NOMEM;
            }
            if (!bearer) {
                mcp_free(v);
            } else if (nl == 17 && strncasecmp(name, "resource_metadata", 17) == 0) {
                keep(&out->resource_metadata, v);
            } else if (nl == 5 && strncasecmp(name, "scope", 5) == 0) {
                keep(&out->scope, v);
            } else if (nl == 5 && strncasecmp(name, "error", 5) == 0) {
                keep(&out->error, v);
            } else if (nl == 17 && strncasecmp(name, "error_description", 17) == 0) {
                keep(&out->error_description, v);
            } else {
                mcp_free(v);
            }
            if (bad)
                break;
        }
    }
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Scopes                                                                    */

/* The next space-separated word of `s` from *pos; its length (0 at the end). */
static size_t next_word(const char *s, size_t *pos, const char **w)
{
    size_t i = *pos;
    while (s[i] == ' ')
        i++;
    *w = s + i;
    size_t start = i;
    while (s[i] && s[i] != ' ')
        i++;
    *pos = i;
    return i - start;
}

static int has_word(const char *s, const char *w, size_t wl)
{
    size_t pos = 0;
    const char *x;
    size_t xl;
    while (s && (xl = next_word(s, &pos, &x)) != 0)
        if (xl == wl && memcmp(x, w, wl) == 0)
            return 1;
    return 0;
}

int mcp__oauth_scope_has(const char *scopes, const char *scope)
{
    return scope && has_word(scopes, scope, strlen(scope));
}

char *mcp__oauth_scope_union(const char *a, const char *b, int *nomem)
{
    mcp_buf out;
    mcp_buf_init(&out, 0);
    mcp_status st = MCP_OK;
    const char *lists[2] = {a, b};
    for (int k = 0; k < 2 && !st; k++) {
        size_t pos = 0;
        const char *w;
        size_t wl;
        while (lists[k] && !st && (wl = next_word(lists[k], &pos, &w)) != 0) {
            if (out.data && has_word(out.data, w, wl))
                continue;
            if (out.len)
                st = mcp_buf_append(&out, " ", 1);
            if (!st)
                st = mcp_buf_append(&out, w, wl);
        }
    }
    if (st) {
        if (nomem)
            *nomem = 1;
        mcp_buf_cleanup(&out);
        return NULL;
    }
    return mcp_buf_take(&out, NULL);
}

/* Joins a JSON array of strings with spaces; NULL when it is not one or empty. */
static char *join_strings(const mcp_json *arr, int *nomem)
{
    if (mcp_json_typeof(arr) != MCP_JSON_ARRAY)
        return NULL;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = MCP_OK;
    for (size_t i = 0; i < mcp_json_len(arr) && !st; i++) {
        size_t n;
        const char *s = mcp_json_str(mcp_json_at(arr, i), &n);
        if (!s || !mcp__visible_ascii(s, n))
            continue; /* a scope is a visible-ASCII word (RFC 6749 section 3.3) */
        if (b.len)
            st = mcp_buf_append(&b, " ", 1);
        if (!st)
            st = mcp_buf_append(&b, s, n);
    }
    if (st)
        *nomem = 1;
    if (st || !b.len) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

/* ------------------------------------------------------------------------ */
/* Encodings                                                                 */

mcp_status mcp__oauth_pkce_challenge(const char *verifier, char out[44])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdl = 0;
    if (!EVP_Digest(verifier, strlen(verifier), md, &mdl, EVP_sha256(), NULL) || mdl != 32)
        return MCP_ERR_INTERNAL;
    out[mcp__base64url_encode(out, md, 32)] = '\0';
    return MCP_OK;
}

/* n random bytes as base64url (MCP__BASE64URL_LEN(nbytes) + 1 bytes of room). */
static mcp_status random_b64url(char *out, size_t nbytes)
{
    unsigned char r[48];
    if (nbytes > sizeof r || RAND_bytes(r, (int)nbytes) != 1)
        return MCP_ERR_INTERNAL;
    out[mcp__base64url_encode(out, r, nbytes)] = '\0';
    return MCP_OK;
}

/* Percent-encoding of everything but RFC 3986 unreserved characters. */
static mcp_status pct_append(mcp_buf *b, const char *s)
{
    static const char H[] = "0123456789ABCDEF";
    mcp_status st = MCP_OK;
    for (; *s && !st; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
            ch == '.' || ch == '_' || ch == '~') {
            st = mcp_buf_append(b, s, 1);
        } else {
            char e[3] = {'%', H[ch >> 4], H[ch & 15]};
            st = mcp_buf_append(b, e, 3);
        }
    }
    return st;
}

mcp_status mcp__oauth_form_append(mcp_buf *b, const char *key, const char *value)
{
    mcp_status st = MCP_OK;
    if (b->len)
        st = mcp_buf_append(b, "&", 1);
    if (!st)
        st = pct_append(b, key);
    if (!st)
        st = mcp_buf_append(b, "=", 1);
    if (!st)
        st = pct_append(b, value);
    return st;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Decodes application/x-www-form-urlencoded text ('+' is a space); NULL on
 * NOMEM. `*embedded_nul` is set when the text encodes a NUL byte: such a
 * value is refused, since a C string comparison would stop at it.
 */
static char *form_decode(const char *s, size_t n, int *embedded_nul)
{
    char *o = mcp_malloc(n + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            o[k++] = ' ';
        } else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            o[k] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            if (!o[k])
                *embedded_nul = 1;
            k++;
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return o;
}

/* ------------------------------------------------------------------------ */
/* Metadata documents                                                        */

/* Parses a JSON object document of at most MAX_DOC bytes. */
static mcp_status parse_object(const char *body, size_t len, mcp_json_doc **doc, char *why, size_t cap,
                               const char *what)
{
    mcp_json_parse_opts po;
    memset(&po, 0, sizeof po);
    po.max_bytes = MAX_DOC;
    po.max_depth = 32;
    mcp_error e;
    mcp_status st = mcp_json_parse(doc, body, len, &po, &e);
    if (st == MCP_ERR_NOMEM)
        return st;
    if (st != MCP_OK) {
        mcp__say(why, cap, "%s is not JSON (%s)", what, e.message);
        return MCP_ERR_INVALID_MSG;
    }
    if (mcp_json_typeof(mcp_json_doc_root(*doc)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(*doc);
        *doc = NULL;
        mcp__say(why, cap, "%s is not a JSON object", what);
        return MCP_ERR_INVALID_MSG;
    }
    return MCP_OK;
}

/* A string member as a new string (NULL when absent or not a string; *nomem on failure). */
static char *get_str(const mcp_json *o, const char *key, int *nomem)
{
    size_t n;
    const char *s = mcp_json_str(mcp_json_get(o, key), &n);
    if (!s || strlen(s) != n)
        return NULL; /* absent, not a string, or with a NUL inside */
    char *d = mcp__strndup(s, n);
    if (!d)
        *nomem = 1;
    return d;
}

void mcp__prm_cleanup(mcp__prm *p)
{
    if (!p)
        return;
    mcp_free(p->resource);
    for (char **s = p->servers; s && *s; s++)
        mcp_free(*s);
    mcp_free(p->servers);
    mcp_free(p->scopes);
    memset(p, 0, sizeof *p);
}

mcp_status mcp__oauth_parse_prm(const char *body, size_t len, const char *server_url, int allow_http, mcp__prm *out,
                                char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    mcp_json_doc *doc;
    mcp_status st = parse_object(body, len, &doc, why, cap, "the protected resource metadata");
    if (st)
        return st;
    const mcp_json *root = mcp_json_doc_root(doc);
    int nomem = 0;
    out->resource = get_str(root, "resource", &nomem);
    const mcp_json *as = mcp_json_get(root, "authorization_servers");
    if (!nomem && !out->resource) {
        mcp__say(why, cap, "the protected resource metadata has no \"resource\"");
        st = MCP_ERR_INVALID_MSG;
    } else if (!nomem && !mcp__oauth_resource_covers(out->resource, server_url)) {
        /* RFC 9728 section 3.3: metadata for another resource must not be used. */
        char q[120];
        mcp__quote_text(q, sizeof q, out->resource, strlen(out->resource));
        mcp__say(why, cap, "the protected resource metadata is for %s, not this server", q);
        st = MCP_ERR_AUTH;
    } else if (!nomem && (mcp_json_typeof(as) != MCP_JSON_ARRAY || mcp_json_len(as) == 0)) {
        mcp__say(why, cap, "the protected resource metadata names no authorization_servers");
        st = MCP_ERR_INVALID_MSG;
    }
    if (!st && !nomem) {
        size_t n = mcp_json_len(as) < MAX_SERVERS ? mcp_json_len(as) : MAX_SERVERS;
        out->servers = mcp__calloc(n + 1, sizeof *out->servers);
        if (!out->servers)
            nomem = 1;
        size_t k = 0;
        for (size_t i = 0; i < n && !nomem; i++) {
            size_t sl;
            const char *s = mcp_json_str(mcp_json_at(as, i), &sl);
            if (!s || strlen(s) != sl || !mcp__oauth_url_allowed(s, allow_http))
                continue;
            if (!(out->servers[k] = mcp__strndup(s, sl)))
                nomem = 1;
            else
                k++;
        }
        if (!nomem && k == 0) {
            mcp__say(why, cap, "the protected resource metadata names no usable authorization server "
                          "(https, or http on loopback)");
            st = MCP_ERR_INVALID_MSG;
        }
        if (!st && !nomem)
            out->scopes = join_strings(mcp_json_get(root, "scopes_supported"), &nomem);
    }
    mcp_json_doc_free(doc);
    if (nomem)
        st = MCP_ERR_NOMEM;
    if (st)
        mcp__prm_cleanup(out);
    return st;
}

void mcp__asmeta_cleanup(mcp__asmeta *m)
{
    if (!m)
        return;
    mcp_free(m->issuer);
    mcp_free(m->authorization_endpoint);
    mcp_free(m->token_endpoint);
    mcp_free(m->registration_endpoint);
    mcp_free(m->scopes);
    memset(m, 0, sizeof *m);
}

/* An endpoint member: absent is fine (NULL), present must be an allowed URL. */
static int endpoint(const mcp_json *root, const char *key, int allow_http, char **out, int *nomem, char *why,
                    size_t cap)
{
    const mcp_json *v = mcp_json_get(root, key);
    if (!v)
        return 0;
    *out = get_str(root, key, nomem);
    if (*nomem)
        return -1;
    if (!*out || !mcp__oauth_url_allowed(*out, allow_http)) {
        mcp__say(why, cap, "the authorization server metadata's %s is not an https URL (or http on loopback)", key);
        return -1;
    }
    return 0;
}

static int json_true(const mcp_json *v)
{
    return mcp_json_typeof(v) == MCP_JSON_BOOL && mcp_json_bool(v);
}

mcp_status mcp__oauth_parse_as(const char *body, size_t len, const char *issuer, int allow_http, mcp__asmeta *out,
                               char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    mcp_json_doc *doc;
    mcp_status st = parse_object(body, len, &doc, why, cap, "the authorization server metadata");
    if (st)
        return st;
    const mcp_json *root = mcp_json_doc_root(doc);
    int nomem = 0;
    out->issuer = get_str(root, "issuer", &nomem);
    if (!nomem && !streq(out->issuer, issuer)) {
        /* RFC 8414 section 3.3: simple string comparison, no normalisation. */
        char q[120] = "(none)";
        if (out->issuer)
            mcp__quote_text(q, sizeof q, out->issuer, strlen(out->issuer));
        mcp__say(why, cap, "the authorization server metadata names issuer %s, not the %.100s it was fetched for", q,
            issuer);
        st = MCP_ERR_AUTH;
    }
    if (!st && !nomem &&
        (endpoint(root, "authorization_endpoint", allow_http, &out->authorization_endpoint, &nomem, why, cap) ||
         endpoint(root, "token_endpoint", allow_http, &out->token_endpoint, &nomem, why, cap) ||
         endpoint(root, "registration_endpoint", allow_http, &out->registration_endpoint, &nomem, why, cap)))
        st = MCP_ERR_INVALID_MSG;
    if (!st && !nomem && !out->token_endpoint) {
        mcp__say(why, cap, "the authorization server metadata has no token_endpoint");
        st = MCP_ERR_INVALID_MSG;
    }
    if (!st && !nomem) {
        const mcp_json *m = mcp_json_get(root, "token_endpoint_auth_methods_supported");
        if (mcp_json_typeof(m) == MCP_JSON_ARRAY) {
            for (size_t i = 0; i < mcp_json_len(m); i++) {
                const mcp_json *x = mcp_json_at(m, i);
                if (mcp_json_str_eq(x, "none"))
                    out->methods |= MCP__AM_NONE;
                else if (mcp_json_str_eq(x, "client_secret_basic"))
                    out->methods |= MCP__AM_BASIC;
                else if (mcp_json_str_eq(x, "client_secret_post"))
                    out->methods |= MCP__AM_POST;
            }
        } else {
            out->methods = MCP__AM_BASIC; /* RFC 8414 section 2: the default when omitted */
        }
        const mcp_json *pk = mcp_json_get(root, "code_challenge_methods_supported");
        for (size_t i = 0; i < mcp_json_len(pk); i++)
            out->pkce_s256 |= mcp_json_str_eq(mcp_json_at(pk, i), "S256");
        out->cimd = json_true(mcp_json_get(root, "client_id_metadata_document_supported"));
        out->iss_supported = json_true(mcp_json_get(root, "authorization_response_iss_parameter_supported"));
        out->scopes = join_strings(mcp_json_get(root, "scopes_supported"), &nomem);
    }
    mcp_json_doc_free(doc);
    if (nomem)
        st = MCP_ERR_NOMEM;
    if (st)
        mcp__asmeta_cleanup(out);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The authorization response                                                */

/* The part of a URL before its query and fragment. */
static size_t base_len(const char *u)
{
    return strcspn(u, "?#");
}

mcp_status mcp__oauth_check_redirect(const char *landed, const char *redirect_uri, const char *state,
                                     const char *issuer, int iss_required, char **code, char *why, size_t cap)
{
    *code = NULL;
    size_t bl = base_len(redirect_uri);
    if (!landed || strncmp(landed, redirect_uri, bl) != 0 || (landed[bl] != '?' && landed[bl] != '#')) {
        mcp__say(why, cap, "the authorization ended somewhere other than the redirect URI");
        return MCP_ERR_AUTH;
    }
    const char *q = landed + bl;
    size_t ql = 0;
    if (*q == '?') {
        q++;
        ql = strcspn(q, "#");
    } else {
        q = "";
    }
    /* Exactly the names below matter; each may appear once (RFC 6749 section 3.1). */
    enum { P_CODE, P_STATE, P_ISS, P_ERR, P_DESC, NP };
    static const char *const names[NP] = {"code", "state", "iss", "error", "error_description"};
    char *val[NP] = {NULL};
    int dup = 0, nul = 0;
    mcp_status st = MCP_OK;
    for (size_t i = 0; i < ql && !st;) {
        size_t pl = strcspn(q + i, "&");
        if (pl > ql - i)
            pl = ql - i;
        const char *pair = q + i;
        const char *eq = memchr(pair, '=', pl);
        size_t kl = eq ? (size_t)(eq - pair) : pl;
        char *k = form_decode(pair, kl, &nul);
        if (!k) {
            st = MCP_ERR_NOMEM;
            break;
        }
        for (int n = 0; n < NP; n++) {
            if (strcmp(k, names[n]) != 0)
                continue;
            if (val[n]) {
                dup = 1;
                break;
            }
            val[n] = eq ? form_decode(eq + 1, pl - kl - 1, &nul) : mcp__strdup("");
            if (!val[n])
                st = MCP_ERR_NOMEM;
            break;
        }
        mcp_free(k);
        i += pl + 1;
    }
    if (st) {
        /* out of memory: nothing to say */
    } else if (dup || nul) {
        mcp__say(why, cap, "the authorization response repeats a parameter or hides a NUL byte; it is not used");
        st = MCP_ERR_AUTH;
    } else if (val[P_ISS] && !streq(val[P_ISS], issuer)) {
        /* RFC 9207 section 2.4 and the 2026-07-28 table: compare byte for
         * byte, whether advertised or not; on a mismatch nothing else in
         * the response (error, description) is acted on or shown. */
        char qi[100];
        mcp__quote_text(qi, sizeof qi, val[P_ISS], strlen(val[P_ISS]));
        mcp__say(why, cap, "the authorization response came from issuer %s, not %.80s (possible mix-up attack)", qi,
            issuer);
        st = MCP_ERR_AUTH;
    } else if (!val[P_ISS] && iss_required) {
        mcp__say(why, cap, "the authorization server promises an iss parameter (RFC 9207) and the response has none");
        st = MCP_ERR_AUTH;
    } else if (!streq(val[P_STATE], state)) {
        mcp__say(why, cap, "the authorization response's state does not match the request's");
        st = MCP_ERR_AUTH;
    } else if (val[P_ERR]) {
        char e[60], d[120] = "";
        mcp__quote_text(e, sizeof e, val[P_ERR], strlen(val[P_ERR]));
        if (val[P_DESC])
            mcp__quote_text(d, sizeof d, val[P_DESC], strlen(val[P_DESC]));
        mcp__say(why, cap, "the authorization server refused: %s%s%s", e, d[0] ? ": " : "", d);
        st = MCP_ERR_AUTH;
    } else if (!val[P_CODE] || !val[P_CODE][0]) {
        mcp__say(why, cap, "the authorization response has no code");
        st = MCP_ERR_AUTH;
    } else {
        *code = val[P_CODE];
        val[P_CODE] = NULL;
    }
    for (int n = 0; n < NP; n++)
        mcp__oauth_wipe_free(val[n]);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Token endpoint answers                                                    */

void mcp__tokens_cleanup(mcp__tokens *t)
{
    if (!t)
        return;
    mcp__oauth_wipe_free(t->access);
    mcp__oauth_wipe_free(t->refresh);
    mcp_free(t->scope);
    memset(t, 0, sizeof *t);
    t->expires_in = -1;
}

/* "error: description" of an OAuth error object, quoted; "" when there is none. */
static void oauth_error(const mcp_json *root, char *out, size_t cap)
{
    size_t el, dl = 0;
    const char *e = mcp_json_str(mcp_json_get(root, "error"), &el);
    const char *d = mcp_json_str(mcp_json_get(root, "error_description"), &dl);
    out[0] = '\0';
    if (!e)
        return;
    char qe[60], qd[120] = "";
    mcp__quote_text(qe, sizeof qe, e, el);
    if (d)
        mcp__quote_text(qd, sizeof qd, d, dl);
    mcp__say(out, cap, "%s%s%s", qe, qd[0] ? " (" : "", qd[0] ? qd : "");
    if (qd[0] && strlen(out) + 1 < cap)
        strcat(out, ")");
}

mcp_status mcp__oauth_parse_tokens(long status, const char *body, size_t len, mcp__tokens *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->expires_in = -1;
    mcp_json_doc *doc = NULL;
    char sub[WHY];
    mcp_status st = parse_object(body, len, &doc, sub, sizeof sub, "the token endpoint's answer");
    if (st == MCP_ERR_NOMEM)
        return st;
    if (status != 200) {
        char e[WHY] = "";
        if (st == MCP_OK)
            oauth_error(mcp_json_doc_root(doc), e, sizeof e);
        mcp_json_doc_free(doc);
        mcp__say(why, cap, "the token endpoint refused (HTTP %ld)%s%s", status, e[0] ? ": " : "", e);
        return MCP_ERR_AUTH;
    }
    if (st) {
        mcp__say(why, cap, "%s", sub);
        return st;
    }
    const mcp_json *root = mcp_json_doc_root(doc);
    size_t al = 0, tl = 0, rl = 0;
    const char *at = mcp_json_str(mcp_json_get(root, "access_token"), &al);
    const char *tt = mcp_json_str(mcp_json_get(root, "token_type"), &tl);
    const mcp_json *rv = mcp_json_get(root, "refresh_token");
    const char *rt = mcp_json_str(rv, &rl);
    if (!at || al > MAX_TOKEN || !mcp__visible_ascii(at, al)) {
        mcp__say(why, cap, "the token endpoint's answer has no usable access_token");
        st = MCP_ERR_INVALID_MSG;
    } else if (tt && !(tl == 6 && strncasecmp(tt, "Bearer", 6) == 0)) {
        char q[40];
        mcp__quote_text(q, sizeof q, tt, tl);
        mcp__say(why, cap, "the token endpoint issued a %s token; this client sends Bearer tokens only", q);
        st = MCP_ERR_UNSUPPORTED;
    } else if (rv && (!rt || rl > MAX_TOKEN || !mcp__visible_ascii(rt, rl))) {
        mcp__say(why, cap, "the token endpoint's refresh_token is not usable");
        st = MCP_ERR_INVALID_MSG;
    } else {
        out->access = mcp__strndup(at, al);
        out->refresh = rt ? mcp__strndup(rt, rl) : NULL;
        int nomem = !out->access || (rt && !out->refresh);
        out->scope = get_str(root, "scope", &nomem);
        const mcp_json *ex = mcp_json_get(root, "expires_in");
        if (mcp_json_typeof(ex) == MCP_JSON_INT && mcp_json_int(ex) >= 0)
            out->expires_in = (long long)mcp_json_int(ex);
        if (nomem)
            st = MCP_ERR_NOMEM;
    }
    mcp_json_doc_free(doc);
    if (st)
        mcp__tokens_cleanup(out);
    return st;
}

/* ------------------------------------------------------------------------ */
/* HTTP exchanges                                                            */

#define MAX_HEADERS (64u << 10)

/* One answer: the status, a bounded body, and the Location header. */
typedef struct hresp {
    long status;         /* of the final response */
    mcp_buf body;        /* at most MAX_DOC bytes */
    int cut;             /* the body was longer: the transfer was stopped */
    char *location;      /* Location, or NULL */
    size_t header_bytes; /* bounded by MAX_HEADERS */
    atomic_int *abort;   /* nonzero: stop (may be NULL) */
} hresp;

static void hresp_cleanup(hresp *r)
{
    mcp_buf_cleanup(&r->body);
    mcp_free(r->location);
    r->location = NULL;
}

static size_t h_body(char *ptr, size_t size, size_t n, void *ud)
{
    hresp *r = ud;
    size_t len = size * n;
    if (r->body.len + len > MAX_DOC) {
        r->cut = 1;
        return 0;
    }
    return mcp_buf_append(&r->body, ptr, len) == MCP_OK ? len : 0;
}

static size_t h_header(char *buf, size_t size, size_t n, void *ud)
{
    hresp *r = ud;
    size_t len = size * n;
    r->header_bytes += len;
    if (r->header_bytes > MAX_HEADERS)
        return 0;
    size_t l = len;
    while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
        l--;
    if (l >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        /* A new response (after a 1xx): forget the previous one's headers. */
        mcp_free(r->location);
        r->location = NULL;
        return len;
    }
    if (l > 9 && strncasecmp(buf, "Location:", 9) == 0) {
        const char *v = buf + 9;
        while (v < buf + l && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(buf + l - v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            vl--;
        mcp_free(r->location);
        r->location = vl && vl < MAX_REDIRECT_URL ? mcp__strndup(v, vl) : NULL;
    }
    return len;
}

static int h_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    hresp *r = ud;
    return r->abort && atomic_load(r->abort) ? 1 : 0;
}

/*
 * One HTTP exchange: GET, or POST of `body` with `ctype`. MCP_OK when an
 * answer arrived (any status, in r); MCP_ERR_IO (network), MCP_ERR_LIMIT
 * (too large), MCP_ERR_CANCELLED (aborted), MCP_ERR_NOMEM, with `why`.
 * `auth` is an extra "Authorization: ..." line, or NULL.
 */
static mcp_status http_do(atomic_int *abort, long timeout_ms, const char *url, const char *ctype, const char *body,
                          size_t body_len, const char *auth, hresp *r, char *why, size_t cap)
{
    memset(r, 0, sizeof *r);
    mcp_buf_init(&r->body, 0);
    r->abort = abort;
    CURLcode init = (CURLcode)mcp__curl_init();
    if (init != CURLE_OK) {
        mcp__say(why, cap, "libcurl failed to initialise: %s", curl_easy_strerror(init));
        return MCP_ERR_IO;
    }
    if (abort && atomic_load(abort)) {
        mcp__say(why, cap, "the client is closing");
        return MCP_ERR_CANCELLED;
    }
    CURL *e = curl_easy_init();
    struct curl_slist *h = NULL, *t;
    int nomem = !e;
    const char *lines[3] = {"Accept: application/json", ctype, auth};
    char ct[96];
    if (ctype) {
        mcp__say(ct, sizeof ct, "Content-Type: %s", ctype);
        lines[1] = ct;
    }
    for (int i = 0; i < 3 && !nomem; i++) {
        if (!lines[i])
            continue;
        if (!(t = curl_slist_append(h, lines[i])))
            nomem = 1;
        else
            h = t;
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                                              \
    do {                                                                                                           \
        if (rc == CURLE_OK)                                                                                        \
            rc = curl_easy_setopt(e, opt, val);                                                                    \
    } while (0)
    if (!nomem) {
        SET(CURLOPT_URL, url);
        /* Redirects are the caller's decision (tokens and codes must not wander). */
        if (rc == CURLE_OK)
            rc = (CURLcode)mcp__curl_defaults(e);
        SET(CURLOPT_TIMEOUT_MS, timeout_ms);
        SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
        SET(CURLOPT_USERAGENT, "libmcp/" MCP_VERSION_STRING);
        SET(CURLOPT_HTTPHEADER, h);
        SET(CURLOPT_WRITEFUNCTION, h_body);
        SET(CURLOPT_WRITEDATA, (void *)r);
        SET(CURLOPT_HEADERFUNCTION, h_header);
        SET(CURLOPT_HEADERDATA, (void *)r);
        SET(CURLOPT_XFERINFOFUNCTION, h_progress);
        SET(CURLOPT_XFERINFODATA, (void *)r);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_ERRORBUFFER, errbuf);
        if (body) {
            SET(CURLOPT_POST, 1L);
            SET(CURLOPT_POSTFIELDS, body);
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        }
        if (rc == CURLE_OUT_OF_MEMORY)
            nomem = 1;
    }
#undef SET
    mcp_status st = MCP_OK;
    if (nomem) {
        st = MCP_ERR_NOMEM;
        mcp__say(why, cap, "out of memory");
    } else if (rc != CURLE_OK) {
        st = MCP_ERR_INTERNAL;
        mcp__say(why, cap, "libcurl refused an option: %s", curl_easy_strerror(rc));
    } else {
        rc = curl_easy_perform(e);
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
        if (rc != CURLE_OK) {
            if (r->cut) {
                st = MCP_ERR_LIMIT;
                mcp__say(why, cap, "the answer is longer than %u bytes", MAX_DOC);
            } else if (abort && atomic_load(abort)) {
                st = MCP_ERR_CANCELLED;
                mcp__say(why, cap, "the client is closing");
            } else {
                st = MCP_ERR_IO;
                mcp__say(why, cap, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
            }
        }
    }
    curl_slist_free_all(h);
    if (e)
        curl_easy_cleanup(e);
    if (st)
        hresp_cleanup(r);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The session                                                               */

/* A client identity at one authorization server. */
typedef struct reg {
    struct reg *next;
    char *issuer;    /* the issuer it belongs to */
    char *client_id;
    char *secret;    /* NULL for a public client */
    unsigned method; /* MCP__AM_* used at the token endpoint */
} reg;

struct mcp__oauth {
    /* ---- options (copies), read-only ---- */
    mcp_oauth_grant grant;
    char *client_id, *client_secret, *client_issuer, *cimd_url, *client_name, *redirect_uri, *scope;
    char *server_url;            /* the MCP endpoint */
    mcp_oauth_authorize_fn authorize;
    void *ud;
    long timeout_ms;             /* per HTTP exchange */
    unsigned max_attempts;       /* per request, for the core */
    int no_refresh;              /* no refresh tokens wanted */
    int allow_http;              /* http authorization servers off loopback */
    atomic_int aborted;          /* the client is closing */
    /* ---- flow state: one mcp__oauth_run at a time ---- */
    reg *regs;                   /* identities, per issuer */
    char *bound_issuer;          /* the issuer the pre-registered client was first used with */
    char *requested;             /* scopes requested last time ... */
    char *requested_issuer;      /* ... from this issuer */
    char *refresh;               /* a refresh token, or NULL */
    char *refresh_issuer;        /* its issuer */
};

/* Text a person typed into an option: printable ASCII, no line breaks. */
static int printable(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7E)
            return 0;
    return 1;
}

/* A redirect URI: https, http on loopback, or a private-use scheme ("com.example.app:/cb"). */
static int redirect_ok(const char *u)
{
    url_parts p;
    if (split(u, &p) == 0) {
        int ok = !p.fragment && (strcasecmp(p.scheme, "https") == 0 || mcp__oauth_is_loopback(p.host));
        parts_free(&p);
        return ok;
    }
    const char *colon = strchr(u, ':');
    if (!colon || colon == u || !mcp__visible_ascii(u, strlen(u)))
        return 0;
    for (const char *s = u; s < colon; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (s > u && strchr("0123456789+-.", *s))))
            return 0;
    return strncasecmp(u, "http:", 5) != 0 && strncasecmp(u, "https:", 6) != 0 && !strchr(u, '#');
}

mcp_status mcp__oauth_new(mcp__oauth **out, const mcp_oauth_opts *opts, const char *server_url,
                          const char *default_name, mcp_error *err)
{
    const mcp_oauth_opts *p = opts;
    if (p->grant != MCP_OAUTH_AUTHORIZATION_CODE && p->grant != MCP_OAUTH_CLIENT_CREDENTIALS)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "oauth: unknown grant");
    const char *texts[] = {p->client_id, p->client_secret, p->client_issuer, p->client_metadata_url,
                           p->redirect_uri, p->scope};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!printable(texts[i]) || (texts[i] && !texts[i][0]))
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "oauth: option strings must be non-empty printable ASCII");
    /* A display name may be any UTF-8 (the registration is JSON), but one line. */
    for (const char *n = p->client_name; n && *n; n++)
        if ((unsigned char)*n < 0x20 || *n == 0x7F)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "oauth: client_name must not hold control characters");
    if (p->client_secret && !p->client_id)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "oauth: client_secret needs client_id");
    if (p->grant == MCP_OAUTH_AUTHORIZATION_CODE) {
        if (!p->redirect_uri || !p->authorize)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "oauth: the authorization code grant needs redirect_uri and authorize");
        if (!redirect_ok(p->redirect_uri))
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "oauth: redirect_uri must be https, http on loopback (localhost, 127.0.0.1, [::1]) "
                             "or a private-use scheme, without a fragment");
    } else if (!p->client_id || !p->client_secret) {
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "oauth: client credentials need client_id and client_secret");
    }
    if (p->client_metadata_url) {
        url_parts u;
        int ok = split(p->client_metadata_url, &u) == 0;
        ok = ok && strcasecmp(u.scheme, "https") == 0 && trimmed_path_len(u.path) > 0 && !u.fragment;
        if (u.scheme)
            parts_free(&u);
        if (!ok)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "oauth: client_metadata_url must be an https URL with a path");
    }
    if (p->client_issuer && !mcp__oauth_url_allowed(p->client_issuer, p->allow_insecure_http))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "oauth: client_issuer must be an https URL");
    mcp__oauth *o = mcp__calloc(1, sizeof *o);
    if (!o)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    o->grant = p->grant;
    o->client_id = mcp__strdup(p->client_id);
    o->client_secret = mcp__strdup(p->client_secret);
    o->client_issuer = mcp__strdup(p->client_issuer);
    o->cimd_url = mcp__strdup(p->client_metadata_url);
    o->client_name = mcp__strdup(p->client_name ? p->client_name : default_name ? default_name : "libmcp-client");
    o->redirect_uri = mcp__strdup(p->redirect_uri);
    o->scope = mcp__strdup(p->scope);
    o->server_url = mcp__strdup(server_url);
    o->authorize = p->authorize;
    o->ud = p->user_data;
    o->timeout_ms = p->timeout_ms ? (long)p->timeout_ms : DEFAULT_TIMEOUT_MS;
    o->max_attempts = p->max_attempts ? p->max_attempts : DEFAULT_MAX_ATTEMPTS;
    o->no_refresh = p->no_refresh != 0;
    o->allow_http = p->allow_insecure_http != 0;
    atomic_init(&o->aborted, 0);
    if ((p->client_id && !o->client_id) || (p->client_secret && !o->client_secret) ||
        (p->client_issuer && !o->client_issuer) || (p->client_metadata_url && !o->cimd_url) || !o->client_name ||
        (p->redirect_uri && !o->redirect_uri) || (p->scope && !o->scope) || !o->server_url) {
        mcp__oauth_free(o);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    *out = o;
    return MCP_OK;
}

static void reg_free(reg *r)
{
    mcp_free(r->issuer);
    mcp_free(r->client_id);
    mcp__oauth_wipe_free(r->secret);
    mcp_free(r);
}

void mcp__oauth_free(mcp__oauth *o)
{
    if (!o)
        return;
    while (o->regs) {
        reg *n = o->regs->next;
        reg_free(o->regs);
        o->regs = n;
    }
    mcp_free(o->client_id);
    mcp__oauth_wipe_free(o->client_secret);
    mcp_free(o->client_issuer);
    mcp_free(o->cimd_url);
    mcp_free(o->client_name);
    mcp_free(o->redirect_uri);
    mcp_free(o->scope);
    mcp_free(o->server_url);
    mcp_free(o->bound_issuer);
    mcp_free(o->requested);
    mcp_free(o->requested_issuer);
    mcp__oauth_wipe_free(o->refresh);
    mcp_free(o->refresh_issuer);
    mcp_free(o);
}

unsigned mcp__oauth_max_attempts(const mcp__oauth *o)
{
    return o->max_attempts;
}

void mcp__oauth_abort(mcp__oauth *o)
{
    if (o)
        atomic_store(&o->aborted, 1);
}

/* ------------------------------------------------------------------------ */
/* The flow                                                                  */

/* One mcp__oauth_run: what it found so far. */
typedef struct flow {
    mcp__oauth *o;
    mcp_client *c;
    mcp__challenge ch;   /* the refusal's Bearer parameters */
    int status;          /* 401 or 403 */
    mcp__prm prm;        /* the resource's metadata (or the 2025-03-26 stand-in) */
    int legacy;          /* no PRM: the server's origin is the authorization server */
    const char *issuer;  /* the chosen authorization server (in prm.servers) */
    mcp__asmeta as;      /* its metadata */
    reg *client;         /* the identity used there */
    char why[WHY];       /* the reason of the last failure */
} flow;

static mcp_status fail(flow *f, mcp_error *err, mcp_status st, const char *fmt, ...) MCP__PRINTF(4, 5);
static mcp_status fail(flow *f, mcp_error *err, mcp_status st, const char *fmt, ...)
{
    (void)f;
    va_list ap;
    va_start(ap, fmt);
    mcp__vfail(err, st, 0, 0, fmt, ap);
    va_end(ap);
    return st;
}

/* GET of a JSON document; MCP_OK with any status in r. */
static mcp_status get_doc(flow *f, const char *url, hresp *r)
{
    return http_do(&f->o->aborted, f->o->timeout_ms, url, NULL, NULL, 0, NULL, r, f->why, sizeof f->why);
}

/*
 * One candidate metadata URL: MCP_OK with a 200 answer in r (the caller
 * cleans it up), MCP_ERR_NOT_FOUND when there is none there (logged; try
 * the next URL), or the status that ends the authorization (cancelled,
 * out of memory; err is set).
 */
static mcp_status get_metadata(flow *f, const char *url, const char *what, hresp *r, mcp_error *err)
{
    mcp_status hs = get_doc(f, url, r);
    if (hs == MCP_ERR_CANCELLED || hs == MCP_ERR_NOMEM)
        return fail(f, err, hs, "%s", f->why);
    if (hs == MCP_OK && r->status == 200)
        return MCP_OK;
    mcp__client_log(f->c, MCP_LOG_DEBUG, "authorization: no %s at %s (%s)", what, url, hs ? f->why : "not 200");
    if (!hs)
        hresp_cleanup(r);
    return MCP_ERR_NOT_FOUND;
}

/* Step 2: Protected Resource Metadata. */
static mcp_status discover_prm(flow *f, mcp_error *err)
{
    mcp__oauth *o = f->o;
    char *urls[3] = {NULL, NULL, NULL};
    size_t n = 0, k = 0;
    if (f->ch.resource_metadata) {
        if (mcp__oauth_url_allowed(f->ch.resource_metadata, o->allow_http)) {
            if (!(urls[n++] = mcp__strdup(f->ch.resource_metadata)))
                return fail(f, err, MCP_ERR_NOMEM, "out of memory");
        } else {
            char q[120];
            mcp__quote_text(q, sizeof q, f->ch.resource_metadata, strlen(f->ch.resource_metadata));
            mcp__client_log(f->c, MCP_LOG_WARNING, "authorization: ignoring resource_metadata %s (not https)", q);
        }
    }
    mcp_status st = mcp__oauth_prm_urls(o->server_url, urls + n, &k);
    if (st) {
        free_list(urls, n);
        return fail(f, err, st, "cannot build the metadata URLs");
    }
    n += k;
    char bad[WHY] = "";
    st = MCP_ERR_NOT_FOUND;
    for (size_t i = 0; i < n && st == MCP_ERR_NOT_FOUND; i++) {
        hresp r;
        mcp_status hs = get_metadata(f, urls[i], "resource metadata", &r, err);
        if (hs == MCP_ERR_NOT_FOUND)
            continue;
        if (hs) {
            st = hs;
            break;
        }
        hs = mcp__oauth_parse_prm(r.body.data ? r.body.data : "", r.body.len, o->server_url, o->allow_http, &f->prm,
                                  f->why, sizeof f->why);
        hresp_cleanup(&r);
        if (hs == MCP_OK) {
            mcp__client_log(f->c, MCP_LOG_INFO, "authorization: protected resource metadata from %s", urls[i]);
            st = MCP_OK;
        } else if (hs == MCP_ERR_AUTH || hs == MCP_ERR_NOMEM) {
            /* A resource that is not this server ends the authorization. */
            st = fail(f, err, hs == MCP_ERR_AUTH ? MCP_ERR_AUTH : hs, "%s (%s)", f->why, urls[i]);
        } else {
            mcp__say(bad, sizeof bad, "%s (%s)", f->why, urls[i]);
        }
    }
    free_list(urls, n);
    if (st != MCP_ERR_NOT_FOUND)
        return st;
    if (bad[0])
        return fail(f, err, MCP_ERR_AUTH, "%s", bad);
    /* No metadata at all: the 2025-03-26 rules take the server's origin as
     * the authorization server and the server URL as the resource. */
    url_parts u;
    if (split(o->server_url, &u) != 0)
        return fail(f, err, MCP_ERR_INVALID_ARG, "the server URL is not usable");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    st = origin_append(&b, &u, 1);
    parts_free(&u);
    f->prm.servers = mcp__calloc(2, sizeof *f->prm.servers);
    f->prm.resource = mcp__oauth_canonical_uri(o->server_url);
    if (st || !f->prm.servers || !f->prm.resource) {
        mcp_buf_cleanup(&b);
        return fail(f, err, MCP_ERR_NOMEM, "out of memory");
    }
    f->prm.servers[0] = mcp_buf_take(&b, NULL);
    f->legacy = 1;
    mcp__client_log(f->c, MCP_LOG_INFO,
                    "authorization: the server publishes no resource metadata; trying %s as its authorization server",
                    f->prm.servers[0]);
    return MCP_OK;
}

/* Step 3: the authorization server's metadata. */
static mcp_status discover_as(flow *f, mcp_error *err)
{
    mcp__oauth *o = f->o;
    char *urls[3] = {NULL, NULL, NULL};
    size_t n = 0;
    mcp_status st = mcp__oauth_as_urls(f->issuer, urls, &n);
    if (st)
        return fail(f, err, st == MCP_ERR_NOMEM ? st : MCP_ERR_AUTH, "the issuer %.100s is not a usable URL", f->issuer);
    char bad[WHY] = "";
    st = MCP_ERR_NOT_FOUND;
    for (size_t i = 0; i < n && st == MCP_ERR_NOT_FOUND; i++) {
        hresp r;
        mcp_status hs = get_metadata(f, urls[i], "server metadata", &r, err);
        if (hs == MCP_ERR_NOT_FOUND)
            continue;
        if (hs) {
            st = hs;
            break;
        }
        hs = mcp__oauth_parse_as(r.body.data ? r.body.data : "", r.body.len, f->issuer, o->allow_http, &f->as, f->why,
                                 sizeof f->why);
        hresp_cleanup(&r);
        if (hs == MCP_OK) {
            mcp__client_log(f->c, MCP_LOG_INFO, "authorization: server metadata of %s from %s", f->issuer, urls[i]);
            st = MCP_OK;
        } else if (hs == MCP_ERR_NOMEM) {
            st = fail(f, err, hs, "out of memory");
        } else {
            /* A document for another issuer is not used; the next URL may hold the right one. */
            mcp__say(bad, sizeof bad, "%s (%s)", f->why, urls[i]);
            mcp__client_log(f->c, MCP_LOG_WARNING, "authorization: %s", bad);
        }
    }
    free_list(urls, n);
    if (st != MCP_ERR_NOT_FOUND)
        return st;
    if (bad[0])
        return fail(f, err, MCP_ERR_AUTH, "%s", bad);
    if (!f->legacy)
        return fail(f, err, MCP_ERR_AUTH, "the authorization server %.100s publishes no metadata", f->issuer);
    /* 2025-03-26: without metadata, the default endpoints on that origin. */
    const char *tails[3] = {"/authorize", "/token", "/register"};
    char **slots[3] = {&f->as.authorization_endpoint, &f->as.token_endpoint, &f->as.registration_endpoint};
    int nomem = !(f->as.issuer = mcp__strdup(f->issuer));
    for (int i = 0; i < 3 && !nomem; i++) {
        mcp_buf b;
        mcp_buf_init(&b, 0);
        if (mcp_buf_append(&b, f->issuer, strlen(f->issuer)) || mcp_buf_append(&b, tails[i], strlen(tails[i]))) {
            mcp_buf_cleanup(&b);
            nomem = 1;
        } else {
            *slots[i] = mcp_buf_take(&b, NULL);
        }
    }
    if (nomem)
        return fail(f, err, MCP_ERR_NOMEM, "out of memory");
    f->as.methods = MCP__AM_NONE | MCP__AM_BASIC | MCP__AM_POST;
    f->as.pkce_s256 = 1; /* PKCE was mandatory for every client then */
    mcp__client_log(f->c, MCP_LOG_INFO, "authorization: no server metadata; using the default endpoints of %s",
                    f->issuer);
    return MCP_OK;
}

/* The token endpoint method for a client with or without a secret. */
static unsigned pick_method(const mcp__asmeta *as, int has_secret)
{
    if (!has_secret)
        return MCP__AM_NONE;
    if (as->methods & MCP__AM_BASIC)
        return MCP__AM_BASIC;
    if (as->methods & MCP__AM_POST)
        return MCP__AM_POST;
    if (as->methods & MCP__AM_NONE)
        return MCP__AM_NONE;
    return MCP__AM_BASIC;
}

static const char *method_name(unsigned m)
{
    return m == MCP__AM_BASIC ? "client_secret_basic" : m == MCP__AM_POST ? "client_secret_post" : "none";
}

static reg *reg_new(const char *issuer, const char *id, const char *secret, unsigned method)
{
    reg *r = mcp__calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->issuer = mcp__strdup(issuer);
    r->client_id = mcp__strdup(id);
    r->secret = mcp__strdup(secret);
    r->method = method;
    if (!r->issuer || !r->client_id || (secret && !r->secret)) {
        reg_free(r);
        return NULL;
    }
    return r;
}

/* Is the redirect URI a native application's (loopback or a private-use scheme)? */
static int native_redirect(const char *u)
{
    url_parts p;
    if (split(u, &p) != 0)
        return 1;
    int native = mcp__oauth_is_loopback(p.host);
    parts_free(&p);
    return native;
}

/* Dynamic client registration (RFC 7591) at f->as. */
static mcp_status register_client(flow *f, mcp_error *err)
{
    mcp__oauth *o = f->o;
    unsigned want = f->as.methods & MCP__AM_NONE    ? MCP__AM_NONE
                    : f->as.methods & MCP__AM_BASIC ? MCP__AM_BASIC
                    : f->as.methods & MCP__AM_POST  ? MCP__AM_POST
                                                    : MCP__AM_NONE;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "client_name");
    mcp_jw_string(&w, o->client_name);
    mcp_jw_key(&w, "redirect_uris");
    mcp_jw_array_begin(&w);
    mcp_jw_string(&w, o->redirect_uri);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "grant_types");
    mcp_jw_array_begin(&w);
    mcp_jw_string(&w, "authorization_code");
    if (!o->no_refresh)
        mcp_jw_string(&w, "refresh_token"); /* SEP-2207: a client that wants refresh tokens says so */
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "response_types");
    mcp_jw_array_begin(&w);
    mcp_jw_string(&w, "code");
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "token_endpoint_auth_method");
    mcp_jw_string(&w, method_name(want));
    /* SEP-837: native (loopback or private-use redirect) or web. */
    mcp_jw_key(&w, "application_type");
    mcp_jw_string(&w, native_redirect(o->redirect_uri) ? "native" : "web");
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (st) {
        mcp_buf_cleanup(&b);
        if (st == MCP_ERR_NOMEM)
            return fail(f, err, st, "out of memory");
        return fail(f, err, MCP_ERR_AUTH, "cannot write the registration request (is client_name valid UTF-8?)");
    }
    hresp r;
    st = http_do(&o->aborted, o->timeout_ms, f->as.registration_endpoint, "application/json", b.data, b.len, NULL, &r,
                 f->why, sizeof f->why);
    mcp_buf_cleanup(&b);
    if (st)
        return fail(f, err, st, "dynamic client registration at %.100s failed: %s", f->as.registration_endpoint,
                    f->why);
    mcp_json_doc *doc = NULL;
    char sub[WHY] = "";
    if (r.status != 200 && r.status != 201) {
        char e[WHY] = "";
        if (parse_object(r.body.data ? r.body.data : "", r.body.len, &doc, sub, sizeof sub, "x") == MCP_OK)
            oauth_error(mcp_json_doc_root(doc), e, sizeof e);
        mcp_json_doc_free(doc);
        long s = r.status;
        hresp_cleanup(&r);
        return fail(f, err, MCP_ERR_AUTH, "the authorization server refused dynamic client registration (HTTP %ld)%s%s",
                    s, e[0] ? ": " : "", e);
    }
    st = parse_object(r.body.data ? r.body.data : "", r.body.len, &doc, sub, sizeof sub, "the registration answer");
    hresp_cleanup(&r);
    if (st)
        return fail(f, err, st == MCP_ERR_NOMEM ? st : MCP_ERR_AUTH, "%s", sub);
    const mcp_json *root = mcp_json_doc_root(doc);
    int nomem = 0;
    char *id = get_str(root, "client_id", &nomem);
    char *secret = get_str(root, "client_secret", &nomem);
    const mcp_json *m = mcp_json_get(root, "token_endpoint_auth_method");
    unsigned method = pick_method(&f->as, secret != NULL);
    if (mcp_json_str_eq(m, "none"))
        method = MCP__AM_NONE;
    else if (mcp_json_str_eq(m, "client_secret_basic") && secret)
        method = MCP__AM_BASIC;
    else if (mcp_json_str_eq(m, "client_secret_post") && secret)
        method = MCP__AM_POST;
    else if (m)
        st = MCP_ERR_UNSUPPORTED;
    mcp_json_doc_free(doc);
    if (!nomem && !st && (!id || !id[0] || !printable(id)))
        st = MCP_ERR_INVALID_MSG;
    if (!nomem && !st && secret && !printable(secret))
        st = MCP_ERR_INVALID_MSG;
    reg *rg = NULL;
    if (!nomem && !st && !(rg = reg_new(f->issuer, id, secret, method)))
        nomem = 1;
    mcp_free(id);
    mcp__oauth_wipe_free(secret);
    if (nomem)
        return fail(f, err, MCP_ERR_NOMEM, "out of memory");
    if (st == MCP_ERR_UNSUPPORTED)
        return fail(f, err, MCP_ERR_AUTH, "the registration asks for a token endpoint method this client lacks");
    if (st)
        return fail(f, err, MCP_ERR_AUTH, "the registration answer has no usable client_id");
    rg->next = o->regs;
    o->regs = rg;
    f->client = rg;
    mcp__client_log(f->c, MCP_LOG_INFO, "authorization: registered as client %s at %s (%s)", rg->client_id, f->issuer,
                    method_name(rg->method));
    return MCP_OK;
}

/* Step 4: who this client is at f->issuer. */
static mcp_status identify(flow *f, mcp_error *err)
{
    mcp__oauth *o = f->o;
    for (reg *r = o->regs; r; r = r->next)
        if (streq(r->issuer, f->issuer)) {
            f->client = r;
            return MCP_OK;
        }
    reg *r = NULL;
    if (o->client_id) {
        /* Pre-registered credentials belong to one authorization server
         * (SEP-2352): never present them to another. */
        const char *bound = o->client_issuer ? o->client_issuer : o->bound_issuer;
        if (bound && !streq(bound, f->issuer))
            return fail(f, err, MCP_ERR_AUTH,
                        "the pre-registered client belongs to %.90s, but the server now names %.90s; register "
                        "with it and configure that client",
                        bound, f->issuer);
        if (!o->bound_issuer && !(o->bound_issuer = mcp__strdup(f->issuer)))
            return fail(f, err, MCP_ERR_NOMEM, "out of memory");
        r = reg_new(f->issuer, o->client_id, o->client_secret, pick_method(&f->as, o->client_secret != NULL));
    } else if (o->cimd_url && f->as.cimd) {
        /* A Client ID Metadata Document URL is its own identity everywhere. */
        r = reg_new(f->issuer, o->cimd_url, NULL, MCP__AM_NONE);
    } else if (f->as.registration_endpoint) {
        return register_client(f, err);
    } else {
        return fail(f, err, MCP_ERR_AUTH,
                    "the authorization server %.100s supports neither Client ID Metadata Documents%s nor dynamic "
                    "registration; configure a pre-registered client id",
                    f->issuer, o->cimd_url ? "" : " (no client_metadata_url is set)");
    }
    if (!r)
        return fail(f, err, MCP_ERR_NOMEM, "out of memory");
    r->next = o->regs;
    o->regs = r;
    f->client = r;
    mcp__client_log(f->c, MCP_LOG_INFO, "authorization: client %s at %s (%s)", r->client_id, f->issuer,
                    method_name(r->method));
    return MCP_OK;
}

/* Step 5: the scopes to ask for (NULL: leave the parameter out). */
static char *select_scope(flow *f, int *nomem)
{
    mcp__oauth *o = f->o;
    const char *base = f->ch.scope && f->ch.scope[0] ? f->ch.scope : f->prm.scopes;
    /* Step-up keeps what was asked for before from the same server (SEP-2350). */
    const char *prev = streq(o->requested_issuer, f->issuer) ? o->requested : NULL;
    char *s = mcp__oauth_scope_union(prev, base, nomem);
    if (o->scope) {
        char *t = mcp__oauth_scope_union(s, o->scope, nomem);
        mcp_free(s);
        s = t;
    }
    if (o->grant == MCP_OAUTH_AUTHORIZATION_CODE && !o->no_refresh && !*nomem &&
        mcp__oauth_scope_has(f->as.scopes, "offline_access")) {
        /* SEP-2207: allowed only when the authorization server lists it. */
        char *t = mcp__oauth_scope_union(s, "offline_access", nomem);
        mcp_free(s);
        s = t;
    }
    return s;
}

/* POSTs a token request (the form gets the client's authentication) and parses the answer. */
static mcp_status token_request(flow *f, mcp_buf *form, mcp__tokens *out, mcp_error *err)
{
    mcp__oauth *o = f->o;
    reg *r = f->client;
    mcp_status st = MCP_OK;
    mcp_buf auth;
    mcp_buf_init(&auth, 0);
    if (r->method == MCP__AM_BASIC) {
        /* RFC 6749 section 2.3.1: id and secret form-encoded, then base64. */
        mcp_buf raw;
        mcp_buf_init(&raw, 0);
        st = pct_append(&raw, r->client_id);
        if (!st)
            st = mcp_buf_append(&raw, ":", 1);
        if (!st)
            st = pct_append(&raw, r->secret ? r->secret : "");
        if (!st)
            st = mcp_buf_append(&auth, "Authorization: Basic ", 21);
        if (!st)
            st = mcp__base64_append(&auth, raw.data, raw.len);
        if (raw.data)
            memset(raw.data, 0, raw.len);
        mcp_buf_cleanup(&raw);
    } else {
        st = mcp__oauth_form_append(form, "client_id", r->client_id);
        if (!st && r->method == MCP__AM_POST)
            st = mcp__oauth_form_append(form, "client_secret", r->secret ? r->secret : "");
    }
    hresp h;
    if (!st)
        st = http_do(&o->aborted, o->timeout_ms, f->as.token_endpoint, "application/x-www-form-urlencoded",
                     form->data, form->len, auth.data, &h, f->why, sizeof f->why);
    else
        mcp__say(f->why, sizeof f->why, "out of memory");
    if (auth.data)
        memset(auth.data, 0, auth.len);
    mcp_buf_cleanup(&auth);
    if (st)
        return fail(f, err, st, "the token request to %.100s failed: %s", f->as.token_endpoint, f->why);
    st = mcp__oauth_parse_tokens(h.status, h.body.data ? h.body.data : "", h.body.len, out, f->why, sizeof f->why);
    hresp_cleanup(&h);
    if (st)
        return fail(f, err, st == MCP_ERR_NOMEM ? st : MCP_ERR_AUTH, "%s", f->why);
    return MCP_OK;
}

static void wipe_buf(mcp_buf *b)
{
    if (b->data)
        memset(b->data, 0, b->len);
    mcp_buf_cleanup(b);
}

/* A refresh token grant (RFC 6749 section 6); MCP_OK with fresh tokens. */
static mcp_status refresh(flow *f, mcp__tokens *out, mcp_error *err)
{
    mcp_buf form;
    mcp_buf_init(&form, 0);
    mcp_status st = mcp__oauth_form_append(&form, "grant_type", "refresh_token");
    if (!st)
        st = mcp__oauth_form_append(&form, "refresh_token", f->o->refresh);
    if (!st)
        st = mcp__oauth_form_append(&form, "resource", f->prm.resource);
    st = st ? fail(f, err, MCP_ERR_NOMEM, "out of memory") : token_request(f, &form, out, err);
    wipe_buf(&form);
    return st;
}

/* The authorization code grant with PKCE (step 6). */
static mcp_status code_grant(flow *f, const char *scope, mcp__tokens *out, mcp_error *err)
{
    mcp__oauth *o = f->o;
    char verifier[48], challenge[44], state[48];
    if (random_b64url(verifier, 32) || mcp__oauth_pkce_challenge(verifier, challenge) || random_b64url(state, 24))
        return fail(f, err, MCP_ERR_INTERNAL, "no random bytes for PKCE");
    mcp_buf u;
    mcp_buf_init(&u, 0);
    const char *ep = f->as.authorization_endpoint;
    mcp_buf q;
    mcp_buf_init(&q, 0);
    mcp_status st = mcp__oauth_form_append(&q, "response_type", "code");
    if (!st)
        st = mcp__oauth_form_append(&q, "client_id", f->client->client_id);
    if (!st)
        st = mcp__oauth_form_append(&q, "redirect_uri", o->redirect_uri);
    if (!st)
        st = mcp__oauth_form_append(&q, "code_challenge", challenge);
    if (!st)
        st = mcp__oauth_form_append(&q, "code_challenge_method", "S256");
    if (!st)
        st = mcp__oauth_form_append(&q, "state", state);
    if (!st)
        st = mcp__oauth_form_append(&q, "resource", f->prm.resource);
    if (!st && scope)
        st = mcp__oauth_form_append(&q, "scope", scope);
    if (!st)
        st = mcp_buf_append(&u, ep, strlen(ep));
    if (!st)
        st = mcp_buf_append(&u, strchr(ep, '?') ? "&" : "?", 1);
    if (!st)
        st = mcp_buf_append(&u, q.data, q.len);
    mcp_buf_cleanup(&q);
    char *landed = st ? NULL : mcp__calloc(1, MAX_REDIRECT_URL);
    if (st || !landed) {
        mcp_buf_cleanup(&u);
        return fail(f, err, MCP_ERR_NOMEM, "out of memory");
    }
    mcp__client_log(f->c, MCP_LOG_INFO, "authorization: sending the user agent to %.150s (scope %.100s)", ep,
                    scope ? scope : "(none)");
    st = o->authorize(f->c, u.data, o->redirect_uri, landed, MAX_REDIRECT_URL, o->ud);
    mcp_buf_cleanup(&u);
    landed[MAX_REDIRECT_URL - 1] = '\0';
    if (atomic_load(&o->aborted)) {
        mcp__oauth_wipe_free(landed);
        return fail(f, err, MCP_ERR_CANCELLED, "the client is closing");
    }
    if (st) {
        mcp__oauth_wipe_free(landed);
        return fail(f, err, MCP_ERR_AUTH, "the authorization was not completed (%s)", mcp_status_str(st));
    }
    /* The issuer recorded before the redirect is the validated metadata's. */
    char *code = NULL;
    st = mcp__oauth_check_redirect(landed, o->redirect_uri, state, f->as.issuer, f->as.iss_supported, &code, f->why,
                                   sizeof f->why);
    mcp__oauth_wipe_free(landed);
    if (st)
        return fail(f, err, st, "%s", f->why);
    mcp_buf form;
    mcp_buf_init(&form, 0);
    st = mcp__oauth_form_append(&form, "grant_type", "authorization_code");
    if (!st)
        st = mcp__oauth_form_append(&form, "code", code);
    if (!st)
        st = mcp__oauth_form_append(&form, "redirect_uri", o->redirect_uri);
    if (!st)
        st = mcp__oauth_form_append(&form, "code_verifier", verifier);
    if (!st)
        st = mcp__oauth_form_append(&form, "resource", f->prm.resource);
    mcp__oauth_wipe_free(code);
    memset(verifier, 0, sizeof verifier);
    st = st ? fail(f, err, MCP_ERR_NOMEM, "out of memory") : token_request(f, &form, out, err);
    wipe_buf(&form);
    return st;
}

/* The client credentials grant (step 6, machine clients). */
static mcp_status credentials_grant(flow *f, const char *scope, mcp__tokens *out, mcp_error *err)
{
    mcp_buf form;
    mcp_buf_init(&form, 0);
    mcp_status st = mcp__oauth_form_append(&form, "grant_type", "client_credentials");
    if (!st)
        st = mcp__oauth_form_append(&form, "resource", f->prm.resource);
    if (!st && scope)
        st = mcp__oauth_form_append(&form, "scope", scope);
    st = st ? fail(f, err, MCP_ERR_NOMEM, "out of memory") : token_request(f, &form, out, err);
    wipe_buf(&form);
    return st;
}

/* Replaces a string slot; 0 on success. */
static int set_slot(char **slot, const char *v, int wipe)
{
    char *n = NULL;
    if (v && !(n = mcp__strdup(v)))
        return -1;
    if (wipe)
        mcp__oauth_wipe_free(*slot);
    else
        mcp_free(*slot);
    *slot = n;
    return 0;
}

mcp_status mcp__oauth_run(mcp__oauth *o, mcp_client *c, int http_status, const char *challenge, char **token,
                          mcp_error *err)
{
    *token = NULL;
    flow f;
    memset(&f, 0, sizeof f);
    f.o = o;
    f.c = c;
    f.status = http_status;
    mcp_status st = mcp__oauth_parse_challenge(challenge, challenge ? strlen(challenge) : 0, &f.ch);
    if (st)
        return fail(&f, err, st, "out of memory");
    st = discover_prm(&f, err);
    if (!st) {
        f.issuer = f.prm.servers[0];
        if (o->client_id && o->client_issuer) {
            /* Prefer the server the pre-registered client belongs to. */
            for (char **s = f.prm.servers; *s; s++)
                if (streq(*s, o->client_issuer))
                    f.issuer = *s;
        }
        st = discover_as(&f, err);
    }
    if (!st && o->grant == MCP_OAUTH_AUTHORIZATION_CODE) {
        /* Checked before registering anything there. */
        if (!f.as.authorization_endpoint)
            st = fail(&f, err, MCP_ERR_AUTH, "the authorization server %.100s has no authorization_endpoint",
                      f.issuer);
        else if (!f.as.pkce_s256)
            /* The spec: without S256 in code_challenge_methods_supported, refuse. */
            st = fail(&f, err, MCP_ERR_AUTH,
                      "the authorization server %.100s does not support PKCE with S256 "
                      "(code_challenge_methods_supported); refusing to authorize",
                      f.issuer);
    }
    if (!st)
        st = identify(&f, err);
    mcp__tokens tk;
    memset(&tk, 0, sizeof tk);
    tk.expires_in = -1;
    int got = 0;
    if (!st && http_status == 401 && o->refresh && streq(o->refresh_issuer, f.issuer)) {
        /* A refused token with a refresh token at hand: try it before bothering a person. */
        mcp_error re;
        mcp_error_clear(&re);
        mcp_status rs = refresh(&f, &tk, &re);
        if (rs == MCP_OK) {
            got = 1;
            mcp__client_log(c, MCP_LOG_INFO, "authorization: refreshed the access token at %s", f.issuer);
        } else if (rs == MCP_ERR_CANCELLED || rs == MCP_ERR_NOMEM) {
            st = rs;
            if (err)
                *err = re;
        } else {
            mcp__client_log(c, MCP_LOG_INFO, "authorization: the refresh failed (%s); authorizing again", re.message);
            mcp__oauth_wipe_free(o->refresh);
            o->refresh = NULL;
        }
    }
    char *scope = NULL;
    if (!st && !got) {
        int nomem = 0;
        scope = select_scope(&f, &nomem);
        if (nomem)
            st = fail(&f, err, MCP_ERR_NOMEM, "out of memory");
        else if (o->grant == MCP_OAUTH_CLIENT_CREDENTIALS)
            st = credentials_grant(&f, scope, &tk, err);
        else
            st = code_grant(&f, scope, &tk, err);
    }
    if (!st) {
        /* Remember what was asked for (step-up adds to it), and the refresh token. */
        int nomem = 0;
        if (!got) {
            nomem |= set_slot(&o->requested, scope, 0);
            nomem |= set_slot(&o->requested_issuer, f.issuer, 0);
        }
        if (tk.refresh && !o->no_refresh) {
            nomem |= set_slot(&o->refresh, tk.refresh, 1);
            nomem |= set_slot(&o->refresh_issuer, f.issuer, 0);
        } else if (!got && !streq(o->refresh_issuer, f.issuer)) {
            nomem |= set_slot(&o->refresh, NULL, 1);
        }
        if (nomem) {
            st = fail(&f, err, MCP_ERR_NOMEM, "out of memory");
        } else {
            if (tk.expires_in >= 0)
                mcp__client_log(c, MCP_LOG_INFO, "authorization: access token from %s (scope %.100s; expires in %lld s)",
                                f.issuer, tk.scope ? tk.scope : scope ? scope : "unspecified", tk.expires_in);
            else
                mcp__client_log(c, MCP_LOG_INFO, "authorization: access token from %s (scope %.100s)", f.issuer,
                                tk.scope ? tk.scope : scope ? scope : "unspecified");
            *token = tk.access;
            tk.access = NULL;
        }
    }
    mcp_free(scope);
    mcp__tokens_cleanup(&tk);
    mcp__asmeta_cleanup(&f.as);
    mcp__prm_cleanup(&f.prm);
    mcp__challenge_cleanup(&f.ch);
    return st;
}

/* ------------------------------------------------------------------------ */
/* A user agent without a person                                             */

mcp_status mcp_oauth_authorize_unattended(mcp_client *c, const char *authorization_url, const char *redirect_uri,
                                          char *redirect_out, size_t redirect_cap, void *user_data)
{
    (void)user_data;
    if (!authorization_url || !redirect_uri || !redirect_out || !redirect_cap)
        return MCP_ERR_INVALID_ARG;
    size_t bl = base_len(redirect_uri);
    char *cur = mcp__strdup(authorization_url);
    if (!cur)
        return MCP_ERR_NOMEM;
    char why[WHY];
    mcp_status st = MCP_ERR_LIMIT;
    for (int hop = 0; hop <= MAX_HOPS; hop++) {
        hresp r;
        mcp_status hs = http_do(NULL, DEFAULT_TIMEOUT_MS, cur, NULL, NULL, 0, NULL, &r, why, sizeof why);
        if (hs) {
            if (c)
                mcp__client_log(c, MCP_LOG_WARNING, "authorization: %s", why);
            st = hs == MCP_ERR_NOMEM ? hs : MCP_ERR_IO;
            break;
        }
        char *next = NULL;
        if (r.status >= 300 && r.status < 400 && r.location) {
            /* Resolve a relative Location against where we are. */
            CURLU *h = curl_url();
            char *full = NULL;
            if (h && curl_url_set(h, CURLUPART_URL, cur, 0) == CURLUE_OK &&
                curl_url_set(h, CURLUPART_URL, r.location, 0) == CURLUE_OK &&
                curl_url_get(h, CURLUPART_URL, &full, 0) == CURLUE_OK)
                next = mcp__strdup(full);
            curl_free(full);
            curl_url_cleanup(h);
            /* The redirect URI is reported as the server wrote it. */
            if (next && strncmp(r.location, redirect_uri, bl) == 0 &&
                (r.location[bl] == '?' || r.location[bl] == '#' || r.location[bl] == '\0')) {
                mcp_free(next);
                next = mcp__strdup(r.location);
                if (next && strlen(next) < redirect_cap) {
                    memcpy(redirect_out, next, strlen(next) + 1);
                    st = MCP_OK;
                } else {
                    st = next ? MCP_ERR_LIMIT : MCP_ERR_NOMEM;
                }
                mcp__oauth_wipe_free(next);
                hresp_cleanup(&r);
                break;
            }
        }
        long status = r.status;
        hresp_cleanup(&r);
        if (!next) {
            if (c)
                mcp__client_log(c, MCP_LOG_WARNING,
                                "authorization: HTTP %ld without a redirect to the redirect URI (a person is needed?)",
                                status);
            st = MCP_ERR_AUTH;
            break;
        }
        mcp_free(cur);
        cur = next;
    }
    mcp_free(cur);
    return st;
}
