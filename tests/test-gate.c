/* test-gate.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendGate: chats that share an upstream share its outage. Every test runs
 * in virtual time against a simulated upstream driven from the turns'
 * attempt signal, and a fake network monitor.
 */

#include <libmend.h>

#define WALL_START 1764500000000000

/* A network monitor whose availability the test sets. */

typedef struct { GObject parent; gboolean available; } FakeMonitor;
typedef struct { GObjectClass parent_class; } FakeMonitorClass;
static GType fake_monitor_get_type (void);
static void fake_monitor_iface_init (GNetworkMonitorInterface *iface);
static void fake_monitor_initable_init (GInitableIface *iface);
G_DEFINE_TYPE_WITH_CODE (FakeMonitor, fake_monitor, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, fake_monitor_initable_init)
                         G_IMPLEMENT_INTERFACE (G_TYPE_NETWORK_MONITOR, fake_monitor_iface_init))

enum { FAKE_PROP_0, FAKE_PROP_AVAILABLE, FAKE_PROP_METERED, FAKE_PROP_CONNECTIVITY };

static void
fake_monitor_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  FakeMonitor *self = (FakeMonitor *) object;

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
fake_monitor_class_init (FakeMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = fake_monitor_get_property;
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
fake_monitor_init (FakeMonitor *self)
{
  self->available = TRUE;
}

static void
fake_monitor_set (FakeMonitor *self,
                  gboolean     available)
{
  self->available = available;
  g_object_notify (G_OBJECT (self), "network-available");
  g_signal_emit_by_name (self, "network-changed", available);
}

/* The simulated upstream and its chats. */

typedef struct
{
  MendClock   *clock;
  MendGate    *gate;
  FakeMonitor *monitor;
  GPtrArray   *chats;
  GArray      *attempt_ms;   /* virtual time of every attempt */
  gboolean     down;
  guint        status;       /* what a down upstream answers */
  const char  *retry_after;  /* its Retry-After, or NULL */
  guint        served;       /* turns that succeeded */
  guint        gave_up;
  gint64       now_ms;
} Sim;

static void
on_attempt (MendTurn     *turn,
            guint         n,
            GCancellable *cancellable,
            Sim          *sim)
{
  g_array_append_val (sim->attempt_ms, sim->now_ms);

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
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Sim      *sim)
{
  if (mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED)
    sim->served++;
  else if (mend_turn_get_state (turn) == MEND_TURN_FAILED)
    sim->gave_up++;
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Sim      *sim)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), sim);
}

static void
sim_init (Sim      *sim,
          gboolean  with_gate,
          guint     n_chats)
{
  memset (sim, 0, sizeof *sim);
  sim->clock = mend_manual_clock_new (WALL_START);
  sim->monitor = g_object_new (fake_monitor_get_type (), NULL);
  sim->attempt_ms = g_array_new (FALSE, FALSE, sizeof (gint64));
  sim->chats = g_ptr_array_new ();
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
      g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), sim);
      g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), sim);
      g_ptr_array_add (sim->chats, chat);
    }
}

static void
sim_clear (Sim *sim)
{
  for (guint i = 0; i < sim->chats->len; i++)
    {
      mend_chat_close (g_ptr_array_index (sim->chats, i));
      g_assert_finalize_object (g_ptr_array_index (sim->chats, i));
    }
  g_ptr_array_unref (sim->chats);
  g_array_unref (sim->attempt_ms);
  if (sim->gate != NULL)
    {
      mend_gate_set_network_monitor (sim->gate, NULL);
      g_assert_finalize_object (sim->gate);
    }
  g_assert_finalize_object (sim->monitor);
  g_assert_finalize_object (sim->clock);
}

static void
sim_advance (Sim    *sim,
             gint64  ms)
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

static void
submit_all (Sim *sim)
{
  for (guint i = 0; i < sim->chats->len; i++)
    g_assert_true (mend_chat_submit (g_ptr_array_index (sim->chats, i), "Fix the build", NULL, NULL));
}

static guint
attempts_between (Sim    *sim,
                  gint64  from_ms,
                  gint64  to_ms)
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

/* Records of one chat, outcome and nextAt, for comparing two runs. */
static void
on_record (MendChat   *chat,
           const char *json,
           GString    *out)
{
  g_autoptr(GRegex) id = g_regex_new ("\"turnId\":\"[^\"]*\"", 0, 0, NULL);
  g_autofree char *same = g_regex_replace_literal (id, json, -1, 0, "\"turnId\":\"T\"", 0, NULL);

  /* Turn ids are random: the rest must match. */
  g_string_append_printf (out, "%s\n", same);
}

static void
test_one_chat_alone_behaves_as_without_a_gate (void)
{
  g_autoptr(GString) with = g_string_new (NULL);
  g_autoptr(GString) without = g_string_new (NULL);

  for (guint run = 0; run < 2; run++)
    {
      Sim sim;

      sim_init (&sim, run == 0, 1);
      sim.down = TRUE;
      g_signal_connect (g_ptr_array_index (sim.chats, 0), "record", G_CALLBACK (on_record),
                        run == 0 ? with : without);
      submit_all (&sim);
      sim_advance (&sim, 20000);
      /* A second turn, after a give-up, still alone. */
      sim.down = FALSE;
      g_assert_true (mend_chat_send_next (g_ptr_array_index (sim.chats, 0)) ||
                     mend_chat_submit (g_ptr_array_index (sim.chats, 0), "Again", NULL, NULL));
      sim_advance (&sim, 1000);
      g_assert_cmpuint (sim.gave_up, ==, 1);
      g_assert_cmpuint (sim.served, ==, 1);
      g_assert_cmpuint (sim.attempt_ms->len, ==, 6);
      sim_clear (&sim);
    }

  g_assert_cmpstr (with->str, ==, without->str);
}

