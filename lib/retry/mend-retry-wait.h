/* mend-retry-wait.h — MendRetryWait: one wait before a retry, as the UI draws it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-enums.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_RETRY_WAIT (mend_retry_wait_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendRetryWait, mend_retry_wait, MEND, RETRY_WAIT, GObject)

MEND_AVAILABLE_IN_0_2
MendRetryWait      *mend_retry_wait_new              (MendClock            *clock,
                                                      guint64               delay_ms,
                                                      guint                 attempt,
                                                      guint                 max_retries,
                                                      MendReason            reason);
MEND_AVAILABLE_IN_0_2
MendClock          *mend_retry_wait_get_clock        (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
guint               mend_retry_wait_get_attempt      (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
guint               mend_retry_wait_get_max_retries  (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
MendReason          mend_retry_wait_get_reason       (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
MendFailure        *mend_retry_wait_get_failure      (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
guint64             mend_retry_wait_get_delay_ms     (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gint64              mend_retry_wait_get_started_at   (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gint64              mend_retry_wait_get_next_at      (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_get_server_hint  (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
MendRetryWaitState  mend_retry_wait_get_state        (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gint64              mend_retry_wait_get_remaining_ms (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
guint               mend_retry_wait_get_remaining_seconds (MendRetryWait   *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_get_held         (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_get_at_reset     (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_fire_now         (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_cancel           (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
char               *mend_retry_wait_describe         (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
char               *mend_retry_wait_to_json          (MendRetryWait        *self);
MEND_AVAILABLE_IN_0_2
void                mend_retry_wait_run_async        (MendRetryWait        *self,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
MEND_AVAILABLE_IN_0_2
gboolean            mend_retry_wait_run_finish       (MendRetryWait        *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

G_END_DECLS
