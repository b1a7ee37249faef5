# Packaging: man pages, and the Debian packages built with CPack (make deb,
# cmake/build_deb.sh; tests/check_deb.sh checks them).
#
#   component  package         contents
#   lib        libmcp0         the shared library libmcp.so.0
#   dev        libmcp-dev      headers, libmcp.so, libmcp.a, libmcp.pc, the CMake package
#   cli        mcp-cli         mcp-cli and its man page
#   aml        mcp-server-aml  mcp-server-aml and its man page
#
# Every install() rule names one of these components. What only a Debian
# package carries (/usr/share/doc/<package>/copyright and changelog.gz) is
# EXCLUDE_FROM_ALL: CPack installs it component by component, while a plain
# `cmake --install` leaves it out.

# mcp-deb-inputs builds what the packages hold and nothing else (not the
# examples, the conformance programs or the tests): cmake/build_deb.sh builds
# it with CMAKE_SKIP_INSTALL_ALL_DEPENDENCY, so that cpack builds no more.
add_custom_target(mcp-deb-inputs)
add_dependencies(mcp-deb-inputs mcp mcp_static)  # and each program (apps/*/CMakeLists.txt)

# ---------------------------------------------------------------------------
# Man pages, installed gzipped (Debian policy; man reads them anywhere).
find_program(MCP_GZIP gzip)
mark_as_advanced(MCP_GZIP)

# mcp_install_man(PAGE COMPONENT): installs PAGE (e.g. mcp-cli.1, relative
# to the calling directory) to share/man/man<section>.
function(mcp_install_man page component)
  get_filename_component(src ${page} ABSOLUTE)
  get_filename_component(name ${page} NAME)
  string(REGEX MATCH "[1-9]$" section "${name}")
  if(NOT MCP_GZIP)
    install(FILES ${src} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
    return()
  endif()
  set(copy ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(OUTPUT ${copy}.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${src} ${copy}
    COMMAND ${MCP_GZIP} -9nf ${copy}
    DEPENDS ${src}
    COMMENT "Compressing man page ${name}"
    VERBATIM)
  add_custom_target(man-${name} ALL DEPENDS ${copy}.gz)
  add_dependencies(mcp-deb-inputs man-${name})
  install(FILES ${copy}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
endfunction()

# ---------------------------------------------------------------------------
# Debian packages.
set(MCP_DEB_MAINTAINER "libmcp maintainers <maintainers@libmcp.invalid>" CACHE STRING
    "Maintainer field of the Debian packages (and their changelog): Name <address>")

set(MCP_DEB_COMPONENTS lib dev cli aml)
set(MCP_DEB_PACKAGE_lib libmcp0)
set(MCP_DEB_PACKAGE_dev libmcp-dev)
set(MCP_DEB_PACKAGE_cli mcp-cli)
set(MCP_DEB_PACKAGE_aml mcp-server-aml)

# The Debian changelog of this version (a native package: changelog.gz). Its
# date is the configure time, or SOURCE_DATE_EPOCH when that is set.
string(TIMESTAMP MCP_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in
  ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog @ONLY)
set(MCP_DEB_CHANGELOG ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.gz)
if(MCP_GZIP)
  add_custom_command(OUTPUT ${MCP_DEB_CHANGELOG}
    COMMAND ${MCP_GZIP} -9nkf ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog
    VERBATIM)
  add_custom_target(deb-changelog ALL DEPENDS ${MCP_DEB_CHANGELOG})
  add_dependencies(mcp-deb-inputs deb-changelog)
  foreach(c ${MCP_DEB_COMPONENTS})
    install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${MCP_DEB_CHANGELOG}
      DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${MCP_DEB_PACKAGE_${c}}
      COMPONENT ${c} EXCLUDE_FROM_ALL)
  endforeach()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libmcp)
set(CPACK_PACKAGE_VENDOR "libmcp")
set(CPACK_PACKAGE_CONTACT "${MCP_DEB_MAINTAINER}")
# Each package has its own summary (the first line of its description); CPack
# prepends the project-wide summary unless it is left at CPack's default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${MCP_DEB_COMPONENTS})
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libmcp0 declares its library in a shlibs file, so that packages linking it
# get "libmcp0 (>= VERSION)" from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(MCP_DEB_ABOUT
  "libmcp implements the Model Context Protocol (MCP) in C: a strict JSON
parser and writer, JSON-RPC 2.0, a JSON Schema validator, MCP servers (tools,
resources, prompts, completion) and clients in every protocol revision from
2024-11-05 to 2026-07-28, over stdio and Streamable HTTP, with OAuth 2.1
authorization on both sides.")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libmcp0)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DESCRIPTION "Model Context Protocol library for C
${MCP_DEB_ABOUT}

This package contains the shared library.")
# The loader cache is refreshed by libc's ldconfig trigger (Debian policy
# 8.1.1), not by maintainer scripts: CPack writes scripts that call ldconfig
# for a package with a shared library, and drop_scripts.cmake takes them out
# again once the package is built (CMake 3.19 and later).
# libcurl and libcrypto are loaded at run time (dlopen), so dpkg-shlibdeps
# does not see them.
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "libcurl4 (>= 7.68), libssl3 | libssl3t64")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/triggers)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_POST_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/debian/drop_scripts.cmake)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libmcp-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# libmcp.pc requires these modules (Requires.private), and the CMake package
# looks them up for mcp::mcp_static.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "libmcp0 (= ${PROJECT_VERSION}), libpcre2-dev, libmicrohttpd-dev, pkg-config | pkgconf")
set(CPACK_DEBIAN_DEV_DESCRIPTION "Model Context Protocol library for C (development files)
${MCP_DEB_ABOUT}

This package contains the headers, the static library, the pkg-config file
(libmcp) and the CMake package (find_package(mcp) gives mcp::mcp).")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME mcp-cli)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION net)
# Linked with the static library: libcurl (HTTP, OAuth) and libcrypto
# (PKCE) are loaded at run time, unseen by dpkg-shlibdeps.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "libcurl4 (>= 7.68), libssl3 | libssl3t64")
set(CPACK_DEBIAN_CLI_DESCRIPTION "command-line client for Model Context Protocol servers
mcp-cli connects to one MCP server, over stdio (it starts the server) or
Streamable HTTP, runs one request (list or call tools, read resources, get
prompts, complete arguments), prints the JSON result and says with its exit
status what kind of answer it got. It can sign in with OAuth 2.1.")

set(CPACK_DEBIAN_AML_PACKAGE_NAME mcp-server-aml)
set(CPACK_DEBIAN_AML_PACKAGE_SECTION net)
set(CPACK_DEBIAN_AML_DESCRIPTION "anti-money-laundering case work as a Model Context Protocol server
mcp-server-aml gives an MCP client (an LLM agent) the daily work of an AML
analyst as tools: find open cases, assess them against fourteen documented
money laundering typologies, get a recommendation with the SAR filing
deadline, and draft a Suspicious Activity Report from the case data. It
serves over stdio or Streamable HTTP (optionally as an OAuth 2.1 resource
server) on a SQLite case store, imports the IBM AMLworld and AMLSim
synthetic datasets, generates synthetic banks and keeps a hash-chained
audit log.")

include(CPack)
