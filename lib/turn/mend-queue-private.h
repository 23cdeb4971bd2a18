/* mend-queue-private.h — MendQueue's internals for the chat and its saved state
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

/* Appends an item read back from saved state, keeping its id; later ids
 * never collide with it. Same checks as push, and a taken id is refused.
 * It is not announced: mend_queue_announce_restored() announces the
 * items restored together, once all are in, so that no handler takes the
 * id or the room of one still to come. */
/* The room for resume prompts, beside the user's max-items: as many as
 * the failed subagents a chat keeps, so that resumes never take the
 * user's room, nor the user's the resumes'. */
#define MEND_QUEUE_MAX_EXTRA_ITEMS 32

MendQueueItem *mend_queue_restore_item (MendQueue   *self,
                                        const char  *id,
                                        const char  *text,
                                        const char  *provenance,
                                        gint64       queued_at,
                                        gboolean     extra,
                                        GError     **error);
void           mend_queue_announce_restored (MendQueue *self,
                                             guint      position,
                                             guint      n);
/* A resume prompt's item, checked and with its id, handed out in @item
 * (transfer full) before anyone hears of it: appended in its room when
 * @push, else for the caller to run at once. On an error, @item is left
 * as it was and nothing changes. */
gboolean       mend_queue_add_prompt   (MendQueue      *self,
                                        const char     *text,
                                        const char     *provenance,
                                        gboolean        push,
                                        MendQueueItem **item,
                                        GError        **error);
gboolean       mend_queue_has_item     (MendQueue     *self,
                                        MendQueueItem *item);
guint          mend_queue_get_n_user   (MendQueue   *self);
/* Puts an item just popped back at the head, as it was, whatever the
 * limits: a pop that could not be followed through loses nothing. */
void           mend_queue_put_back     (MendQueue     *self,
                                        MendQueueItem *item);

/* Whether the queue holds max-items items. */
gboolean       mend_queue_is_full            (MendQueue   *self);

/* The text as the queue keeps it (CRLF and CR as LF), or NULL with a
 * MEND_QUEUE_ERROR when it is blank or too large. */
char          *mend_queue_normalize_text     (MendQueue   *self,
                                              const char  *text,
                                              GError     **error);

G_END_DECLS
