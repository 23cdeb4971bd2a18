/* mend-chat.h — MendChat: one conversation, its queue, its turns and its subagents
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
 * MEND_CHAT_DEFAULT_CONTINUE_PROMPT:
 *
 * The default of [property@Mend.Chat:continue-prompt]: model-facing text,
 * not translated.
 */
#define MEND_CHAT_DEFAULT_CONTINUE_PROMPT "Continue the current turn"

/**
 * MEND_CHAT_CONTINUE_PROVENANCE:
 *
 * The [property@Mend.QueueItem:provenance] of the Continue item that a
 * give-up puts at the queue's head, so that a view tells it apart from
 * the user's own messages.
 */
#define MEND_CHAT_CONTINUE_PROVENANCE "{\"kind\":\"continue\"}"

/**
 * MEND_CHAT_STATE_VERSION:
 *
 * The version of the JSON that [method@Mend.Chat.save_state] writes; state
 * of a later version is refused.
 */
#define MEND_CHAT_STATE_VERSION 1

/**
 * MEND_CHAT_STATE_MAX_BYTES:
 *
 * The largest saved state [method@Mend.Chat.restore_state_from_file] reads.
 */
#define MEND_CHAT_STATE_MAX_BYTES (64 * 1024 * 1024)

#define MEND_TYPE_CHAT (mend_chat_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendChat, mend_chat, MEND, CHAT, GObject)

MEND_AVAILABLE_IN_0_2
MendChat        *mend_chat_new                 (MendErrorPolicy  *policy);
MEND_AVAILABLE_IN_0_2
MendChat        *mend_chat_new_with_sender     (MendSender       *sender,
                                                MendErrorPolicy  *policy);
MEND_AVAILABLE_IN_0_2
const char      *mend_chat_get_id              (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendLifecycle    mend_chat_get_lifecycle       (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendQueue       *mend_chat_get_queue           (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendTurn        *mend_chat_get_turn            (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy *mend_chat_get_policy          (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy *mend_chat_get_resume_policy   (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendClock       *mend_chat_get_clock           (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendGate        *mend_chat_get_gate            (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendSender      *mend_chat_get_sender          (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendSubagentRetry *mend_chat_get_subagents     (MendChat         *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_get_external_turn   (MendChat         *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_chat_get_continue_prompt (MendChat         *self);
MEND_AVAILABLE_IN_0_2
void             mend_chat_set_continue_prompt (MendChat         *self,
                                                const char       *continue_prompt);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_submit              (MendChat         *self,
                                                const char       *text,
                                                const char       *provenance,
                                                GError          **error);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_send_next           (MendChat         *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_retry               (MendChat         *self,
                                                GError          **error);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_get_can_retry       (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendRetryWait   *mend_chat_get_wait            (MendChat         *self);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_chat_get_last_failure    (MendChat         *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_chat_get_status_text     (MendChat         *self);
MEND_AVAILABLE_IN_0_2
guint            mend_chat_get_quiet_wait_ms   (MendChat         *self);
MEND_AVAILABLE_IN_0_2
void             mend_chat_set_quiet_wait_ms   (MendChat         *self,
                                                guint             quiet_wait_ms);
MEND_AVAILABLE_IN_0_2
void             mend_chat_stop                (MendChat         *self);
MEND_AVAILABLE_IN_0_2
void             mend_chat_close               (MendChat         *self);
MEND_AVAILABLE_IN_0_2
void             mend_chat_begin_external_turn (MendChat         *self);
MEND_AVAILABLE_IN_0_2
void             mend_chat_end_external_turn   (MendChat         *self);
MEND_AVAILABLE_IN_0_2
char            *mend_chat_save_state          (MendChat         *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_restore_state       (MendChat         *self,
                                                const char       *json,
                                                GError          **error);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_save_state_to_file  (MendChat         *self,
                                                const char       *path,
                                                GError          **error);
MEND_AVAILABLE_IN_0_2
gboolean         mend_chat_restore_state_from_file (MendChat     *self,
                                                const char       *path,
                                                GError          **error);

G_END_DECLS
