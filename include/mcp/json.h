/*
 * libmcp JSON: a strict RFC 8259 parser into arena documents, read access
 * to parsed values, and a streaming writer into a growable buffer.
 *
 * Parsing
 *   mcp_json_parse() copies the input into one arena owned by the document
 *   and decodes it there. Every value of the document is a borrowed view
 *   (`const mcp_json *`) that stays valid until mcp_json_doc_free(). A
 *   document is never modified after parsing, so any number of threads may
 *   read one document at the same time.
 *
 *   What is accepted (RFC 8259, strictly):
 *   - any JSON value at the top level, surrounded by optional whitespace
 *     (space, tab, LF, CR only); nothing else may follow it;
 *   - no comments, trailing commas, single quotes, NaN/Infinity, leading
 *     zeros, leading '+', hex numbers, unescaped control characters in
 *     strings, byte order marks, or invalid UTF-8 (overlong forms,
 *     surrogates encoded in UTF-8 and code points above U+10FFFF are
 *     invalid);
 *   - `\u` escapes of a lone UTF-16 surrogate (which UTF-8 cannot carry)
 *     are decoded as U+FFFD REPLACEMENT CHARACTER, so that a string cut in
 *     the middle of a pair by a JavaScript peer is still readable; a valid
 *     surrogate pair decodes to its code point;
 *   - `\u0000` is kept: strings carry an explicit length and may contain
 *     NUL bytes (they are also NUL-terminated for convenience).
 *
 *   Duplicate object keys: accepted by default (RFC 8259 allows them). Every
 *   member stays visible to iteration in document order, and lookup by key
 *   returns the LAST member with that key, as JavaScript's JSON.parse does,
 *   so libmcp reads a message the way a JavaScript peer does. With
 *   MCP_JSON_REJECT_DUPLICATES a duplicate key is a parse error.
 *
 *   Numbers: an integer literal (no fraction, no exponent) that fits in
 *   int64 is MCP_JSON_INT and exact. Every other number is MCP_JSON_REAL, a
 *   double (correctly rounded; values beyond the double range become
 *   +/-HUGE_VAL, tiny ones 0). The literal's source text is always kept
 *   (mcp_json_num_text()), and the writer splices a parsed number back
 *   exactly as it came.
 *
 *   Limits (mcp_json_parse_opts): input size (default 64 MiB, at most
 *   1 GiB) and nesting depth of arrays and objects (default 256, at most
 *   10000). The parser is iterative: nesting costs heap, never C stack,
 *   and the depth limit bounds it. (The writer's splice and mcp_json_equal
 *   recurse, which the same cap keeps within a thread's stack.)
 *
 * Writing
 *   mcp_jw is a streaming writer: calls append compact JSON text to an
 *   mcp_buf. The writer checks the structure (keys only inside objects,
 *   one value per key, balanced containers) and the input (strings must
 *   be valid UTF-8, doubles finite). The first error is sticky: later
 *   calls do nothing and return it, so a sequence of calls can be checked
 *   once with mcp_jw_finish().
 */
#ifndef MCP_JSON_H
#define MCP_JSON_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed document; owns all its values. */
typedef struct mcp_json_doc mcp_json_doc;
/* A value inside a document (always used as a borrowed `const mcp_json *`). */
typedef struct mcp_json mcp_json;

/* The type of a value. MCP_JSON_NONE is what a NULL value pointer reports. */
typedef enum mcp_json_type {
    MCP_JSON_NONE = 0, /* no value (a NULL pointer: missing key, index out of range) */
    MCP_JSON_NULL,     /* null */
    MCP_JSON_BOOL,     /* true or false */
    MCP_JSON_INT,      /* an integer literal that fits in int64 */
    MCP_JSON_REAL,     /* any other number */
    MCP_JSON_STRING,   /* a string */
    MCP_JSON_ARRAY,    /* an array */
    MCP_JSON_OBJECT    /* an object */
} mcp_json_type;

