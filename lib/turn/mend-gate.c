/* mend-gate.c — the shared state of one upstream: hints, breaker, budget, network
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-failure.h"
#include "mend-gate-private.h"

/**
 * MendGate:
 *
 * The shared state of one upstream, so that chats failing on the same
 * outage fail together instead of each on its own schedule.
 *
 * A [class@Mend.Chat] joins a gate through its
 * [property@Mend.Chat:gate]; its turns ask the gate before each attempt
 * and tell it how each ended. The gate then:
 *
 * - shares server hints: a `Retry-After` one member saw holds the other
 *   members' next attempts until it passes, then releases them in turn;
 * - is a circuit breaker: after [property@Mend.Gate:failure-threshold]
 *   transient failures from at least two members within 30 s, it opens;
 *   members wait without spending attempts, then one probe goes through
 *   (half-open); its first output or its success closes the gate and
 *   releases the others staggered, its failure re-opens it for twice as
 *   long (up to 1 s), and a probe with no answer within
 *   [property@Mend.Gate:probe-timeout-ms] is taken as lost: the next
 *   member probes;
 * - keeps a retry budget: each retry costs a token, each success earns
 *   [property@Mend.Gate:retry-budget-ratio] of one; with half the tokens
 *   gone and more than one member failing, the gate opens;
 * - follows a [iface@Gio.NetworkMonitor]: while the network is unavailable
 *   no attempt starts and none is spent; on reconnect the waiting members
 *   go out staggered;
 * - shares the account's usage limit: once a member meets one whose reset
 *   is known ([property@Mend.Failure:resets-at]), the next attempt of any
 *   member whose policy continues at a reset
 *   ([property@Mend.ErrorPolicy:continue-at-reset]) is not sent but waits
 *   for that reset, as the member's own limit would make it wait, each
 *   with its own jitter; a later reset a member meets replaces it, a
 *   success forgets it. A member whose policy does not continue at a
 *   reset asks the upstream itself, as it would without the gate.
 *
 * A release is fair: the members go out in the order they began waiting,
 * the longest waiting first, and a member that asks while others still
 * wait (its next turn, say) queues behind them; a member keeps its
 * seniority until it succeeds, however often the gate re-opens, and gives
 * it up when its turn is done or goes away. The first second of a release
 * sends 10 members (22 when only the network was gone), and each second
 * after it twice as many as the one before, spread over at least
 * [property@Mend.Gate:stagger-window-ms]: a recovering upstream gets a
 * trickle first, and 200 chats are out within 5 s, before a flapping
 * upstream fails again. A gate with one member changes nothing but the
 * network rule: a hint holds it no longer than its own retry waits, and
 * the breaker and budget need two. Without a gate, a chat behaves exactly as it would
 * otherwise.
 *
 * [func@Mend.Gate.get_for_uri] gives one gate per origin, so that chats
 * talking to one upstream can share it without arranging it.
 *
 * Example:
 *
 * ```c
 * const char *uri = "https://api.anthropic.com/v1/messages";
 * MendGate *gate = mend_gate_get_for_uri (uri);  // one per origin, shared
 * g_autoptr(MendHttpSender) sender = mend_http_sender_new (uri);
 * g_autoptr(MendChat) chat = g_object_new (MEND_TYPE_CHAT,
 *                                          "sender", sender,
 *                                          "gate", gate,
 *                                          NULL);
 *
 * if (mend_gate_get_state (gate) == MEND_GATE_OPEN)
 *   g_print ("the upstream is down; next check in %" G_GINT64_FORMAT " ms\n",
 *            mend_gate_get_next_check_ms (gate));
 * ```
 */

#define FAILURE_WINDOW_US     (30 * G_USEC_PER_SEC)
#define MAX_OPEN_DELAY_MS     1000
/* A release's first second: after an outage, ten members; after the
 * network comes back (nothing failed upstream), twice as many. */
#define RELEASE_MS_PER_MEMBER 100
#define RECONNECT_MS_PER_MEMBER 45
/* A minute: a model's first output comes well within it. */
#define DEFAULT_PROBE_TIMEOUT_MS 60000

typedef struct
{
  gint64  at_us;
  char   *key;
} Strike;

/* A member: the turns of one chat on the gate. */
typedef struct
{
  guint    links;          /* its turns that joined and have not left */
  guint64  joined;         /* the order members joined in, for ties */
  gboolean waiting;        /* held, or failed, since its last success */
  gint64   waiting_since;
  guint    release;        /* the release its place is in */
  guint    place;          /* from 0, in the order of that release */
  gboolean let_through;    /* its place in that release has come */
} Member;

struct _MendGate
{
  GObject          parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  MendClock       *clock;
  GNetworkMonitor *monitor;
  gulong           monitor_id;

