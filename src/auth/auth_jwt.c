/*
 * JOSE for the resource server: JWK sets (RFC 7517: RSA n/e, EC P-256
 * x/y, OKP Ed25519 x) into OpenSSL keys, compact JWS parsing (RFC 7515)
 * and signature checks with OpenSSL 3 EVP: RS256 (PKCS#1 v1.5), PS256
 * (PSS, salt as long as the hash), ES256 (the raw r||s of JWA turned into
 * DER for OpenSSL) and EdDSA (Ed25519). Every base64url member and part
 * is decoded strictly (MCP__BASE64_CANONICAL: one text per value).
 *
 * Everything here reads bytes a peer controls (the token) or an issuer
 * serves (the JWKS), so every length is checked before it is used and
 * every JSON parse runs with tight limits and duplicate names refused (a
 * JSON text whose readers disagree on a claim is an attack, not a token).
 */
#include "auth/auth_internal.h"
#include "util/util.h"
#include "util/crypto_api.h"

#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------ */
/* Algorithms                                                                */

static const struct {
    const char *name; /* JWA name */
    unsigned bit;     /* MCP__ALG_* */
} g_algs[] = {
    {"RS256", MCP__ALG_RS256},
    {"PS256", MCP__ALG_PS256},
    {"ES256", MCP__ALG_ES256},
    {"EdDSA", MCP__ALG_EDDSA},
};

unsigned mcp__alg_from_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof g_algs / sizeof g_algs[0]; i++)
        if (strlen(g_algs[i].name) == len && memcmp(g_algs[i].name, name, len) == 0)
            return g_algs[i].bit;
    return 0;
}

const char *mcp__alg_name(unsigned alg)
{
    for (size_t i = 0; i < sizeof g_algs / sizeof g_algs[0]; i++)
        if (g_algs[i].bit == alg)
            return g_algs[i].name;
    return "?";
}

/* ------------------------------------------------------------------------ */
/* JWK sets                                                                  */

static const mcp_json_parse_opts g_jwks_popts = {0, 16, MCP_JSON_REJECT_DUPLICATES};

/* Decodes a base64url member into `out`; 0 when absent or invalid. */
static int member_bytes(const mcp_json *key, const char *name, unsigned char *out, size_t cap, size_t *n)
{
    size_t sl;
    const char *s = mcp_json_str(mcp_json_get(key, name), &sl);
    return s && mcp__base64url_decode(s, sl, out, cap, n, MCP__BASE64_CANONICAL);
}

static EVP_PKEY *rsa_key(const unsigned char *n, size_t nl, const unsigned char *e, size_t el)
{
    EVP_PKEY *pkey = NULL;
    BIGNUM *bn = BN_bin2bn(n, (int)nl, NULL), *be = BN_bin2bn(e, (int)el, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    if (bn && be && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) && (params = OSSL_PARAM_BLD_to_param(bld)) &&
        (ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) && EVP_PKEY_fromdata_init(ctx) == 1 &&
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    return pkey;
}

static EVP_PKEY *ec_key(const unsigned char *x, const unsigned char *y)
{
    unsigned char pub[65];
    pub[0] = 0x04; /* uncompressed point */
    memcpy(pub + 1, x, 32);
    memcpy(pub + 33, y, 32);
    char group[] = "prime256v1";
    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub);
    params[2] = OSSL_PARAM_construct_end();
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    if (pkey) {
        /* The point must lie on the curve: an invalid-curve point would leak nothing
         * here (we only verify), but a key that cannot be valid is a broken JWKS. */
        EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        int ok = chk && EVP_PKEY_public_check(chk) == 1;
        EVP_PKEY_CTX_free(chk);
        if (!ok) {
            EVP_PKEY_free(pkey);
            pkey = NULL;
        }
    }
    return pkey;
}

/*
 * One key of a JWKS. Returns 1 and fills `k` for a usable key, 0 to skip
 * it silently (a type, curve or use this verifier has no business with),
 * -1 to skip it with `*why` set (a key that should work but is broken),
 * -2 when out of memory.
 */
