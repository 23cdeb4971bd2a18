/* mend-queue-item-private.h — MendQueueItem's setters, for the queue only
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-queue-item.h"

G_BEGIN_DECLS

/* Items are made and edited by their queue only: to everyone else they are
 * read-only. @text must already be normalized and @provenance valid UTF-8. */
MendQueueItem *mend_queue_item_new      (const char    *id,
                                         const char    *text,
                                         const char    *provenance,
                                         gint64         queued_at);
void           mend_queue_item_set_text (MendQueueItem *self,
                                         const char    *text);
/* An item in the room kept for resume prompts, outside the user's. */
void           mend_queue_item_set_extra (MendQueueItem *self,
                                          gboolean       extra);
gboolean       mend_queue_item_get_extra (MendQueueItem *self);
/* A resume prompt its subagent retry took back: it never starts, even
 * when it was already out of the queue on its way to start. */
void           mend_queue_item_set_withdrawn (MendQueueItem *self);
gboolean       mend_queue_item_get_withdrawn (MendQueueItem *self);

G_END_DECLS