/* Parse flags. */
#define MCP_JSON_REJECT_DUPLICATES 0x1u /* a repeated key in one object is an error */

#define MCP_JSON_DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define MCP_JSON_DEFAULT_MAX_DEPTH 256u
#define MCP_JSON_LIMIT_MAX_BYTES ((size_t)1 << 30)
#define MCP_JSON_LIMIT_MAX_DEPTH 10000u

/* Parse options; zero-initialise and set what you need. May grow at its end
 * (base.h, "Option structs and the ABI"). */
typedef struct mcp_json_parse_opts {
    size_t max_bytes;   /* largest input accepted; 0 = MCP_JSON_DEFAULT_MAX_BYTES */
    unsigned max_depth; /* deepest nesting of arrays/objects; 0 = MCP_JSON_DEFAULT_MAX_DEPTH */
    unsigned flags;     /* MCP_JSON_* parse flags */
} mcp_json_parse_opts;

/**
 * Parses `len` bytes of JSON text into a new document.
 *
 * The input need not be NUL-terminated and may contain NUL bytes (which
 * are rejected unless escaped inside strings). It is copied; the caller may
 * free it as soon as the call returns.
 *
 * @param out  receives the document on success; untouched on failure.
 * @param text the input; may be NULL only when len is 0.
 * @param len  its length in bytes.
 * mcp_json_parse() is a macro over mcp_json_parse_sized(), which also
 * takes the caller's sizeof(mcp_json_parse_opts) (base.h, "Option structs
 * and the ABI").
 *
 * @param opts limits and flags, or NULL for the defaults.
 * @param opts_size sizeof(mcp_json_parse_opts) as the caller knows it.
 * @param err  optional; on failure receives the status, the byte offset of
 *             the problem, rpc_code -32700 and a message such as
 *             "invalid escape in string".
 * @return MCP_OK;
 *         MCP_ERR_PARSE when the text is not valid JSON (including empty input);
 *         MCP_ERR_LIMIT when the input is larger than max_bytes or nests deeper
 *         than max_depth;
 *         MCP_ERR_INVALID_ARG when out is NULL, text is NULL with len > 0,
 *         an option is above its MCP_JSON_LIMIT_* value, or opts_size is 0
 *         or too small;
 *         MCP_ERR_UNSUPPORTED when opts sets fields this library does not know;
 *         MCP_ERR_NOMEM.
 * Thread-safety: safe; calls on different inputs may run concurrently.
 */
MCP_API mcp_status mcp_json_parse_sized(mcp_json_doc **out, const char *text, size_t len,
                                        const mcp_json_parse_opts *opts, size_t opts_size, mcp_error *err);
#define mcp_json_parse(out, text, len, opts, err) \
    mcp_json_parse_sized((out), (text), (len), (opts), sizeof(mcp_json_parse_opts), (err))

/**
 * Frees a document and every value in it.
 * @param doc may be NULL (no-op).
 */
MCP_API void mcp_json_doc_free(mcp_json_doc *doc);

/**
 * Returns the root value of a document (never NULL for a parsed document).
 * @param doc may be NULL (returns NULL).
 */
MCP_API const mcp_json *mcp_json_doc_root(const mcp_json_doc *doc);

/*
 * Read access. Every accessor accepts NULL or a value of the wrong type and
 * then returns the "empty" answer documented for it, so lookups can be
 * chained: mcp_json_get(mcp_json_get(root, "params"), "name").
 * All are thread-safe on a document no one is freeing.
 */

/** Type of `v`; MCP_JSON_NONE when v is NULL. */
MCP_API mcp_json_type mcp_json_typeof(const mcp_json *v);

/** Name of a type: "none", "null", "boolean", "integer", "number", "string", "array", "object". */
MCP_API const char *mcp_json_type_name(mcp_json_type t);

