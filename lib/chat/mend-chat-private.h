/* mend-chat-private.h — MendChat's internals for its saved state and its agent's readers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-owner-private.h"
#include "mend-chat.h"

G_BEGIN_DECLS

/* For restoring saved state (mend-chat-state.c): the turn that was
 * running or waiting, announced with turn-started, its attempt count kept;
 * see mend_turn_start_restored(). */
void mend_chat_restore_turn      (MendChat      *self,
                                  const char    *id,
                                  const char    *prompt,
                                  const char    *provenance,
                                  guint          attempt,
                                  gint64         delay_ms,
                                  MendFailure   *failure);
void mend_chat_restore_lifecycle (MendChat      *self,
                                  MendLifecycle  lifecycle);
/* The chat's stream observers: while one reads, a turn with no sender
 * is ended by what it reads, with no MendTurn::attempt handler. */
void mend_chat_reader_attached   (MendChat      *self,
                                  gboolean       attached);

/* What Retry would run again (see mend_chat_retry ()), for the saved
 * state: FALSE when nothing. The strings are the chat's. */
gboolean mend_chat_get_retry     (MendChat      *self,
                                  const char   **turn_id,
                                  const char   **prompt,
                                  const char   **provenance,
                                  const char   **continue_id);
/* And back, with the failure it gave up on (or NULL for a Stop), on a
 * chat restored with no turn. */
void     mend_chat_restore_retry (MendChat      *self,
                                  const char    *turn_id,
                                  const char    *prompt,
                                  const char    *provenance,
                                  const char    *continue_id,
                                  MendFailure   *failure);

/* The chat's thread, for the public functions of its other files. */
const MendOwner *mend_chat_get_owner (MendChat *self);

/* Emits @json, a record of a part of the chat's (its sender's), on
 * MendChat::record. */
void mend_chat_emit_record       (MendChat      *self,
                                  const char    *json);

/* While held, nothing starts: a submission queues, as during a restore. */
void mend_chat_hold_starts       (MendChat      *self,
                                  gboolean       hold);

G_END_DECLS
