# dimctl_warnings(<target>): the warning set for dimctl's own code (never for vendored code).
# -Werror only with DIMCTL_WERROR (ON in the project's own builds: Makefile, scripts/test.sh, CI).
function(dimctl_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast
                         -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # libbpf's LIBBPF_OPTS() macro expands to a GNU statement expression around a C99 compound
    # literal. GCC exempts expansions of system-header macros from -Wpedantic, clang 14 does not;
    # our own code is still held to both by the GCC build, which reports them outside such macros.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-gnu-statement-expression>
                           $<$<COMPILE_LANGUAGE:CXX>:-Wno-c99-extensions>)
  endif()
  if(DIMCTL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
