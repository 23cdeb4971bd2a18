/* mend-countdown.c — a clock's waits: their deadlines, and their countdowns on shared second boundaries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-clock-private.h"
#include "mend-countdown-private.h"

/* See mend-countdown-private.h. One board per clock and main context,
 * kept on the clock; each is used on its context's thread only. */
typedef struct
{
  MendClock                *clock;   /* weak: the board is the clock's */
  GMainContext             *context; /* not referenced: a key */
  const MendCountdownFuncs *funcs;
  guint                     notify_id;
  GQueue                    waits;   /* GObject*, not referenced */
  GQueue                    fresh;   /* added since the loop last looked */
  guint                     tick_id;
  GSource                  *look;    /* a real clock's: new watchers, at no wakeup */
  gint64                    looked_all_us;
} Board;

struct _MendCountdownEntry
{
  GList   link;                      /* its data: the wait, until it is off */
  Board  *board;
  GQueue *queue;                     /* the board's waits or fresh, or NULL */
  guint   timer_id;                  /* the deadline's */
  guint   ref_count;                 /* the deadline's timer, and a tick's */
};

typedef struct
{
  GSource  source;
  Board   *board;
} LookSource;

typedef struct
{
  GMutex      lock;
  GHashTable *boards;                /* GMainContext* → Board* */
} Boards;

/* Up to this many waits, the main loop's look goes over all of them each
 * time it runs; beyond, over all of them once a second at most, when the
 * loop runs anyway (it is never woken for a look), and over those added
 * or read since each time. */
#define LOOK_ALL_MAX 64
#define LOOK_ALL_US  G_USEC_PER_SEC

static GQuark
boards_quark (void)
{
  return g_quark_from_static_string ("mend-countdown-boards");
}

static void arm  (Board *board);
static void stop (Board *board);

static MendCountdownEntry *
entry_ref (MendCountdownEntry *entry)
{
  entry->ref_count++;
  return entry;
}

static void
entry_unref (gpointer data)
{
  MendCountdownEntry *entry = data;

  if (--entry->ref_count == 0)
    g_free (entry);
}

/* Whether anyone shows the countdown of @wait: a handler of the
 * notification of one of the properties its funcs name. */
static gboolean
watched (Board   *board,
         GObject *wait)
{
  const MendCountdownFuncs *funcs = board->funcs;

  for (guint i = 0; i < G_N_ELEMENTS (funcs->shown) && funcs->shown[i] != NULL; i++)
    if (g_signal_has_handler_pending (wait, board->notify_id,
                                      g_param_spec_get_name_quark (funcs->shown[i]), FALSE))
      return TRUE;
  return FALSE;
}

static gboolean
queue_watched (Board  *board,
               GQueue *queue)
{
  for (GList *l = queue->head; l != NULL; l = l->next)
    if (watched (board, l->data))
      return TRUE;
  return FALSE;
}

/* Takes the entry off its board: it ticks and fires no more. */
static void
take_off (MendCountdownEntry *entry)
{
  Board *board = entry->board;

  g_queue_unlink (entry->queue, &entry->link);
  entry->link.data = NULL;
  entry->queue = NULL;

  /* Nothing pending: no tick, nothing to look at. */
  if (board->waits.length == 0 && board->fresh.length == 0)
    stop (board);
}

/* The fresh waits join the others once looked at. */
static void
settle_fresh (Board *board)
{
  GList *l;

  while ((l = g_queue_pop_head_link (&board->fresh)) != NULL)
    {
      ((MendCountdownEntry *) l)->queue = &board->waits;
      g_queue_push_tail_link (&board->waits, l);
    }
}

static gboolean
any_watched (Board    *board,
             gboolean  all)
{
  gboolean watched = queue_watched (board, &board->fresh) ||
                     (all && queue_watched (board, &board->waits));

  settle_fresh (board);
  return watched;
}

