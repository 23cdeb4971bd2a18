/* mend-verdict-private.h — how MendVerdict is made
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-verdict.h"

G_BEGIN_DECLS

/* What a turn does after a failed attempt. */
typedef enum
{
  MEND_VERDICT_RETRY,      /* wait delay-ms, then the next attempt */
  MEND_VERDICT_HOLD,       /* the gate holds the same attempt for delay-ms */
  MEND_VERDICT_EXHAUSTED,  /* transient, but the retries are used up */
  MEND_VERDICT_GIVE_UP,    /* permanent, a limit, or a hint beyond the horizon */
  MEND_VERDICT_STOP,       /* the user's Stop */
  MEND_VERDICT_AT_RESET,   /* a usage limit: wait for its reset, then try once */
} MendVerdictStep;

/* What the turn knows of the attempt that failed. */
typedef struct
{
  guint        attempt;          /* from 1 */
  guint        max_retries;      /* the turn's, fixed at its start */
  gboolean     output_seen;      /* output came before the failure */
  guint        delay_offset_ms;  /* the chat's stagger, added to a retry's delay */
  gint64       hold_ms;          /* a gate holds the same attempt this long, or -1 */
  gint64       now_us;           /* the wall clock's time, for a limit's reset */
  guint        reset_waits;      /* the limit resets the turn waited for */
} MendAttemptContext;

/* The kind @policy gives @failure in its context. After output was seen a
 * failure not made partial is judged as a partial copy, returned in
 * *judged (else @failure itself, referenced): @failure is never changed.
 * The policy's classify may be the app's and re-enter the turn. */
MendFailureKind mend_verdict_classify (MendErrorPolicy          *policy,
                                       MendFailure              *failure,
                                       gboolean                  output_seen,
                                       MendFailure             **judged);

/* The rest of the verdict on @judged, whose kind is @kind: the step and,
 * for a retry or a hold, the delay. */
MendVerdict    *mend_verdict_decide   (MendErrorPolicy          *policy,
                                       MendFailure              *judged,
                                       MendFailureKind           kind,
                                       const MendAttemptContext *context,
                                       MendVerdictStep          *step);

/* The verdict on attempt @attempt of @policy's own schedule (its
 * max-retries, and the stagger it gives @stagger_key) at wall-clock
 * @now_us: a subagent's.
 * @failure is classified first, in the same pass, unless @kind (not -1)
 * says how it was judged before. */
MendVerdict    *mend_verdict_reach    (MendErrorPolicy          *policy,
                                       MendFailure              *failure,
                                       int                       kind,
                                       guint                     attempt,
                                       const char               *stagger_key,
                                       gint64                    now_us,
                                       MendVerdictStep          *step);

/* The verdict on a restored turn's saved wait. */
MendVerdict    *mend_verdict_new      (MendFailure              *failure,
                                       MendFailureKind           kind,
                                       guint                     attempt,
                                       gint64                    delay_ms,
                                       gboolean                  server_hint);

G_END_DECLS
