/* mend-gate-private.h — how a turn's attempts report to their MendGate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-gate.h"
#include "mend-retry-wait.h"

G_BEGIN_DECLS

/* The member's attempt may start now. */
#define MEND_GATE_GO 0
/* The member waits until the gate's "released" signal. */
#define MEND_GATE_UNTIL_RELEASED (-1)

/* Asks whether the attempt of the member @key may start now: MEND_GATE_GO
 * (and *probe set to the probe's number, never 0, when this attempt is the
 * one that checks a recovering upstream), a hold in milliseconds, or
 * MEND_GATE_UNTIL_RELEASED. */
gint64 mend_gate_admit    (MendGate    *self,
                           const char  *key,
                           gboolean     retry,
                           guint       *probe);

/* How the member's admitted attempt ended: %NULL for a success, else the
 * failure and the kind its turn's policy gave it. @probe is the number
 * admit gave, or 0. */
void   mend_gate_report   (MendGate        *self,
                           const char      *key,
                           MendFailure     *failure,
                           MendFailureKind  kind,
                           guint            probe);

/* A turn of the member @key joins the gate, or leaves it (its turn is done
 * or went away); a member whose turns all left has no place in it. */
void   mend_gate_join     (MendGate        *self,
                           const char      *key);
void   mend_gate_leave    (MendGate        *self,
                           const char      *key);

/* The usage limit a member met whose reset is after @now_us (wall µs):
 * the account's, which holds the members that continue at a reset; NULL
 * when none is known, or its reset has passed. A success forgets it. */
MendFailure *mend_gate_get_limit (MendGate        *self,
                                  gint64           now_us);
/* The probe @probe has output: the upstream answers. */
void   mend_gate_answered (MendGate        *self,
                           guint            probe);

/* The link of one member (a turn) to its gate. None of it calls into the
 * member; it calls back through the functions given. */
/* A turn's membership of a gate. */
typedef struct
{
  MendGate  *gate;         /* shared with the chat's other turns, or NULL */
  char      *key;          /* the member's key: its chat's id */
  gulong     released_id;
  gboolean   admitted;     /* the running attempt was let through */
  guint      probing;      /* ...as the gate's probe of this number, or 0 */
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

/* mend_gate_get_limit () of the link's gate; NULL without a gate. */
MendFailure   *mend_gate_link_get_limit (MendGateLink       *self,
                                         gint64              now_us);
/* The admitted attempt has output: a probe's is the upstream's answer. */
void           mend_gate_link_note_output (MendGateLink     *self);

/* Tells the gate how the admitted attempt ended, as
 * mend_gate_link_report() does, and returns how long the gate holds the
 * same attempt: while a failed probe leaves it open, until its next check;
 * else -1. */
gint64         mend_gate_link_settle    (MendGateLink       *self,
                                         MendFailure        *failure,
                                         MendFailureKind     kind);

/* The wait of an attempt the gate holds, spending nothing: @attempt is
 * the number of the retries made so far. */
MendRetryWait *mend_gate_link_new_hold  (MendGateLink       *self,
                                         MendClock          *clock,
                                         gint64              hold_ms,
                                         guint               attempt,
                                         guint               max_retries,
                                         MendFailure        *failure);

G_END_DECLS
