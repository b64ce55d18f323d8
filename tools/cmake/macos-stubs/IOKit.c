/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Link-time stand-in for IOKit.framework, for the macOS build on Linux only (zig 0.11
 * has no IOKit stubs and rejects -undefined dynamic_lookup for executables).  Built as
 * a dylib whose install name is IOKit's, so what links against it records
 * /System/Library/Frameworks/IOKit.framework/Versions/A/IOKit and binds to the real
 * framework when it runs on a Mac; these bodies never run.  Only the names matter: the
 * functions tools/uvinfo/pcipath_iokit.c calls. */
void IOServiceMatching(void) {}
void IOServiceGetMatchingServices(void) {}
void IOIteratorNext(void) {}
void IOObjectRelease(void) {}
void IOObjectConformsTo(void) {}
void IORegistryEntryCreateCFProperty(void) {}
void IORegistryEntryGetParentEntry(void) {}
void IORegistryEntryGetRegistryEntryID(void) {}
void IORegistryEntryGetChildIterator(void) {}
void IOObjectGetClass(void) {}
