/* mend-turn-private.h — MendTurn's internals for the chat and its senders
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-turn.h"

G_BEGIN_DECLS

/* Starts a turn restored from saved state, its attempt count kept: attempt
 * @attempt failed with @failure and its retry is due in @delay_ms (0: now),
 * or, with @delay_ms < 0, attempt @attempt was running and runs again. */
void mend_turn_start_restored (MendTurn    *self,
                               guint        attempt,
                               gint64       delay_ms,
                               MendFailure *failure);

/* Makes @gate, shared with the turns of other chats, hold and hear of
 * this turn's attempts; @key (the chat's id) places it in the gate's
 * stagger. Before the start. */
void mend_turn_set_gate       (MendTurn    *self,
                               MendGate    *gate,
                               const char  *key);

/* A reader of the agent's output (a stream observer) ends the attempts:
 * with no sender and no MendTurn::attempt handler the turn still runs. */
void mend_turn_set_read       (MendTurn    *self,
                               gboolean     read);

/* Set by the stream observer from the agent's own retry notices. */
void mend_turn_set_agent_status (MendTurn   *self,
                                 const char *status);

/* mend_turn_add_text () for libmend's senders, on the turn's thread
 * with text that is not NULL: ::text-delta while an attempt runs. */
void     mend_turn_emit_text  (MendTurn    *self,
                               const char  *text);
/* Whether ::text-delta has a handler (blocked or not). */
gboolean mend_turn_wants_text (MendTurn    *self);

/* Whether the turn ended: succeeded, failed or stopped. */
gboolean         mend_turn_is_finished         (MendTurn        *self);

G_END_DECLS
