/*
 * libmcp schema: JSON Schema validation (2020-12 by default, draft-07 when
 * `$schema` names it).
 *
 * A schema is compiled once (mcp_schema_new) into an internal
 * representation: one keyword list per subschema, with every `$ref`
 * resolved to its target, every `pattern` compiled and property names
 * indexed. It is then used for any number of validations, from any number
 * of threads at the same time.
 *
 * What is supported
 *   - 2020-12: the core, applicator, unevaluated, validation,
 *     format-annotation and content (annotation only) vocabularies;
 *     `$id` (embedded resources, RFC 3986 base URI resolution), `$anchor`,
 *     `$dynamicRef`/`$dynamicAnchor`, `$defs`, and the draft-07
 *     `dependencies` keyword for compatibility.
 *   - draft-07 (`$schema` "http://json-schema.org/draft-07/schema", with or
 *     without the trailing '#'): `definitions`, `dependencies`, `items` as
 *     an array plus `additionalItems`, and `$ref` overriding its siblings.
 *   - A `$schema` naming a meta-schema that was added to the registry and
 *     is itself a 2020-12 schema: its `$vocabulary` selects the vocabularies
 *     (an unknown vocabulary marked required is MCP_ERR_UNSUPPORTED).
 *   - Any other `$schema` is MCP_ERR_UNSUPPORTED.
 *
 * References
 *   `$ref` is resolved against the schema itself, the documents added to the
 *   registry, and nothing else: nothing is ever fetched. An unresolvable
 *   reference is a compile error (MCP_ERR_SCHEMA naming the reference), so
 *   a schema never silently accepts what it cannot check. Recursive schemas
 *   (`"$ref": "#"`) are fine; validation is bounded by step and depth limits.
 *
 * Numbers
 *   Comparisons (`minimum`, ...) and `multipleOf` are exact on the decimal
 *   text of the numbers, so 0.3 is a multiple of 0.1 and 19.99 of 0.01.
 *
 * Strings
 *   Lengths count Unicode code points. `pattern` uses PCRE2 in UTF mode with
 *   options that approximate ECMA-262 (`\d`, `\w`, `\b` are ASCII, `\s`
 *   includes the Unicode spaces, `$` matches only at the very end, `[^]`
 *   matches any character). A pattern's backtracking is capped; a match
 *   that hits the cap makes the validation fail with MCP_ERR_LIMIT.
 *
 * Format
 *   `format` is an annotation by default (never rejects). With
 *   MCP_SCHEMA_FORMAT_ASSERT it checks: date-time, date, time, duration,
 *   email, idn-email, hostname, idn-hostname (label syntax only: no IDNA2008
 *   tables), ipv4, ipv6, uri, uri-reference, iri, iri-reference,
 *   uri-template, uuid, regex (ECMA-262 as PCRE2 compiles it), json-pointer,
 *   relative-json-pointer. Unknown formats always pass.
 *
 * Violations
 *   Each violation has an instance path (JSON Pointer into the validated
 *   value), a keyword path (JSON Pointer of the failing keyword along the
 *   evaluation path through the schema, `$ref` included, e.g.
 *   "/properties/caseId/type" or "/properties/party/$ref/required") and a
 *   message that starts with the pointer of the offending value, e.g.
 *   "/caseId: required property missing".
 *
 * The header compiles as C99 and as C++.
 */
#ifndef MCP_SCHEMA_H
#define MCP_SCHEMA_H

#include "base.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled schema (immutable after mcp_schema_new). */
typedef struct mcp_schema mcp_schema;
/* A set of extra schema documents, addressed by URI, that `$ref` may use. */
typedef struct mcp_schema_registry mcp_schema_registry;

/* Dialects, for mcp_schema_opts.default_dialect. */
#define MCP_SCHEMA_DIALECT_2020_12 0u /* JSON Schema 2020-12 (the default) */
#define MCP_SCHEMA_DIALECT_DRAFT7 1u  /* JSON Schema draft-07 */

/* Compile flags (mcp_schema_opts.flags). */
#define MCP_SCHEMA_FORMAT_ASSERT 0x1u /* `format` rejects invalid values */

/* Validation flags (mcp_schema_validate). */
#define MCP_SCHEMA_FIRST_ERROR 0x1u /* stop at the first violation */

/* Defaults and hard caps of the limits in mcp_schema_opts. */
#define MCP_SCHEMA_DEFAULT_MAX_DEPTH 128u            /* subschema nesting in a document */
#define MCP_SCHEMA_DEFAULT_MAX_NODES 10000u          /* subschemas per compiled schema */
#define MCP_SCHEMA_DEFAULT_MAX_STEPS 1000000u        /* validation steps per call */
#define MCP_SCHEMA_DEFAULT_MAX_EVAL_DEPTH 512u       /* nested subschema evaluations */
#define MCP_SCHEMA_DEFAULT_MAX_ERRORS 100u           /* violations kept per call */
#define MCP_SCHEMA_LIMIT_MAX_DEPTH 4096u             /* largest max_depth accepted */
#define MCP_SCHEMA_LIMIT_MAX_EVAL_DEPTH 20000u       /* largest max_eval_depth accepted */

