/* bench-gate.c — chats sharing an outage, with and without a MendGate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A simulation in virtual time: N chats (default 100) send a turn to an
 * upstream that is down for 60 s, then up; then N chats send a turn while
 * the network is gone for 10 minutes, then back. Each scenario runs with
 * the chats sharing one MendGate and with no gate, and prints what the
 * upstream saw. The figures are exact: nothing here depends on the
 * machine.
 *
 * usage: bench-gate [N]
 */

#include "mend-test-gate.h"

typedef struct
{
  guint  during;        /* requests before the upstream (or network) was back */
  guint  burst;         /* most requests in one second after it was back */
  gint64 all_served_ms; /* from back to the last chat served, or -1 */
  guint  attempts;      /* requests in all */
  guint  gave_up;
} Figures;

static Figures
run (gboolean with_gate,
     guint    n,
     gboolean offline)
{
  gint64 back_ms = offline ? 10 * 60 * 1000 : 60 * 1000;
  gint64 last_served = -1;
  guint served = 0;
  Figures f = { 0 };
  MendTestGateSim sim;

  mend_test_gate_sim_init (&sim, with_gate, n);
  if (offline)
    mend_test_fake_monitor_set (sim.monitor, FALSE);
  else
    sim.down = TRUE;

  mend_test_gate_sim_submit_all (&sim);
  mend_test_gate_sim_advance (&sim, back_ms);
  if (offline)
    mend_test_fake_monitor_set (sim.monitor, TRUE);
  else
    sim.down = FALSE;

  for (gint64 t = 0; t < 120 * 1000; t += 50)
    {
      mend_test_gate_sim_advance (&sim, 50);
      if (sim.served > served)
        {
          served = sim.served;
          last_served = sim.now_ms;
        }
    }

  f.during = mend_test_gate_sim_attempts_between (&sim, 0, back_ms);
  for (gint64 second = back_ms; second < sim.now_ms; second += 1000)
    f.burst = MAX (f.burst, mend_test_gate_sim_attempts_between (&sim, second, second + 1000));
  f.all_served_ms = sim.served == n ? last_served - back_ms : -1;
  f.attempts = sim.attempt_ms->len;
  f.gave_up = sim.gave_up;
  mend_test_gate_sim_clear (&sim);

  return f;
}

static void
print_result (const char *scenario,
              Figures     gate,
              Figures     none,
              guint       n)
{
  /* For tools/bench; the same as a table on stderr. */
  g_print ("RESULT gate scenario=%s chats=%u during_gate=%u during_none=%u burst_gate=%u burst_none=%u "
           "served_gate_ms=%" G_GINT64_FORMAT " served_none_ms=%" G_GINT64_FORMAT " "
           "attempts_gate=%u attempts_none=%u gave_up_gate=%u gave_up_none=%u\n",
           scenario, n, gate.during, none.during, gate.burst, none.burst,
           gate.all_served_ms, none.all_served_ms, gate.attempts, none.attempts,
           gate.gave_up, none.gave_up);
  g_printerr ("%s, %u chats: requests before it was back %u (no gate %u); most in one second after %u (%u); "
              "every chat served after %.1f s (%s); requests %u (%u); gave up %u (%u)\n",
              scenario, n, gate.during, none.during, gate.burst, none.burst,
              gate.all_served_ms / 1000.0, none.all_served_ms >= 0 ? "served" : "never",
              gate.attempts, none.attempts, gate.gave_up, none.gave_up);
}

int
main (int   argc,
      char *argv[])
{
  guint n = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 100;

  print_result ("outage", run (TRUE, n, FALSE), run (FALSE, n, FALSE), n);
  print_result ("offline", run (TRUE, n, TRUE), run (FALSE, n, TRUE), n);

  return 0;
}
