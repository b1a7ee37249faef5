/*
 * libmcp authorization: the MCP server as an OAuth 2.1 resource server
 * (the authorization chapters of 2025-11-25 and 2026-07-28).
 *
 * An mcp_auth checks bearer access tokens and turns a good one into an
 * mcp_principal (who is calling, for which client, with which scopes):
 *
 *     mcp_auth_opts ao = {0};
 *     ao.resource = "https://mcp.example.com/mcp";       (RFC 8707: `aud` must name it)
 *     ao.issuers = "https://auth.example.com";           (`iss` must be one of these)
 *     ao.jwks_url = "https://auth.example.com/jwks.json";
 *     ao.scopes_supported = "files:read files:write";
 *     mcp_auth *auth;
 *     if (mcp_auth_new(&auth, &ao, &err) != MCP_OK) ...
 *     mcp_http_opts ho = {0};
 *     ho.auth = auth;                                   (transport.h)
 *     mcp_http_serve(srv, &ho, &err);
 *     mcp_auth_free(auth);
 *
 * The HTTP server then serves RFC 9728 Protected Resource Metadata, answers
 * 401/403 with `WWW-Authenticate` challenges, and hands the principal to
 * every request it dispatches; tools, resources and prompts registered with
 * `scopes` are refused (403) to a principal that lacks one (server.h,
 * docs/auth.md).
 *
 * Tokens:
 *   - JWTs (RFC 7519/9068) signed with RS256, PS256, ES256 or EdDSA
 *     (Ed25519), checked against keys from a JWKS (RFC 7517) read from a
 *     file, given as text, or fetched over https (libcurl). Keys are cached;
 *     a token naming an unknown `kid` triggers a refetch, at most one per
 *     `jwks_min_interval_s`. `alg: none` and the HMAC algorithms are always
 *     refused, whatever `algorithms` says.
 *   - Opaque tokens, when `introspection_url` is set: RFC 7662
 *     introspection with HTTP Basic client authentication.
 *   Claims checked: signature, `iss` (one of `issuers`), `aud` (contains
 *   `audience`, by default the resource URI), `exp` (required), `nbf` and
 *   `iat`, each with `leeway_s` of clock skew.
 *
 * Tokens are never logged, stored in clear or echoed: error messages are
 * fixed texts, and the verified-token cache is keyed by SHA-256.
 *
 * List-valued options are space-separated strings, like OAuth's `scope`.
 */
#ifndef MCP_AUTH_H
#define MCP_AUTH_H

#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_auth mcp_auth;           /* a token verifier for one protected resource */
typedef struct mcp_principal mcp_principal; /* who a verified token speaks for */

/* Why a request was refused: the RFC 6750 error code and HTTP status it gets. */
typedef enum mcp_auth_error {
    MCP_AUTH_OK = 0,             /* the token is good */
    MCP_AUTH_NO_TOKEN,           /* no bearer token at all: 401, challenge without an error code */
    MCP_AUTH_INVALID_REQUEST,    /* a malformed Authorization header: 400 "invalid_request" */
    MCP_AUTH_INVALID_TOKEN,      /* malformed, expired, badly signed, wrong iss/aud: 401 "invalid_token" */
    MCP_AUTH_INSUFFICIENT_SCOPE, /* a good token without a required scope: 403 "insufficient_scope" */
    MCP_AUTH_UNAVAILABLE         /* the keys or the introspection endpoint cannot be reached: 503 */
} mcp_auth_error;

/* Options of an mcp_auth; zero-initialise and set what you need. Strings are copied.
 * May grow at its end (base.h, "Option structs and the ABI"). */
