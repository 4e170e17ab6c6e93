# DIMCTL_SANITIZE: a comma-separated -fsanitize= list (e.g. "address,undefined") applied to every
# target this project defines (dimctl's own code; system libraries are not rebuilt). Compile and
# link both get -fsanitize=<list> -fno-omit-frame-pointer (readable stacks from the fast unwinder);
# UBSan additionally gets -fno-sanitize-recover=all so that a report aborts the process and fails
# the test instead of printing and carrying on. Runtime options (ASAN_OPTIONS, UBSAN_OPTIONS,
# LSAN_OPTIONS) are the test runner's business: see scripts/test.sh and docs/BUILDING.md.
include_guard(GLOBAL)
include(CheckCXXSourceCompiles)

set(DIMCTL_SANITIZE "" CACHE STRING
    "Sanitizers for dimctl's own targets, -fsanitize= syntax (e.g. address,undefined); empty: none")

if(DIMCTL_SANITIZE)
  set(_dimctl_san_flags -fsanitize=${DIMCTL_SANITIZE} -fno-omit-frame-pointer)
  if(DIMCTL_SANITIZE MATCHES "undefined")
    list(APPEND _dimctl_san_flags -fno-sanitize-recover=all)
  endif()
  # Fail at configure time, with the reason, rather than on the first link.
  set(CMAKE_REQUIRED_FLAGS "${_dimctl_san_flags}")
  string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${CMAKE_REQUIRED_FLAGS}")
  set(CMAKE_REQUIRED_LINK_OPTIONS ${_dimctl_san_flags})
  string(MAKE_C_IDENTIFIER "DIMCTL_SANITIZE_WORKS_${DIMCTL_SANITIZE}" _dimctl_san_check)
  check_cxx_source_compiles("int main() { return 0; }" ${_dimctl_san_check})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT ${_dimctl_san_check})
    message(FATAL_ERROR "DIMCTL_SANITIZE=${DIMCTL_SANITIZE}: ${CMAKE_CXX_COMPILER} cannot compile "
                        "and link with ${_dimctl_san_flags} (sanitizer runtime missing?)")
  endif()
  # Directory scope, set before any add_subdirectory(): every target of the project inherits it,
  # including C targets (the DIM reference implementation) and test executables.
  add_compile_options(${_dimctl_san_flags})
  add_link_options(${_dimctl_san_flags})
endif()
