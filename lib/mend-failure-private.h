/* mend-failure-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-failure.h"

G_BEGIN_DECLS

/* The verdict is the one thing a policy sets on a failure after it is made. */
void mend_failure_set_kind    (MendFailure *self,
                               MendFailureKind kind);
void mend_failure_set_partial (MendFailure *self,
                               gboolean     partial);

/* Saved state: a failure's facts as a JSON object ({reason, status,
 * retryAfterMs, partial, message}), and back, classified by the default
 * policy; NULL, with *ok cleared, when the object is not one. */
void         mend_failure_build_state    (MendFailure *self,
                                          JsonBuilder *builder);
MendFailure *mend_failure_new_from_state (JsonObject  *object,
                                          gboolean    *ok);


G_END_DECLS