static void
test_shared_hint_holds_the_others_released_staggered (void)
{
  Sim sim;
  GHashTable *distinct = g_hash_table_new (g_int64_hash, g_int64_equal);

  sim_init (&sim, TRUE, 10);
  sim.down = TRUE;
  sim.status = 429;
  sim.retry_after = "60";

  /* The first chat hears "come back in 60 s"... */
  g_assert_true (mend_chat_submit (g_ptr_array_index (sim.chats, 0), "First", NULL, NULL));
  g_assert_cmpuint (sim.attempt_ms->len, ==, 1);
  sim.down = FALSE;

  /* ...and the other nine wait for it too, without spending an attempt. */
  for (guint i = 1; i < 10; i++)
    {
      MendChat *chat = g_ptr_array_index (sim.chats, i);
      MendTurn *turn;
      g_autofree char *text = NULL;

      g_assert_true (mend_chat_submit (chat, "Next", NULL, NULL));
      turn = mend_chat_get_turn (chat);
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
      g_assert_true (mend_retry_wait_get_held (mend_turn_get_wait (turn)));
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
      text = mend_retry_wait_describe (mend_turn_get_wait (turn));
      g_assert_true (g_str_has_prefix (text, "Waiting for the service to recover"));
    }
  g_assert_cmpuint (sim.attempt_ms->len, ==, 1);

  sim_advance (&sim, 59900);
  g_assert_cmpuint (attempts_between (&sim, 1, 60000), ==, 0);
  sim_advance (&sim, 2200);

  /* All ten served, the nine spread over the stagger window. */
  g_assert_cmpuint (sim.served, ==, 10);
  g_assert_cmpuint (attempts_between (&sim, 60000, 62100), ==, 10);
  for (guint i = 1; i < sim.attempt_ms->len; i++)
    g_hash_table_add (distinct, &g_array_index (sim.attempt_ms, gint64, i));
  g_assert_cmpuint (g_hash_table_size (distinct), >=, 5);

  g_hash_table_unref (distinct);
  sim_clear (&sim);
}

static void
test_breaker_opens_probes_one_at_a_time_then_releases (void)
{
  Sim sim;
  gint64 recovered_at;
  guint during;

  sim_init (&sim, TRUE, 10);
  sim.down = TRUE;
  submit_all (&sim);
  sim_advance (&sim, 1000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OPEN);

  /* While open, one probe per check (every 2 s at most), not one attempt
   * per chat. */
  during = sim.attempt_ms->len;
  sim_advance (&sim, 59000);
  g_assert_cmpuint (sim.attempt_ms->len - during, <=, 59000 / 2000 + 1);
  for (gint64 second = 1000; second < 60000; second += 1000)
    g_assert_cmpuint (attempts_between (&sim, second, second + 1000), <=, 1);
  g_assert_cmpuint (sim.gave_up, ==, 0);

  /* Back: the next probe succeeds and the others follow, staggered. */
  sim.down = FALSE;
  recovered_at = sim.now_ms;
  sim_advance (&sim, 5000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  g_assert_cmpuint (sim.served, ==, 10);
  g_assert_cmpuint (sim.gave_up, ==, 0);
  for (gint64 second = recovered_at; second < sim.now_ms; second += 1000)
    g_assert_cmpuint (attempts_between (&sim, second, second + 1000), <=, 6);

  sim_clear (&sim);
}

static void
test_offline_spends_no_attempt_and_resumes_staggered (void)
{
  Sim sim;
  MendTurn *turn;
  g_autofree char *text = NULL;

  sim_init (&sim, TRUE, 5);
  fake_monitor_set (sim.monitor, FALSE);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OFFLINE);

  submit_all (&sim);
  sim_advance (&sim, 10 * 60 * 1000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 0);
  turn = mend_chat_get_turn (g_ptr_array_index (sim.chats, 0));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  text = mend_retry_wait_describe (mend_turn_get_wait (turn));
  g_assert_cmpstr (text, ==, "Waiting for the network to come back");

  /* Back online: every chat served within the stagger window, on its
   * first attempt. */
  fake_monitor_set (sim.monitor, TRUE);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  sim_advance (&sim, 2100);
  g_assert_cmpuint (sim.served, ==, 5);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 5);

  sim_clear (&sim);
}

static void
test_stop_while_held_ends_the_turn (void)
{
  Sim sim;
  MendChat *chat;

  sim_init (&sim, TRUE, 1);
  fake_monitor_set (sim.monitor, FALSE);
  chat = g_ptr_array_index (sim.chats, 0);
  g_assert_true (mend_chat_submit (chat, "Fix", NULL, NULL));
  mend_chat_stop (chat);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_READY);
  fake_monitor_set (sim.monitor, TRUE);
  sim_advance (&sim, 5000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 0);

  sim_clear (&sim);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Gate/one-chat-alone-behaves-as-without-a-gate", test_one_chat_alone_behaves_as_without_a_gate);
  g_test_add_func ("/Mend/Gate/shared-hint-holds-the-others-released-staggered", test_shared_hint_holds_the_others_released_staggered);
  g_test_add_func ("/Mend/Gate/breaker-opens-probes-one-at-a-time-then-releases", test_breaker_opens_probes_one_at_a_time_then_releases);
  g_test_add_func ("/Mend/Gate/offline-spends-no-attempt-and-resumes-staggered", test_offline_spends_no_attempt_and_resumes_staggered);
  g_test_add_func ("/Mend/Gate/stop-while-held-ends-the-turn", test_stop_while_held_ends_the_turn);

  return g_test_run ();
}
