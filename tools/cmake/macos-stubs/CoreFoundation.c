/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Link-time stand-in for CoreFoundation.framework: see IOKit.c beside this file. */
void CFStringCreateWithCString(void) {}
void CFStringGetCString(void) {}
void CFGetTypeID(void) {}
void CFDataGetTypeID(void) {}
void CFNumberGetTypeID(void) {}
void CFBooleanGetTypeID(void) {}
void CFStringGetTypeID(void) {}
void CFDataGetLength(void) {}
void CFDataGetBytePtr(void) {}
void CFNumberGetValue(void) {}
void CFBooleanGetValue(void) {}
void CFRelease(void) {}
