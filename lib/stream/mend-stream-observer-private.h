/* mend-stream-observer-private.h — MendStreamObserver's internals for its watch and the senders
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-failure.h"
#include "mend-sender.h"
#include "mend-stream-observer.h"

G_BEGIN_DECLS

/* Called instead of ending the app turn's attempt itself, when a `result`
 * line (or the end of the output) ends it: @failure is NULL for a
 * success. A sender that owns the agent, such as MendAgentProcess,
 * finishes its attempt with it, so that the turn hears of the result
 * through its sender. */
typedef void (*MendStreamObserverAttemptFunc) (MendStreamObserver *observer,
                                               MendTurn           *turn,
                                               MendFailure        *failure,
                                               gpointer            user_data);

void mend_stream_observer_set_attempt_func (MendStreamObserver            *self,
                                            MendStreamObserverAttemptFunc  func,
                                            gpointer                       user_data);

/* Ends the app turn's attempt in flight, if any, as the agent's output
 * ending would, and the agent's own turn. */
void mend_stream_observer_end_of_output    (MendStreamObserver            *self);
/* Ends only the agent's own turn, if one runs: for an owner that ended the
 * app's attempt itself. */
void mend_stream_observer_end_own_turn     (MendStreamObserver            *self);

/* An agent sender's own observer: it feeds the chat attached to @sender
 * (see mend_sender_attach_chat()), whichever it is at each line; with none,
 * only the turn whose attempt @sender runs, as the sender says with
 * mend_stream_observer_set_sender_turn(). @sender is not referenced. */
MendStreamObserver *mend_stream_observer_new_for_sender  (MendSender         *sender);
void                mend_stream_observer_set_sender_turn (MendStreamObserver *self,
                                                          MendTurn           *turn);

/* Whether a result line ends a turn the agent ran on its own (it names an
 * origin other than the user), not one the app asked for. */
gboolean mend_stream_observer_is_own_turn_result (JsonObject *object);

/* For the watch (mend-stream-observer-watch.c). */
void     mend_stream_observer_skip_line    (MendStreamObserver *self,
                                            const guint8       *start,
                                            gsize               length);
gboolean mend_stream_observer_set_watching (MendStreamObserver *self,
                                            gboolean            watching);

/* For tests: how many lines were fed, how many were parsed as JSON (token
 * deltas never are), and how many that could have mattered were unusable
 * (too long, not UTF-8, malformed, of the wrong types or missing a
 * member). */
guint64  mend_stream_observer_get_n_lines   (MendStreamObserver *self);
guint64  mend_stream_observer_get_n_parsed  (MendStreamObserver *self);
guint64  mend_stream_observer_get_n_ignored (MendStreamObserver *self);

G_END_DECLS
