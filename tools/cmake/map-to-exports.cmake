# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# cmake -DMAP=uverbs.map -DOUT=uverbs.exports -P map-to-exports.cmake
# A GNU ld version script's global patterns as an ld64 -exported_symbols_list: Mach-O
# symbol names carry a leading underscore, and ld64 takes the same * wildcards
# (ld(1): "-exported_symbols_list filename ... may contain wildcards").  Only the
# anonymous node's `global:` patterns are read; `local: *` is what an export list means.
file(READ "${MAP}" text)
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")   # comments
string(REGEX MATCH "global:([^}]*)local:" m "${text}")
if(NOT m)
  message(FATAL_ERROR "${MAP}: no 'global: ... local:' section")
endif()
string(REGEX MATCHALL "[A-Za-z0-9_*?]+[ \t]*;" pats "${CMAKE_MATCH_1}")
set(out "# Generated from ${MAP} by tools/cmake/map-to-exports.cmake; do not edit.\n")
foreach(p ${pats})
  string(REGEX REPLACE "[ \t]*;$" "" p "${p}")
  # The verbs API's names all contain "ibv"; the map's others are libc's (stat, open,
  # ...), defined by uverbs/kernel_paths_linux.c only, which ld64 could not export.
  if(NOT p MATCHES "ibv")
    continue()
  endif()
  string(APPEND out "_${p}\n")
endforeach()
file(WRITE "${OUT}.tmp" "${out}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
