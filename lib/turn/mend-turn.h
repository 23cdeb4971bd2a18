/* mend-turn.h — MendTurn: one prompt, retried with backoff until it ends
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
#include "mend-verdict.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_TURN (mend_turn_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendTurn, mend_turn, MEND, TURN, GObject)

MEND_AVAILABLE_IN_0_2
MendTurn        *mend_turn_new                 (const char      *prompt,
                                                MendErrorPolicy *policy);
MEND_AVAILABLE_IN_0_2
const char      *mend_turn_get_id              (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_turn_get_prompt          (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_turn_get_retry_of        (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_turn_get_provenance      (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy *mend_turn_get_policy          (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendClock       *mend_turn_get_clock           (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendTurnState    mend_turn_get_state           (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
guint            mend_turn_get_attempt         (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
guint            mend_turn_get_max_attempts    (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendRetryWait   *mend_turn_get_wait            (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendFailure     *mend_turn_get_last_failure    (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendVerdict     *mend_turn_get_last_verdict    (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_turn_get_output_seen     (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
const char      *mend_turn_get_agent_status    (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
MendSender      *mend_turn_get_sender          (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
void             mend_turn_set_sender          (MendTurn        *self,
                                                MendSender      *sender);
MEND_AVAILABLE_IN_0_2
void             mend_turn_start               (MendTurn        *self,
                                                GCancellable    *cancellable);
MEND_AVAILABLE_IN_0_2
void             mend_turn_succeed             (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
void             mend_turn_fail                (MendTurn        *self,
                                                MendFailure     *failure);
MEND_AVAILABLE_IN_0_2
void             mend_turn_add_text            (MendTurn        *self,
                                                const char      *text);
MEND_AVAILABLE_IN_0_2
void             mend_turn_note_output         (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
void             mend_turn_stop                (MendTurn        *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_turn_retry_now           (MendTurn        *self);

G_END_DECLS
