/* mend-clock-private.h — MendClock's internals: its sources, for tests, and the countdowns' hook
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-clock.h"

G_BEGIN_DECLS

/* How many GSources the real clock keeps for its timers: one per
 * GMainContext that has a pending timer. For tests. */
guint mend_clock_get_n_sources (MendClock *self);

/* What a virtual clock calls before it runs its timers (the countdowns'
 * look for new watchers), as a main loop does each time it runs. */
void     mend_clock_set_poll_func (MendClock *self,
                                   void     (*poll) (gpointer data),
                                   gpointer   data);
void     mend_clock_poll          (MendClock *self);

G_END_DECLS
