/* mend-test-gate.c — a simulated upstream, its chats and a fake network monitor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by test-gate, bench-gate and bench-soak: chats (with or without a
 * MendGate) whose attempts an upstream answers from the turns' attempt
 * signal, in the virtual time of a MendManualClock.
 */

#include "config.h"

#include <string.h>

#include "mend-test-utils.h"
#include "mend-test-gate.h"

/* A network monitor whose availability the test sets. */

struct _MendTestFakeMonitor
{
  GObject  parent_instance;
  gboolean available;
};

static void fake_monitor_iface_init (GNetworkMonitorInterface *iface);
static void fake_monitor_initable_init (GInitableIface *iface);
G_DEFINE_TYPE_WITH_CODE (MendTestFakeMonitor, mend_test_fake_monitor, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, fake_monitor_initable_init)
                         G_IMPLEMENT_INTERFACE (G_TYPE_NETWORK_MONITOR, fake_monitor_iface_init))

enum { FAKE_PROP_0, FAKE_PROP_AVAILABLE, FAKE_PROP_METERED, FAKE_PROP_CONNECTIVITY };

static void
mend_test_fake_monitor_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  MendTestFakeMonitor *self = (MendTestFakeMonitor *) object;

  switch (prop_id)
    {
    case FAKE_PROP_AVAILABLE:
      g_value_set_boolean (value, self->available);
      break;
    case FAKE_PROP_METERED:
      g_value_set_boolean (value, FALSE);
      break;
    case FAKE_PROP_CONNECTIVITY:
      g_value_set_enum (value, self->available ? G_NETWORK_CONNECTIVITY_FULL : G_NETWORK_CONNECTIVITY_LOCAL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_test_fake_monitor_class_init (MendTestFakeMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = mend_test_fake_monitor_get_property;
  g_object_class_override_property (object_class, FAKE_PROP_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, FAKE_PROP_METERED, "network-metered");
  g_object_class_override_property (object_class, FAKE_PROP_CONNECTIVITY, "connectivity");
}

static void
fake_monitor_iface_init (GNetworkMonitorInterface *iface)
{
}

static gboolean
fake_monitor_initable_init_func (GInitable     *initable,
                                 GCancellable  *cancellable,
                                 GError       **error)
{
  return TRUE;
}

static void
fake_monitor_initable_init (GInitableIface *iface)
{
  iface->init = fake_monitor_initable_init_func;
}

static void
mend_test_fake_monitor_init (MendTestFakeMonitor *self)
{
  self->available = TRUE;
}

void
mend_test_fake_monitor_set (MendTestFakeMonitor *self,
                            gboolean             available)
{
  self->available = available;
  g_object_notify (G_OBJECT (self), "network-available");
  g_signal_emit_by_name (self, "network-changed", available);
}

/* The simulated upstream and its chats. */

static void
on_attempt (MendTurn        *turn,
            guint            n,
            GCancellable    *cancellable,
            MendTestGateSim *sim)
{
  g_array_append_val (sim->attempt_ms, sim->now_ms);

  /* A request lost on the way: no answer, no error, ever. */
  if (sim->unanswered > 0)
    {
      sim->unanswered--;
      if (sim->streaming)
        mend_turn_note_output (turn);
      return;
    }

  /* No network: the request never leaves the machine. */
  if (!sim->monitor->available)
    {
      g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE,
                                                      "Network is unreachable");
      g_autoptr(MendFailure) failure = mend_failure_new_from_error (error);

      mend_turn_fail (turn, failure);
      return;
    }

  if (!sim->down)
    {
      mend_turn_succeed (turn);
      return;
    }

  {
    SoupMessageHeaders *headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
    g_autoptr(MendFailure) failure = NULL;

    if (sim->retry_after != NULL)
      soup_message_headers_append (headers, "Retry-After", sim->retry_after);
    failure = mend_failure_new_from_http (sim->status, headers, NULL);
    soup_message_headers_unref (headers);
    mend_turn_fail (turn, failure);
  }
}

static void
on_turn_finished (MendChat        *chat,
                  MendTurn        *turn,
                  MendTestGateSim *sim)
{
  if (mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED)
    {
      guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (chat), "sim-index"));

      sim->served++;
      if (index < sim->served_at->len)
        g_array_append_val (g_ptr_array_index (sim->served_at, index), sim->now_ms);
    }
  else if (mend_turn_get_state (turn) == MEND_TURN_FAILED)
    sim->gave_up++;
}

void
mend_test_gate_sim_on_turn_started (MendChat        *chat,
                                    MendTurn        *turn,
                                    MendTestGateSim *sim)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), sim);
}