typedef struct mcp_auth_opts {
    const char *resource;        /* canonical URI of this MCP server (RFC 8707, RFC 9728 `resource`),
                                    e.g. "https://mcp.example.com/mcp"; NULL = the HTTP server that
                                    uses this verifier sets it to its own URL when it starts */
    const char *audience;        /* space-separated values of which `aud` must contain one; NULL = resource */
    const char *issuers;         /* space-separated issuers `iss` must equal one of (exact string match);
                                    required with JWT keys */
    const char *authorization_servers; /* space-separated, for the metadata's authorization_servers;
                                          NULL = issuers */
    const char *jwks_file;       /* path of a JWKS document, or NULL */
    const char *jwks_url;        /* https URL of a JWKS (http only to a loopback host), or NULL */
    const char *jwks_json;       /* a JWKS document as text, or NULL */
    unsigned jwks_min_interval_s; /* at most one JWKS fetch per this many seconds; 0 = 30 */
    unsigned jwks_max_age_s;     /* fetched keys are refreshed after this; 0 = 3600 */
    const char *algorithms;      /* allowed `alg` values among RS256 PS256 ES256 EdDSA;
                                    NULL = all four. "none" and HS* are refused here. */
    int leeway_s;                /* clock skew allowed on exp, nbf and iat; 0 = 60, negative = none */
    const char *introspection_url; /* RFC 7662 endpoint for opaque tokens, or NULL */
    const char *client_id;       /* this server's client id at the introspection endpoint */
    const char *client_secret;   /* and its secret (HTTP Basic) */
    int introspection_cache_s;   /* an introspection answer is reused this long (never past exp);
                                    0 = 30, negative = ask every time */
    const char *scopes_supported; /* space-separated, for the metadata and the 401 challenge, or NULL */
    const char *required_scopes; /* space-separated scopes every request needs, or NULL */
    const char *const *scope_hierarchy; /* NULL-terminated lines "BROAD NARROW..." : a token granted
                                           BROAD also has each NARROW (transitively), or NULL */
    const char *ca_file;         /* CA bundle (PEM) for the https fetches; NULL = the system's */
    int token_cache;             /* verified tokens remembered (by SHA-256) until they expire;
                                    0 = 1024 entries, negative = off */
    size_t max_token_len;        /* longest token accepted; 0 = 8192 bytes */
    size_t max_jwks_bytes;       /* largest JWKS document; 0 = 256 KiB */
    unsigned max_keys;           /* most keys kept from a JWKS; 0 = 32 */
    unsigned fetch_timeout_ms;   /* JWKS and introspection requests; 0 = 5000 */
    int require_at_jwt;          /* nonzero: a JWT must declare typ "at+jwt" (RFC 9068 access-token
                                    profile; also "application/at+jwt"), so an ID token or another
                                    JWT the issuer signs is not taken for an access token */
} mcp_auth_opts;

/**
 * Creates a verifier. A JWKS file or text is read and checked now; a JWKS
 * URL is fetched on first use (call mcp_auth_refresh() to fail fast).
 *
 * mcp_auth_new() is a macro over mcp_auth_new_sized(), which also takes the
 * caller's sizeof(mcp_auth_opts) (base.h, "Option structs and the ABI").
 *
 * @param out  receives the verifier; untouched on failure.
 * @param opts required.
 * @param opts_size sizeof(mcp_auth_opts) as the caller knows it.
 * @param err  optional detail.
 * @return MCP_OK;
 *         MCP_ERR_INVALID_ARG (no key source and no introspection URL; keys
 *         without issuers; an algorithm that is unknown, "none" or HS*; a
 *         resource URI that is not absolute or has a fragment; a scope with
 *         characters RFC 6749 forbids; introspection without client
 *         credentials; a non-https URL to a non-loopback host; opts_size 0
 *         or too small);
 *         MCP_ERR_UNSUPPORTED (opts sets fields this library does not know);
 *         MCP_ERR_IO (the JWKS file cannot be read);
 *         MCP_ERR_PARSE / MCP_ERR_INVALID (the JWKS is not JSON / has no usable key);
 *         MCP_ERR_LIMIT (the JWKS is over max_jwks_bytes); MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_auth_new_sized(mcp_auth **out, const mcp_auth_opts *opts, size_t opts_size, mcp_error *err);
#define mcp_auth_new(out, opts, err) mcp_auth_new_sized((out), (opts), sizeof(mcp_auth_opts), (err))

/**
 * Frees a verifier. Principals it made stay valid (they own their data).
 * @param auth may be NULL (no-op).
 */
MCP_API void mcp_auth_free(mcp_auth *auth);

/**
 * Reloads the keys now: the JWKS file, or a fetch of the JWKS URL (not
 * subject to jwks_min_interval_s). On failure the keys in use are kept.
 * @return MCP_OK; MCP_ERR_IO (cannot read or fetch, or an HTTP status
 *         other than 200); MCP_ERR_PARSE; MCP_ERR_INVALID (no usable key);
 *         MCP_ERR_LIMIT; MCP_ERR_NOMEM; MCP_ERR_STATE (no file or URL).
 * Thread-safety: safe, also while verifying.
 */
