/*
 * Money trails and case graphs: a hop-limited, aggregated flow graph
 * around one or more accounts, bounded in size, and its drawings.
 *
 * A trail follows transfers between accounts (cash has no counterparty
 * account and is drawn as one "cash" node per focus account in case
 * graphs). Forward, from the start account along outgoing transfers; each
 * further hop only counts transfers booked at or after the first money
 * arrived at that account (money moves forward in time). Backward, the
 * mirror: incoming transfers booked at or before the account last paid
 * on. Transfers between two accounts in one direction are aggregated
 * into one edge (amount in USD cents, count, first and last date, the
 * first transaction ids).
 *
 * Bounds: at most max_nodes accounts and max_edges edges, at most max_fan
 * new neighbours per account and direction (largest amounts first), and
 * at most AML_TRAIL_MAX_ROWS transactions read per account and direction.
 * What does not fit is folded into one "n other accounts" node per
 * account and direction, and listed in `folds`.
 */
#ifndef AML_TRAIL_H
#define AML_TRAIL_H

#include "engine/cases.h"

#define AML_TRAIL_FORWARD 1u
#define AML_TRAIL_BACKWARD 2u
#define AML_TRAIL_BOTH 3u

#define AML_TRAIL_MAX_HOPS 6
#define AML_TRAIL_MAX_ROWS 20000 /* transactions read per account and direction */
#define AML_TRAIL_EDGE_TXNS 20   /* transactions listed per edge */

/* What to trace. Zero-initialise, then set; 0 means the default. */
typedef struct aml_trail_opts {
    const int64_t *starts;  /* acct_nos the trail starts from (hop 0) */
    size_t nstarts;
    unsigned direction;     /* AML_TRAIL_* (default both) */
    int max_hops;           /* 1..6, default 3 */
    int64_t from, to;       /* booking window, inclusive (to 0 = no end) */
    int64_t min_amount;     /* an edge carries at least this (USD cents) */
    double min_share;       /* or at least this share of its account's flow in that direction (0..1) */
    int max_nodes;          /* default 60 */
    int max_edges;          /* default 150 */
    int max_fan;            /* default 12 */
    int cash;               /* add cash in/out nodes for the start accounts (case graphs) */
} aml_trail_opts;

enum { AML_NODE_ACCOUNT = 0, AML_NODE_FOLDED, AML_NODE_CASH };

typedef struct aml_trail_node {
    int kind;               /* AML_NODE_* */
    int64_t acct;           /* acct_no (accounts), the account folded at / cash of (others) */
    char id[80];            /* account id, "fold:<id>:out", "cash:<id>" */
    int hop;                /* hops from a start account */
    int focus;              /* a start account */
    int64_t arrive, leave;  /* forward: first money in; backward: last money out */
    unsigned dirs;          /* directions it was reached in */
    int folded;             /* accounts folded into it (AML_NODE_FOLDED) */
    /* details (accounts) */
    char holder[128], bank[96], country[8];
    int internal;
    unsigned flags;         /* AML_FLAG_* */
    char cases[96];         /* case ids naming it as focus, comma-separated */
} aml_trail_node;

#define AML_FLAG_PEP 0x1u
#define AML_FLAG_HIGH_RISK 0x2u
#define AML_FLAG_FATF_CALL 0x4u
#define AML_FLAG_FATF_MONITOR 0x8u
#define AML_FLAG_DORMANT 0x10u
#define AML_FLAG_IN_CASE 0x20u

typedef struct aml_trail_txn {
    int64_t no, at, usd;
    char id[48];            /* txn_ref, or "#<txn_no>" */
} aml_trail_txn;

typedef struct aml_trail_edge {
    int src, dst;           /* node indexes */
    int64_t usd, count, first, last;
    aml_trail_txn txn[AML_TRAIL_EDGE_TXNS]; /* the first ones by booking time */
    int ntxn;
    int hop;                /* hop of its far end */
    unsigned typologies;    /* bit per catalog index: evidence of a matched finding */
} aml_trail_edge;

typedef struct aml_trail_fold {
    int node;               /* the folded node */
    int at;                 /* the account it hangs off */
    unsigned direction;     /* AML_TRAIL_FORWARD (out) or BACKWARD (in) */
    int accounts;
    int64_t usd, count;
    const char *why;        /* "fan" | "nodes" | "edges" */
} aml_trail_fold;

typedef struct aml_trail {
    aml_trail_opts o;       /* with defaults filled in */
    aml_trail_node *nodes;
    size_t nnodes, capn;
    aml_trail_edge *edges;
    size_t nedges, cape;
    aml_trail_fold *folds;
    size_t nfolds, capf;
    int rows_capped;        /* an account had more than AML_TRAIL_MAX_ROWS transactions */
    int hops_reached;       /* deepest hop with an edge */
    unsigned matched;       /* typologies whose evidence marks edges (case graphs) */
    char title[200];        /* for drawings */
} aml_trail;

/** Traces. @return 0, or -1 (err). The trail is freed by aml_trail_free() either way. */
int aml_trail_build(aml_store *s, const aml_trail_opts *o, aml_trail *t, aml_err *err);
void aml_trail_free(aml_trail *t);

/**
 * The case graph: the case's focus accounts, their counterparties in the
 * review window (one hop, both ways, with cash), and every transfer cited
 * as evidence by a matched finding of the case's latest assessment, marked
 * with its typologies. @return 0, 1 no such case, -1 (err).
 */
int aml_case_graph(aml_store *s, const char *case_id, aml_trail *t, aml_err *err);

/** Writes the trail as JSON (the traceFunds / caseGraph structuredContent). */
void aml_trail_write(const aml_trail *t, mcp_jw *w);

/** A short plain-text summary (largest edges first, what was folded). */
void aml_trail_text(const aml_trail *t, mcp_buf *b);

/* ---- drawings and exports (draw.c) ----------------------------------------------- */

enum { AML_DRAW_PNG = 0, AML_DRAW_SVG, AML_DRAW_DOT, AML_DRAW_CYTOSCAPE, AML_DRAW_GRAPHML };

/** Format by name ("png", "svg", "dot", "cytoscape", "graphml") or file extension; -1 when unknown. */
int aml_draw_format(const char *name);

/** The format's MIME type. */
const char *aml_draw_mime(int format);

/**
 * Draws or exports the trail into `out` (PNG and SVG laid out by Graphviz's
 * dot; DOT is the source it lays out; Cytoscape JSON and GraphML are
 * written directly). Deterministic for the same trail and Graphviz.
 * @return 0, or -1 (err).
 */
int aml_draw(const aml_trail *t, int format, mcp_buf *out, aml_err *err);

#endif /* AML_TRAIL_H */
