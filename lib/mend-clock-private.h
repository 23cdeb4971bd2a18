/* mend-clock-private.h — MendClock's internals for tests that count its sources
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-clock.h"

G_BEGIN_DECLS

/* How many GSources the real clock keeps for its timers: one per
 * GMainContext that has a pending timer. For tests. */
guint mend_clock_get_n_sources (MendClock *self);

G_END_DECLS