/*
 * Compile options; zero-initialise and set what you need. A zero limit
 * means its default. May grow at its end (base.h, "Option structs and the
 * ABI").
 */
typedef struct mcp_schema_opts {
    const mcp_schema_registry *registry; /* documents `$ref` may use, or NULL; read only
                                            during mcp_schema_new, not kept */
    const char *base_uri;      /* base URI of the root schema when it has no `$id`
                                  (NUL-terminated, copied), or NULL for none */
    unsigned default_dialect;  /* MCP_SCHEMA_DIALECT_*, used when `$schema` is absent */
    unsigned flags;            /* MCP_SCHEMA_* compile flags */
    unsigned max_depth;        /* deepest subschema nesting in a document */
    size_t max_nodes;          /* most subschemas compiled (all documents together) */
    uint64_t max_steps;        /* most subschema evaluations per validation call */
    unsigned max_eval_depth;   /* deepest nesting of evaluations per validation call;
                                  each level uses a few hundred bytes of C stack */
    size_t max_errors;         /* most violations collected per validation call */
} mcp_schema_opts;

/* One violation. The three strings share one allocation owned by the result.
 * Frozen for SONAME 0: callers index arrays of it, so its size and layout
 * never change. */
typedef struct mcp_schema_error {
    char *instance_path;  /* JSON Pointer of the offending value, "" for the root */
    char *keyword_path;   /* JSON Pointer of the failing keyword through the schema */
    char *message;        /* human-readable, starts with the offending value's pointer */
    const char *keyword;  /* the failing keyword, e.g. "required" (static string) */
} mcp_schema_error;

/* The violations of one validation; free with mcp_schema_result_free().
 * Frozen for SONAME 0: its size and layout never change. */
typedef struct mcp_schema_result {
    mcp_schema_error *errors; /* `count` violations, in evaluation order */
    size_t count;             /* number of violations (>= 1) */
    int truncated;            /* 1 when more violations existed than max_errors */
} mcp_schema_result;

/**
 * Creates an empty registry.
 *
 * @param out receives the registry; untouched on failure. Must not be NULL.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (out is NULL) or MCP_ERR_NOMEM.
 * Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_schema_registry_new(mcp_schema_registry **out);

/**
 * Adds a schema document under an absolute URI (a fragment, if any, is
 * ignored; "http://x/s.json" and "http://x/s.json#" are the same). The
 * document is deep-copied: `doc` may be freed right after the call. It is
 * not checked here; it is compiled (and its `$schema` honoured, its
 * embedded `$id`s indexed) only when a schema being compiled refers to it.
 *
 * @param reg the registry; must not be NULL.
 * @param uri NUL-terminated URI; must not be NULL or empty.
 * @param doc the schema (an object or a boolean); must not be NULL.
 * @param err optional detail on failure.
 * @return MCP_OK;
 *         MCP_ERR_INVALID_ARG when an argument is NULL/empty;
 *         MCP_ERR_TYPE when doc is neither an object nor a boolean;
 *         MCP_ERR_EXISTS when the URI is already registered;
 *         MCP_ERR_LIMIT when doc nests deeper than the JSON writer allows;
 *         MCP_ERR_NOMEM.
 * On failure the registry is unchanged.
 * Thread-safety: not safe concurrently with any other use of the same
 * registry; concurrent mcp_schema_new calls that only read it are safe.
 */
MCP_API mcp_status mcp_schema_registry_add(mcp_schema_registry *reg, const char *uri,
                                           const mcp_json *doc, mcp_error *err);

/**
 * Frees a registry. Schemas compiled with it stay valid (they copied what
 * they use).
 *
 * @param reg may be NULL (no-op).
 * Thread-safety: no other thread may use the registry.
 */
MCP_API void mcp_schema_registry_free(mcp_schema_registry *reg);

