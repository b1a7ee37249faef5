/*
 * Drawing a trail (trail.h): the DOT text written here is the one source
 * of the picture; PNG and SVG are that text parsed by libcgraph, laid out
 * by dot and rendered by libgvc (Graphviz as a library, never a shell-out).
 * Cytoscape JSON and GraphML carry the same nodes and edges for other
 * tools.
 *
 * Graphviz keeps global state and is not thread-safe: one context, made on
 * first use, is shared under a mutex.
 */
#include "engine/trail.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int aml_draw_format(const char *name)
{
    static const struct {
        const char *name;
        int format;
    } names[] = {{"png", AML_DRAW_PNG},       {"svg", AML_DRAW_SVG},        {"dot", AML_DRAW_DOT},
                 {"gv", AML_DRAW_DOT},        {"cytoscape", AML_DRAW_CYTOSCAPE}, {"cyjs", AML_DRAW_CYTOSCAPE},
                 {"json", AML_DRAW_CYTOSCAPE}, {"graphml", AML_DRAW_GRAPHML}};
    const char *dot = strrchr(name, '.');
    const char *n = dot ? dot + 1 : name;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(n, names[i].name))
            return names[i].format;
    return -1;
}

const char *aml_draw_mime(int format)
{
    switch (format) {
    case AML_DRAW_PNG: return "image/png";
    case AML_DRAW_SVG: return "image/svg+xml";
    case AML_DRAW_DOT: return "text/vnd.graphviz";
    case AML_DRAW_CYTOSCAPE: return "application/json";
    default: return "application/graphml+xml";
    }
}

/* ---- DOT ------------------------------------------------------------------------ */

/* A DOT double-quoted string body: quotes and backslashes escaped, control bytes dropped. */
static void dot_str(mcp_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            mcp_buf_append(b, "\\", 1);
        if (c >= 0x20)
            mcp_buf_append(b, s, 1);
    }
}

/* Text for an HTML-like label: &, <, >, " escaped. */
static void html_str(mcp_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': aml_buf_puts(b, "&amp;"); break;
        case '<': aml_buf_puts(b, "&lt;"); break;
        case '>': aml_buf_puts(b, "&gt;"); break;
        case '"': aml_buf_puts(b, "&quot;"); break;
        default:
            if ((unsigned char)*s >= 0x20)
                mcp_buf_append(b, s, 1);
        }
    }
}

#define RISKY (AML_FLAG_PEP | AML_FLAG_HIGH_RISK | AML_FLAG_FATF_CALL | AML_FLAG_FATF_MONITOR)

static void flags_text(unsigned f, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s%s%s", f & AML_FLAG_PEP ? " PEP" : "", f & AML_FLAG_HIGH_RISK ? " high-risk" : "",
             f & AML_FLAG_FATF_CALL ? " FATF-call" : "", f & AML_FLAG_FATF_MONITOR ? " FATF-monitor" : "",
             f & AML_FLAG_DORMANT ? " dormant" : "");
}

static void dot_node(const aml_trail *t, size_t i, mcp_buf *b)
{
    const aml_trail_node *n = &t->nodes[i];
    aml_buf_printf(b, "  n%zu [id=\"", i);
    dot_str(b, n->id);
    aml_buf_puts(b, "\", label=\"");
    if (n->kind == AML_NODE_FOLDED) {
        aml_buf_printf(b, "%d other account%s", n->folded, n->folded == 1 ? "" : "s");
        aml_buf_puts(b, "\", shape=note, fillcolor=\"#f2f2f2\", color=\"#9e9e9e\"];\n");
        return;
    }
    if (n->kind == AML_NODE_CASH) {
        aml_buf_puts(b, "Cash\", shape=ellipse, fillcolor=\"#e8f5e9\", color=\"#2e7d32\"];\n");
        return;
    }
    char fl[96];
    flags_text(n->flags, fl, sizeof fl);
    dot_str(b, n->id);
    if (n->holder[0]) {
        aml_buf_puts(b, "\\n");
        dot_str(b, n->holder);
    }
    if (n->bank[0] || n->country[0]) {
        aml_buf_puts(b, "\\n");
        dot_str(b, n->bank[0] ? n->bank : n->internal ? "our bank" : "external");
        if (n->country[0]) {
            aml_buf_puts(b, n->bank[0] ? ", " : " ");
            dot_str(b, n->country);
        }
    }
    if (fl[0]) {
        aml_buf_puts(b, "\\n[");
        dot_str(b, fl + 1);
        aml_buf_puts(b, "]");
    }
    const char *fill = n->focus ? "#ffd54f" : n->internal ? "#e3f2fd" : "#fafafa";
    aml_buf_printf(b, "\", fillcolor=\"%s\"%s%s];\n", fill, n->focus ? ", penwidth=2.5" : "",
                   n->flags & RISKY ? ", color=\"#c62828\", penwidth=2.5" : n->internal ? "" : ", style=\"filled,dashed\"");
}

