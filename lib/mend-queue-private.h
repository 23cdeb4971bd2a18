/* mend-queue-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-queue.h"

G_BEGIN_DECLS

/* The checks a message passes before it is queued — text normalized, not
 * blank, not too large, provenance valid — without queueing it, for a
 * message that runs at once. Returns the normalized text. */
char *mend_queue_check_message (MendQueue   *self,
                                const char  *text,
                                const char  *provenance,
                                GError     **error);

G_END_DECLS
