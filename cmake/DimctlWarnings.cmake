# dimctl_warnings(<target>): the warning set for dimctl's own code (never for vendored code).
# -Werror only with DIMCTL_WERROR (ON in the project's own builds: Makefile, scripts/test.sh, CI).
function(dimctl_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast
                         -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
  if(DIMCTL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
