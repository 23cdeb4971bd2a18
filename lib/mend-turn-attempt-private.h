/* mend-turn-attempt-private.h — one attempt of a turn: through the gate, to the sender, back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "mend-gate-private.h"
#include "mend-retry-wait.h"
#include "mend-sender.h"
#include "mend-verdict-private.h"

G_BEGIN_DECLS

/* The plumbing around a turn's attempts: its place in a gate, the sender
 * that runs them, the app's cancellable, and the waits between them. None
 * of it calls into the turn; it calls back through the functions given. */

/* A turn's membership of a gate. */
typedef struct
{
  MendGate  *gate;         /* shared with the chat's other turns, or NULL */
  char      *key;          /* the member's key: its chat's id */
  gulong     released_id;
  gboolean   admitted;     /* the running attempt was let through */
  gboolean   probing;      /* ...as the gate's probe */
} MendGateLink;

void           mend_gate_link_join      (MendGateLink       *self,
                                         MendGate           *gate,
                                         const char         *key,
                                         GCallback           on_released,
                                         gpointer            data);
void           mend_gate_link_leave     (MendGateLink       *self);
void           mend_gate_link_clear     (MendGateLink       *self);

/* MEND_GATE_GO when the attempt may start (it is then admitted), else the
 * hold in milliseconds or MEND_GATE_UNTIL_RELEASED. */
gint64         mend_gate_link_admit     (MendGateLink       *self,
                                         gboolean            retry);

/* Tells the gate how the admitted attempt ended (%NULL: a success). */
void           mend_gate_link_report    (MendGateLink       *self,
                                         MendFailure        *failure,
                                         MendFailureKind     kind);

/* Hands the admitted attempt's gate over to @context, which reports it. */
void           mend_gate_link_hand_over (MendGateLink       *self,
                                         MendAttemptContext *context);

/* The wait of an attempt the gate holds, spending nothing: @attempt is
 * the number of the retries made so far. */
MendRetryWait *mend_gate_link_new_hold  (MendGateLink       *self,
                                         MendClock          *clock,
                                         gint64              hold_ms,
                                         guint               attempt,
                                         guint               of,
                                         MendFailure        *failure);

/* The wait a retry verdict asks for, before retry number @attempt of @of. */
MendRetryWait *mend_turn_attempt_new_wait (MendVerdict      *verdict,
                                           MendClock        *clock,
                                           guint             attempt,
                                           guint             of);

/* Called once an attempt sent through a sender ended: @failure is %NULL
 * for a success, and a cancelled or failed send is a failure. */
typedef void (*MendAttemptSent) (MendTurn    *turn,
                                 guint        attempt,
                                 MendFailure *failure);

void           mend_turn_attempt_send   (MendSender         *sender,
                                         MendTurn           *turn,
                                         guint               attempt,
                                         GCancellable       *cancellable,
                                         MendAttemptSent     sent);

/* Calls @stop on @turn when @cancellable is cancelled, at once when this
 * thread may run @context, else on it; holds only a weak reference. */
gulong         mend_turn_attempt_watch  (GCancellable       *cancellable,
                                         MendTurn           *turn,
                                         GMainContext       *context,
                                         void              (*stop) (MendTurn *turn));

/* Disconnects the watch, unless the cancellable was cancelled (then its
 * handlers run, or have run, and the handler goes with the cancellable). */
void           mend_turn_attempt_unwatch (GCancellable      *cancellable,
                                          gulong            *handler_id);

G_END_DECLS
