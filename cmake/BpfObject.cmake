# BpfObject.cmake: build CO-RE BPF objects and their libbpf skeletons (libbpf-bootstrap style).
#
#   bpf_object(<name> <source.bpf.c> [DEPENDS <extra headers...>])
#
# compiles <source> with clang -target bpf, links/finalises it with `bpftool gen object`, and
# generates <name>.skel.h with `bpftool gen skeleton`, written to a temporary file and renamed in
# a second COMMAND so that a failing bpftool never leaves a truncated header behind. It defines
# the INTERFACE library `dimctl_bpf_<name>_skel` whose include directory holds <name>.skel.h.
# Link it into exactly ONE target (the collector): a custom command's output must not be
# depended on by several independent targets.
#
# Overridable cache variables:
#   BPFOBJECT_CLANG_EXE    clang used for -target bpf            (default: clang, clang-14)
#   BPFOBJECT_BPFTOOL_EXE  bpftool with `gen object/skeleton`    (default: bpftool in PATH/sbin)
#   BPFOBJECT_VMLINUX_H    directory holding the vmlinux.h dispatcher
#                          (default: bpf/include/vmlinux, vendored, see its README.md)
#   BPFOBJECT_EXTRA_CFLAGS extra flags for every BPF compile
#
# The libbpf headers (<bpf/bpf_helpers.h> ...) come from the libbpf package (pkg-config libbpf).
include_guard(GLOBAL)

find_program(BPFOBJECT_CLANG_EXE NAMES clang clang-14 DOC "clang for -target bpf")
find_program(BPFOBJECT_BPFTOOL_EXE NAMES bpftool PATHS /usr/sbin /sbin /usr/local/sbin DOC "bpftool")
set(BPFOBJECT_VMLINUX_H ${PROJECT_SOURCE_DIR}/bpf/include/vmlinux CACHE PATH
    "Directory with the vmlinux.h dispatcher for BPF builds")
set(BPFOBJECT_EXTRA_CFLAGS "" CACHE STRING "Extra clang flags for BPF objects")

# bpf_object_tools_ok(<outvar>): TRUE when clang and bpftool are usable; messages say why not.
function(bpf_object_tools_ok outvar)
  set(${outvar} FALSE PARENT_SCOPE)
  if(NOT BPFOBJECT_CLANG_EXE)
    message(WARNING "BpfObject: clang not found, BPF programs are not built")
    return()
  endif()
  if(NOT BPFOBJECT_BPFTOOL_EXE)
    message(WARNING "BpfObject: bpftool not found, BPF programs are not built")
    return()
  endif()
  execute_process(COMMAND ${BPFOBJECT_CLANG_EXE} --version OUTPUT_VARIABLE _clang_ver
                  RESULT_VARIABLE _rc ERROR_QUIET)
  if(NOT _rc EQUAL 0 OR NOT _clang_ver MATCHES "clang version ([0-9]+)")
    message(WARNING "BpfObject: cannot run ${BPFOBJECT_CLANG_EXE}")
    return()
  endif()
  if(CMAKE_MATCH_1 LESS 10)
    message(WARNING "BpfObject: clang ${CMAKE_MATCH_1} too old for CO-RE (need >= 10)")
    return()
  endif()
  execute_process(COMMAND ${BPFOBJECT_BPFTOOL_EXE} gen help OUTPUT_VARIABLE _gen_help
                  ERROR_VARIABLE _gen_help RESULT_VARIABLE _rc)
  if(NOT _gen_help MATCHES "skeleton" OR NOT _gen_help MATCHES "object")
    message(WARNING "BpfObject: ${BPFOBJECT_BPFTOOL_EXE} lacks `gen object`/`gen skeleton`")
    return()
  endif()
  set(${outvar} TRUE PARENT_SCOPE)
endfunction()

function(bpf_object name source)
  cmake_parse_arguments(B "" "" "DEPENDS" ${ARGN})
  pkg_check_modules(BPFOBJECT_LIBBPF REQUIRED libbpf)

  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(arch x86)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(arch arm64)
  else()
    message(FATAL_ERROR "BpfObject: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
  endif()

  get_filename_component(src ${source} ABSOLUTE)
  get_filename_component(src_dir ${src} DIRECTORY)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/bpf_${name})
  set(tmp_obj ${out_dir}/${name}.tmp.bpf.o)
  set(obj ${out_dir}/${name}.bpf.o)
  set(skel ${out_dir}/${name}.skel.h)
  get_filename_component(vmlinux_parent ${BPFOBJECT_VMLINUX_H} DIRECTORY)

  set(includes -I${src_dir}/include -I${vmlinux_parent})
  foreach(dir ${BPFOBJECT_LIBBPF_INCLUDE_DIRS})
    list(APPEND includes -I${dir})
  endforeach()
  # Header dependencies: everything under the BPF include tree plus the vendored vmlinux.h.
  file(GLOB_RECURSE hdrs CONFIGURE_DEPENDS ${src_dir}/include/*.h ${BPFOBJECT_VMLINUX_H}/*.h)
  separate_arguments(extra UNIX_COMMAND "${BPFOBJECT_EXTRA_CFLAGS}")
  # Warnings are errors in the project's own builds only, as for the C++ code (DIMCTL_WERROR).
  set(werror "")
  if(DIMCTL_WERROR)
    set(werror -Werror)
  endif()

  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${BPFOBJECT_CLANG_EXE} -g -O2 -target bpf -Wall ${werror} -D__TARGET_ARCH_${arch}
            ${includes} ${extra} -c ${src} -o ${tmp_obj}
    COMMAND ${BPFOBJECT_BPFTOOL_EXE} gen object ${obj} ${tmp_obj}
    DEPENDS ${src} ${hdrs} ${B_DEPENDS}
    COMMENT "BPF ${name}: clang -target bpf + bpftool gen object"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFOBJECT_BPFTOOL_EXE} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "BPF ${name}: bpftool gen skeleton"
    VERBATIM)
  add_custom_target(dimctl_bpf_${name}_gen DEPENDS ${skel})
  add_library(dimctl_bpf_${name}_skel INTERFACE)
  add_dependencies(dimctl_bpf_${name}_skel dimctl_bpf_${name}_gen)
  # SYSTEM: generated C code, not held to our C++ warning set (old-style casts ...).
  target_include_directories(dimctl_bpf_${name}_skel SYSTEM INTERFACE ${out_dir})
  target_link_libraries(dimctl_bpf_${name}_skel INTERFACE ${BPFOBJECT_LIBBPF_LINK_LIBRARIES})
  set_property(TARGET dimctl_bpf_${name}_skel PROPERTY DIMCTL_BPF_OBJECT ${obj})
endfunction()