  MendGateState    state;
  gboolean         online;
  gboolean         tripped;          /* open or half-open, whatever the network */
  GQueue           strikes;          /* Strike*, oldest first */
  gint64           open_until_us;    /* when OPEN: the next probe's time */
  guint            open_delay_ms;    /* the base, from the property */
  guint            current_delay_ms; /* grows while probes fail */
  guint            probe;            /* HALF_OPEN: the probe in flight, by number */
  guint            n_probes;         /* probes made, to number the next */
  gint64           probe_until_us;   /* HALF_OPEN: when the next member probes */
  guint            probe_timeout_ms;
  gint64           hint_until_us;
  MendFailure     *limit;            /* a usage limit with its reset, or NULL */
  GHashTable      *members;          /* key → Member* */
  guint64          n_joined;
  guint            release;          /* the release in progress, by number; 0: none yet */
  gint64           released_at_us;   /* when it began (a hint's: when the hint ends) */
  guint            release_ms_per_member;
  guint            release_size;     /* the members waiting when it began */
  guint            n_placed;         /* places given in it */
  guint            n_pending;        /* ...and not come yet */

  guint            failure_threshold;
  guint            stagger_window_ms;
  double           budget;           /* tokens left */
  double           budget_max;
  double           budget_ratio;
};

enum {
  PROP_0,
  PROP_CLOCK,
  PROP_STATE,
  PROP_NETWORK_MONITOR,
  PROP_FAILURE_THRESHOLD,
  PROP_STAGGER_WINDOW_MS,
  PROP_OPEN_DELAY_MS,
  PROP_RETRY_BUDGET,
  PROP_RETRY_BUDGET_RATIO,
  PROP_PROBE_TIMEOUT_MS,
  N_PROPS
};

enum {
  RELEASED,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendGate, mend_gate, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static gint64
now_us (MendGate *self)
{
  return mend_clock_get_monotonic_time (self->clock);
}

static void
strike_free (gpointer data)
{
  Strike *strike = data;

  g_free (strike->key);
  g_free (strike);
}

/* When place @place of the release goes out, in ms after it began.
 * Spaced at the release's rate, doubling every second (one release's
 * first second sends 10 members, its next 20, then 40), and never closer
 * than the stagger window spread over the members waiting together: a
 * recovering upstream gets a trickle first, and a crowd is out in a few
 * seconds, before a flapping upstream fails again. */
static gint64
place_offset_ms (MendGate *self,
                 guint     place)
{
  double per_second = 1000.0 / MAX (self->release_ms_per_member, 1);
  double before = 0;   /* places out before second k */
  double linear;
  double ramp;
  guint k = 0;

  if (self->stagger_window_ms == 0)
    return 0;

  /* Second k sends per_second × 2^k places. */
  while (place >= before + per_second && k < 60)
    {
      before += per_second;
      per_second *= 2;
      k++;
    }
  ramp = 1000.0 * k + 1000.0 * (place - before) / per_second;
  linear = (double) place * self->stagger_window_ms / MAX (self->release_size, place + 1);

  return (gint64) MAX (linear, ramp);
}

static int
compare_waiting (gconstpointer a,
                 gconstpointer b)
{
  const Member *x = *(Member **) a;
  const Member *y = *(Member **) b;

  if (x->waiting_since != y->waiting_since)
    return x->waiting_since < y->waiting_since ? -1 : 1;

  return x->joined < y->joined ? -1 : x->joined > y->joined;
}

/* Members waiting for the gate go out from @at_us, the longest waiting
 * first; a member that asks later while others still wait queues behind
 * them. */
static void
schedule_release (MendGate *self,
                  gint64    at_us,
                  guint     ms_per_member)
{
  g_autoptr(GPtrArray) waiting = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;

  if (++self->release == 0)
    self->release = 1;
  self->released_at_us = at_us;
  self->release_ms_per_member = ms_per_member;

  g_hash_table_iter_init (&iter, self->members);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Member *) value)->waiting)
      g_ptr_array_add (waiting, value);
  g_ptr_array_sort (waiting, compare_waiting);

  for (guint i = 0; i < waiting->len; i++)
    {
      Member *member = g_ptr_array_index (waiting, i);

      member->release = self->release;
      member->place = i;
      member->let_through = FALSE;
    }
  self->release_size = self->n_placed = self->n_pending = waiting->len;
}

/* Whether the release holds @member's attempt: the milliseconds until its
 * place comes, or MEND_GATE_GO. */
static gint64
release_hold (MendGate *self,
              Member   *member,
              gint64    now)
{
  gint64 until;

  if (member == NULL || self->release == 0)
    return MEND_GATE_GO;

  if (member->release != self->release || member->let_through)
    {
      /* Nobody waits any more: the release is over. */
      if (self->n_pending == 0)
        return MEND_GATE_GO;
      member->release = self->release;
      member->place = self->n_placed++;
      member->let_through = FALSE;
      self->n_pending++;
    }

  until = self->released_at_us + place_offset_ms (self, member->place) * 1000;
  if (now < until)
    return (until - now) / 1000 + 1;

  member->let_through = TRUE;
  self->n_pending--;

  return MEND_GATE_GO;
}

static void
member_waits (MendGate *self,
              Member   *member)
{
  if (member != NULL && !member->waiting)
    {
      member->waiting = TRUE;
      member->waiting_since = now_us (self);
    }
}