MCP_API mcp_status mcp_auth_refresh(mcp_auth *auth, mcp_error *err);

/**
 * Verifies an access token.
 *
 * @param token the token (not NUL-terminated necessarily), `len` bytes.
 * @param out   receives a new principal on success (free it with
 *              mcp_principal_free()); untouched on failure.
 * @param why   optional: the classification (MCP_AUTH_OK on success).
 * @param err   optional detail: a fixed text naming the exact reason
 *              ("the token expired", "unknown key id", ...), never token bytes.
 * @return MCP_OK; MCP_ERR_AUTH (the token is refused: `why` says how);
 *         MCP_ERR_INVALID_ARG (auth or out NULL); MCP_ERR_NOMEM.
 *         The required_scopes are NOT checked here (see mcp_principal_has_scopes()).
 * Thread-safety: safe; may block on a JWKS fetch or an introspection
 * request (fetch_timeout_ms at most).
 */
MCP_API mcp_status mcp_auth_verify(mcp_auth *auth, const char *token, size_t len, mcp_principal **out,
                                   mcp_auth_error *why, mcp_error *err);

/**
 * Verifies the value of an HTTP Authorization header ("Bearer <token>",
 * scheme case-insensitive), then checks the required_scopes.
 *
 * @param header the header value, or NULL when the request had none
 *               (MCP_AUTH_NO_TOKEN, as for another scheme such as Basic).
 * @return as mcp_auth_verify(); a malformed header ("Bearer" alone, spaces
 *         or characters outside RFC 6750's token68 in the token) is
 *         MCP_AUTH_INVALID_REQUEST, a token over max_token_len
 *         MCP_AUTH_INVALID_TOKEN, missing required scopes
 *         MCP_AUTH_INSUFFICIENT_SCOPE.
 * Thread-safety: as mcp_auth_verify().
 */
MCP_API mcp_status mcp_auth_check_header(mcp_auth *auth, const char *header, mcp_principal **out,
                                         mcp_auth_error *why, mcp_error *err);

/**
 * Writes the RFC 9728 Protected Resource Metadata document (JSON:
 * resource, authorization_servers, scopes_supported when set,
 * bearer_methods_supported ["header"]) to the end of `out`.
 * @return MCP_OK, MCP_ERR_INVALID_ARG, MCP_ERR_STATE (no resource URI yet), MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_auth_metadata(const mcp_auth *auth, mcp_buf *out);

/**
 * The absolute URL of the metadata document: the resource URI with
 * "/.well-known/oauth-protected-resource" inserted before its path
 * (RFC 9728 section 3.1). NULL before a resource URI is known.
 * Thread-safety: safe once serving.
 */
MCP_API const char *mcp_auth_metadata_url(const mcp_auth *auth);

/** The canonical resource URI, or NULL before one is known. */
MCP_API const char *mcp_auth_resource(const mcp_auth *auth);

/**
 * Writes a `WWW-Authenticate` value to the end of `out`:
 * `Bearer resource_metadata="<url>"`, then `error="<code>"` for every
 * `why` except MCP_AUTH_NO_TOKEN, then `scope="<scope>"` when `scope` is
 * not NULL or empty, then `error_description` when given.
 * @param scope       space-separated scopes to name (validated scope tokens), or NULL.
 * @param description text without `"` or `\`, or NULL.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (a quote or backslash in scope or
 *         description), MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_auth_challenge(const mcp_auth *auth, mcp_auth_error why, const char *scope,
                                      const char *description, mcp_buf *out);

/** The scopes every request needs (space-separated, "" for none). */
MCP_API const char *mcp_auth_required_scopes(const mcp_auth *auth);

/** The scopes_supported option (space-separated, "" for none). */
MCP_API const char *mcp_auth_scopes_supported(const mcp_auth *auth);

/** The RFC 6750 error code of a classification ("invalid_token", ...), or NULL for OK and NO_TOKEN. */
MCP_API const char *mcp_auth_error_code(mcp_auth_error why);