static int parse_key(const mcp_json *key, unsigned algs, mcp__jwk *k, const char **why)
{
    if (mcp_json_typeof(key) != MCP_JSON_OBJECT) {
        *why = "a JWKS entry is not an object";
        return -1;
    }
    const mcp_json *kty = mcp_json_get(key, "kty");
    const mcp_json *use = mcp_json_get(key, "use");
    const mcp_json *ops = mcp_json_get(key, "key_ops");
    const mcp_json *alg = mcp_json_get(key, "alg");
    const mcp_json *kid = mcp_json_get(key, "kid");
    if (mcp_json_typeof(kty) != MCP_JSON_STRING) {
        *why = "a JWK has no kty";
        return -1;
    }
    if (mcp_json_str_eq(kty, "oct"))
        return 0; /* a shared secret: never a verification key here */
    if (use && !mcp_json_str_eq(use, "sig"))
        return 0; /* an encryption key */
    if (ops) {
        int verify = 0;
        for (size_t i = 0; i < mcp_json_len(ops); i++)
            verify |= mcp_json_str_eq(mcp_json_at(ops, i), "verify");
        if (!verify)
            return 0;
    }
    static const char *const private_members[] = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"};
    for (size_t i = 0; i < sizeof private_members / sizeof private_members[0]; i++)
        if (mcp_json_get(key, private_members[i])) {
            *why = "a JWK carries private key material (publish only public keys)";
            return -1;
        }
    unsigned allowed = algs;
    if (alg) {
        size_t al;
        const char *an = mcp_json_str(alg, &al);
        unsigned bit = an ? mcp__alg_from_name(an, al) : 0;
        if (!bit)
            return 0; /* a key for an algorithm this verifier does not use */
        allowed &= bit;
    }
    size_t kl = 0;
    const char *ks = NULL;
    if (kid) {
        ks = mcp_json_str(kid, &kl);
        if (!ks || kl > MCP__JWK_MAX_KID || memchr(ks, '\0', kl)) {
            *why = "a JWK has a kid that is not a short string";
            return -1;
        }
    }
    EVP_PKEY *pkey = NULL;
    if (mcp_json_str_eq(kty, "RSA")) {
        allowed &= MCP__ALG_RS256 | MCP__ALG_PS256;
        if (!allowed)
            return 0;
        unsigned char n[1024], e[8];
        size_t nl, el;
        if (!member_bytes(key, "n", n, sizeof n, &nl) || !member_bytes(key, "e", e, sizeof e, &el)) {
            *why = "an RSA JWK has a missing or malformed n or e (base64url, at most 8192 bits)";
            return -1;
        }
        /* JWA: minimal octets, no leading zero; RFC 7518 section 3.3: at least 2048 bits. */
        if (nl < 256 || n[0] == 0 || el == 0 || e[0] == 0) {
            *why = "an RSA JWK is under 2048 bits or not minimally encoded";
            return -1;
        }
        pkey = rsa_key(n, nl, e, el);
    } else if (mcp_json_str_eq(kty, "EC")) {
        allowed &= MCP__ALG_ES256;
        if (!allowed || !mcp_json_str_eq(mcp_json_get(key, "crv"), "P-256"))
            return 0;
        unsigned char x[32], y[32];
        size_t xl, yl;
        if (!member_bytes(key, "x", x, sizeof x, &xl) || !member_bytes(key, "y", y, sizeof y, &yl) || xl != 32 ||
            yl != 32) {
            *why = "a P-256 JWK needs x and y of exactly 32 bytes (base64url)";
            return -1;
        }
        pkey = ec_key(x, y);
        if (!pkey) {
            ERR_clear_error();
            *why = "a P-256 JWK is not a point on the curve";
            return -1;
        }
    } else if (mcp_json_str_eq(kty, "OKP")) {
        allowed &= MCP__ALG_EDDSA;
        if (!allowed || !mcp_json_str_eq(mcp_json_get(key, "crv"), "Ed25519"))
            return 0;
        unsigned char x[32];
        size_t xl;
        if (!member_bytes(key, "x", x, sizeof x, &xl) || xl != 32) {
            *why = "an Ed25519 JWK needs x of exactly 32 bytes (base64url)";
            return -1;
        }
        pkey = EVP_PKEY_new_raw_public_key_ex(NULL, "ED25519", NULL, x, 32);
    } else {
        return 0; /* a key type this verifier does not know */
    }
    if (!pkey) {
        ERR_clear_error();
        *why = "a JWK was refused by OpenSSL";
        return -1;
    }
    k->kid = NULL;
    if (ks && !(k->kid = mcp__strndup(ks, kl))) {
        EVP_PKEY_free(pkey);
        return -2;
    }
    k->algs = allowed;
    k->pkey = pkey;
    return 1;
}

