# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Read after CMake's platform files in the zig macOS build (aarch64-macos-zig.cmake
# says why): the run-path flag that Platform/Darwin.cmake sets only when sw_vers runs.
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-Wl,-rpath,")
