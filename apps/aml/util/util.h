/*
 * mcp-server-aml utilities: UTC time, money, currencies, SHA-256, a
 * deterministic random generator, a terminal progress bar and a fast CSV
 * reader. Nothing here touches the case store.
 */
#ifndef AML_UTIL_H
#define AML_UTIL_H

#include <mcp/mcp.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Error detail for the app's own functions: they return 0 or -1 and fill this. */
typedef struct aml_err {
    char msg[512]; /* human-readable, NUL-terminated */
} aml_err;

/** Formats into err->msg (err may be NULL); always returns -1. */
int aml_errf(aml_err *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- time (seconds since 1970-01-01T00:00:00Z, no leap seconds) ---------- */

#define AML_DAY 86400
#define AML_HOUR 3600

/* Precision of a timestamp as the source gave it. */
#define AML_PREC_SECOND 0
#define AML_PREC_MINUTE 1
#define AML_PREC_DAY 2

/** Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t aml_days_from_civil(int64_t y, unsigned m, unsigned d);
/** The date of a day number. */
void aml_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/**
 * Parses a timestamp: YYYY-MM-DD, YYYYMMDD, YYYY-MM-DD[T ]HH:MM[:SS][Z],
 * YYYY/MM/DD HH:MM (AMLworld). `n` bytes of `s` (need not be NUL-terminated).
 * @return 0 and *out (and *prec when not NULL), or -1 for anything else.
 */
int aml_parse_time(const char *s, size_t n, int64_t *out, int *prec);

/** "YYYY-MM-DD" (out must hold 11 bytes). */
void aml_fmt_date(int64_t t, char *out);
/** "YYYY-MM-DDTHH:MM:SSZ" (out must hold 21 bytes). */
void aml_fmt_time(int64_t t, char *out);
/** Start of the UTC day holding t. */
int64_t aml_day_start(int64_t t);
/** Current wall-clock time (only for audit and "created at" columns, never for results). */
int64_t aml_now(void);

/* ---- money -------------------------------------------------------------- */

/* A currency the importers and the FX table know. */
typedef struct aml_currency {
    const char *code;      /* ISO 4217 (BTC for Bitcoin, not ISO) */
    int exponent;          /* minor-unit digits */
    const char *amlworld;  /* the name in AMLworld files */
    int64_t usd_num;       /* illustrative demo rate: 1 major unit = num/den USD */
    int64_t usd_den;
} aml_currency;

/** The currency table (NULL-code terminated). */
const aml_currency *aml_currencies(void);
/** Looks a currency up by ISO code or AMLworld name; NULL when unknown. */
const aml_currency *aml_currency_find(const char *name, size_t n);

/**
 * Parses a decimal amount ("1234.5", "-3", "0.00012") into minor units of
 * `exponent` digits, rounding half away from zero beyond them.
 * @return 0, or -1 when not a number or out of range.
 */
int aml_parse_amount(const char *s, size_t n, int exponent, int64_t *out);

/**
 * Converts minor units of a currency to USD cents with a rate num/den
 * (1 major unit = num/den USD), rounding half up. Saturates on overflow.
 */
int64_t aml_to_usd_minor(int64_t minor, int exponent, int64_t num, int64_t den);

/** "48,300.00" for minor units with `exponent` digits (out >= 40 bytes). */
void aml_fmt_amount(int64_t minor, int exponent, char *out, size_t n);
/** "$48,300.00" for USD cents (out >= 40 bytes). */
void aml_fmt_usd(int64_t cents, char *out, size_t n);

/* ---- hashing ------------------------------------------------------------ */

/** SHA-256 of bytes as 64 lowercase hex digits (out must hold 65 bytes). */
void aml_sha256_hex(const void *data, size_t n, char *out);

/* Incremental SHA-256 (OpenSSL EVP underneath). */
typedef struct aml_sha256 {
    void *ctx; /* EVP_MD_CTX */
} aml_sha256;
int aml_sha256_init(aml_sha256 *h);
void aml_sha256_update(aml_sha256 *h, const void *data, size_t n);
/** Writes the hex digest and releases the context. */
void aml_sha256_final(aml_sha256 *h, char *out);

/* ---- deterministic random numbers (xoshiro256**, seeded by splitmix64) --- */

typedef struct aml_rng {
    uint64_t s[4]; /* generator state */
} aml_rng;

void aml_rng_seed(aml_rng *r, uint64_t seed);
uint64_t aml_rng_next(aml_rng *r);
/** Uniform integer in [lo, hi] (inclusive). */
int64_t aml_rng_range(aml_rng *r, int64_t lo, int64_t hi);
/** Uniform double in [0, 1). */
double aml_rng_unit(aml_rng *r);
/** 1 with probability p. */
int aml_rng_chance(aml_rng *r, double p);

/* ---- progress bar (drawn on stderr only when it is a terminal) ----------- */

/*
 * Every aml_progress also moves process-wide counters per label (the scan's
 * "scanning", the import's "importing"), whatever the terminal: jobs
 * running, units expected and done, jobs finished. mcp-server-aml serves
 * them as Prometheus metrics (tools/metrics.c, docs/aml.md "Metrics");
 * aml_progress_stats() reads them. Updates are relaxed atomics.
 */
typedef struct aml_progress {
    const char *label; /* what is being done (a static string: it names the metrics) */
    uint64_t total;    /* expected units; 0 = unknown */
    uint64_t done;     /* units so far */
    int64_t last_ms;   /* last draw, monotonic ms */
    int enabled;       /* stderr is a TTY */
    int slot;          /* its label's counters, -1 when the table is full */
} aml_progress;

void aml_progress_start(aml_progress *p, const char *label, uint64_t total);
void aml_progress_update(aml_progress *p, uint64_t done);
void aml_progress_end(aml_progress *p);

/* The counters of one progress label. */
typedef struct aml_progress_counts {
    const char *label;       /* the label */
    int64_t running;         /* jobs started and not ended */
    uint64_t expected;       /* units the running jobs expect (those that know) */
    uint64_t done_total;     /* units done, ever */
    uint64_t finished_total; /* jobs ended, ever */
} aml_progress_counts;

/** The counters of the i-th label seen (0, 1, ...): 1 when there is one, 0 past the last. Thread-safe. */
int aml_progress_stats(int i, aml_progress_counts *out);

/* ---- CSV ---------------------------------------------------------------- */

#define AML_CSV_MAX_FIELDS 64

/* A field of the current record: bytes inside the reader's buffer. */
typedef struct aml_csv_field {
    const char *p; /* not NUL-terminated */
    size_t n;      /* length */
} aml_csv_field;

/*
 * A streaming RFC 4180 reader: records may contain quoted fields with
 * commas, doubled quotes and newlines. Fields are views valid until the
 * next aml_csv_next().
 */
typedef struct aml_csv {
    FILE *f;                                  /* input, not owned */
    char *buf;                                /* read buffer */
    size_t cap, len, pos;                     /* buffer capacity, bytes held, parse position */
    int eof;                                  /* no more input */
    uint64_t line;                            /* line number of the current record (1-based) */
    uint64_t next_line;                       /* line number where the next record starts */
    size_t nfields;                           /* fields in the current record */
    aml_csv_field fields[AML_CSV_MAX_FIELDS]; /* the fields */
    uint64_t bytes_read;                      /* for progress */
} aml_csv;

int aml_csv_open(aml_csv *c, FILE *f);
/**
 * Reads the next record. @return 1 with a record, 0 at end of input, -1
 * on a malformed record (unterminated quote, too many fields, a record
 * over 1 MiB, a field that is not UTF-8 text or holds a NUL byte); err
 * says which and c->line where. After -1 the next call reads on.
 */
int aml_csv_next(aml_csv *c, aml_err *err);
void aml_csv_close(aml_csv *c);

/** 1 when field i equals the NUL-terminated s. */
int aml_csv_eq(const aml_csv *c, size_t i, const char *s);

/* ---- small helpers ------------------------------------------------------ */

/** strdup through malloc; NULL stays NULL. Aborts nothing: returns NULL on OOM. */
char *aml_strdup(const char *s);
char *aml_strndup(const char *s, size_t n);
/** snprintf into a fresh malloc'd string. */
char *aml_asprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** Appends formatted text to a buffer; returns MCP_OK or the buffer's error. */
mcp_status aml_buf_printf(mcp_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Appends a NUL-terminated string. */
mcp_status aml_buf_puts(mcp_buf *b, const char *s);
/** qsort that accepts an empty (NULL) array. */
void aml_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/** Ascending order of int64_t, for aml_sort and bsearch. */
int aml_cmp_i64(const void *a, const void *b);

/* A growable int64 array (zero-initialised is empty; free v when done). */
typedef struct aml_ivec {
    int64_t *v;
    size_t n, cap;
} aml_ivec;

/** Appends x; -1 on OOM. */
int aml_ivec_push(aml_ivec *a, int64_t x);
/** Sorts and removes duplicates. */
void aml_ivec_uniq(aml_ivec *a);
/** Index of x in a sorted vector, or -1. */
ssize_t aml_ivec_find(const aml_ivec *a, int64_t x);
/** Monotonic milliseconds. */
int64_t aml_mono_ms(void);
/** Monotonic nanoseconds. */
int64_t aml_mono_ns(void);

#endif /* AML_UTIL_H */
