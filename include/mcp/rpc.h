/*
 * libmcp JSON-RPC 2.0: decoding one frame into a request, notification or
 * response, and encoding messages with the streaming JSON writer.
 *
 * MCP sends exactly one JSON-RPC message per frame. Batches were removed
 * from MCP in 2025-06-18 and are answered with -32600 here. Request ids
 * must be a string or an integer (MCP forbids null ids; fractional,
 * boolean, object and array ids are invalid JSON-RPC).
 */
#ifndef MCP_RPC_H
#define MCP_RPC_H

#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* JSON-RPC and MCP error codes. */
#define MCP_RPC_PARSE_ERROR (-32700)            /* bytes are not JSON */
#define MCP_RPC_INVALID_REQUEST (-32600)        /* JSON that is not a valid message */
#define MCP_RPC_METHOD_NOT_FOUND (-32601)       /* unknown method */
#define MCP_RPC_INVALID_PARAMS (-32602)         /* bad params, unknown tool, ... */
#define MCP_RPC_INTERNAL_ERROR (-32603)         /* server failure */
#define MCP_RPC_RESOURCE_NOT_FOUND (-32002)     /* legacy era: unknown resource URI */
#define MCP_RPC_URL_ELICITATION_REQUIRED (-32042) /* 2025-11-25: URL elicitation needed */
#define MCP_RPC_HEADER_MISMATCH (-32020)        /* 2026-07-28: HTTP header disagrees with body */
#define MCP_RPC_MISSING_CAPABILITY (-32021)     /* 2026-07-28: client lacks a required capability */
#define MCP_RPC_UNSUPPORTED_VERSION (-32022)    /* 2026-07-28: protocol version not supported */

/* What a decoded frame is. */
typedef enum mcp_rpc_kind {
    MCP_RPC_REQUEST = 1,  /* method + id: expects a response */
    MCP_RPC_NOTIFICATION, /* method, no id */
    MCP_RPC_RESULT,       /* response carrying `result` */
    MCP_RPC_ERROR         /* response carrying `error` */
} mcp_rpc_kind;

/* Kinds of request id. */
typedef enum mcp_rpc_id_type {
    MCP_RPC_ID_NONE = 0, /* absent (notifications) */
    MCP_RPC_ID_NULL,     /* null: only in error responses to undecodable requests */
    MCP_RPC_ID_INT,      /* an integer */
    MCP_RPC_ID_STRING    /* a string */
} mcp_rpc_id_type;

/* A request id. `str` is borrowed from the message's document. Frozen for
 * SONAME 0: callers allocate it, so its size and layout never change. */
typedef struct mcp_rpc_id {
    mcp_rpc_id_type type; /* which of the fields below is meaningful */
    int64_t num;          /* MCP_RPC_ID_INT: the value */
    const char *str;      /* MCP_RPC_ID_STRING: the bytes (NUL-terminated) */
    size_t len;           /* MCP_RPC_ID_STRING: their length */
} mcp_rpc_id;

/*
 * A decoded message. Every pointer borrows from `doc` (or from the caller's
 * document for mcp_rpc_decode_json()) and is valid until
 * mcp_rpc_msg_cleanup(). Frozen for SONAME 0: the caller allocates it and
 * the library fills it, so its size and layout never change.
 */
typedef struct mcp_rpc_msg {
    mcp_rpc_kind kind;            /* request, notification, result or error */
    mcp_rpc_id id;                /* requests and responses */
    const char *method;           /* requests and notifications; NUL-terminated */
    size_t method_len;            /* its length */
    const mcp_json *params;       /* requests/notifications: object or array, NULL if absent */
    const mcp_json *result;       /* MCP_RPC_RESULT: any value */
    int64_t error_code;           /* MCP_RPC_ERROR: error.code */
    const char *error_message;    /* MCP_RPC_ERROR: error.message, NUL-terminated */
    size_t error_message_len;     /* its length */
    const mcp_json *error_data;   /* MCP_RPC_ERROR: error.data, NULL if absent */
    const mcp_json *root;         /* the whole message object */
    mcp_json_doc *doc;            /* owned document (NULL after mcp_rpc_decode_json) */
} mcp_rpc_msg;