/* A whole second: the watched waits tick. */
static void
on_tick (gpointer data)
{
  Board *board = data;
  /* A handler may drop the last wait of an app's clock that does not
   * hold itself while it runs a timer: the board lives until it is done. */
  g_autoptr(MendClock) clock = g_object_ref (board->clock);
  g_autoptr(GPtrArray) entries = NULL;

  board->tick_id = 0;
  settle_fresh (board);

  /* A handler may end or add waits, or drop the last reference to one:
   * each entry is held, and its wait ticked only while it is still on the
   * board. */
  entries = g_ptr_array_new_full (board->waits.length, entry_unref);
  for (GList *l = board->waits.head; l != NULL; l = l->next)
    g_ptr_array_add (entries, entry_ref ((MendCountdownEntry *) l));
  for (guint i = 0; i < entries->len; i++)
    {
      GObject *wait = ((MendCountdownEntry *) g_ptr_array_index (entries, i))->link.data;

      if (wait != NULL && watched (board, wait))
        {
          g_object_ref (wait);
          board->funcs->tick (wait);
          g_object_unref (wait);
        }
    }

  arm (board);
}

/* The deadline: the wait is taken off, then fires. */
static void
on_deadline (gpointer data)
{
  MendCountdownEntry *entry = data;
  GObject *wait = entry->link.data;
  const MendCountdownFuncs *funcs;

  /* Off already: a clock that failed to remove the timer. */
  if (wait == NULL)
    return;

  g_object_ref (wait);
  funcs = entry->board->funcs;
  entry->timer_id = 0;
  take_off (entry);
  funcs->fire (wait);
  g_object_unref (wait);
}

/* The next tick, at the next whole second of the clock, while anyone
 * watches. */
static void
arm (Board *board)
{
  gint64 now;
  gint64 next;

  if (board->tick_id != 0 || !any_watched (board, TRUE))
    return;

  now = mend_clock_get_monotonic_time (board->clock);
  next = (now / G_USEC_PER_SEC + 1) * G_USEC_PER_SEC;
  board->tick_id = mend_clock_add_timeout (board->clock, (guint64) ((next - now + 999) / 1000),
                                           on_tick, board, NULL);
}

static Board *board_lookup (MendClock    *clock,
                            GMainContext *context,
                            gboolean      create);

/* A virtual clock is about to run its timers: the board of the thread
 * that advances it looks for new watchers. */
static GMainContext *thread_context (void);

static void
board_poll (gpointer data)
{
  Board *board = board_lookup (data, thread_context (), FALSE);

  if (board != NULL)
    arm (board);
}

/* Looks for new watchers each time the main loop runs, and never wakes
 * it: ready at once only when a tick is to be armed. The new waits (and
 * those read since: who shows a countdown reads it) each time, all of
 * them once a second at most, so that a loop with a hundred thousand
 * waits pending does not pay for each at every turn, and a loop whose
 * waits nobody watches sleeps until their deadlines. */
static gboolean
look_prepare (GSource *source,
              int     *timeout)
{
  Board *board = ((LookSource *) source)->board;
  gint64 now;
  gboolean all;

  *timeout = -1;
  if (board->tick_id != 0)
    return FALSE;

  all = board->waits.length <= LOOK_ALL_MAX;
  if (!all)
    {
      now = g_source_get_time (source);
      all = now - board->looked_all_us >= LOOK_ALL_US;
      if (all)
        board->looked_all_us = now;
    }
  return any_watched (board, all);
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

  g_assert (board->waits.length == 0 && board->fresh.length == 0);

  stop (board);
  g_free (board);
}

/* The board a thread used last, so that making a wait takes no lock:
 * valid while no clock's boards were freed since (any clock's finalize
 * bumps the generation). */
typedef struct
{
  MendClock    *clock;
  GMainContext *context;
  Board        *board;
  guint         generation;
} LastBoard;

static GPrivate last_board = G_PRIVATE_INIT (g_free);
static guint boards_generation;

static void
boards_free (gpointer data)
{
  Boards *boards = data;

  g_atomic_int_inc (&boards_generation);

  g_hash_table_unref (boards->boards);
  g_mutex_clear (&boards->lock);
  g_free (boards);
}

/* The board of @clock for @context; the clock's real timers are shared by
 * threads, its boards are not. */