/** 1 for true, 0 for false or any non-boolean. */
MCP_API int mcp_json_bool(const mcp_json *v);

/** The value of an MCP_JSON_INT; 0 for anything else. */
MCP_API int64_t mcp_json_int(const mcp_json *v);

/** The numeric value of an MCP_JSON_INT or MCP_JSON_REAL as a double; 0.0 otherwise. */
MCP_API double mcp_json_number(const mcp_json *v);

/**
 * Source text of a number (e.g. "1.50e3"), not NUL-terminated.
 * @param len receives the length (may be NULL).
 * @return NULL (and *len = 0) when v is not a number.
 */
MCP_API const char *mcp_json_num_text(const mcp_json *v, size_t *len);

/**
 * Bytes of a string, decoded to UTF-8 and NUL-terminated (they may also
 * contain NUL bytes, hence `len`).
 * @param len receives the length in bytes (may be NULL).
 * @return NULL (and *len = 0) when v is not a string.
 */
MCP_API const char *mcp_json_str(const mcp_json *v, size_t *len);

/**
 * 1 when `v` is a string equal to the NUL-terminated `s`, else 0.
 */
MCP_API int mcp_json_str_eq(const mcp_json *v, const char *s);

/** Number of elements of an array or members of an object; 0 otherwise. */
MCP_API size_t mcp_json_len(const mcp_json *v);

/** Element `i` of an array, or NULL when out of range or not an array. */
MCP_API const mcp_json *mcp_json_at(const mcp_json *arr, size_t i);

/**
 * Member value by key (NUL-terminated). With duplicate keys, the last one.
 * Objects with many members are indexed by a hash table built at parse
 * time, so a lookup costs O(1) on average whatever the object's size.
 * @return NULL when absent or obj is not an object.
 */
MCP_API const mcp_json *mcp_json_get(const mcp_json *obj, const char *key);

/** As mcp_json_get(), with an explicit key length (the key may contain NUL). */
MCP_API const mcp_json *mcp_json_getn(const mcp_json *obj, const char *key, size_t klen);

/**
 * Key of member `i` of an object, in document order (NUL-terminated).
 * @param klen receives its length (may be NULL).
 * @return NULL when out of range or not an object.
 */
MCP_API const char *mcp_json_key_at(const mcp_json *obj, size_t i, size_t *klen);

/** Value of member `i` of an object, in document order; NULL when out of range. */
MCP_API const mcp_json *mcp_json_value_at(const mcp_json *obj, size_t i);

/**
 * Resolves an RFC 6901 JSON Pointer ("" is the root, "/a/0/b~1c" ...)
 * against `root`. `ptr` need not be NUL-terminated.
 * @return the value, or NULL when the pointer is malformed or leads nowhere.
 */
MCP_API const mcp_json *mcp_json_pointer(const mcp_json *root, const char *ptr, size_t len);

/**
 * JSON equality as JSON Schema defines it: same type (integers and reals
 * compare by mathematical value, so 1 equals 1.0), strings byte-equal,
 * arrays element-wise, objects with the same set of keys (by lookup
 * semantics) and equal values.
 * @return 1 when equal, 0 otherwise (also when either is NULL).
 */
MCP_API int mcp_json_equal(const mcp_json *a, const mcp_json *b);

/* ------------------------------------------------------------------------ */
/* Streaming writer                                                          */

#define MCP_JW_MAX_DEPTH 512u

/*
 * Writer state. Caller-allocated; initialise with mcp_jw_init(). The fields
 * are private: read them only through the functions below. Frozen for
 * SONAME 0: its size and layout never change.
 */
typedef struct mcp_jw {
    mcp_buf *buf;            /* output buffer, not owned */
    mcp_status status;       /* first error, sticky */
    unsigned depth;          /* open containers */
    unsigned char after_key; /* a key was written; a value must follow */
    unsigned char done;      /* a complete top-level value was written */
    unsigned char is_obj[MCP_JW_MAX_DEPTH / 8];   /* bit per level: object (1) or array (0) */
    unsigned char has_item[MCP_JW_MAX_DEPTH / 8]; /* bit per level: needs a comma first */
} mcp_jw;

