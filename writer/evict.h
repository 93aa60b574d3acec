/* SPDX-License-Identifier: MIT */
/* The published arenas' last close, on a process of its own. */
#ifndef SCOPE_WRITER_EVICT_H
#define SCOPE_WRITER_EVICT_H

/*
 * An arena's file goes at its last close: the kernel drops its pages and
 * frees its blocks, which waits on the disk (a discard on a mount with that
 * option): tens of ms for the store of a run of 10^7 calls, about a quarter
 * of a millisecond for each small child. Done by the writer once the
 * profile is published, the run's command waits for it. So evict_apart
 * forks a process that holds every arena this writer has mapped, through
 * its copies of the mappings; the writer's own unmapping and closing are
 * then quick, and evict_apart_go lets that process go: its exit, at the
 * lowest priority, does the rest while the command ends. The writer's
 * parent reaps it (a subreaper, scope-run) or init does, once the writer
 * is gone. Returns the handle for evict_apart_go, or -1 when no process
 * could start (the writer then evicts them itself).
 */
int evict_apart(void);
void evict_apart_go(int handle);

#endif
