/*
 * The client's OAuth 2.1 authorization (oauth.c). Internal to libmcp.
 *
 * The core (client.c) owns one mcp__oauth per HTTP client and runs
 * mcp__oauth_run() on a worker thread when a request was refused with 401
 * or 403 insufficient_scope; it then installs the token in the transport
 * and sends the request again. The pure pieces (challenge parsing, URL
 * building, metadata validation, PKCE, the redirect check) are exposed
 * here for the unit tests (tests/oauth) and the fuzz target.
 */
#ifndef MCP_OAUTH_H
#define MCP_OAUTH_H

#include "mcp/client.h"

#include <stddef.h>

/* ---- the session ---------------------------------------------------------- */

typedef struct mcp__oauth mcp__oauth;

/*
 * Checks and copies the options for the MCP endpoint `server_url`;
 * `default_name` is the client_name used for dynamic registration when the
 * options name none. MCP_ERR_INVALID_ARG with a reason for unusable
 * options (no redirect_uri or authorize for the code grant, no client id
 * and secret for client credentials, a client_metadata_url that is not
 * https with a path, a redirect_uri that is not http(s) or a custom
 * scheme); MCP_ERR_NOMEM.
 */
mcp_status mcp__oauth_new(mcp__oauth **out, const mcp_oauth_opts *opts, const char *server_url,
                          const char *default_name, mcp_error *err);

/* Frees the session; tokens and secrets are wiped first. NULL is a no-op. */
void mcp__oauth_free(mcp__oauth *o);

/* Authorizations one request may trigger before it fails. */
unsigned mcp__oauth_max_attempts(const mcp__oauth *o);

/*
 * Stops the HTTP exchange in progress and makes later ones fail at once
 * (the client is closing). Any thread.
 */
void mcp__oauth_abort(mcp__oauth *o);

/*
 * Obtains a new access token for a refusal: `http_status` 401 or 403 and
 * the WWW-Authenticate value(s) `challenge` (may be NULL). Runs discovery,
 * client identification and the grant (or a refresh); blocks. One call at
 * a time per session (the core serialises them). On MCP_OK `*token` is the
 * access token (mcp_malloc'd; wipe it before freeing). Errors: MCP_ERR_AUTH
 * (refused, mismatched metadata, rejected redirect; err->message says
 * why, never with a token or secret), MCP_ERR_IO, MCP_ERR_LIMIT,
 * MCP_ERR_CANCELLED (aborted), MCP_ERR_NOMEM.
 */
mcp_status mcp__oauth_run(mcp__oauth *o, mcp_client *c, int http_status, const char *challenge, char **token,
                          mcp_error *err);

/* ---- pieces (pure; tests and fuzzing) ----------------------------------------- */

/* What a Bearer challenge said (RFC 6750 section 3; RFC 9728 section 5.1). */
typedef struct mcp__challenge {
    int bearer;              /* a Bearer challenge was present */
    char *resource_metadata; /* resource_metadata URL, or NULL */
    char *scope;             /* scope, or NULL */
    char *error;             /* error code (invalid_token, insufficient_scope ...), or NULL */
    char *error_description; /* or NULL */
} mcp__challenge;

/*
 * Parses WWW-Authenticate value(s) (RFC 9110 section 11.6.1: challenges
 * separated by commas, each a scheme with auth-params or a token68,
 * quoted strings with backslash escapes) and keeps the Bearer one's
 * parameters. Malformed text yields what was read before it. MCP_OK or
 * MCP_ERR_NOMEM; clean up with mcp__challenge_cleanup() either way.
 */
mcp_status mcp__oauth_parse_challenge(const char *value, size_t len, mcp__challenge *out);
void mcp__challenge_cleanup(mcp__challenge *ch);

/* Nonzero when `s` is a loopback host name or address (localhost, 127/8, [::1]). */
int mcp__oauth_is_loopback(const char *host);

/*
 * Nonzero when `url` may carry authorization traffic: https, or http on a
 * loopback host, or any http when `allow_http`; no fragment.
 */
int mcp__oauth_url_allowed(const char *url, int allow_http);

/*
 * The canonical URI of a server (RFC 8707 section 2): lowercase scheme and
 * host, no default port, no query or fragment, no lone "/" path.
 * mcp_malloc'd, or NULL (not an http(s) URL, or out of memory).
 */
char *mcp__oauth_canonical_uri(const char *url);

/*
 * Nonzero when a Protected Resource Metadata `resource` identifies the
 * server at `server_url`: same scheme, host and port, and its path is the
 * server's path or a parent of it at a "/" boundary.
 */
int mcp__oauth_resource_covers(const char *resource, const char *server_url);

/*
 * The Protected Resource Metadata well-known URLs for a server, in the
 * order the spec tries them: with the path inserted, then at the root (one
 * URL for a server at the root). `out` gets up to 2 mcp_malloc'd strings.
 * MCP_OK; MCP_ERR_INVALID_ARG (not a URL); MCP_ERR_NOMEM.
 */
mcp_status mcp__oauth_prm_urls(const char *server_url, char *out[2], size_t *n);

/*
 * The authorization server metadata URLs for an issuer, in the spec's
 * order: for an issuer with a path, RFC 8414 with path insertion, OpenID
 * Connect with path insertion, OpenID Connect with the path appended;
 * without one, RFC 8414 then OpenID Connect. Up to 3 strings.
 */
