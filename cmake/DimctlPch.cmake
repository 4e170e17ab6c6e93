# Precompiled headers (DIMCTL_PCH; default ON with clang, OFF with GCC). The test binaries and
# the CLI spend seconds per translation unit parsing the same third-party headers (gtest/gmock,
# nlohmann/json, CLI11, spdlog, fmt). Each group parses them once, into a PCH owned by a small
# object library, and every target of the group reuses it (REUSE_FROM): one PCH compile per
# group, not per target.
#
# A PCH is only used when the reusing compile has the same flags and the same definitions of the
# macros its headers test; otherwise GCC silently falls back to parsing (CMake adds -Winvalid-pch,
# an error with DIMCTL_WERROR) and clang refuses it. So the holder gets the warnings, the
# directory-wide sanitizer flags and the usage requirements (FMT_SHARED, SPDLOG_*, GTEST_*) its
# users have. The PCH is only force-included: every file still includes what it uses, which a
# build with -DDIMCTL_PCH=OFF checks.
include_guard(GLOBAL)

# DIMCTL_PCH_LAZY: the compiler reads a PCH lazily (clang), so a PCH may hold headers only some
# of its users include. GCC reads all of a PCH into every compile: there a PCH holds only what
# (nearly) every user includes (tests/CMakeLists.txt, userspace/cli/CMakeLists.txt).
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(DIMCTL_PCH_LAZY ON)
else()
  set(DIMCTL_PCH_LAZY OFF)
endif()

# ON by default where reads are lazy (clang), OFF for GCC. Clang gains a quarter of a
# from-scratch build's CPU time, GCC a tenth (docs/BUILDING.md). And the GCC tree `make test`
# builds stays free of the force-included PCH, so it still fails on a file that leans on the PCH
# for an include.
option(DIMCTL_PCH "Precompile the heavy third-party headers of the tests and the CLI"
       ${DIMCTL_PCH_LAZY})

# dimctl_pch_holder(<name> HEADERS <h>... LIBS <targets>... [DEFINITIONS <d>...]): an object
# library that builds the PCH, for target_precompile_headers(<t> REUSE_FROM <name>).
function(dimctl_pch_holder name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS;DEFINITIONS" ${ARGN})
  set(src ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  if(NOT EXISTS ${src})
    file(WRITE ${src} "// Holds the precompiled header of ${name} (cmake/DimctlPch.cmake).\n")
  endif()
  add_library(${name} OBJECT ${src})
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  if(P_DEFINITIONS)
    target_compile_definitions(${name} PRIVATE ${P_DEFINITIONS})
  endif()
  dimctl_warnings(${name})
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
endfunction()