/**
 * Parses one of the program options shared by libmcp's servers into
 * `opts`:
 *
 *   --auth-issuer URL        issuers (a space-separated list in one argument)
 *   --auth-audience URI      audience
 *   --auth-jwks FILE|URL     jwks_url when it starts with http:// or https://, else jwks_file
 *   --auth-introspect URL    introspection_url; the client credentials come
 *                            from the environment: MCP_AUTH_CLIENT_ID and
 *                            MCP_AUTH_CLIENT_SECRET (never the command line)
 *   --auth-scopes "A B"      scopes_supported
 *   --resource-url URL       resource
 *
 * Each takes its value from the next argument or after '='
 * ("--auth-issuer=https://..."). The strings stay borrowed from argv.
 *
 * mcp_auth_parse_arg() is a macro over mcp_auth_parse_arg_sized(), which
 * also takes the caller's sizeof(mcp_auth_opts) and writes only fields
 * within it (base.h, "Option structs and the ABI").
 *
 * @param opts  the options to fill in; must not be NULL.
 * @param opts_size sizeof(mcp_auth_opts) as the caller knows it.
 * @param arg   argv[i].
 * @param next  argv[i + 1], or NULL.
 * @param used  receives how many arguments were consumed (1 or 2).
 * @return MCP_OK; MCP_ERR_NOT_FOUND (not an auth option: `used` is 0);
 *         MCP_ERR_INVALID_ARG (the option has no value, or opts_size is 0
 *         or too small).
 * Thread-safety: reads the environment; call from main.
 */
MCP_API mcp_status mcp_auth_parse_arg_sized(mcp_auth_opts *opts, size_t opts_size, const char *arg, const char *next,
                                            int *used);
#define mcp_auth_parse_arg(opts, arg, next, used) \
    mcp_auth_parse_arg_sized((opts), sizeof(mcp_auth_opts), (arg), (next), (used))

/* One usage line per option, for a program's --help. */
#define MCP_AUTH_ARGS_HELP                                                                                  \
    "  --auth-issuer URL       accept tokens from this issuer (space-separated list)\n"                    \
    "  --auth-audience URI     tokens' aud must name this (default: the resource URL)\n"                   \
    "  --auth-jwks FILE|URL    the issuer's signing keys (JWKS)\n"                                         \
    "  --auth-introspect URL   RFC 7662 introspection for opaque tokens (credentials from\n"               \
    "                          MCP_AUTH_CLIENT_ID and MCP_AUTH_CLIENT_SECRET)\n"                           \
    "  --auth-scopes \"A B\"     scopes_supported in the metadata\n"                                       \
    "  --resource-url URL      this server's public URL (the token audience)\n"

/* ---- principals ------------------------------------------------------------ */

/* Every accessor accepts NULL and then returns NULL, 0 or "". Values stay
 * valid as long as the principal; principals are immutable and may be read
 * from any number of threads. */

/** The `sub` claim, or NULL when the token has none. */
MCP_API const char *mcp_principal_subject(const mcp_principal *p);

/** The client: the `client_id` claim, else `azp`, else NULL. */
MCP_API const char *mcp_principal_client_id(const mcp_principal *p);

/** The `iss` claim, or NULL. */
MCP_API const char *mcp_principal_issuer(const mcp_principal *p);

/** The granted scopes as the token states them, space-separated ("" for none). */
MCP_API const char *mcp_principal_scopes(const mcp_principal *p);

/**
 * 1 when the principal holds `scope` (granted, or implied by a granted one
 * through the scope_hierarchy option), else 0 (also for NULL arguments).
 */
MCP_API int mcp_principal_has_scope(const mcp_principal *p, const char *scope);

/**
 * 1 when the principal holds every scope of the space-separated `scopes`
 * (NULL or "" always holds), else 0. A NULL principal holds nothing.
 */
MCP_API int mcp_principal_has_scopes(const mcp_principal *p, const char *scopes);

/** The expiry (`exp`, Unix seconds), or 0 when the token states none. */
MCP_API int64_t mcp_principal_expires(const mcp_principal *p);

/**
 * All claims: the JWT payload, or the introspection response (borrowed,
 * valid as long as the principal). For claims libmcp does not interpret
 * (email, tenant, roles...).
 */
MCP_API const mcp_json *mcp_principal_claims(const mcp_principal *p);

/**
 * Releases a principal obtained from mcp_auth_verify() or
 * mcp_auth_check_header() (libmcp keeps its own references where it
 * shares one).
 * @param p may be NULL (no-op).
 * Thread-safety: safe.
 */
MCP_API void mcp_principal_free(mcp_principal *p);

#ifdef __cplusplus
}
#endif

#endif /* MCP_AUTH_H */
