/* mend-clock.h — MendClock: monotonic time and timeouts, real or virtual
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib-object.h>

#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_CLOCK (mend_clock_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_DERIVABLE_TYPE (MendClock, mend_clock, MEND, CLOCK, GObject)

/**
 * MendClockFunc:
 * @user_data: the data given to [method@Mend.Clock.add_timeout]
 *
 * Called once when a timer's deadline has come.
 */
typedef void (*MendClockFunc) (gpointer user_data);

/**
 * MendClockClass:
 * @parent_class: the parent class
 * @get_monotonic_time: the clock's monotonic time in microseconds
 * @get_real_time: the clock's wall-clock time in microseconds since the epoch
 * @add_timer: schedules @func at a monotonic deadline; returns a non-zero id.
 *   It calls @func later, never before it returns, even for a deadline that
 *   has come: a wait made with no delay is heard of by whoever connects to
 *   it once it is made
 * @remove_timer: removes a pending timer by id; returns %FALSE if it was not pending
 *
 * The virtual methods of a clock. The default implementations are the real
 * clock: GLib's monotonic and wall time, and one timer source per
 * [struct@GLib.MainContext] whatever the number of pending timers.
 */
struct _MendClockClass
{
  GObjectClass parent_class;

  gint64   (*get_monotonic_time) (MendClock      *self);
  gint64   (*get_real_time)      (MendClock      *self);
  guint    (*add_timer)          (MendClock      *self,
                                  gint64          deadline_us,
                                  MendClockFunc   func,
                                  gpointer        user_data,
                                  GDestroyNotify  notify);
  gboolean (*remove_timer)       (MendClock      *self,
                                  guint           timer_id);

  /*< private >*/
  gpointer _reserved[8];
};

MEND_AVAILABLE_IN_0_2
MendClock *mend_clock_get_default        (void);
MEND_AVAILABLE_IN_0_2
gint64     mend_clock_get_monotonic_time (MendClock      *self);
MEND_AVAILABLE_IN_0_2
gint64     mend_clock_get_real_time      (MendClock      *self);
MEND_AVAILABLE_IN_0_2
guint      mend_clock_add_timeout        (MendClock      *self,
                                          guint64         delay_ms,
                                          MendClockFunc   func,
                                          gpointer        user_data,
                                          GDestroyNotify  notify);
MEND_AVAILABLE_IN_0_2
gboolean   mend_clock_remove_timeout     (MendClock      *self,
                                          guint           timer_id);

G_END_DECLS
