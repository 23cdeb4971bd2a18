/* mend-countdown.c — the countdowns of a clock's waits, on shared second boundaries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-clock-private.h"
#include "mend-countdown-private.h"

/* See mend-countdown-private.h. One board per clock, kept on the clock. */
typedef struct
{
  MendClock                *clock;   /* weak: the board is the clock's */
  const MendCountdownFuncs *funcs;
  GPtrArray                *waits;   /* GObject*, not referenced */
  guint                     tick_id;
  GSource                  *look;    /* a real clock's: new watchers, at no wakeup */
} Board;

typedef struct
{
  GSource  source;
  Board   *board;
} LookSource;

static GQuark
board_quark (void)
{
  return g_quark_from_static_string ("mend-countdown-board");
}

static void arm (Board *board);

static gboolean
any_watched (Board *board)
{
  for (guint i = 0; i < board->waits->len; i++)
    if (board->funcs->watched (g_ptr_array_index (board->waits, i)))
      return TRUE;
  return FALSE;
}

static void
on_tick (gpointer data)
{
  Board *board = data;
  g_autoptr(GPtrArray) waits = NULL;

  board->tick_id = 0;

  /* A handler may end or add waits, or drop the last reference to one. */
  waits = g_ptr_array_new_full (board->waits->len, g_object_unref);
  for (guint i = 0; i < board->waits->len; i++)
    g_ptr_array_add (waits, g_object_ref (g_ptr_array_index (board->waits, i)));
  for (guint i = 0; i < waits->len; i++)
    {
      GObject *wait = g_ptr_array_index (waits, i);
      guint index;

      if (g_ptr_array_find (board->waits, wait, &index))
        board->funcs->tick (wait);
    }

  arm (board);
}

/* The next tick, at the next whole second of the clock, while anyone
 * watches. */
static void
arm (Board *board)
{
  gint64 now;
  gint64 next;

  if (board->tick_id != 0 || board->waits->len == 0 || !any_watched (board))
    return;

  now = mend_clock_get_monotonic_time (board->clock);
  next = (now / G_USEC_PER_SEC + 1) * G_USEC_PER_SEC;
  board->tick_id = mend_clock_add_timeout (board->clock, (guint64) ((next - now + 999) / 1000),
                                           on_tick, board, NULL);
}

static void
board_poll (gpointer data)
{
  arm (data);
}

/* Looks for new watchers each time the main loop runs, and never wakes
 * it: ready at once only when a tick is to be armed. */
static gboolean
look_prepare (GSource *source,
              int     *timeout)
{
  Board *board = ((LookSource *) source)->board;

  *timeout = -1;
  return board->tick_id == 0 && any_watched (board);
}

static gboolean
look_dispatch (GSource     *source,
               GSourceFunc  callback,
               gpointer     user_data)
{
  arm (((LookSource *) source)->board);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs look_funcs = {
  .prepare = look_prepare,
  .dispatch = look_dispatch,
};

static void
stop (Board *board)
{
  if (board->tick_id != 0)
    mend_clock_remove_timeout (board->clock, board->tick_id);
  board->tick_id = 0;
  if (board->look != NULL)
    g_source_destroy (board->look);
  g_clear_pointer (&board->look, g_source_unref);
}

static void
board_free (gpointer data)
{
  Board *board = data;

  stop (board);
  g_ptr_array_unref (board->waits);
  g_free (board);
}

void
mend_countdown_add (MendClock                *clock,
                    GObject                  *wait,
                    const MendCountdownFuncs *funcs)
{
  Board *board = g_object_get_qdata (G_OBJECT (clock), board_quark ());

  if (board == NULL)
    {
      board = g_new0 (Board, 1);
      board->clock = clock;
      board->funcs = funcs;
      board->waits = g_ptr_array_new ();
      g_object_set_qdata_full (G_OBJECT (clock), board_quark (), board, board_free);
      if (!mend_clock_is_real (clock))
        mend_clock_set_poll_func (clock, board_poll, board);
    }

  g_ptr_array_add (board->waits, wait);

  if (board->look == NULL && mend_clock_is_real (clock))
    {
      board->look = g_source_new (&look_funcs, sizeof (LookSource));
      ((LookSource *) board->look)->board = board;
      g_source_set_priority (board->look, G_PRIORITY_DEFAULT_IDLE);
      g_source_set_static_name (board->look, "[mend] countdowns");
      g_source_attach (board->look, g_main_context_get_thread_default ());
    }
}

void
mend_countdown_remove (MendClock *clock,
                       GObject   *wait)
{
  Board *board = g_object_get_qdata (G_OBJECT (clock), board_quark ());

  if (board == NULL || !g_ptr_array_remove (board->waits, wait))
    return;

  /* Nothing pending: no tick, nothing to look at. */
  if (board->waits->len == 0)
    stop (board);
}
