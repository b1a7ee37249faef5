/*
 * FinCEN SAR batch XML checks for the tests: schema validation with
 * libxml2 against tests/data/fincen/EFL_SARXBatchSchema.xsd (AML_FINCEN_XSD,
 * set by CMake), and the facts the schema cannot check (PartyCount, the
 * narrative blocks, the party roles), read back with XPath.
 */
#ifndef AML_XSDCHECK_H
#define AML_XSDCHECK_H

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <string.h>

static xmlSchemaPtr xsd_schema;

static inline void xsd_quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* Collects the first validation error. */
static inline void xsd_error(void *ud, const xmlError *e)
{
    char *why = ud;
    if (why[0] == '\0' && e && e->message)
        snprintf(why, 300, "line %d: %s", e->line, e->message);
}

/** Loads the schema once. @return 0 or -1. */
static inline int xsd_load(void)
{
    if (xsd_schema)
        return 0;
    xmlSetGenericErrorFunc(NULL, xsd_quiet); /* the "URI www.fincen.gov/base is not absolute" warning */
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt(AML_FINCEN_XSD);
    if (!pc)
        return -1;
    xmlSchemaSetParserErrors(pc, xsd_quiet, xsd_quiet, NULL);
    xsd_schema = xmlSchemaParse(pc);
    xmlSchemaFreeParserCtxt(pc);
    return xsd_schema ? 0 : -1;
}

/** Parses xml. NULL when not well-formed. */
static inline xmlDocPtr xsd_parse(const char *xml, size_t n)
{
    return xmlReadMemory(xml, (int)n, "sar.xml", "UTF-8", XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

/** Validates doc against the schema: 0 valid, else the first error in why (300 bytes). */
static inline int xsd_validate(xmlDocPtr doc, char *why)
{
    why[0] = '\0';
    if (xsd_load()) {
        snprintf(why, 300, "schema %s could not be loaded", AML_FINCEN_XSD);
        return -1;
    }
    xmlSchemaValidCtxtPtr vc = xmlSchemaNewValidCtxt(xsd_schema);
    xmlSchemaSetValidStructuredErrors(vc, (xmlStructuredErrorFunc)xsd_error, why);
    int rc = xmlSchemaValidateDoc(vc, doc);
    xmlSchemaFreeValidCtxt(vc);
    if (rc != 0 && !why[0])
        snprintf(why, 300, "invalid (code %d)", rc);
    return rc;
}

/** The number of nodes an XPath expression (prefix fc2) selects, or the number it evaluates to. */
static inline double xsd_eval(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr xc = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(xc, BAD_CAST "fc2", BAD_CAST "www.fincen.gov/base");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, xc);
    double v = -1;
    if (o && o->type == XPATH_NODESET)
        v = o->nodesetval ? o->nodesetval->nodeNr : 0;
    else if (o && o->type == XPATH_NUMBER)
        v = o->floatval;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(xc);
    return v;
}

/** The string value of an XPath expression (malloc'd; "" when none). */
static inline char *xsd_string(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr xc = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(xc, BAD_CAST "fc2", BAD_CAST "www.fincen.gov/base");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, xc);
    xmlChar *s = o ? xmlXPathCastToString(o) : NULL;
    char *r = strdup(s ? (const char *)s : "");
    xmlFree(s);
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(xc);
    return r;
}

/** Checks SeqNum uniqueness itself (beside the schema's unique constraint). @return duplicates found. */
static inline int xsd_seq_dups(xmlDocPtr doc)
{
    xmlXPathContextPtr xc = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST "//@SeqNum", xc);
    int dups = 0, n = o && o->nodesetval ? o->nodesetval->nodeNr : 0;
    long *v = calloc((size_t)n + 1, sizeof *v);
    for (int i = 0; i < n; i++) {
        xmlChar *s = xmlNodeGetContent(o->nodesetval->nodeTab[i]);
        v[i] = strtol((const char *)s, NULL, 10);
        xmlFree(s);
        for (int k = 0; k < i; k++)
            dups += v[k] == v[i];
    }
    free(v);
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(xc);
    return dups;
}

/*
 * Checks a batch: valid, the counts on the root agree with the document,
 * SeqNums unique, the narrative within 5 blocks of <= 4,000 characters and
 * <= 17,000 in all, one party of each filer role and at least one subject.
 * Returns the number of problems; the first is in why.
 */
static inline int xsd_check_batch(const char *xml, size_t n, char *why)
{
    xmlDocPtr doc = xsd_parse(xml, n);
    if (!doc) {
        snprintf(why, 300, "not well-formed XML");
        return 1;
    }
    int bad = 0;
    if (xsd_validate(doc, why))
        bad++;
#define XCHECK(cond, ...)                        \
    do {                                         \
        if (!(cond)) {                           \
            if (!bad++)                          \
                snprintf(why, 300, __VA_ARGS__); \
        }                                        \
    } while (0)
    double parties = xsd_eval(doc, "count(//fc2:Party)");
    XCHECK(xsd_eval(doc, "number(/fc2:EFilingBatchXML/@PartyCount)") == parties, "PartyCount is not %g", parties);
    XCHECK(xsd_eval(doc, "number(/fc2:EFilingBatchXML/@ActivityCount)") == xsd_eval(doc, "count(//fc2:Activity)"),
           "ActivityCount is wrong");
    XCHECK(xsd_eval(doc, "number(/fc2:EFilingBatchXML/@TotalAmount)") ==
               xsd_eval(doc, "sum(//fc2:TotalSuspiciousAmountText)"),
           "TotalAmount is not the sum of TotalSuspiciousAmountText");
    XCHECK(xsd_seq_dups(doc) == 0, "duplicate SeqNum");
    static const char *const roles[] = {"35", "37", "30", "8", "34"};
    for (int i = 0; i < 5; i++) {
        char q[160];
        snprintf(q, sizeof q, "count(/fc2:EFilingBatchXML/fc2:Activity/fc2:Party[fc2:ActivityPartyTypeCode='%s'])",
                 roles[i]);
        XCHECK(xsd_eval(doc, q) == 1, "not exactly one party of type %s", roles[i]);
    }
    XCHECK(xsd_eval(doc, "count(/fc2:EFilingBatchXML/fc2:Activity/fc2:Party[fc2:ActivityPartyTypeCode='33'])") >= 1,
           "no subject");
    double blocks = xsd_eval(doc, "count(//fc2:ActivityNarrativeText)");
    XCHECK(blocks >= 1 && blocks <= 5, "%g narrative blocks", blocks);
    XCHECK(xsd_eval(doc, "count(//fc2:ActivityNarrativeText[string-length(.) > 4000])") == 0,
           "a narrative block over 4,000 characters");
    XCHECK(xsd_eval(doc, "string-length(concat((//fc2:ActivityNarrativeText)[1], (//fc2:ActivityNarrativeText)[2], "
                         "(//fc2:ActivityNarrativeText)[3], (//fc2:ActivityNarrativeText)[4], "
                         "(//fc2:ActivityNarrativeText)[5]))") <= 17000,
           "narrative over 17,000 characters");
#undef XCHECK
    xmlFreeDoc(doc);
    return bad;
}

#endif /* AML_XSDCHECK_H */