/**
 * Starts writing one JSON value at the end of `buf` (existing bytes are kept).
 * @param w   writer state; must not be NULL.
 * @param buf the output; must not be NULL and must outlive the writer's use.
 * Thread-safety: a writer and its buffer belong to one thread at a time.
 */
MCP_API void mcp_jw_init(mcp_jw *w, mcp_buf *buf);

/*
 * The writing calls. Each returns MCP_OK or the writer's sticky status:
 *   MCP_ERR_STATE       a key outside an object, a value where a key is due,
 *                       an end that does not match, or anything after the
 *                       complete top-level value;
 *   MCP_ERR_LIMIT       nesting deeper than MCP_JW_MAX_DEPTH, or the buffer's max;
 *   MCP_ERR_INVALID_ARG a string that is not valid UTF-8, a non-finite double,
 *                       a NULL pointer with a non-zero length;
 *   MCP_ERR_NOMEM.
 * On error nothing further is written; the buffer may hold a partial value.
 */
MCP_API mcp_status mcp_jw_object_begin(mcp_jw *w);
MCP_API mcp_status mcp_jw_object_end(mcp_jw *w);
MCP_API mcp_status mcp_jw_array_begin(mcp_jw *w);
MCP_API mcp_status mcp_jw_array_end(mcp_jw *w);
/** Writes an object key (NUL-terminated). */
MCP_API mcp_status mcp_jw_key(mcp_jw *w, const char *key);
/** Writes an object key of `len` bytes. */
MCP_API mcp_status mcp_jw_keyn(mcp_jw *w, const char *key, size_t len);
/** Writes a string value (NUL-terminated; NULL writes null). */
MCP_API mcp_status mcp_jw_string(mcp_jw *w, const char *s);
/** Writes a string value of `len` bytes (may contain NUL). */
MCP_API mcp_status mcp_jw_stringn(mcp_jw *w, const char *s, size_t len);
/** Writes `n` bytes as a base64 string (RFC 4648, with padding). */
MCP_API mcp_status mcp_jw_base64(mcp_jw *w, const void *bytes, size_t n);
MCP_API mcp_status mcp_jw_int(mcp_jw *w, int64_t v);
/** Writes the shortest text that reads back as the same double. */
MCP_API mcp_status mcp_jw_double(mcp_jw *w, double v);
MCP_API mcp_status mcp_jw_bool(mcp_jw *w, int v);
MCP_API mcp_status mcp_jw_null(mcp_jw *w);
/**
 * Splices a parsed value (and everything in it). Numbers are written with
 * their source text; strings are re-escaped. NULL writes null.
 */
MCP_API mcp_status mcp_jw_value(mcp_jw *w, const mcp_json *v);
/**
 * Writes pre-encoded JSON text as one value, unchecked: the caller
 * guarantees it is exactly one valid JSON value.
 */
MCP_API mcp_status mcp_jw_raw(mcp_jw *w, const char *json, size_t len);

/**
 * Checks that exactly one complete value was written.
 * @return MCP_OK, the sticky error, or MCP_ERR_STATE when containers are
 *         still open or nothing was written.
 */
MCP_API mcp_status mcp_jw_finish(mcp_jw *w);

/** Returns the writer's sticky status (MCP_OK while no call has failed). */
MCP_API mcp_status mcp_jw_status(const mcp_jw *w);

/**
 * Appends the JSON string literal for `s` (quotes and escapes) to `buf`,
 * outside of any writer.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (invalid UTF-8), MCP_ERR_NOMEM or MCP_ERR_LIMIT.
 */
MCP_API mcp_status mcp_json_quote(mcp_buf *buf, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MCP_JSON_H */
