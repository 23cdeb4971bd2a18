/* mend-failure.h — MendFailure: the facts of one failed attempt, fixed when it is made
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "mend-enums.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_FAILURE_MAX_MESSAGE_BYTES:
 *
 * The most bytes of error text a [class@Mend.Failure] keeps as its message;
 * longer text is cut at a character boundary and ends with "…".
 */
#define MEND_FAILURE_MAX_MESSAGE_BYTES 4096

#define MEND_TYPE_FAILURE (mend_failure_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendFailure, mend_failure, MEND, FAILURE, GObject)

MEND_AVAILABLE_IN_0_2
MendFailure     *mend_failure_new_from_error          (const GError       *error);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_failure_new_from_http           (guint               status,
                                                       SoupMessageHeaders *headers,
                                                       GBytes             *body);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_failure_new_from_text           (const char         *detail);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_failure_new_empty_response      (void);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_failure_new_stopped             (void);
MEND_AVAILABLE_IN_0_2
MendFailureKind  mend_failure_get_kind                (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
MendReason       mend_failure_get_reason              (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
guint            mend_failure_get_status              (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
gint64           mend_failure_get_retry_after_ms      (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_failure_get_message             (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
const GError    *mend_failure_get_error               (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_failure_get_api_error_type      (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_failure_get_partial             (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_failure_get_rule                (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_failure_get_should_retry        (MendFailure        *self,
                                                       gboolean           *should_retry);


MEND_AVAILABLE_IN_0_2
gint64           mend_failure_get_resets_at           (MendFailure        *self);
MEND_AVAILABLE_IN_0_2
char            *mend_failure_describe                (MendFailure        *self);

G_END_DECLS