void mcp__keyset_release(mcp__keyset *ks)
{
    if (!ks || atomic_fetch_sub(&ks->refs, 1) != 1)
        return;
    for (size_t i = 0; i < ks->n; i++) {
        mcp_free(ks->keys[i].kid);
        EVP_PKEY_free(ks->keys[i].pkey);
    }
    mcp_free(ks->keys);
    mcp_free(ks);
}

mcp_status mcp__jwks_parse(const char *text, size_t len, unsigned algs, size_t max_bytes, unsigned max_keys,
                           mcp__keyset **out, mcp_error *err)
{
    if (len > max_bytes)
        return mcp__fail(err, MCP_ERR_LIMIT, 0, 0, "the JWKS is larger than %zu bytes", max_bytes);
    mcp_json_doc *doc;
    mcp_error perr;
    mcp_status st = mcp_json_parse(&doc, text, len, &g_jwks_popts, &perr);
    if (st == MCP_ERR_NOMEM)
        return mcp__fail(err, st, 0, 0, "out of memory");
    if (st)
        return mcp__fail(err, MCP_ERR_PARSE, 0, perr.offset, "the JWKS is not JSON: %s", perr.message);
    const mcp_json *keys = mcp_json_get(mcp_json_doc_root(doc), "keys");
    if (mcp_json_typeof(keys) != MCP_JSON_ARRAY) {
        mcp_json_doc_free(doc);
        return mcp__fail(err, MCP_ERR_INVALID, 0, 0, "not a JWKS: no \"keys\" array");
    }
    size_t total = mcp_json_len(keys);
    size_t cap = total < max_keys ? total : max_keys;
    mcp__keyset *ks = mcp__calloc(1, sizeof *ks);
    if (!ks || (cap && !(ks->keys = mcp__calloc(cap, sizeof *ks->keys)))) {
        mcp_free(ks);
        mcp_json_doc_free(doc);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    atomic_init(&ks->refs, 1);
    const char *why = NULL;
    for (size_t i = 0; i < total && ks->n < cap; i++) {
        const char *w = NULL;
        int r = parse_key(mcp_json_at(keys, i), algs, &ks->keys[ks->n], &w);
        if (r == 1)
            ks->n++;
        else if (r == -1 && !why)
            why = w;
        else if (r == -2) {
            mcp__keyset_release(ks);
            mcp_json_doc_free(doc);
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        }
    }
    mcp_json_doc_free(doc);
    if (ks->n == 0) {
        mcp__keyset_release(ks);
        if (*mcp__crypto_why()) /* every key failed for want of libcrypto: say so */
            why = mcp__crypto_why();
        return mcp__fail(err, MCP_ERR_INVALID, 0, 0, "the JWKS has no usable signing key%s%s", why ? ": " : "",
                         why ? why : " (RSA, EC P-256 or Ed25519 for the allowed algorithms)");
    }
    if (!EVP_Digest(text, len, ks->digest, NULL, EVP_sha256(), NULL))
        memset(ks->digest, 0, sizeof ks->digest);
    *out = ks;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Compact JWS                                                               */

static const mcp_json_parse_opts g_header_popts = {0, 8, MCP_JSON_REJECT_DUPLICATES};
static const mcp_json_parse_opts g_claims_popts = {0, 32, MCP_JSON_REJECT_DUPLICATES};

int mcp__jwt_shaped(const char *token, size_t len)
{
    size_t dots = 0;
    for (size_t i = 0; i < len; i++)
        dots += token[i] == '.';
    return dots == 2;
}

void mcp__jwt_cleanup(mcp__jwt *j)
{
    if (!j)
        return;
    mcp_json_doc_free(j->header);
    mcp_json_doc_free(j->claims);
    j->header = j->claims = NULL;
}

static mcp_status bad(mcp__jwt *j, mcp_error *err, const char *why)
{
    mcp__jwt_cleanup(j);
    return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "%s", why);
}

/* Parses a base64url part into a JSON document that must be an object. */
static mcp_status part_json(const char *b64, size_t n, const mcp_json_parse_opts *po, mcp_json_doc **out)
{
    size_t cap = n / 4 * 3 + 3;
    unsigned char *raw = mcp_malloc(cap);
    if (!raw)
        return MCP_ERR_NOMEM;
    size_t rl;
    mcp_status st = MCP_ERR_AUTH;
    if (mcp__base64url_decode(b64, n, raw, cap, &rl, MCP__BASE64_CANONICAL)) {
        st = mcp_json_parse(out, (const char *)raw, rl, po, NULL);
        if (st == MCP_OK && mcp_json_typeof(mcp_json_doc_root(*out)) != MCP_JSON_OBJECT) {
            mcp_json_doc_free(*out);
            *out = NULL;
            st = MCP_ERR_AUTH;
        } else if (st && st != MCP_ERR_NOMEM) {
            st = MCP_ERR_AUTH;
        }
    }
    mcp_free(raw);
    return st;
}

mcp_status mcp__jwt_parse(const char *t, size_t len, unsigned algs, mcp__jwt *j, mcp_error *err)
{
    j->alg = 0;
    j->kid = NULL;
    j->header = j->claims = NULL;
    j->signing_input = t;
    j->signing_len = 0;
    j->sig_len = 0;
    j->at_jwt = 0;
    const char *d1 = memchr(t, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - t)) : NULL;
    if (!d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - t)))
        return bad(j, err, "malformed token: a JWT has three dot-separated parts (a JWE has five and is not accepted)");
    size_t hl = (size_t)(d1 - t), pl = (size_t)(d2 - d1 - 1), sl = len - (size_t)(d2 + 1 - t);
    if (hl == 0 || pl == 0)
        return bad(j, err, "malformed token: empty header or payload");
    if (hl > MCP__JWT_MAX_HEADER)
        return bad(j, err, "malformed token: the JOSE header is too long");
    mcp_status st = part_json(t, hl, &g_header_popts, &j->header);
    if (st == MCP_ERR_NOMEM)
        return mcp__fail(err, st, 0, 0, "out of memory");
    if (st)
        return bad(j, err, "malformed token: the header is not base64url-encoded JSON object");
    const mcp_json *h = mcp_json_doc_root(j->header);
    size_t al;
    const char *an = mcp_json_str(mcp_json_get(h, "alg"), &al);
    if (!an)
        return bad(j, err, "malformed token: the header has no alg");
    if (al == 4 && strncasecmp(an, "none", 4) == 0)
        return bad(j, err, "unsigned tokens (alg none) are never accepted");
    if (al >= 2 && (an[0] == 'H' || an[0] == 'h') && (an[1] == 'S' || an[1] == 's'))
        return bad(j, err, "HMAC-signed tokens (HS256, HS384, HS512) are never accepted");
    j->alg = mcp__alg_from_name(an, al);
    if (!j->alg)
        return bad(j, err, "unsupported signature algorithm (RS256, PS256, ES256 and EdDSA are supported)");
    if (!(j->alg & algs))
        return bad(j, err, "the token's signature algorithm is not allowed here");
    if (mcp_json_get(h, "crit"))
        return bad(j, err, "the token has critical header parameters (crit) this server does not understand");
    if (mcp_json_get(h, "enc") || mcp_json_get(h, "zip"))
        return bad(j, err, "encrypted tokens (JWE) are not accepted");
    const mcp_json *typ = mcp_json_get(h, "typ");
    if (typ) {
        size_t tl;
        const char *ts = mcp_json_str(typ, &tl);
        if (!ts || !((tl == 3 && strncasecmp(ts, "JWT", 3) == 0) || (tl == 6 && strncasecmp(ts, "at+jwt", 6) == 0) ||
                     (tl == 18 && strncasecmp(ts, "application/at+jwt", 18) == 0)))
            return bad(j, err, "the token's typ is not JWT or at+jwt");
        j->at_jwt = tl != 3;
    }
    const mcp_json *kid = mcp_json_get(h, "kid");
    if (kid) {
        size_t kl;
        j->kid = mcp_json_str(kid, &kl);
        if (!j->kid || kl > MCP__JWK_MAX_KID || memchr(j->kid, '\0', kl))
            return bad(j, err, "malformed token: kid is not a short string");
    }
    if (sl == 0)
        return bad(j, err, "the token is not signed");
    if (!mcp__base64url_decode(d2 + 1, sl, j->sig, sizeof j->sig, &j->sig_len, MCP__BASE64_CANONICAL))
        return bad(j, err, "malformed token: the signature is not base64url or too long");
    st = part_json(d1 + 1, pl, &g_claims_popts, &j->claims);
    if (st == MCP_ERR_NOMEM) {
        mcp__jwt_cleanup(j);
        return mcp__fail(err, st, 0, 0, "out of memory");
    }
    if (st)
        return bad(j, err, "malformed token: the payload is not a base64url-encoded JSON object");
    j->signing_len = (size_t)(d2 - t);
    return MCP_OK;
}

