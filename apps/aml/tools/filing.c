/*
 * draftSar as FinCEN SAR XML (see filing.h).
 */
#include "tools/filing.h"

#include <string.h>

void aml_fincen_format_prop(mcp_jw *w)
{
    mcp_jw_key(w, "format");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "string");
    mcp_jw_key(w, "enum");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "json");
    mcp_jw_string(w, "fincen-xml");
    mcp_jw_array_end(w);
    mcp_jw_key(w, "description");
    mcp_jw_string(w, "json (default): the draft as structured content. fincen-xml: also the FinCEN SAR batch XML "
                     "(EFL_SARXBatchSchema 1.2) as an embedded application/xml resource; needs the filer details "
                     "(mcp-server-aml config set filer.* ...).");
    mcp_jw_object_end(w);
}

int aml_fincen_refuse_missing(aml_store *s, mcp_call *call, char *detail, size_t ndetail)
{
    mcp_buf m;
    mcp_buf_init(&m, 0);
    int n = aml_filer_missing(s, 1, &m);
    if (n == 0) {
        mcp_buf_cleanup(&m);
        return 0;
    }
    if (n < 0)
        mcp_call_error(call, "The filer settings could not be read: %s", aml_errmsg(s));
    else
        mcp_call_error(call,
                       "Cannot draft FinCEN SAR XML: %d filer detail%s missing: %s. The operator sets them with "
                       "'mcp-server-aml config set --db FILE KEY VALUE'; nothing is filled in for them.",
                       n, n == 1 ? " is" : "s are", m.data);
    snprintf(detail, ndetail, "fincen-xml refused: %d filer details missing", n);
    mcp_buf_cleanup(&m);
    return 1;
}

int aml_fincen_attach(aml_store *s, mcp_call *call, const char *draft, size_t n, mcp_buf *text, char *detail,
                      size_t ndetail)
{
    mcp_json_doc *d;
    if (mcp_json_parse(&d, draft, n, NULL, NULL) != MCP_OK) {
        mcp_call_error(call, "The SAR draft could not be read back");
        return 1;
    }
    const mcp_json *root = mcp_json_doc_root(d);
    char id[160], uri[200];
    snprintf(id, sizeof id, "%s", mcp_json_str(mcp_json_get(root, "sarDraftId"), NULL)
                                      ? mcp_json_str(mcp_json_get(root, "sarDraftId"), NULL)
                                      : "");
    int warranted = mcp_json_str_eq(mcp_json_get(root, "status"), "draft");
    mcp_json_doc_free(d);
    if (!warranted) {
        aml_buf_puts(text, "\n\nNo FinCEN SAR XML: the case does not warrant a SAR.");
        return 0;
    }
    mcp_buf xml;
    mcp_buf_init(&xml, 0);
    aml_err err = {{0}};
    int rc = aml_fincen_xml(s, draft, n, aml_now(), &xml, &err);
    if (rc) {
        mcp_call_error(call, "Cannot draft FinCEN SAR XML: %s", err.msg);
        snprintf(detail, ndetail, "fincen-xml failed");
        mcp_buf_cleanup(&xml);
        return 1;
    }
    snprintf(uri, sizeof uri, "aml://sar/%s.xml", id);
    mcp_status st = mcp_call_resource_text(call, uri, "application/xml", xml.data, NULL);
    if (st == MCP_OK)
        aml_buf_printf(text,
                       "\n\nFinCEN SAR batch XML (EFL_SARXBatchSchema 1.2, %zu bytes) attached as %s: a draft for the "
                       "BSA officer; validate and file it through the BSA E-Filing System.",
                       xml.len, uri);
    snprintf(detail, ndetail, "sar draft with fincen-xml");
    mcp_buf_cleanup(&xml);
    if (st != MCP_OK) {
        mcp_call_error(call, "The XML could not be attached");
        return 1;
    }
    return 0;
}
