/* mend-gate-private.h — how a turn's attempts report to their MendGate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-gate.h"

G_BEGIN_DECLS

/* The member's attempt may start now. */
#define MEND_GATE_GO 0
/* The member waits until the gate's "released" signal. */
#define MEND_GATE_UNTIL_RELEASED (-1)

/* Asks whether the attempt of the member @key may start now: MEND_GATE_GO
 * (and *probe set when this attempt is the one that checks a recovering
 * upstream), a hold in milliseconds, or MEND_GATE_UNTIL_RELEASED. */
gint64 mend_gate_admit  (MendGate    *self,
                         const char  *key,
                         gboolean     retry,
                         gboolean    *probe);

/* How the member's admitted attempt ended: %NULL for a success, else the
 * failure and the kind its turn's policy gave it. */
void   mend_gate_report (MendGate        *self,
                         const char      *key,
                         MendFailure     *failure,
                         MendFailureKind  kind,
                         gboolean         probe);

G_END_DECLS
