/* SPDX-License-Identifier: MIT */
/* Marks scope's own programs: libscope_preload.so never records inside them. */

/* Exported from every tool's executable (see lib/CMakeLists.txt), so that
 * the library finds it with dlsym even when a whole machine preloads it
 * through /etc/ld.so.preload. */
__attribute__((visibility("default"), used)) const char scope_own_program[] = "scope";
