/* mend-queue-item.h — MendQueueItem: one message waiting in the queue
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

#define MEND_TYPE_QUEUE_ITEM (mend_queue_item_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendQueueItem, mend_queue_item, MEND, QUEUE_ITEM, GObject)

MEND_AVAILABLE_IN_0_2
const char *mend_queue_item_get_id         (MendQueueItem *self);
MEND_AVAILABLE_IN_0_2
const char *mend_queue_item_get_text       (MendQueueItem *self);
MEND_AVAILABLE_IN_0_2
const char *mend_queue_item_get_provenance (MendQueueItem *self);
MEND_AVAILABLE_IN_0_2
gint64      mend_queue_item_get_queued_at  (MendQueueItem *self);

G_END_DECLS