/**
 * Compiles a schema.
 *
 * The schema is deep-copied: `schema` (and its document, and the registry)
 * may be freed as soon as the call returns.
 *
 * mcp_schema_new() is a macro over mcp_schema_new_sized(), which also
 * takes the caller's sizeof(mcp_schema_opts) (base.h, "Option structs and
 * the ABI").
 *
 * @param out    receives the compiled schema; untouched on failure. Must not be NULL.
 * @param schema the schema value (an object or a boolean); must not be NULL.
 * @param opts   options, or NULL for the defaults.
 * @param opts_size sizeof(mcp_schema_opts) as the caller knows it.
 * @param err    optional; on failure receives a message naming the place
 *               in the schema (err->pointer holds its JSON Pointer when it
 *               is in the root document).
 * @return MCP_OK;
 *         MCP_ERR_INVALID_ARG when out or schema is NULL, an option is
 *         out of range, or opts_size is 0 or too small;
 *         MCP_ERR_SCHEMA when the schema is malformed (a keyword with a value
 *         of the wrong kind, an invalid regular expression) or a `$ref` cannot
 *         be resolved;
 *         MCP_ERR_UNSUPPORTED when `$schema` names a dialect other than
 *         2020-12 or draft-07 (or an unknown required vocabulary), or opts
 *         sets fields this library does not know;
 *         MCP_ERR_LIMIT when the schema nests deeper than max_depth or has
 *         more than max_nodes subschemas;
 *         MCP_ERR_NOMEM.
 * Thread-safety: safe; calls may run concurrently (sharing a registry no
 * one modifies).
 */
MCP_API mcp_status mcp_schema_new_sized(mcp_schema **out, const mcp_json *schema,
                                        const mcp_schema_opts *opts, size_t opts_size, mcp_error *err);
#define mcp_schema_new(out, schema, opts, err) \
    mcp_schema_new_sized((out), (schema), (opts), sizeof(mcp_schema_opts), (err))

/**
 * Frees a compiled schema.
 *
 * @param s may be NULL (no-op). No validation may be running on it.
 * Thread-safety: safe on distinct objects.
 */
MCP_API void mcp_schema_free(mcp_schema *s);

/**
 * Validates a value and collects the violations.
 *
 * @param s        the compiled schema; must not be NULL.
 * @param instance the value to check (borrowed); NULL is treated as a
 *                 missing value and gives MCP_ERR_INVALID_ARG.
 * @param flags    MCP_SCHEMA_FIRST_ERROR to stop at the first violation, or 0.
 * @param out      when not NULL, receives NULL if the value is valid and the
 *                 list of violations (free with mcp_schema_result_free) when
 *                 it is not. When NULL, nothing is allocated for the report
 *                 and the first violation goes to `err` only.
 * @param err      optional; when the value is invalid it receives the first
 *                 violation (pointer = its instance path, message = its
 *                 message); on other failures the reason.
 * @return MCP_OK when the value is valid;
 *         MCP_ERR_INVALID when it is not (then *out is set if out != NULL);
 *         MCP_ERR_LIMIT when validation took more than max_steps steps,
 *         nested deeper than max_eval_depth, or a pattern hit its
 *         backtracking cap;
 *         MCP_ERR_INVALID_ARG when s or instance is NULL;
 *         MCP_ERR_NOMEM.
 *         On every status other than MCP_ERR_INVALID, *out is NULL.
 * Thread-safety: safe; any number of threads may validate with one schema.
 */
MCP_API mcp_status mcp_schema_validate(const mcp_schema *s, const mcp_json *instance,
                                       unsigned flags, mcp_schema_result **out,
                                       mcp_error *err);

/**
 * Yes/no validation: the fast path for callers that only need the answer.
 * It allocates nothing for valid values (except for very large objects or
 * arrays under `unevaluated*` keywords); for an invalid value it fills
 * `err` with the first violation, still without allocating.
 *
 * @param s        the compiled schema; must not be NULL.
 * @param instance the value to check (borrowed); must not be NULL.
 * @param err      optional detail (see mcp_schema_validate).
 * @return MCP_OK (valid), MCP_ERR_INVALID (not valid), MCP_ERR_LIMIT,
 *         MCP_ERR_INVALID_ARG or MCP_ERR_NOMEM, as mcp_schema_validate.
 * Thread-safety: safe; any number of threads may validate with one schema.
 */
MCP_API mcp_status mcp_schema_check(const mcp_schema *s, const mcp_json *instance,
                                    mcp_error *err);

/**
 * Frees a validation result and all its strings.
 *
 * @param r may be NULL (no-op).
 * Thread-safety: safe on distinct objects.
 */
MCP_API void mcp_schema_result_free(mcp_schema_result *r);

/**
 * Writes the violations as a JSON array of objects
 * `{"instancePath": "...", "keywordPath": "...", "keyword": "...",
 *   "message": "..."}` — the shape libmcp puts in a tool result's `_meta`
 * or an error's `data`.
 *
 * @param w the writer, positioned where a value may go; must not be NULL.
 * @param r the result, or NULL (writes an empty array).
 * @return MCP_OK or the writer's sticky error (see mcp_jw_*).
 * Thread-safety: safe on distinct writers; `r` is only read.
 */
MCP_API mcp_status mcp_schema_result_write(mcp_jw *w, const mcp_schema_result *r);

#ifdef __cplusplus
}
#endif

#endif /* MCP_SCHEMA_H */
