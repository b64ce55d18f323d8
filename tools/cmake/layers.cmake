# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Include directories by layer (docs/architecture.md, "Layer rules").
#
# Sources include headers by their path from the source root ("hw/mlx5/mx5.h"), but the
# source root itself is on no include path: each layer's targets see their own folder
# (PRIVATE), and each layer exposes to the targets that link it only the headers it
# lists as public (PUBLIC or INTERFACE).  Both are trees of symbolic links under
# build/layers/<folder>/, so the paths in #include lines stay what they are.  An include
# of another layer's private header, or of a layer not linked, does not compile;
# tests/layers/test_include_order.py checks the direction of every include against the
# table in docs/architecture.md.
#
#   uv_layer_includes(<target> DIR <folder> [PUBLIC_HEADERS <file|glob>...])
#
# PUBLIC_HEADERS are relative to <folder> and may be globs (layouts/*.def).  One call per
# folder lists them; other targets built from the same folder call it without.

function(uv_layer_includes target)
  cmake_parse_arguments(L "" "DIR" "PUBLIC_HEADERS" ${ARGN})
  if(NOT L_DIR OR NOT IS_DIRECTORY ${CMAKE_SOURCE_DIR}/${L_DIR})
    message(FATAL_ERROR "uv_layer_includes(${target}): DIR '${L_DIR}' is not a folder of the tree")
  endif()
  string(REPLACE "/" "+" key ${L_DIR})
  set(root ${CMAKE_BINARY_DIR}/layers/${key})
  get_target_property(type ${target} TYPE)

  # The layer's own folder, whole (a link to the folder: new files need no reconfigure).
  get_filename_component(parent ${root}/private/${L_DIR} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${L_DIR} ${root}/private/${L_DIR} SYMBOLIC)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} PRIVATE ${root}/private)
  endif()

  if(L_PUBLIC_HEADERS)
    # Rebuilt at each configure, so a header dropped from the list is gone from it.
    # (REMOVE_RECURSE removes links, it never follows them.)
    file(REMOVE_RECURSE ${root}/public)
    set(n 0)
    foreach(pattern ${L_PUBLIC_HEADERS})
      file(GLOB files RELATIVE ${CMAKE_SOURCE_DIR}/${L_DIR} CONFIGURE_DEPENDS
           ${CMAKE_SOURCE_DIR}/${L_DIR}/${pattern})
      if(NOT files)
        message(FATAL_ERROR "uv_layer_includes(${target}): no ${L_DIR}/${pattern}")
      endif()
      foreach(h ${files})
        get_filename_component(d ${root}/public/${L_DIR}/${h} DIRECTORY)
        file(MAKE_DIRECTORY ${d})
        file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${L_DIR}/${h} ${root}/public/${L_DIR}/${h} SYMBOLIC)
        math(EXPR n "${n} + 1")
      endforeach()
    endforeach()
    if(type STREQUAL "INTERFACE_LIBRARY")
      target_include_directories(${target} INTERFACE ${root}/public)
    else()
      target_include_directories(${target} PUBLIC ${root}/public)
    endif()
  endif()
endfunction()