static void
set_state (MendGate      *self,
           MendGateState  state)
{
  if (self->state == state)
    return;

  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

/* Waiting members try again, each after its stagger, once any server
 * hint has passed. */
static void
release (MendGate *self,
         guint     ms_per_member)
{
  schedule_release (self, MAX (now_us (self), self->hint_until_us), ms_per_member);
  g_signal_emit (self, signals[RELEASED], 0);
}

static void
prune_strikes (MendGate *self)
{
  gint64 oldest = now_us (self) - FAILURE_WINDOW_US;

  while (!g_queue_is_empty (&self->strikes) &&
         ((Strike *) g_queue_peek_head (&self->strikes))->at_us < oldest)
    strike_free (g_queue_pop_head (&self->strikes));
}

/* Whether the failures in the window come from more than one member: a
 * lone chat's own retries never open the gate. */
static gboolean
several_members (MendGate *self)
{
  const char *first = NULL;

  for (GList *l = self->strikes.head; l != NULL; l = l->next)
    {
      Strike *strike = l->data;

      if (first == NULL)
        first = strike->key;
      else if (g_strcmp0 (first, strike->key) != 0)
        return TRUE;
    }

  return FALSE;
}

static void
open_gate (MendGate *self,
           guint     delay_ms)
{
  self->current_delay_ms = MIN (delay_ms, MAX_OPEN_DELAY_MS);
  self->open_until_us = now_us (self) + (gint64) self->current_delay_ms * 1000;
  self->probe = 0;
  self->tripped = TRUE;
  if (self->online)
    set_state (self, MEND_GATE_OPEN);
  /* Members held until released learn the new time. */
  release (self, RELEASE_MS_PER_MEMBER);
}

static void
close_gate (MendGate *self)
{
  self->probe = 0;
  g_queue_clear_full (&self->strikes, strike_free);
  self->current_delay_ms = self->open_delay_ms;
  self->budget = MAX (self->budget, self->budget_max / 2 + 1);
  self->tripped = FALSE;
  set_state (self, MEND_GATE_CLOSED);
  release (self, RELEASE_MS_PER_MEMBER);
}

static void
on_network_changed (GNetworkMonitor *monitor,
                    gboolean         available,
                    MendGate        *self)
{
  available = g_network_monitor_get_network_available (monitor);
  if (available == self->online)
    return;

  self->online = available;
  g_object_ref (self);
  if (!available)
    set_state (self, MEND_GATE_OFFLINE);
  else
    {
      /* Back: an open gate still waits for its probe, due now. */
      self->probe = 0;
      set_state (self, self->tripped ? MEND_GATE_OPEN : MEND_GATE_CLOSED);
      if (self->tripped)
        self->open_until_us = MIN (self->open_until_us, now_us (self));
      release (self, self->tripped ? RELEASE_MS_PER_MEMBER : RECONNECT_MS_PER_MEMBER);
    }
  g_object_unref (self);
}

/* The monitor's signal comes on the context the monitor was made in,
 * which may be another thread's than the gate's: the news is taken to
 * the gate's own thread. The handler holds the gate weakly, so that a
 * gate going on its thread meanwhile is never touched, and so does the
 * news on its way: a context that never runs again holds no gate (a gate
 * of mend_gate_new () holds its context, which would hold the news). */
static void
gate_ref_free_news (gpointer data)
{
  g_weak_ref_clear (data);
  g_free (data);
}

static gboolean
network_changed_here (gpointer data)
{
  g_autoptr(MendGate) self = g_weak_ref_get (data);

  if (self != NULL && self->monitor != NULL)
    on_network_changed (self->monitor, g_network_monitor_get_network_available (self->monitor), self);
  return G_SOURCE_REMOVE;
}

static void
on_monitor_changed (GNetworkMonitor *monitor,
                    gboolean         available,
                    GWeakRef        *gate)
{
  g_autoptr(MendGate) self = g_weak_ref_get (gate);
  GWeakRef *news;

  if (self == NULL)
    return;
  /* Held past its context and no thread's yet: the news is no use of
   * it, so the monitor's thread does not take it for good. */
  if (mend_owner_try_borrow (&self->owner))
    {
      on_network_changed (monitor, available, self);
      mend_owner_end_borrow (&self->owner);
      return;
    }
  /* Runs now on the gate's thread, later from its context otherwise. */
  news = g_new0 (GWeakRef, 1);
  g_weak_ref_init (news, self);
  mend_owner_invoke (&self->owner, network_changed_here, news, gate_ref_free_news);
}

static void
gate_ref_free (gpointer  data,
               GClosure *closure)
{
  gate_ref_free_news (data);
}

/* This member's attempt is the one that checks the upstream. */
static guint
start_probe (MendGate *self)
{
  if (++self->n_probes == 0)
    self->n_probes = 1;
  self->probe = self->n_probes;
  self->probe_until_us = now_us (self) + (gint64) self->probe_timeout_ms * 1000;
  set_state (self, MEND_GATE_HALF_OPEN);

  return self->probe;
}

/* The hold of @member's attempt, the gate's state and release being
 * what they are. */
static gint64
admit_hold (MendGate *self,
            Member   *member,
            gint64    now,
            gboolean  retry,
            guint    *probe)
{
  gint64 hold;

  if (!self->online)
    return MEND_GATE_UNTIL_RELEASED;

  switch (self->state)
    {
    case MEND_GATE_HALF_OPEN:
      /* The others wait for the probe's answer, as long as the timeout;
       * then the next member to ask probes instead. */
      if (now < self->probe_until_us)
        return (self->probe_until_us - now) / 1000 + 1;
      *probe = start_probe (self);
      return MEND_GATE_GO;

    case MEND_GATE_OPEN:
      if (now < self->open_until_us)
        return (self->open_until_us - now) / 1000 + 1;
      /* Time to check: this member's attempt is the probe. */
      *probe = start_probe (self);
      return MEND_GATE_GO;

    case MEND_GATE_CLOSED:
    case MEND_GATE_OFFLINE:
    default:
      break;
    }

  /* Released, or a server hint: out in the member's turn, not all at
   * once. */
  hold = release_hold (self, member, now);
  if (hold != MEND_GATE_GO)
    return hold;

  /* A retry spends a token; the budget refuses none on its own (the gate
   * opens when it runs low), so that a lone chat is never held. */
  if (retry && self->budget_max > 0)
    self->budget = MAX (0, self->budget - 1);

  return MEND_GATE_GO;
}

/* See mend-gate-private.h. */
gint64
mend_gate_admit (MendGate   *self,
                 const char *key,
                 gboolean    retry,
                 guint      *probe)
{
  gint64 now;
  Member *member;
  gint64 hold;

  g_return_val_if_fail (MEND_IS_GATE (self), MEND_GATE_GO);
  mend_return_val_if_not_owner (&self->owner, self, MEND_GATE_GO);

  now = now_us (self);
  member = key != NULL ? g_hash_table_lookup (self->members, key) : NULL;
  *probe = 0;

  hold = admit_hold (self, member, now, retry, probe);
  if (hold != MEND_GATE_GO)
    member_waits (self, member);

  return hold;
}

/* See mend-gate-private.h. */
MendFailure *
mend_gate_get_limit (MendGate *self,
                     gint64    now_us)
{
  g_return_val_if_fail (MEND_IS_GATE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  if (self->limit != NULL && mend_failure_get_resets_at (self->limit) <= now_us)
    g_clear_object (&self->limit);
  return self->limit;
}

/* See mend-gate-private.h. */
void
mend_gate_report (MendGate        *self,
                  const char      *key,
                  MendFailure     *failure,
                  MendFailureKind  kind,
                  guint            probe)
{
  Member *member;

  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);

  member = key != NULL ? g_hash_table_lookup (self->members, key) : NULL;
  if (failure != NULL && kind == MEND_FAILURE_TRANSIENT)
    member_waits (self, member);
  else if (member != NULL)
    member->waiting = FALSE;

  /* A probe that timed out is one more member's attempt. */
  if (probe != self->probe || self->state != MEND_GATE_HALF_OPEN)
    probe = 0;

  g_object_ref (self);

  /* The account's usage limit, until its reset or a success. */
  if (failure == NULL)
    g_clear_object (&self->limit);
  else if (kind == MEND_FAILURE_LIMIT && mend_failure_get_reason (failure) == MEND_REASON_USAGE_LIMIT &&
           mend_failure_get_resets_at (failure) > 0 &&
           (self->limit == NULL || mend_failure_get_resets_at (failure) >= mend_failure_get_resets_at (self->limit)))
    g_set_object (&self->limit, failure);

  if (failure == NULL)
    {
      self->budget = MIN (self->budget_max, self->budget + self->budget_ratio);
      if (self->state != MEND_GATE_CLOSED && self->online)
        close_gate (self);
    }
  else if (kind == MEND_FAILURE_TRANSIENT)
    {
      gint64 hint = mend_failure_get_retry_after_ms (failure);
      Strike *strike = g_new0 (Strike, 1);

      if (hint > 0)
        {
          gint64 until = now_us (self) + hint * 1000;

          /* The others go out, in turn, when it has passed. */
          if (until > self->hint_until_us)
            {
              self->hint_until_us = until;
              schedule_release (self, until, RELEASE_MS_PER_MEMBER);
            }
        }

      strike->at_us = now_us (self);
      strike->key = g_strdup (key);
      g_queue_push_tail (&self->strikes, strike);
      prune_strikes (self);

      if (probe != 0)
        open_gate (self, self->current_delay_ms * 2);
      else if (self->state == MEND_GATE_CLOSED && several_members (self) &&
               (g_queue_get_length (&self->strikes) >= self->failure_threshold ||
                (self->budget_max > 0 && self->budget <= self->budget_max / 2)))
        open_gate (self, self->open_delay_ms);
    }
  else if (probe != 0)
    {
      /* The upstream answered (a refusal, a bad request) or the probe was
       * stopped: either way the next member checks now. */
      if (kind == MEND_FAILURE_STOPPED)
        open_gate (self, 0);
      else
        close_gate (self);
    }

  g_object_unref (self);
}

/* See mend-gate-private.h. */
void
mend_gate_join (MendGate   *self,
                const char *key)
{
  Member *member;

  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);

  if (key == NULL)
    return;

  member = g_hash_table_lookup (self->members, key);
  if (member == NULL)
    {
      member = g_new0 (Member, 1);
      member->joined = self->n_joined++;
      g_hash_table_insert (self->members, g_strdup (key), member);
    }
  member->links++;
}

