# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# What every tool's --version prints (tools/common/cli.h): the project's version and the
# build it came from (git describe at configure time, the build type, the compiler).
#
#   uv_tool_identity(<target>)
#
# The scripts (uvplot, hwcheck, vfio-bind) carry @UVERBS_VERSION@ / @UVERBS_TOOL_BUILD@
# placeholders that the install step fills in (tools/CMakeLists.txt); run from the source
# tree they read the version from this project's CMakeLists.txt and ask git.
execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} describe --always --dirty --tags
  OUTPUT_VARIABLE UVERBS_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT UVERBS_GIT_DESCRIBE)
  set(UVERBS_GIT_DESCRIBE "no git")
endif()
if(CMAKE_BUILD_TYPE)
  set(UVERBS_BUILD_KIND ${CMAKE_BUILD_TYPE})
else()
  set(UVERBS_BUILD_KIND "default")
endif()
if(UVERBS_SANITIZE)
  string(APPEND UVERBS_BUILD_KIND "+asan+ubsan")
endif()
set(UVERBS_TOOL_BUILD "${UVERBS_GIT_DESCRIBE}, ${UVERBS_BUILD_KIND}, ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}")

function(uv_tool_identity target)
  target_compile_definitions(${target} PRIVATE
    UVT_VERSION="${PROJECT_VERSION}" UVT_BUILD="${UVERBS_TOOL_BUILD}")
endfunction()
