/* Compiled by the headers.c99 and headers.cxx tests: every public header
 * must stand alone and compile as C99 and as C++. */
#include "mcp/base.h"
#include "mcp/json.h"
#include "mcp/rpc.h"
#include "mcp/schema.h"
#include "mcp/server.h"
#include "mcp/transport.h"
#include "mcp/mcp.h"

int main(void)
{
    mcp_error err;
    mcp_error_clear(&err);
    return mcp_version_number() == 0;
}