/* JWA's ES256 signature is r||s, 32 bytes each; OpenSSL wants DER. */
static size_t der_integer(unsigned char *o, const unsigned char *v, size_t n)
{
    while (n > 1 && v[0] == 0) {
        v++;
        n--;
    }
    size_t pad = (v[0] & 0x80) ? 1 : 0;
    o[0] = 0x02;
    o[1] = (unsigned char)(n + pad);
    if (pad)
        o[2] = 0;
    memcpy(o + 2 + pad, v, n);
    return 2 + pad + n;
}

static size_t es256_der(const unsigned char *rs, unsigned char *out)
{
    unsigned char body[70];
    size_t n = der_integer(body, rs, 32);
    n += der_integer(body + n, rs + 32, 32);
    out[0] = 0x30;
    out[1] = (unsigned char)n; /* at most 70: the short form */
    memcpy(out + 2, body, n);
    return n + 2;
}

int mcp__jwt_verify(const mcp__jwt *j, const mcp__jwk *k)
{
    if (!(k->algs & j->alg))
        return 0;
    EVP_PKEY *pkey = k->pkey;
    const unsigned char *sig = j->sig;
    size_t sl = j->sig_len;
    unsigned char der[72];
    const char *md = "SHA256";
    switch (j->alg) {
    case MCP__ALG_RS256:
    case MCP__ALG_PS256:
        if (sl != (size_t)EVP_PKEY_get_size(pkey))
            return 0;
        break;
    case MCP__ALG_ES256:
        if (sl != 64)
            return 0;
        sl = es256_der(sig, der);
        sig = der;
        break;
    case MCP__ALG_EDDSA:
        if (sl != 64)
            return 0;
        md = NULL; /* Ed25519 hashes internally (PureEdDSA) */
        break;
    default:
        return 0;
    }
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    int ok = m && EVP_DigestVerifyInit_ex(m, &pc, md, NULL, NULL, pkey, NULL) == 1;
    if (ok && j->alg == MCP__ALG_PS256)
        ok = EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST) == 1;
    ok = ok && EVP_DigestVerify(m, sig, sl, (const unsigned char *)j->signing_input, j->signing_len) == 1;
    EVP_MD_CTX_free(m);
    if (!ok)
        ERR_clear_error(); /* a failed check leaves reasons on this thread's queue */
    return ok;
}