/**
 * Parses and classifies one frame.
 *
 * mcp_rpc_decode() is a macro over mcp_rpc_decode_sized(), which also
 * takes the caller's sizeof(mcp_json_parse_opts) (base.h, "Option structs
 * and the ABI").
 *
 * @param out  receives the message on success (free with
 *             mcp_rpc_msg_cleanup()); untouched on failure.
 * @param bytes the frame; may be NULL only when len is 0.
 * @param opts JSON parse limits, or NULL for the defaults.
 * @param opts_size sizeof(mcp_json_parse_opts) as the caller knows it.
 * @param err  optional. On failure: rpc_code is the code to answer with
 *             (-32700 or -32600), message says what is wrong, and `id`
 *             holds the JSON text of the request's id when one could be
 *             read (else "": answer with id null). See
 *             mcp_rpc_write_decode_error().
 * @return MCP_OK;
 *         MCP_ERR_PARSE (-32700) when the bytes are not JSON;
 *         MCP_ERR_LIMIT (-32700) when the frame exceeds a parse limit;
 *         MCP_ERR_INVALID_MSG (-32600) when the JSON is not a valid message
 *         (including batches);
 *         MCP_ERR_INVALID_ARG (also for an opts_size of 0 or too small);
 *         MCP_ERR_UNSUPPORTED (opts sets fields this library does not know);
 *         MCP_ERR_NOMEM.
 * Thread-safety: safe; concurrent calls on different frames are fine.
 */
MCP_API mcp_status mcp_rpc_decode_sized(mcp_rpc_msg *out, const char *bytes, size_t len,
                                        const mcp_json_parse_opts *opts, size_t opts_size, mcp_error *err);
#define mcp_rpc_decode(out, bytes, len, opts, err) \
    mcp_rpc_decode_sized((out), (bytes), (len), (opts), sizeof(mcp_json_parse_opts), (err))

/**
 * Classifies an already parsed value as a message. `out` borrows from
 * `root`'s document, which must outlive it; out->doc is NULL.
 *
 * @return MCP_OK, MCP_ERR_INVALID_MSG (-32600 in err) or MCP_ERR_INVALID_ARG.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_rpc_decode_json(mcp_rpc_msg *out, const mcp_json *root, mcp_error *err);

/**
 * Frees the message's document (if it owns one) and clears it.
 * @param msg may be NULL (no-op); calling it twice is harmless.
 */
MCP_API void mcp_rpc_msg_cleanup(mcp_rpc_msg *msg);

/** 1 when the message's method equals the NUL-terminated `method`. */
MCP_API int mcp_rpc_method_is(const mcp_rpc_msg *msg, const char *method);

/** 1 when two ids are equal (same type and value). */
MCP_API int mcp_rpc_id_equal(const mcp_rpc_id *a, const mcp_rpc_id *b);

/*
 * Encoding. Each function writes through an mcp_jw positioned where a
 * top-level value may start, and returns the writer's status (see
 * mcp_jw_*). The begin_* functions leave the envelope object open with a
 * member key written, so exactly one value must follow, then mcp_rpc_end().
 */

/** Writes an id value (int, string or null; NONE writes null). */
MCP_API mcp_status mcp_rpc_write_id(mcp_jw *w, const mcp_rpc_id *id);

/** `{"jsonrpc":"2.0","id":ID,"result":` — write the result value, then mcp_rpc_end(). */
MCP_API mcp_status mcp_rpc_begin_result(mcp_jw *w, const mcp_rpc_id *id);

/** `{"jsonrpc":"2.0","id":ID,"method":M,"params":` — write params, then mcp_rpc_end(). */
MCP_API mcp_status mcp_rpc_begin_request(mcp_jw *w, const mcp_rpc_id *id, const char *method);

/** `{"jsonrpc":"2.0","method":M,"params":` — write params, then mcp_rpc_end(). */
MCP_API mcp_status mcp_rpc_begin_notification(mcp_jw *w, const char *method);

/** Closes the envelope opened by a begin_* call. */
MCP_API mcp_status mcp_rpc_end(mcp_jw *w);

/**
 * Writes a complete error response.
 * @param id      NULL or MCP_RPC_ID_NONE writes id null.
 * @param message NUL-terminated; NULL writes a generic message for the code.
 * @param data    optional value for error.data (NULL: omitted).
 */
MCP_API mcp_status mcp_rpc_write_error(mcp_jw *w, const mcp_rpc_id *id, int code,
                                       const char *message, const mcp_json *data);

/**
 * Opens an error response with code and message written and the error
 * object still open, so the caller can add `"data"` with mcp_jw_key() and
 * a value; then mcp_rpc_end_error().
 */
MCP_API mcp_status mcp_rpc_begin_error(mcp_jw *w, const mcp_rpc_id *id, int code,
                                       const char *message);

/** Closes the error object and the envelope opened by mcp_rpc_begin_error(). */
MCP_API mcp_status mcp_rpc_end_error(mcp_jw *w);

/**
 * Writes the error response for a frame that mcp_rpc_decode() rejected,
 * using err->rpc_code, err->message and err->id.
 * @return the writer's status, or MCP_ERR_INVALID_ARG when err is NULL or
 *         carries no rpc_code.
 */
MCP_API mcp_status mcp_rpc_write_decode_error(mcp_jw *w, const mcp_error *err);

/** The standard message for a JSON-RPC/MCP error code ("Parse error", ...). */
MCP_API const char *mcp_rpc_code_str(int code);

#ifdef __cplusplus
}
#endif

#endif /* MCP_RPC_H */
