/* mend-manual-clock.h — MendManualClock: virtual time for tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include "mend-clock.h"

G_BEGIN_DECLS

#define MEND_TYPE_MANUAL_CLOCK (mend_manual_clock_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendManualClock, mend_manual_clock, MEND, MANUAL_CLOCK, MendClock)

MEND_AVAILABLE_IN_0_2
MendClock *mend_manual_clock_new             (gint64           wall_start_us);
MEND_AVAILABLE_IN_0_2
void       mend_manual_clock_advance         (MendManualClock *self,
                                              guint64          ms);
MEND_AVAILABLE_IN_0_2
gboolean   mend_manual_clock_advance_to_next (MendManualClock *self);
MEND_AVAILABLE_IN_0_2
guint      mend_manual_clock_get_n_pending   (MendManualClock *self);
MEND_AVAILABLE_IN_0_2
void       mend_manual_clock_jump_real_time  (MendManualClock *self,
                                              gint64           ms);

G_END_DECLS
