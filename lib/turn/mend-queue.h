/* mend-queue.h — MendQueue: the user's queued follow-ups, which no error eats
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

/**
 * MEND_QUEUE_DEFAULT_MAX_ITEMS:
 *
 * The default of [property@Mend.Queue:max-items].
 */
#define MEND_QUEUE_DEFAULT_MAX_ITEMS 16

/**
 * MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES:
 *
 * The default of [property@Mend.Queue:max-item-bytes].
 */
#define MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES 262144

#define MEND_TYPE_QUEUE (mend_queue_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendQueue, mend_queue, MEND, QUEUE, GObject)

MEND_AVAILABLE_IN_0_2
MendQueue     *mend_queue_new                (MendClock   *clock);
MEND_AVAILABLE_IN_0_2
MendQueueItem *mend_queue_push               (MendQueue   *self,
                                              const char  *text,
                                              const char  *provenance,
                                              GError     **error);
MEND_AVAILABLE_IN_0_2
MendQueueItem *mend_queue_insert_front       (MendQueue   *self,
                                              const char  *text,
                                              const char  *provenance,
                                              GError     **error);
MEND_AVAILABLE_IN_0_2
gboolean       mend_queue_remove             (MendQueue   *self,
                                              const char  *id,
                                              GError     **error);
MEND_AVAILABLE_IN_0_2
gboolean       mend_queue_replace_text       (MendQueue   *self,
                                              const char  *id,
                                              const char  *text,
                                              GError     **error);
MEND_AVAILABLE_IN_0_2
MendQueueItem *mend_queue_peek               (MendQueue   *self);
MEND_AVAILABLE_IN_0_2
MendQueueItem *mend_queue_pop                (MendQueue   *self);
MEND_AVAILABLE_IN_0_2
MendQueueItem *mend_queue_find               (MendQueue   *self,
                                              const char  *id);
MEND_AVAILABLE_IN_0_2
guint          mend_queue_get_length         (MendQueue   *self);
MEND_AVAILABLE_IN_0_2
guint          mend_queue_get_max_items      (MendQueue   *self);
MEND_AVAILABLE_IN_0_2
void           mend_queue_set_max_items      (MendQueue   *self,
                                              guint        max_items);
MEND_AVAILABLE_IN_0_2
guint          mend_queue_get_max_item_bytes (MendQueue   *self);
MEND_AVAILABLE_IN_0_2
void           mend_queue_set_max_item_bytes (MendQueue   *self,
                                              guint        max_item_bytes);

G_END_DECLS
