/* mend-test-gate.h — a simulated upstream, its chats and a fake network monitor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-gate.c (test-gate, bench-gate, bench-soak).
 */

#pragma once

#include "mend-test-utils.h"

G_BEGIN_DECLS

/* A network monitor whose availability the test sets. */
#define MEND_TEST_TYPE_FAKE_MONITOR (mend_test_fake_monitor_get_type ())
G_DECLARE_FINAL_TYPE (MendTestFakeMonitor, mend_test_fake_monitor, MEND_TEST, FAKE_MONITOR, GObject)

void      mend_test_fake_monitor_set       (MendTestFakeMonitor *self,
                                            gboolean             available);

/* Chats (with or without a MendGate) whose attempts an upstream answers
 * from the turns' attempt signal, in the virtual time of a
 * MendManualClock. */
typedef struct
{
  MendClock           *clock;
  MendGate            *gate;
  MendTestFakeMonitor *monitor;
  GPtrArray           *chats;
  GArray              *attempt_ms;   /* virtual time of every attempt */
  gboolean             down;
  guint                unanswered;   /* the next attempts that get no answer at all */
  gboolean             streaming;    /* ...or output, and then no end */
  guint                status;       /* what a down upstream answers */
  const char          *retry_after;  /* its Retry-After, or NULL */
  guint                served;       /* turns that succeeded */
  GPtrArray           *served_at;    /* per chat, a GArray of its successes' times */
  guint                gave_up;
  gint64               now_ms;
} MendTestGateSim;

/* The chats' MendChat::turn-started handler, which the upstream answers:
 * for a chat the test makes itself. */
void      mend_test_gate_sim_on_turn_started (MendChat        *chat,
                                              MendTurn        *turn,
                                              MendTestGateSim *sim);
void      mend_test_gate_sim_init          (MendTestGateSim *sim,
                                            gboolean         with_gate,
                                            guint            n_chats);
void      mend_test_gate_sim_clear         (MendTestGateSim *sim);
/* Advances the clock in steps of 50 ms, so that attempts are stamped with
 * their time. */
void      mend_test_gate_sim_advance       (MendTestGateSim *sim,
                                            gint64           ms);
void      mend_test_gate_sim_submit_all    (MendTestGateSim *sim);
guint     mend_test_gate_sim_attempts_between (MendTestGateSim *sim,
                                               gint64           from_ms,
                                               gint64           to_ms);
/* Chats that work without a pause: each one whose turn ended sends the
 * next. */
void      mend_test_gate_sim_resubmit_idle (MendTestGateSim *sim);
/* A flapping upstream: down for @down_ms, then up for @up_ms, from the
 * start, for @total_ms; every @every_ms the chats whose turn ended send
 * the next. */
void      mend_test_gate_sim_flap          (MendTestGateSim *sim,
                                            gint64           down_ms,
                                            gint64           up_ms,
                                            gint64           total_ms,
                                            gint64           every_ms);
/* The successes of chat @index within [@from_ms, @to_ms). */
guint     mend_test_gate_sim_served_between (MendTestGateSim *sim,
                                             guint            index,
                                             gint64           from_ms,
                                             gint64           to_ms);

G_END_DECLS
