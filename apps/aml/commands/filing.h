/*
 * The filing commands: `config` (operator settings such as the SAR filer,
 * store/config.h) and `sar` (a SAR draft of a case as JSON or FinCEN SAR
 * XML, engine/fincen.h). See docs/aml.md, "Filing a SAR".
 */
#ifndef AML_COMMANDS_FILING_H
#define AML_COMMANDS_FILING_H

#include "engine/fincen.h"

/** mcp-server-aml config (set|unset|get|list) ...: a process exit status. */
int aml_cmd_config(int argc, char **argv);
/** mcp-server-aml sar [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]: a process exit status. */
int aml_cmd_sar(int argc, char **argv);

#endif /* AML_COMMANDS_FILING_H */