static void dot_edge(const aml_trail *t, size_t i, mcp_buf *b)
{
    const aml_trail_edge *e = &t->edges[i];
    char amt[48], d1[11], d2[11];
    aml_fmt_usd(e->usd, amt, sizeof amt);
    aml_fmt_date(e->first, d1);
    aml_fmt_date(e->last, d2);
    aml_buf_printf(b, "  n%d -> n%d [id=\"e%zu\", label=\"%s (%lld)\\n%s", e->src, e->dst, i + 1, amt,
                   (long long)e->count, d1);
    if (strcmp(d1, d2))
        aml_buf_printf(b, " to %s", d2);
    if (e->typologies) {
        aml_buf_puts(b, "\\n");
        int k1 = 0;
        for (int k = 0; k < AML_NTYP; k++)
            if (e->typologies & (1u << k))
                aml_buf_printf(b, "%s%s", k1++ ? " " : "", aml_catalog()[k].code);
        aml_buf_puts(b, "\", color=\"#d32f2f\", fontcolor=\"#b71c1c\", penwidth=3");
    } else {
        aml_buf_puts(b, "\"");
    }
    aml_buf_puts(b, "];\n");
}

static void dot_legend(const aml_trail *t, mcp_buf *b)
{
    aml_buf_puts(b, "  legend [shape=plaintext, style=\"\", label=<<table border=\"0\" cellborder=\"1\" "
                    "cellspacing=\"0\" cellpadding=\"4\"><tr><td colspan=\"2\"><b>Legend</b></td></tr>"
                    "<tr><td bgcolor=\"#ffd54f\">   </td><td align=\"left\">focus account</td></tr>"
                    "<tr><td bgcolor=\"#e3f2fd\">   </td><td align=\"left\">account at our bank</td></tr>"
                    "<tr><td bgcolor=\"#fafafa\">   </td><td align=\"left\">external account</td></tr>"
                    "<tr><td bgcolor=\"#ffffff\" color=\"#c62828\">   </td>"
                    "<td align=\"left\">risk flag (PEP, high risk, FATF list)</td></tr>"
                    "<tr><td bgcolor=\"#e8f5e9\">   </td><td align=\"left\">cash in / out</td></tr>"
                    "<tr><td bgcolor=\"#f2f2f2\">   </td><td align=\"left\">folded smaller counterparties</td></tr>"
                    "<tr><td bgcolor=\"#d32f2f\">   </td><td align=\"left\">evidence of a matched typology</td></tr>"
                    "<tr><td colspan=\"2\" align=\"left\">edges: total USD (transactions), first to last date</td></tr>");
    for (int k = 0; k < AML_NTYP; k++)
        if (t->matched & (1u << k)) {
            aml_buf_printf(b, "<tr><td>%s</td><td align=\"left\">", aml_catalog()[k].code);
            html_str(b, aml_catalog()[k].name);
            aml_buf_puts(b, "</td></tr>");
        }
    aml_buf_puts(b, "</table>>];\n");
}

static void write_dot(const aml_trail *t, mcp_buf *b)
{
    aml_buf_puts(b, "digraph fundflow {\n  graph [rankdir=LR, fontname=\"DejaVu Sans\", fontsize=16, labelloc=t, "
                    "nodesep=0.35, ranksep=1.1, dpi=96, size=\"16,11\", pad=0.2, bgcolor=white, label=\"");
    dot_str(b, t->title[0] ? t->title : "Money trail");
    aml_buf_puts(b, "\"];\n  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=10, "
                    "color=\"#455a64\"];\n  edge [fontname=\"DejaVu Sans\", fontsize=9, color=\"#546e7a\", "
                    "arrowsize=0.7];\n");
    for (size_t i = 0; i < t->nnodes; i++)
        dot_node(t, i, b);
    for (size_t i = 0; i < t->nedges; i++)
        dot_edge(t, i, b);
    dot_legend(t, b);
    aml_buf_puts(b, "}\n");
}

