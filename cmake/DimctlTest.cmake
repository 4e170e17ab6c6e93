# dimctl_add_test(NAME <name> LABEL unit|kernel|lab|e2e SOURCES ... LIBS ...)
# One gtest binary per call, each case registered in CTest with the given label.
function(dimctl_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest GTest::gtest_main)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  dimctl_warnings(${T_NAME})
  if(DIMCTL_PCH)
    # The shared PCH holds fmt, built with fmt's FMT_SHARED: a test that does not link fmt gets
    # the definition too, or its compiles could not use the PCH (cmake/DimctlPch.cmake).
    target_compile_definitions(${T_NAME} PRIVATE
                               $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)
    target_precompile_headers(${T_NAME} REUSE_FROM dimctl_test_pch)
  endif()
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT}
                       DISCOVERY_TIMEOUT 60)
endfunction()
