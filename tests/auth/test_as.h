/*
 * A test authorization server, for tests and benchmarks only: OpenSSL keys
 * made at start (RSA for RS256 and PS256, EC P-256, Ed25519), JWTs signed
 * on request, and, when started with HTTP, a real libmicrohttpd server on
 * 127.0.0.1 serving
 *
 *   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
 *   GET  /jwks                                     the public keys (counted)
 *   POST /issue    "ES256\n{claims}"               a signed JWT (text/plain)
 *   POST /introspect  token=...                    RFC 7662, HTTP Basic
 *                                                  client "rs" / "rs-secret"
 *
 * It also forges the tokens a resource server must refuse: alg none,
 * HS256 keyed with the RSA public key, bad signatures, unknown key ids.
 * Nothing here is for production: no user, no consent, no token endpoint.
 */
#ifndef MCP_TEST_AS_H
#define MCP_TEST_AS_H

#include <stddef.h>

typedef struct tas tas;

typedef enum tas_alg { TAS_RS256 = 0, TAS_PS256, TAS_ES256, TAS_EDDSA, TAS_NALGS } tas_alg;

#define TAS_CLIENT_ID "rs"
#define TAS_CLIENT_SECRET "rs-secret"

/* Flags for tas_sign(). */
#define TAS_NO_KID 0x1u      /* leave kid out of the header */
#define TAS_BAD_SIG 0x2u     /* flip a bit of the signature */
#define TAS_RANDOM_KID 0x4u  /* a kid no JWKS has */

/* Makes the keys; with `http`, starts the HTTP server. 0 on success. */
int tas_start(tas **out, int http);
void tas_stop(tas *as);

/* "http://127.0.0.1:PORT" (or "https://as.test.invalid" without HTTP). */
const char *tas_issuer(const tas *as);
/* The JWKS URL (NULL without HTTP). */
const char *tas_jwks_url(const tas *as);
/* The JWKS of every key made so far (malloc'd). */
char *tas_jwks(tas *as);
/* GET /jwks served so far. */
unsigned tas_jwks_fetches(tas *as);
/* POST /introspect served so far. */
unsigned tas_introspections(tas *as);
/* Makes /jwks answer 500 (on != 0) or work again. */
void tas_jwks_fail(tas *as, int on);
/* Makes /jwks and /introspect wait `ms` milliseconds before answering (0: at once). */
void tas_delay(tas *as, unsigned ms);
/* A new signing key for `alg` with a new kid (old keys stay published). */
void tas_rotate(tas *as, tas_alg alg);
/* The kid of the current key for `alg`. */
const char *tas_kid(tas *as, tas_alg alg);
/* JWA name of an algorithm. */
const char *tas_alg_name(tas_alg alg);

/* Claims JSON (malloc'd): iss = the issuer, the given aud, sub and scope
 * (NULL leaves them out), exp = now + exp_in, iat = now, and nbf = now +
 * nbf_in when nbf_in is not 0. `extra` (",\"k\":v" text or NULL) is added. */
char *tas_claims(const tas *as, const char *aud, const char *sub, const char *scope, long exp_in, long nbf_in,
                 const char *extra);

/* A compact JWS of `claims` with the current key for `alg` (malloc'd). */
char *tas_sign(tas *as, tas_alg alg, const char *claims, unsigned flags);
/* The same with a header of your own (JSON text; "alg" is not added). */
char *tas_sign_header(tas *as, tas_alg alg, const char *header, const char *claims, unsigned flags);
/* An unsigned token: {"alg":"none"}. */
char *tas_token_none(const char *claims);
/* HS256 keyed with the PEM of the RSA (RS256) public key, kid of that key:
 * the classic algorithm-confusion forgery. */
char *tas_token_hs256_pubkey(tas *as, const char *claims);
/* Registers an opaque token for /introspect (active, with these claims). */
void tas_add_opaque(tas *as, const char *token, const char *claims);
/* A token obtained over HTTP with POST /issue (malloc'd), or NULL. */
char *tas_http_issue(tas *as, const char *alg, const char *claims);

/* The PEM of the current public key for `alg` (malloc'd). */
char *tas_public_pem(tas *as, tas_alg alg);
/* Checks a token's signature with the current key for `alg` directly with
 * OpenSSL (no parsing, no claims): the lower bound of verification. 1 if good. */
int tas_verify_raw(tas *as, tas_alg alg, const char *token);

/* base64url without padding (malloc'd). */
char *tas_b64url(const void *data, size_t n);

#endif /* MCP_TEST_AS_H */