static Board *
board_lookup (MendClock    *clock,
              GMainContext *context,
              gboolean      create)
{
  static GMutex init_lock;
  Boards *boards;
  Board *board;

  g_mutex_lock (&init_lock);
  boards = g_object_get_qdata (G_OBJECT (clock), boards_quark ());
  if (boards == NULL && create)
    {
      boards = g_new0 (Boards, 1);
      g_mutex_init (&boards->lock);
      boards->boards = g_hash_table_new_full (NULL, NULL, NULL, board_free);
      g_object_set_qdata_full (G_OBJECT (clock), boards_quark (), boards, boards_free);
      mend_clock_set_poll_func (clock, board_poll, clock);
    }
  g_mutex_unlock (&init_lock);
  if (boards == NULL)
    return NULL;

  g_mutex_lock (&boards->lock);
  board = g_hash_table_lookup (boards->boards, context);
  if (board == NULL && create)
    {
      board = g_new0 (Board, 1);
      board->clock = clock;
      board->context = context;
      board->notify_id = g_signal_lookup ("notify", G_TYPE_OBJECT);
      g_queue_init (&board->waits);
      g_queue_init (&board->fresh);
      g_hash_table_insert (boards->boards, context, board);
    }
  g_mutex_unlock (&boards->lock);

  return board;
}

/* The context waits are made on: the thread-default one, as timers are. */
static GMainContext *
thread_context (void)
{
  GMainContext *context = g_main_context_get_thread_default ();

  return context != NULL ? context : g_main_context_default ();
}

MendCountdownEntry *
mend_countdown_add (MendClock                *clock,
                    GObject                  *wait,
                    const MendCountdownFuncs *funcs,
                    guint64                   delay_ms)
{
  GMainContext *context = thread_context ();
  LastBoard *last = g_private_get (&last_board);
  guint generation = (guint) g_atomic_int_get (&boards_generation);
  MendCountdownEntry *entry;
  Board *board;
  guint timer_id;

  if (last == NULL)
    {
      last = g_new0 (LastBoard, 1);
      g_private_set (&last_board, last);
    }
  if (last->clock == clock && last->context == context && last->generation == generation &&
      last->board != NULL)
    board = last->board;
  else
    {
      board = board_lookup (clock, context, TRUE);
      last->clock = clock;
      last->context = context;
      last->board = board;
      last->generation = generation;
    }

  board->funcs = funcs;
  entry = g_new0 (MendCountdownEntry, 1);
  entry->ref_count = 1;               /* this call's, until the timer is in */
  entry->link.data = wait;
  entry->board = board;
  entry->queue = &board->fresh;
  g_queue_push_tail_link (&board->fresh, &entry->link);
  /* The timer holds the entry: should a clock fail to remove it, it finds
   * the entry off its board, not a freed one. */
  timer_id = mend_clock_add_timeout (clock, delay_ms, on_deadline, entry_ref (entry), entry_unref);
  /* A clock of the app's may run a timer that is due inside add_timer:
   * the wait fired already, and nothing of it is left on the clock. */
  if (entry->link.data == NULL)
    {
      entry_unref (entry);
      return NULL;
    }
  entry->timer_id = timer_id;
  entry_unref (entry);

  /* The loop of the context looks for new watchers: any clock's, as a
   * clock of the app's may keep time its own way; a virtual clock also
   * looks before it runs its timers. A context that went away took its
   * look with it. */
  if (board->look != NULL && g_source_is_destroyed (board->look))
    g_clear_pointer (&board->look, g_source_unref);
  if (board->look == NULL)
    {
      board->look = g_source_new (&look_funcs, sizeof (LookSource));
      ((LookSource *) board->look)->board = board;
      g_source_set_priority (board->look, G_PRIORITY_DEFAULT_IDLE);
      g_source_set_static_name (board->look, "[mend] countdowns");
      g_source_attach (board->look, context);
    }

  return entry;
}

void
mend_countdown_remove (MendCountdownEntry *entry)
{
  MendClock *clock = entry->board->clock;
  guint timer_id = entry->timer_id;

  take_off (entry);
  /* The timer's notify frees the entry. */
  mend_clock_remove_timeout (clock, timer_id);
}

void
mend_countdown_read (MendCountdownEntry *entry)
{
  Board *board = entry->board;

  if (entry->queue != &board->waits)
    return;
  g_queue_unlink (&board->waits, &entry->link);
  g_queue_push_tail_link (&board->fresh, &entry->link);
  entry->queue = &board->fresh;
}
