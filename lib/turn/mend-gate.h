/* mend-gate.h — MendGate: one upstream's health, shared by the chats that use it
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

#define MEND_TYPE_GATE (mend_gate_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendGate, mend_gate, MEND, GATE, GObject)

MEND_AVAILABLE_IN_0_2
MendGate        *mend_gate_new                  (MendClock       *clock);
MEND_AVAILABLE_IN_0_2
MendGate        *mend_gate_get_for_uri          (const char      *uri);
MEND_AVAILABLE_IN_0_2
MendGateState    mend_gate_get_state            (MendGate        *self);
MEND_AVAILABLE_IN_0_2
MendClock       *mend_gate_get_clock            (MendGate        *self);
MEND_AVAILABLE_IN_0_2
GNetworkMonitor *mend_gate_get_network_monitor  (MendGate        *self);
MEND_AVAILABLE_IN_0_2
void             mend_gate_set_network_monitor  (MendGate        *self,
                                                 GNetworkMonitor *monitor);
MEND_AVAILABLE_IN_0_2
guint            mend_gate_get_failure_threshold (MendGate       *self);
MEND_AVAILABLE_IN_0_2
void             mend_gate_set_failure_threshold (MendGate       *self,
                                                  guint           threshold);
MEND_AVAILABLE_IN_0_2
guint            mend_gate_get_stagger_window_ms (MendGate       *self);
MEND_AVAILABLE_IN_0_2
void             mend_gate_set_stagger_window_ms (MendGate       *self,
                                                  guint           window_ms);
MEND_AVAILABLE_IN_0_2
guint            mend_gate_get_probe_timeout_ms (MendGate       *self);
MEND_AVAILABLE_IN_0_2
void             mend_gate_set_probe_timeout_ms (MendGate       *self,
                                                 guint           timeout_ms);
MEND_AVAILABLE_IN_0_2
gint64           mend_gate_get_next_check_ms    (MendGate        *self);

G_END_DECLS