/* ---- Graphviz ------------------------------------------------------------------------ */

static pthread_mutex_t gv_mu = PTHREAD_MUTEX_INITIALIZER;
static GVC_t *gv_ctx;

static int render(const char *dot, const char *format, mcp_buf *out, aml_err *err)
{
    pthread_mutex_lock(&gv_mu);
    if (!gv_ctx)
        gv_ctx = gvContext();
    Agraph_t *g = gv_ctx ? agmemread(dot) : NULL;
    int rc = -1;
    if (!g) {
        aml_errf(err, "Graphviz could not read the graph");
    } else if (gvLayout(gv_ctx, g, "dot") != 0) {
        aml_errf(err, "Graphviz layout failed");
    } else {
        char *data = NULL;
        unsigned int len = 0;
        if (gvRenderData(gv_ctx, g, format, &data, &len) != 0 || !data)
            aml_errf(err, "Graphviz cannot render %s (is its cairo plugin installed?)", format);
        else if (mcp_buf_append(out, data, len) != MCP_OK)
            aml_errf(err, "out of memory");
        else
            rc = 0;
        if (data)
            gvFreeRenderData(data);
        gvFreeLayout(gv_ctx, g);
    }
    if (g)
        agclose(g);
    pthread_mutex_unlock(&gv_mu);
    return rc;
}

/* ---- Cytoscape JSON and GraphML ---------------------------------------------------------- */

static void write_cytoscape(const aml_trail *t, mcp_buf *b)
{
    mcp_buf tmp;
    mcp_jw w;
    mcp_buf_init(&tmp, 0);
    mcp_jw_init(&w, &tmp);
    aml_trail_write(t, &w);
    mcp_jw_finish(&w);
    mcp_json_doc *d = NULL;
    mcp_jw cw;
    mcp_jw_init(&cw, b);
    if (tmp.data && mcp_json_parse(&d, tmp.data, tmp.len, NULL, NULL) == MCP_OK) {
        const mcp_json *root = mcp_json_doc_root(d), *nodes = mcp_json_get(root, "nodes");
        const mcp_json *edges = mcp_json_get(root, "edges");
        mcp_jw_object_begin(&cw);
        mcp_jw_key(&cw, "data");
        mcp_jw_object_begin(&cw);
        mcp_jw_key(&cw, "name");
        mcp_jw_string(&cw, t->title[0] ? t->title : "Money trail");
        mcp_jw_object_end(&cw);
        mcp_jw_key(&cw, "elements");
        mcp_jw_object_begin(&cw);
        mcp_jw_key(&cw, "nodes");
        mcp_jw_array_begin(&cw);
        for (size_t i = 0; i < mcp_json_len(nodes); i++) {
            mcp_jw_object_begin(&cw);
            mcp_jw_key(&cw, "data");
            mcp_jw_value(&cw, mcp_json_at(nodes, i));
            mcp_jw_object_end(&cw);
        }
        mcp_jw_array_end(&cw);
        mcp_jw_key(&cw, "edges");
        mcp_jw_array_begin(&cw);
        for (size_t i = 0; i < mcp_json_len(edges); i++) {
            const mcp_json *e = mcp_json_at(edges, i);
            mcp_jw_object_begin(&cw);
            mcp_jw_key(&cw, "data");
            mcp_jw_object_begin(&cw);
            mcp_jw_key(&cw, "source");
            mcp_jw_value(&cw, mcp_json_get(e, "from"));
            mcp_jw_key(&cw, "target");
            mcp_jw_value(&cw, mcp_json_get(e, "to"));
            for (size_t k = 0; k < mcp_json_len(e); k++) {
                size_t kl;
                const char *key = mcp_json_key_at(e, k, &kl);
                mcp_jw_keyn(&cw, key, kl);
                mcp_jw_value(&cw, mcp_json_value_at(e, k));
            }
            mcp_jw_object_end(&cw);
            mcp_jw_object_end(&cw);
        }
        mcp_jw_array_end(&cw);
        mcp_jw_object_end(&cw);
        mcp_jw_object_end(&cw);
    }
    mcp_jw_finish(&cw);
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&tmp);
}

static void xml_str(mcp_buf *b, const char *s)
{
    html_str(b, s);
}