void
mend_test_gate_sim_init (MendTestGateSim *sim,
                         gboolean         with_gate,
                         guint            n_chats)
{
  memset (sim, 0, sizeof *sim);
  sim->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  sim->monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL);
  sim->attempt_ms = g_array_new (FALSE, FALSE, sizeof (gint64));
  sim->chats = g_ptr_array_new ();
  sim->served_at = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  sim->status = 503;
  if (with_gate)
    {
      sim->gate = mend_gate_new (sim->clock);
      mend_gate_set_network_monitor (sim->gate, G_NETWORK_MONITOR (sim->monitor));
    }

  for (guint i = 0; i < n_chats; i++)
    {
      g_autofree char *id = g_strdup_printf ("chat-%u", i);
      MendErrorPolicy *policy = mend_error_policy_new ();
      MendChat *chat;

      mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
      chat = g_object_new (MEND_TYPE_CHAT, "id", id, "clock", sim->clock, "policy", policy,
                           "gate", sim->gate, NULL);
      g_object_unref (policy);
      g_object_set_data (G_OBJECT (chat), "sim-index", GUINT_TO_POINTER (i));
      g_ptr_array_add (sim->served_at, g_array_new (FALSE, FALSE, sizeof (gint64)));
      g_signal_connect (chat, "turn-started", G_CALLBACK (mend_test_gate_sim_on_turn_started), sim);
      g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), sim);
      g_ptr_array_add (sim->chats, chat);
    }
}

void
mend_test_gate_sim_clear (MendTestGateSim *sim)
{
  for (guint i = 0; i < sim->chats->len; i++)
    {
      mend_chat_close (g_ptr_array_index (sim->chats, i));
      g_assert_finalize_object (g_ptr_array_index (sim->chats, i));
    }
  g_ptr_array_unref (sim->chats);
  g_ptr_array_unref (sim->served_at);
  g_array_unref (sim->attempt_ms);
  if (sim->gate != NULL)
    {
      mend_gate_set_network_monitor (sim->gate, NULL);
      g_assert_finalize_object (sim->gate);
    }
  g_assert_finalize_object (sim->monitor);
  g_assert_finalize_object (sim->clock);
}

void
mend_test_gate_sim_advance (MendTestGateSim *sim,
                            gint64           ms)
{
  /* In steps, so that attempts are stamped with their time. */
  for (gint64 left = ms; left > 0; )
    {
      gint64 step = MIN (left, 50);

      /* Attempts in this step are stamped with its end. */
      sim->now_ms += step;
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (sim->clock), step);
      left -= step;
    }
}

void
mend_test_gate_sim_submit_all (MendTestGateSim *sim)
{
  for (guint i = 0; i < sim->chats->len; i++)
    g_assert_true (mend_chat_submit (g_ptr_array_index (sim->chats, i), "Fix the build", NULL, NULL));
}

guint
mend_test_gate_sim_attempts_between (MendTestGateSim *sim,
                                     gint64           from_ms,
                                     gint64           to_ms)
{
  guint n = 0;

  for (guint i = 0; i < sim->attempt_ms->len; i++)
    {
      gint64 at = g_array_index (sim->attempt_ms, gint64, i);

      if (at >= from_ms && at < to_ms)
        n++;
    }

  return n;
}


/* Chats that work without a pause: each one whose turn ended sends the
 * next. */
void
mend_test_gate_sim_resubmit_idle (MendTestGateSim *sim)
{
  for (guint i = 0; i < sim->chats->len; i++)
    {
      MendChat *chat = g_ptr_array_index (sim->chats, i);

      if (mend_chat_get_turn (chat) == NULL &&
          mend_chat_get_lifecycle (chat) != MEND_LIFECYCLE_CLOSED)
        g_assert_true (mend_chat_submit (chat, "Next step", NULL, NULL));
    }
}

/* A flapping upstream: down for down_ms, then up for up_ms, from the
 * start, for total_ms; every every_ms the chats whose turn ended send the
 * next. */
void
mend_test_gate_sim_flap (MendTestGateSim *sim,
                         gint64           down_ms,
                         gint64           up_ms,
                         gint64           total_ms,
                         gint64           every_ms)
{
  gint64 start = sim->now_ms;

  mend_test_gate_sim_resubmit_idle (sim);
  while (sim->now_ms - start < total_ms)
    {
      sim->down = (sim->now_ms - start) % (down_ms + up_ms) < down_ms;
      mend_test_gate_sim_advance (sim, 50);
      if ((sim->now_ms - start) % every_ms == 0)
        mend_test_gate_sim_resubmit_idle (sim);
    }
}

/* The successes of chat @index within [from_ms, to_ms). */
guint
mend_test_gate_sim_served_between (MendTestGateSim *sim,
                                   guint            index,
                                   gint64           from_ms,
                                   gint64           to_ms)
{
  GArray *at = g_ptr_array_index (sim->served_at, index);
  guint n = 0;

  for (guint i = 0; i < at->len; i++)
    if (g_array_index (at, gint64, i) >= from_ms && g_array_index (at, gint64, i) < to_ms)
      n++;

  return n;
}