/* See mend-gate-private.h. */
void
mend_gate_leave (MendGate   *self,
                 const char *key)
{
  Member *member;

  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);

  member = key != NULL ? g_hash_table_lookup (self->members, key) : NULL;
  if (member == NULL || --member->links > 0)
    return;

  /* Its place, if it had one still to come, is nobody's. */
  if (member->release == self->release && !member->let_through && self->n_pending > 0)
    self->n_pending--;
  g_hash_table_remove (self->members, key);
}

/* See mend-gate-private.h. */
void
mend_gate_answered (MendGate *self,
                    guint     probe)
{
  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);

  if (probe == 0 || probe != self->probe || self->state != MEND_GATE_HALF_OPEN || !self->online)
    return;

  g_object_ref (self);
  close_gate (self);
  g_object_unref (self);
}

static void
mend_gate_dispose (GObject *object)
{
  MendGate *self = (MendGate *) object;

  if (self->monitor != NULL)
    g_clear_signal_handler (&self->monitor_id, self->monitor);
  g_clear_object (&self->monitor);

  G_OBJECT_CLASS (mend_gate_parent_class)->dispose (object);
}

static void
mend_gate_finalize (GObject *object)
{
  MendGate *self = (MendGate *) object;

  g_queue_clear_full (&self->strikes, strike_free);
  g_clear_pointer (&self->members, g_hash_table_unref);
  g_clear_object (&self->limit);
  g_clear_object (&self->clock);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_gate_parent_class)->finalize (object);
}

