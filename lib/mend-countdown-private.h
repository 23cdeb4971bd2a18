/* mend-countdown-private.h — the countdowns of a clock's waits, on shared second boundaries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-clock.h"

G_BEGIN_DECLS

/* A wait's place on its clock's board. */
typedef struct _MendCountdownEntry MendCountdownEntry;

/* What the board asks of a wait it counts down. */
typedef struct
{
  /* Whether the wait is still on the board (a tick's handler may have
   * ended it). */
  gboolean (*on_board) (GObject *wait);
  /* Whether anyone shows the countdown: a handler of its notifications. */
  gboolean (*watched) (GObject *wait);
  /* A whole second of the clock's time has come: the wait notifies what
   * changed. */
  void     (*tick)    (GObject *wait);
} MendCountdownFuncs;

/* The pending waits of one clock share one tick, on the whole seconds of
 * the clock's monotonic time, and only while one of them is watched: a
 * wait nobody shows costs nothing but its deadline. A watcher connected
 * at any time is seen when the main loop next runs (or a virtual clock
 * next advances). Waits live on the thread of the clock's main context. */
MendCountdownEntry *mend_countdown_add    (MendClock                *clock,
                                           GObject                  *wait,
                                           const MendCountdownFuncs *funcs);
void                mend_countdown_remove (MendCountdownEntry       *entry);

G_END_DECLS