mcp_status mcp__oauth_as_urls(const char *issuer, char *out[3], size_t *n);

/* Protected Resource Metadata, checked. */
typedef struct mcp__prm {
    char *resource;   /* the resource identifier (covers the server) */
    char **servers;   /* authorization_servers, NULL-terminated, at least one */
    char *scopes;     /* scopes_supported joined with spaces, or NULL when absent */
} mcp__prm;

/*
 * Parses and checks a PRM document fetched for `server_url`: a JSON
 * object whose `resource` covers the server, with at least one
 * authorization server URL that mcp__oauth_url_allowed() accepts. On
 * failure `why` (cap bytes) says what was wrong: MCP_ERR_AUTH (the
 * resource is another server's), MCP_ERR_INVALID_MSG (not usable),
 * MCP_ERR_NOMEM.
 */
mcp_status mcp__oauth_parse_prm(const char *body, size_t len, const char *server_url, int allow_http, mcp__prm *out,
                                char *why, size_t cap);
void mcp__prm_cleanup(mcp__prm *p);

/* Token endpoint client authentication methods (bits). */
enum {
    MCP__AM_NONE = 1,  /* "none": client_id in the body */
    MCP__AM_BASIC = 2, /* "client_secret_basic" */
    MCP__AM_POST = 4   /* "client_secret_post" */
};

/* Authorization server metadata, checked. */
typedef struct mcp__asmeta {
    char *issuer;                 /* identical to the issuer asked for */
    char *authorization_endpoint; /* NULL when absent (client credentials only) */
    char *token_endpoint;
    char *registration_endpoint;  /* NULL when absent */
    char *scopes;                 /* scopes_supported joined, or NULL */
    unsigned methods;             /* MCP__AM_* listed (RFC 8414 default: basic) */
    int pkce_s256;                /* code_challenge_methods_supported lists S256 */
    int cimd;                     /* client_id_metadata_document_supported: true */
    int iss_supported;            /* authorization_response_iss_parameter_supported: true */
} mcp__asmeta;

/*
 * Parses and checks AS metadata fetched for `issuer` (RFC 8414 section
 * 3.3): `issuer` must be identical to it (simple string comparison), the
 * endpoints allowed URLs, a token endpoint present. MCP_ERR_AUTH for an
 * issuer mismatch, MCP_ERR_INVALID_MSG for anything else unusable,
 * MCP_ERR_NOMEM; `why` says which.
 */
mcp_status mcp__oauth_parse_as(const char *body, size_t len, const char *issuer, int allow_http, mcp__asmeta *out,
                               char *why, size_t cap);
void mcp__asmeta_cleanup(mcp__asmeta *m);

/* The S256 code challenge of a PKCE verifier (RFC 7636 section 4.2): 43 characters + NUL. */
mcp_status mcp__oauth_pkce_challenge(const char *verifier, char out[44]);

/* The scopes of `a` and then those of `b` not in `a`, space-separated; NULL when both are
 * empty or NULL, or out of memory (*nomem set). */
char *mcp__oauth_scope_union(const char *a, const char *b, int *nomem);

/* Nonzero when the space-separated list `scopes` contains `scope`. */
int mcp__oauth_scope_has(const char *scopes, const char *scope);

/* Percent-encodes `s` for a query or form value (RFC 3986 unreserved kept). */
mcp_status mcp__oauth_form_append(mcp_buf *b, const char *key, const char *value);

/*
 * Checks where the browser landed after authorization (RFC 6749 section
 * 4.1.2, RFC 9207 section 2.4, the 2026-07-28 table): `landed` must be
 * `redirect_uri` plus a query; a present `iss` must equal `issuer` byte
 * for byte, and must be present when `iss_required`; `state` must match;
 * an `error` is reported (only once iss was accepted); then `code` is
 * returned (mcp_malloc'd). MCP_ERR_AUTH with `why`, or MCP_ERR_NOMEM.
 */
mcp_status mcp__oauth_check_redirect(const char *landed, const char *redirect_uri, const char *state,
                                     const char *issuer, int iss_required, char **code, char *why, size_t cap);

/* A token endpoint's successful answer. */
typedef struct mcp__tokens {
    char *access;     /* access_token (visible ASCII) */
    char *refresh;    /* refresh_token, or NULL */
    char *scope;      /* scope, or NULL */
    long long expires_in; /* seconds, or -1 */
} mcp__tokens;

/*
 * Parses a token endpoint answer with HTTP status `status`: 200 with a
 * Bearer access token, or an OAuth error (`error`, `error_description`)
 * reported in `why` as MCP_ERR_AUTH. MCP_ERR_INVALID_MSG for anything
 * else; MCP_ERR_UNSUPPORTED for a token type other than Bearer.
 */
mcp_status mcp__oauth_parse_tokens(long status, const char *body, size_t len, mcp__tokens *out, char *why,
                                   size_t cap);
void mcp__tokens_cleanup(mcp__tokens *t);

/* Frees a string after overwriting it (tokens, secrets, codes). NULL is a no-op. */
void mcp__oauth_wipe_free(char *s);

#endif /* MCP_OAUTH_H */