static void
mend_gate_constructed (GObject *object)
{
  MendGate *self = (MendGate *) object;

  G_OBJECT_CLASS (mend_gate_parent_class)->constructed (object);

  if (self->clock == NULL)
    self->clock = g_object_ref (mend_clock_get_default ());
  if (self->monitor == NULL)
    mend_gate_set_network_monitor (self, g_network_monitor_get_default ());
}

static void
mend_gate_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  MendGate *self = MEND_GATE (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      g_value_set_object (value, self->clock);
      break;
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;
    case PROP_NETWORK_MONITOR:
      g_value_set_object (value, self->monitor);
      break;
    case PROP_FAILURE_THRESHOLD:
      g_value_set_uint (value, self->failure_threshold);
      break;
    case PROP_STAGGER_WINDOW_MS:
      g_value_set_uint (value, self->stagger_window_ms);
      break;
    case PROP_OPEN_DELAY_MS:
      g_value_set_uint (value, self->open_delay_ms);
      break;
    case PROP_RETRY_BUDGET:
      g_value_set_uint (value, (guint) self->budget_max);
      break;
    case PROP_RETRY_BUDGET_RATIO:
      g_value_set_double (value, self->budget_ratio);
      break;
    case PROP_PROBE_TIMEOUT_MS:
      g_value_set_uint (value, self->probe_timeout_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_gate_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  MendGate *self = MEND_GATE (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      self->clock = g_value_dup_object (value);
      break;
    case PROP_NETWORK_MONITOR:
      mend_gate_set_network_monitor (self, g_value_get_object (value));
      break;
    case PROP_FAILURE_THRESHOLD:
      mend_gate_set_failure_threshold (self, g_value_get_uint (value));
      break;
    case PROP_STAGGER_WINDOW_MS:
      mend_gate_set_stagger_window_ms (self, g_value_get_uint (value));
      break;
    case PROP_OPEN_DELAY_MS:
      if (self->open_delay_ms != g_value_get_uint (value))
        {
          self->open_delay_ms = self->current_delay_ms = g_value_get_uint (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_RETRY_BUDGET:
      if ((guint) self->budget_max != g_value_get_uint (value))
        {
          self->budget = self->budget_max = g_value_get_uint (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_RETRY_BUDGET_RATIO:
      if (self->budget_ratio != g_value_get_double (value))
        {
          self->budget_ratio = g_value_get_double (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_PROBE_TIMEOUT_MS:
      mend_gate_set_probe_timeout_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_gate_class_init (MendGateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_gate_constructed;
  object_class->dispose = mend_gate_dispose;
  object_class->finalize = mend_gate_finalize;
  object_class->get_property = mend_gate_get_property;
  object_class->set_property = mend_gate_set_property;

  /**
   * MendGate:clock:
   *
   * The clock of the gate's times; the default clock when not given. Use
   * the clock of the gate's chats.
   */
  properties[PROP_CLOCK] =
    g_param_spec_object ("clock", NULL, NULL,
                         MEND_TYPE_CLOCK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:state:
   *
   * Whether requests go through, wait for the upstream to recover, wait
   * for one probe, or wait for the network.
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL,
                       MEND_TYPE_GATE_STATE, MEND_GATE_CLOSED,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:network-monitor:
   *
   * The network monitor the gate follows: the default one unless set
   * (tests set one of their own).
   */
  properties[PROP_NETWORK_MONITOR] =
    g_param_spec_object ("network-monitor", NULL, NULL,
                         G_TYPE_NETWORK_MONITOR,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:failure-threshold:
   *
   * How many transient failures within 30 s, from at least two members,
   * open the gate.
   */
  properties[PROP_FAILURE_THRESHOLD] =
    g_param_spec_uint ("failure-threshold", NULL, NULL,
                       1, 1000, 5,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:stagger-window-ms:
   *
   * The shortest window over which members waiting together are
   * released, in the order they began waiting.
   */
  properties[PROP_STAGGER_WINDOW_MS] =
    g_param_spec_uint ("stagger-window-ms", NULL, NULL,
                       0, 600000, 2000,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:open-delay-ms:
   *
   * How long an open gate waits before its first probe; each failed probe
   * doubles it, up to a second: a probe is one request for every
   * member, and a short wait is what lets them all be served soon after
   * the upstream is back.
   */
  properties[PROP_OPEN_DELAY_MS] =
    g_param_spec_uint ("open-delay-ms", NULL, NULL,
                       0, MAX_OPEN_DELAY_MS, 1000,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:retry-budget:
   *
   * The tokens of the retry budget: each retry spends one, each success
   * earns [property@Mend.Gate:retry-budget-ratio]; below half, with more
   * than one member failing, the gate opens. 0 turns the budget off.
   */
  properties[PROP_RETRY_BUDGET] =
    g_param_spec_uint ("retry-budget", NULL, NULL,
                       0, 100000, 20,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:retry-budget-ratio:
   *
   * The tokens a successful request earns back.
   */
  properties[PROP_RETRY_BUDGET_RATIO] =
    g_param_spec_double ("retry-budget-ratio", NULL, NULL,
                         0.0, 100.0, 0.1,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendGate:probe-timeout-ms:
   *
   * How long the other members wait for a probe's answer (its first
   * output, a success or a failure). A probe that has not answered by
   * then is taken as lost: the next member to ask probes instead, and the
   * lost one's answer, should it come, counts as any member's.
   *
   * Since: 0.2
   */
  properties[PROP_PROBE_TIMEOUT_MS] =
    g_param_spec_uint ("probe-timeout-ms", NULL, NULL,
                       1, 86400000, DEFAULT_PROBE_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendGate::released:
   * @self: the gate
   *
   * Members waiting on the gate may try again: it closed, its schedule
   * changed, or the network came back. Each member's next attempt goes
   * out after its own stagger.
   */
  signals[RELEASED] =
    g_signal_new ("released",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
mend_gate_init (MendGate *self)
{
  mend_owner_init (&self->owner);
  self->online = TRUE;
  self->members = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->release_ms_per_member = RELEASE_MS_PER_MEMBER;
  self->failure_threshold = 5;
  self->stagger_window_ms = 2000;
  self->open_delay_ms = self->current_delay_ms = 1000;
  self->budget = self->budget_max = 20;
  self->budget_ratio = 0.1;
  self->probe_timeout_ms = DEFAULT_PROBE_TIMEOUT_MS;
}

/**
 * mend_gate_new:
 * @clock: (nullable): the clock of the gate's chats, or %NULL for the
 *   default clock
 *
 * Creates a gate of its own, for chats an app wants to share one.
 *
 * Returns: (transfer full): a new closed gate
 */
MendGate *
mend_gate_new (MendClock *clock)
{
  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  return g_object_new (MEND_TYPE_GATE, "clock", clock, NULL);
}

/* Main context → (origin → gate). The gates of a context other than the
 * global default do not hold it: a sentinel source on the context drops
 * them when the context is freed, so that a thread that makes a context
 * for each task leaves nothing behind. A context in the table is alive,
 * so its address is not reused while its entry is there. */
static GHashTable *gate_contexts;
G_LOCK_DEFINE_STATIC (gate_contexts);

static gboolean
sentinel_dispatch (GSource     *source,
                   GSourceFunc  callback,
                   gpointer     data)
{
  return G_SOURCE_CONTINUE;
}

static gboolean
sentinel_never_called (gpointer context)
{
  return G_SOURCE_CONTINUE;
}

/* The context is being freed: its gates let it go. This is the
 * sentinel's callback data going, which GLib does while the context is
 * still there (the sources themselves are finalized after it is freed,
 * when a new context may already have its address). One held elsewhere
 * lives on with no context, the gate of the first thread to use it,
 * on that thread's thread-default context. */
static void
sentinel_drop_gates (gpointer context)
{
  GHashTable *gates = NULL;
  GHashTableIter iter;
  MendGate *gate;

  G_LOCK (gate_contexts);
  if (gate_contexts != NULL)
    g_hash_table_steal_extended (gate_contexts, context, NULL, (gpointer *) &gates);
  G_UNLOCK (gate_contexts);
  if (gates == NULL)
    return;

  /* No thread's until one uses it: see mend_owner_is_current (). */
  g_hash_table_iter_init (&iter, gates);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &gate))
    mend_owner_orphan (&gate->owner);
  g_hash_table_unref (gates);
}

static GSourceFuncs sentinel_funcs = {
  .dispatch = sentinel_dispatch,
};

static void
watch_context (GMainContext *context)
{
  GSource *sentinel = g_source_new (&sentinel_funcs, sizeof (GSource));

  g_source_set_callback (sentinel, sentinel_never_called, context, sentinel_drop_gates);
  g_source_set_static_name (sentinel, "[mend] gates of a main context");
  g_source_attach (sentinel, context);
  g_source_unref (sentinel);
}

/**
 * mend_gate_get_for_uri:
 * @uri: an address of the upstream
 *
 * Gets the gate of @uri's origin (scheme, host and port) for the calling
 * thread's thread-default main context, made on first use with the
 * default clock and kept as long as that context lives (the global
 * default context: the life of the process): chats that talk to one
 * upstream from one main context share it by asking for it. A thread
 * that runs a main context of its own gets gates of its own, which live
 * on that thread and go with its context; a gate held past that (with
 * g_object_ref()) becomes the gate of the first thread that uses it,
 * on that thread's thread-default context, under the same rule as any
 * object made there (the overview's Threads).
 *
 * Returns: (transfer none): the gate of that origin
 */
MendGate *
mend_gate_get_for_uri (const char *uri)
{
  g_autoptr(GUri) parsed = NULL;
  g_autofree char *origin = NULL;
  GMainContext *context;
  GHashTable *gates;
  MendGate *gate;

  g_return_val_if_fail (uri != NULL, NULL);

  /* One origin however it is written: its default port or none, the
   * scheme and the host in any case. */
  parsed = g_uri_parse (uri, G_URI_FLAGS_SCHEME_NORMALIZE, NULL);
  if (parsed != NULL)
    {
      g_autofree char *host = g_ascii_strdown (g_uri_get_host (parsed) ? g_uri_get_host (parsed) : "", -1);
      g_autofree char *scheme = g_ascii_strdown (g_uri_get_scheme (parsed), -1);

      origin = g_strdup_printf ("%s://%s:%d", scheme, host, g_uri_get_port (parsed));
    }
  else
    origin = g_strdup (uri);

  context = g_main_context_get_thread_default ();
  if (context == NULL)
    context = g_main_context_default ();

  G_LOCK (gate_contexts);
  if (gate_contexts == NULL)
    gate_contexts = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_hash_table_unref);
  gates = g_hash_table_lookup (gate_contexts, context);
  if (gates == NULL)
    {
      gates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
      g_hash_table_insert (gate_contexts, context, gates);
      if (context != g_main_context_default ())
        watch_context (context);
    }
  gate = g_hash_table_lookup (gates, origin);
  if (gate == NULL)
    {
      gate = mend_gate_new (NULL);
      if (context != g_main_context_default ())
        {
          /* Held by the sentinel's table entry, not the other way. */
          mend_owner_let_go (&gate->owner);
        }
      g_hash_table_insert (gates, g_steal_pointer (&origin), gate);
    }
  G_UNLOCK (gate_contexts);

  return gate;
}

/**
 * mend_gate_get_state:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:state].
 *
 * Returns: the state
 */
MendGateState
mend_gate_get_state (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), MEND_GATE_CLOSED);
  mend_return_val_if_not_owner (&self->owner, self, MEND_GATE_CLOSED);

  return self->state;
}

/**
 * mend_gate_get_clock:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:clock].
 *
 * Returns: (transfer none): the clock
 */
MendClock *
mend_gate_get_clock (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->clock;
}

/**
 * mend_gate_get_network_monitor:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:network-monitor].
 *
 * Returns: (transfer none) (nullable): the monitor
 */
GNetworkMonitor *
mend_gate_get_network_monitor (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->monitor;
}

/**
 * mend_gate_set_network_monitor:
 * @self: a gate
 * @monitor: (nullable): the monitor to follow, or %NULL to follow none
 *   (always online)
 *
 * Sets [property@Mend.Gate:network-monitor].
 */
void
mend_gate_set_network_monitor (MendGate        *self,
                               GNetworkMonitor *monitor)
{
  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (monitor == NULL || G_IS_NETWORK_MONITOR (monitor));

  if (self->monitor == monitor)
    return;

  if (self->monitor != NULL)
    g_clear_signal_handler (&self->monitor_id, self->monitor);
  g_set_object (&self->monitor, monitor);
  if (monitor != NULL)
    {
      GWeakRef *gate = g_new0 (GWeakRef, 1);

      g_weak_ref_init (gate, self);
      self->monitor_id = g_signal_connect_data (monitor, "network-changed",
                                                G_CALLBACK (on_monitor_changed), gate,
                                                gate_ref_free, 0);
      on_network_changed (monitor, g_network_monitor_get_network_available (monitor), self);
    }
  else if (!self->online)
    {
      self->online = TRUE;
      set_state (self, MEND_GATE_CLOSED);
      release (self, RELEASE_MS_PER_MEMBER);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NETWORK_MONITOR]);
}

/**
 * mend_gate_get_failure_threshold:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:failure-threshold].
 *
 * Returns: the threshold
 */
guint
mend_gate_get_failure_threshold (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->failure_threshold;
}

/**
 * mend_gate_set_failure_threshold:
 * @self: a gate
 * @threshold: the transient failures that open the gate, at least 1
 *
 * Sets [property@Mend.Gate:failure-threshold].
 */
void
mend_gate_set_failure_threshold (MendGate *self,
                                 guint     threshold)
{
  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (threshold >= 1);

  if (self->failure_threshold != threshold)
    {
      self->failure_threshold = threshold;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FAILURE_THRESHOLD]);
    }
}

/**
 * mend_gate_get_stagger_window_ms:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:stagger-window-ms].
 *
 * Returns: the window in milliseconds
 */
guint
mend_gate_get_stagger_window_ms (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->stagger_window_ms;
}

/**
 * mend_gate_set_stagger_window_ms:
 * @self: a gate
 * @window_ms: the window, 0 to release everyone at once
 *
 * Sets [property@Mend.Gate:stagger-window-ms].
 */
void
mend_gate_set_stagger_window_ms (MendGate *self,
                                 guint     window_ms)
{
  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->stagger_window_ms != window_ms)
    {
      self->stagger_window_ms = window_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STAGGER_WINDOW_MS]);
    }
}

/**
 * mend_gate_get_probe_timeout_ms:
 * @self: a gate
 *
 * Gets [property@Mend.Gate:probe-timeout-ms].
 *
 * Returns: the timeout in milliseconds
 *
 * Since: 0.2
 */
guint
mend_gate_get_probe_timeout_ms (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->probe_timeout_ms;
}

/**
 * mend_gate_set_probe_timeout_ms:
 * @self: a gate
 * @timeout_ms: how long to wait for a probe's answer, at least 1 ms
 *
 * Sets [property@Mend.Gate:probe-timeout-ms]. A probe already in flight
 * keeps the timeout it started with.
 *
 * Since: 0.2
 */
void
mend_gate_set_probe_timeout_ms (MendGate *self,
                                guint     timeout_ms)
{
  g_return_if_fail (MEND_IS_GATE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (timeout_ms >= 1);

  if (self->probe_timeout_ms != timeout_ms)
    {
      self->probe_timeout_ms = timeout_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROBE_TIMEOUT_MS]);
    }
}

/**
 * mend_gate_get_next_check_ms:
 * @self: a gate
 *
 * Gets how long an open gate waits before its next probe.
 *
 * Returns: milliseconds to the next check, 0 when it is due or the gate
 *   is not open
 */
gint64
mend_gate_get_next_check_ms (MendGate *self)
{
  g_return_val_if_fail (MEND_IS_GATE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  if (self->state != MEND_GATE_OPEN)
    return 0;

  return MAX (0, (self->open_until_us - now_us (self) + 999) / 1000);
}

/* A member's link to its gate: see mend-gate-private.h. */

void
mend_gate_link_join (MendGateLink *self,
                     MendGate     *gate,
                     const char   *key,
                     GCallback     on_released,
                     gpointer      data)
{
  g_assert (self->gate == NULL);
  g_assert (MEND_IS_GATE (gate));

  self->gate = g_object_ref (gate);
  self->key = g_strdup (key);
  self->released_id = g_signal_connect (gate, "released", on_released, data);
  mend_gate_join (gate, key);
}

void
mend_gate_link_leave (MendGateLink *self)
{
  if (self->gate == NULL || self->released_id == 0)
    return;

  g_clear_signal_handler (&self->released_id, self->gate);
  mend_gate_leave (self->gate, self->key);
}

void
mend_gate_link_clear (MendGateLink *self)
{
  g_assert (self->released_id == 0);

  g_clear_object (&self->gate);
  g_clear_pointer (&self->key, g_free);
}

gint64
mend_gate_link_admit (MendGateLink *self,
                      gboolean      retry)
{
  guint probe = 0;
  gint64 hold;

  g_assert (!self->admitted);

  if (self->gate == NULL)
    return MEND_GATE_GO;

  hold = mend_gate_admit (self->gate, self->key, retry, &probe);
  if (hold == MEND_GATE_GO)
    {
      self->admitted = TRUE;
      self->probing = probe;
    }

  return hold;
}

void
mend_gate_link_report (MendGateLink    *self,
                       MendFailure     *failure,
                       MendFailureKind  kind)
{
  if (self->gate == NULL || !self->admitted)
    return;

  self->admitted = FALSE;
  mend_gate_report (self->gate, self->key, failure, kind, self->probing);
  self->probing = 0;
}

MendFailure *
mend_gate_link_get_limit (MendGateLink *self,
                          gint64        now_us)
{
  return self->gate != NULL ? mend_gate_get_limit (self->gate, now_us) : NULL;
}

void
mend_gate_link_note_output (MendGateLink *self)
{
  if (self->gate != NULL && self->admitted && self->probing != 0)
    mend_gate_answered (self->gate, self->probing);
}

gint64
mend_gate_link_settle (MendGateLink    *self,
                       MendFailure     *failure,
                       MendFailureKind  kind)
{
  guint probe;

  g_assert (self->probing == 0 || self->admitted);

  probe = self->gate != NULL && self->admitted ? self->probing : 0;
  mend_gate_link_report (self, failure, kind);
  self->admitted = FALSE;
  self->probing = 0;

  if (probe != 0 && mend_gate_get_state (self->gate) == MEND_GATE_OPEN)
    return mend_gate_get_next_check_ms (self->gate) + 1;
  return -1;
}

MendRetryWait *
mend_gate_link_new_hold (MendGateLink *self,
                         MendClock    *clock,
                         gint64        hold_ms,
                         guint         attempt,
                         guint         max_retries,
                         MendFailure  *failure)
{
  g_assert (self->gate != NULL);

  return g_object_new (MEND_TYPE_RETRY_WAIT,
                       "clock", clock,
                       /* Until released: the gate's signal ends it; an hour
                        * bounds a gate that never says. */
                       "delay-ms", (guint64) (hold_ms > 0 ? hold_ms : 3600 * 1000),
                       "attempt", attempt,
                       "max-retries", max_retries,
                       "reason", failure ? mend_failure_get_reason (failure) : MEND_REASON_UNKNOWN,
                       "failure", failure,
                       "held", TRUE,
                       "gate-state", mend_gate_get_state (self->gate),
                       NULL);
}
