/* SPDX-License-Identifier: MIT */
/* The writer's last unmapping, the published arenas' eviction with it, on a process of its own. */
#ifndef SCOPE_WRITER_EVICT_H
#define SCOPE_WRITER_EVICT_H

/*
 * An arena's file goes with its last mapping and descriptor: the kernel
 * drops its pages and frees its blocks, which waits on the disk (a discard
 * on a mount with that option): tens of ms for the store of a run of 10^7
 * calls, about a quarter of a millisecond for each small child. The rest
 * of the writer's end is as slow: freeing what it held for the profile
 * (16 to 19 ms for fifty children and their parent) and unmapping it, all
 * while the run's command waits for the writer to exit.
 *
 * So, once the profile is published and the command told, evict_at_exit
 * starts a process that shares this one's memory (CLONE_VM) and waits for
 * it to exit. The writer then exits without freeing or unmapping: its
 * memory, the arenas' mappings among it, is still the other's, whose exit,
 * at the lowest priority, does it all while the command ends. The writer's
 * parent reaps it (a subreaper, scope-run) or init does. Returns 0, or -1
 * when no process could start (the writer's own exit then does it).
 */
int evict_at_exit(void);

#endif