static void write_graphml(const aml_trail *t, mcp_buf *b)
{
    static const char *const keys[][4] = {
        {"label", "node", "string", "label"}, {"kind", "node", "string", "kind"},
        {"holder", "node", "string", "holder"}, {"bank", "node", "string", "bank"},
        {"country", "node", "string", "country"}, {"focus", "node", "boolean", "focus"},
        {"hop", "node", "int", "hop"}, {"amount", "edge", "long", "amountUsdMinor"},
        {"count", "edge", "long", "count"}, {"first", "edge", "string", "firstDate"},
        {"last", "edge", "string", "lastDate"}, {"typologies", "edge", "string", "typologies"}};
    aml_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        aml_buf_printf(b, "  <key id=\"%s\" for=\"%s\" attr.name=\"%s\" attr.type=\"%s\"/>\n", keys[i][0], keys[i][1],
                       keys[i][3], keys[i][2]);
    aml_buf_puts(b, "  <graph id=\"fundflow\" edgedefault=\"directed\">\n");
    for (size_t i = 0; i < t->nnodes; i++) {
        const aml_trail_node *n = &t->nodes[i];
        static const char *const kinds[] = {"account", "folded", "cash"};
        aml_buf_puts(b, "    <node id=\"");
        xml_str(b, n->id);
        aml_buf_printf(b, "\"><data key=\"kind\">%s</data><data key=\"focus\">%s</data><data key=\"hop\">%d</data>",
                       kinds[n->kind], n->focus ? "true" : "false", n->hop);
        const char *vals[][2] = {{"holder", n->holder}, {"bank", n->bank}, {"country", n->country}};
        for (int k = 0; k < 3; k++)
            if (vals[k][1][0]) {
                aml_buf_printf(b, "<data key=\"%s\">", vals[k][0]);
                xml_str(b, vals[k][1]);
                aml_buf_puts(b, "</data>");
            }
        aml_buf_puts(b, "</node>\n");
    }
    for (size_t i = 0; i < t->nedges; i++) {
        const aml_trail_edge *e = &t->edges[i];
        char d1[11], d2[11];
        aml_fmt_date(e->first, d1);
        aml_fmt_date(e->last, d2);
        aml_buf_printf(b, "    <edge id=\"e%zu\" source=\"", i + 1);
        xml_str(b, t->nodes[e->src].id);
        aml_buf_puts(b, "\" target=\"");
        xml_str(b, t->nodes[e->dst].id);
        aml_buf_printf(b, "\"><data key=\"amount\">%lld</data><data key=\"count\">%lld</data><data key=\"first\">%s"
                          "</data><data key=\"last\">%s</data><data key=\"typologies\">",
                       (long long)e->usd, (long long)e->count, d1, d2);
        for (int k = 0, n = 0; k < AML_NTYP; k++)
            if (e->typologies & (1u << k))
                aml_buf_printf(b, "%s%s", n++ ? " " : "", aml_catalog()[k].id);
        aml_buf_puts(b, "</data></edge>\n");
    }
    aml_buf_puts(b, "  </graph>\n</graphml>\n");
}

int aml_draw(const aml_trail *t, int format, mcp_buf *out, aml_err *err)
{
    if (format == AML_DRAW_CYTOSCAPE) {
        write_cytoscape(t, out);
        return out->data ? 0 : aml_errf(err, "out of memory");
    }
    if (format == AML_DRAW_GRAPHML) {
        write_graphml(t, out);
        return out->data ? 0 : aml_errf(err, "out of memory");
    }
    mcp_buf dot;
    mcp_buf_init(&dot, 0);
    write_dot(t, &dot);
    if (!dot.data) {
        mcp_buf_cleanup(&dot);
        return aml_errf(err, "out of memory");
    }
    int rc = 0;
    if (format == AML_DRAW_DOT)
        rc = mcp_buf_append(out, dot.data, dot.len) == MCP_OK ? 0 : aml_errf(err, "out of memory");
    else
        rc = render(dot.data, format == AML_DRAW_PNG ? "png" : "svg", out, err);
    mcp_buf_cleanup(&dot);
    return rc;
}

#if defined(__SANITIZE_ADDRESS__)
/*
 * Sanitizer builds: fontconfig, pango and libgvc keep caches for the life
 * of the process (Graphviz offers no way to release them), which
 * LeakSanitizer would report at exit. The runtime reads this hook.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\nleak:libgvc.so\nleak:libglib-2.0.so\nleak:libpango\nleak:libcairo.so\n"
           "leak:libgvplugin_\nleak:libharfbuzz.so\nleak:libfreetype.so\n";
}
#endif
