/* mend-countdown-private.h — a clock's waits: their deadlines, and their countdowns on shared second boundaries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-clock.h"

G_BEGIN_DECLS

/* A wait's place on its clock: its deadline, and its countdown on the
 * clock's board. */
typedef struct _MendCountdownEntry MendCountdownEntry;

/* What a wait gives its clock once, for all its waits alike. */
typedef struct
{
  /* The properties whose notify:: handlers show the countdown: while one
   * of them has a handler, the wait is watched. %NULL after the last. */
  GParamSpec *shown[2];
  /* A whole second of the clock's time has come and the wait is watched:
   * it notifies what changed. */
  void      (*tick) (GObject *wait);
  /* The deadline has come: the clock took the wait off already, and its
   * entry is gone (nothing to remove); the wait ends. */
  void      (*fire) (GObject *wait);
} MendCountdownFuncs;

/* Puts @wait on @clock: @funcs->fire is called once, @delay_ms from now,
 * unless the entry is removed first. Meanwhile the watched waits of one
 * clock share one tick, on the whole seconds of the clock's monotonic
 * time, and there is none while no wait is watched: a wait nobody shows
 * costs nothing but its deadline. A watcher connected to a new wait, or
 * to one it reads (mend_countdown_read ()), is seen when the main loop
 * next runs (or a virtual clock next advances); beyond a few dozen
 * waits, one connected to an older wait is seen at the loop's first run
 * a second after the last look (the loop is never woken for it). Waits live
 * on the thread of the clock's main context, and are not referenced.
 * %NULL when the clock ran the timer inside add_timer (it was due): the
 * wait fired already. */
MendCountdownEntry *mend_countdown_add    (MendClock                *clock,
                                           GObject                  *wait,
                                           const MendCountdownFuncs *funcs,
                                           guint64                   delay_ms);
/* The app read what the wait shows: a handler it connected to show it
 * is seen when the main loop next runs, as for a new wait (beyond a few
 * dozen waits, others are looked at once a second, when the loop runs
 * anyway). */
void                mend_countdown_read   (MendCountdownEntry       *entry);
/* Takes the wait off its clock before its deadline, deadline and
 * countdown at once: it never fires. */
void                mend_countdown_remove (MendCountdownEntry       *entry);

G_END_DECLS
