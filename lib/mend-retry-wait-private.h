/* mend-retry-wait-private.h — MendRetryWait's JSON, for records and saved state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-retry-wait.h"

G_BEGIN_DECLS

/* Adds the wait's JSON object ({attempt, of, reason, nextAt}) as the next
 * value of @builder, for the records and entries that embed it. */
void mend_retry_wait_build_json (MendRetryWait *self,
                                 JsonBuilder   *builder);

G_END_DECLS
