/*
 * The case workflow tools (docs/aml.md, "Case workflow"): assignCase and
 * closeCase (scope aml.review) and reviewClosure (scope aml.approve), over
 * engine/workflow.h. The principal is the token's subject over HTTP with
 * authorization, else the server's --actor.
 */
#ifndef AML_TOOLS_WORKFLOW_H
#define AML_TOOLS_WORKFLOW_H

#include "tools/tools.h"

/** Registers assignCase, closeCase, reviewClosure and suppressAlert on `srv`. */
mcp_status aml_workflow_tools_register(mcp_server *srv, aml_app *app, mcp_error *err);
/** Registers suppressAlert (tools/suppress.c). */
mcp_status aml_suppress_tool_register(mcp_server *srv, aml_app *app, mcp_error *err);

#endif /* AML_TOOLS_WORKFLOW_H */
