# dim_ref: the plain-C reference of the kernel's DIM (ref_dim.c), the oracle of tests/unit/dim's
# differential test and the baseline of bench/dim's benchmarks. Both include this file: the
# first include defines the target, so it exists whichever of the two trees is configured.
if(NOT TARGET dim_ref)
  add_library(dim_ref STATIC ${CMAKE_CURRENT_LIST_DIR}/ref_dim.c)
  target_include_directories(dim_ref PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_compile_options(dim_ref PRIVATE -Wall -Wextra $<$<BOOL:${DIMCTL_WERROR}>:-Werror>)
endif()
