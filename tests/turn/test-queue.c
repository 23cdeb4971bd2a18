/* test-queue.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <libmend.h>

#include "mend-queue-private.h"

#define WALL_START 1764500000000000  /* µs */

typedef struct
{
  MendClock *clock;
  MendQueue *queue;
  GString   *events;     /* what the queue emitted, in order */
} Fixture;

static void
on_items_changed (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  Fixture    *f)
{
  g_string_append_printf (f->events, "changed(%u,%u,%u) ", position, removed, added);
}

static void
on_notify (GObject    *object,
           GParamSpec *pspec,
           Fixture    *f)
{
  guint n_items;

  if (g_strcmp0 (pspec->name, "n-items") == 0)
    {
      g_object_get (object, "n-items", &n_items, NULL);
      g_string_append_printf (f->events, "n-items(%u) ", n_items);
    }
  else
    g_string_append_printf (f->events, "%s ", pspec->name);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->queue = mend_queue_new (f->clock);
  f->events = g_string_new (NULL);

  g_signal_connect (f->queue, "items-changed", G_CALLBACK (on_items_changed), f);
  g_signal_connect (f->queue, "notify", G_CALLBACK (on_notify), f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->queue);
  g_assert_finalize_object (f->clock);
  g_string_free (f->events, TRUE);
}

/* Returns what was emitted since the last call, and forgets it. */
static char *
take_events (Fixture *f)
{
  char *events;

  if (f->events->len > 0 && f->events->str[f->events->len - 1] == ' ')
    g_string_truncate (f->events, f->events->len - 1);
  events = g_strdup (f->events->str);
  g_string_truncate (f->events, 0);
  return events;
}

static void
forget_events (Fixture *f)
{
  g_string_truncate (f->events, 0);
}

#define assert_events(f, expected) \
  G_STMT_START { \
    g_autofree char *__events = take_events (f); \
    g_assert_cmpstr (__events, ==, expected); \
  } G_STMT_END

static MendQueueItem *
push (Fixture    *f,
      const char *text)
{
  GError *error = NULL;
  MendQueueItem *item = mend_queue_push (f->queue, text, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (item);
  return item;
}

/* The queue's texts, head first, joined by "|". */
static char *
contents (MendQueue *queue)
{
  GString *out = g_string_new (NULL);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (queue));

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      if (i > 0)
        g_string_append_c (out, '|');
      g_string_append (out, mend_queue_item_get_text (item));
    }

  return g_string_free (out, FALSE);
}

#define assert_contents(queue, expected) \
  G_STMT_START { \
    g_autofree char *__contents = contents (queue); \
    g_assert_cmpstr (__contents, ==, expected); \
  } G_STMT_END

static void
test_defaults (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(MendClock) clock = NULL;
  guint max_items, max_item_bytes, n_items;

  g_object_get (f->queue,
                "clock", &clock,
                "max-items", &max_items,
                "max-item-bytes", &max_item_bytes,
                "n-items", &n_items,
                NULL);

  g_assert_true (clock == f->clock);
  g_assert_cmpuint (max_items, ==, MEND_QUEUE_DEFAULT_MAX_ITEMS);
  g_assert_cmpuint (max_items, ==, 16);
  g_assert_cmpuint (max_item_bytes, ==, MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES);
  g_assert_cmpuint (max_item_bytes, ==, 262144);
  g_assert_cmpuint (n_items, ==, 0);
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 0);
  g_assert_false (mend_queue_is_full (f->queue));
  g_assert_null (mend_queue_peek (f->queue));
  g_assert_null (mend_queue_pop (f->queue));
  assert_events (f, "");
}

static void
test_default_clock_when_null (void)
{
  MendQueue *queue = mend_queue_new (NULL);
  g_autoptr(MendClock) clock = NULL;
  MendQueueItem *item;
  gint64 before, after;

  g_object_get (queue, "clock", &clock, NULL);
  g_assert_true (clock == mend_clock_get_default ());

  before = g_get_real_time ();
  item = mend_queue_push (queue, "hello", NULL, NULL);
  after = g_get_real_time ();
  g_assert_cmpint (mend_queue_item_get_queued_at (item), >=, before);
  g_assert_cmpint (mend_queue_item_get_queued_at (item), <=, after);

  g_clear_object (&clock);
  g_assert_finalize_object (queue);
}

static void
test_push_appends_at_the_tail (Fixture       *f,
                               gconstpointer  data)
{
  MendQueueItem *first, *second;
  g_autofree char *id = NULL;
  g_autofree char *text = NULL;
  g_autofree char *provenance = NULL;
  gint64 queued_at;

  first = push (f, "first");
  assert_events (f, "changed(0,0,1) n-items(1)");

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1500);
  second = mend_queue_push (f->queue, "second", "{\"kind\":\"test\"}", NULL);
  g_assert_nonnull (second);
  assert_events (f, "changed(1,0,1) n-items(2)");

  assert_contents (f->queue, "first|second");
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 2);
  g_assert_true (mend_queue_peek (f->queue) == first);

  g_assert_cmpstr (mend_queue_item_get_text (first), ==, "first");
  g_assert_null (mend_queue_item_get_provenance (first));
  g_assert_cmpint (mend_queue_item_get_queued_at (first), ==, WALL_START);

  g_object_get (second,
                "id", &id,
                "text", &text,
                "provenance", &provenance,
                "queued-at", &queued_at,
                NULL);
  g_assert_cmpstr (id, ==, mend_queue_item_get_id (second));
  g_assert_cmpstr (text, ==, "second");
  g_assert_cmpstr (provenance, ==, "{\"kind\":\"test\"}");
  g_assert_cmpint (queued_at, ==, WALL_START + 1500 * 1000);
  g_assert_cmpstr (mend_queue_item_get_id (first), !=, mend_queue_item_get_id (second));
}

static void
test_insert_front_adds_at_the_head (Fixture       *f,
                                    gconstpointer  data)
{
  MendQueueItem *item;
  GError *error = NULL;

  push (f, "a");
  push (f, "b");
  assert_events (f, "changed(0,0,1) n-items(1) changed(1,0,1) n-items(2)");

  item = mend_queue_insert_front (f->queue, "Continue", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (item);
  assert_events (f, "changed(0,0,1) n-items(3)");
  assert_contents (f->queue, "Continue|a|b");
  g_assert_true (mend_queue_peek (f->queue) == item);
}

static void
test_remove_emits_its_position (Fixture       *f,
                                gconstpointer  data)
{
  MendQueueItem *b;
  GError *error = NULL;
  gpointer weak;

  push (f, "a");
  b = push (f, "b");
  push (f, "c");
  forget_events (f);

  weak = b;
  g_object_add_weak_pointer (G_OBJECT (b), &weak);

  g_assert_true (mend_queue_remove (f->queue, mend_queue_item_get_id (b), &error));
  g_assert_no_error (error);
  assert_events (f, "changed(1,1,0) n-items(2)");
  assert_contents (f->queue, "a|c");
  /* The queue held the only reference. */
  g_assert_null (weak);
}

static void
test_remove_unknown_id_is_not_found (Fixture       *f,
                                     gconstpointer  data)
{
  MendQueueItem *a;
  GError *error = NULL;
  g_autofree char *id = NULL;

  a = push (f, "a");
  id = g_strdup (mend_queue_item_get_id (a));
  forget_events (f);

  g_assert_false (mend_queue_remove (f->queue, "nope", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "nope"));
  g_clear_error (&error);
  assert_events (f, "");
  assert_contents (f->queue, "a");

  /* Removed once, not found the second time. */
  g_assert_true (mend_queue_remove (f->queue, id, NULL));
  g_assert_false (mend_queue_remove (f->queue, id, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  assert_events (f, "changed(0,1,0) n-items(0)");
}

static void
test_pop_takes_the_head (Fixture       *f,
                         gconstpointer  data)
{
  MendQueueItem *a, *popped;

  a = push (f, "a");
  push (f, "b");
  forget_events (f);

  popped = mend_queue_pop (f->queue);
  g_assert_true (popped == a);
  assert_events (f, "changed(0,1,0) n-items(1)");
  assert_contents (f->queue, "b");
  g_assert_null (mend_queue_find (f->queue, mend_queue_item_get_id (popped)));
  /* Transfer full: the caller holds the last reference. */
  g_assert_cmpstr (mend_queue_item_get_text (popped), ==, "a");
  g_assert_finalize_object (popped);

  popped = mend_queue_pop (f->queue);
  assert_events (f, "changed(0,1,0) n-items(0)");
  g_assert_cmpstr (mend_queue_item_get_text (popped), ==, "b");
  g_assert_finalize_object (popped);

  g_assert_null (mend_queue_pop (f->queue));
  assert_events (f, "");
}

static void
test_peek_leaves_the_head (Fixture       *f,
                           gconstpointer  data)
{
  MendQueueItem *a;

  a = push (f, "a");
  push (f, "b");
  forget_events (f);

  g_assert_true (mend_queue_peek (f->queue) == a);
  g_assert_true (mend_queue_peek (f->queue) == a);
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 2);
  assert_events (f, "");
}

static void
test_find_by_id (Fixture       *f,
                 gconstpointer  data)
{
  MendQueueItem *a, *b;

  a = push (f, "a");
  b = push (f, "b");

  g_assert_true (mend_queue_find (f->queue, mend_queue_item_get_id (a)) == a);
  g_assert_true (mend_queue_find (f->queue, mend_queue_item_get_id (b)) == b);
  g_assert_null (mend_queue_find (f->queue, "q999"));
  g_assert_null (mend_queue_find (f->queue, ""));
}

static void
on_item_notify_text (MendQueueItem *item,
                     GParamSpec    *pspec,
                     guint         *count)
{
  (*count)++;
}

static void
test_replace_text_keeps_the_same_item (Fixture       *f,
                                       gconstpointer  data)
{
  MendQueueItem *a, *b;
  GError *error = NULL;
  g_autofree char *id = NULL;
  guint notified = 0;

  a = push (f, "a");
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 10);
  b = mend_queue_push (f->queue, "b", "{\"kind\":\"x\"}", NULL);
  push (f, "c");
  id = g_strdup (mend_queue_item_get_id (b));
  g_signal_connect (b, "notify::text", G_CALLBACK (on_item_notify_text), &notified);
  forget_events (f);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1000);
  g_assert_true (mend_queue_replace_text (f->queue, id, "edited\r\nline", &error));
  g_assert_no_error (error);

  g_assert_cmpuint (notified, ==, 1);
  assert_events (f, "changed(1,1,1)");
  g_assert_true (mend_queue_find (f->queue, id) == b);
  g_assert_cmpstr (mend_queue_item_get_id (b), ==, id);
  g_assert_cmpstr (mend_queue_item_get_text (b), ==, "edited\nline");
  g_assert_cmpstr (mend_queue_item_get_provenance (b), ==, "{\"kind\":\"x\"}");
  g_assert_cmpint (mend_queue_item_get_queued_at (b), ==, WALL_START + 10 * 1000);
  assert_contents (f->queue, "a|edited\nline|c");

  /* The head too, at position 0. */
  g_assert_true (mend_queue_replace_text (f->queue, mend_queue_item_get_id (a), "A", NULL));
  assert_events (f, "changed(0,1,1)");

  /* The same text changes nothing. */
  g_assert_true (mend_queue_replace_text (f->queue, id, "edited\r\nline", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (notified, ==, 1);
  assert_events (f, "");
}

static void
test_replace_text_of_unknown_id_is_not_found (Fixture       *f,
                                              gconstpointer  data)
{
  GError *error = NULL;

  push (f, "a");
  forget_events (f);

  g_assert_false (mend_queue_replace_text (f->queue, "q42", "new", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "q42"));
  g_clear_error (&error);
  assert_events (f, "");
  assert_contents (f->queue, "a");
}

static void
test_replace_text_refuses_bad_text (Fixture       *f,
                                    gconstpointer  data)
{
  MendQueueItem *a;
  GError *error = NULL;
  guint notified = 0;
  const char *id;

  mend_queue_set_max_item_bytes (f->queue, 5);
  a = push (f, "a");
  id = mend_queue_item_get_id (a);
  g_signal_connect (a, "notify::text", G_CALLBACK (on_item_notify_text), &notified);
  forget_events (f);

  g_assert_false (mend_queue_replace_text (f->queue, id, " \n\t", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_clear_error (&error);

  g_assert_false (mend_queue_replace_text (f->queue, id, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_clear_error (&error);

  g_assert_false (mend_queue_replace_text (f->queue, id, "123456", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);

  g_assert_false (mend_queue_replace_text (f->queue, id, "ab\xc3", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_clear_error (&error);

  g_assert_cmpstr (mend_queue_item_get_text (a), ==, "a");
  g_assert_cmpuint (notified, ==, 0);
  assert_events (f, "");
}

static void
test_replace_text_in_a_full_queue (Fixture       *f,
                                   gconstpointer  data)
{
  MendQueueItem *a;
  GError *error = NULL;

  mend_queue_set_max_items (f->queue, 1);
  a = push (f, "a");
  g_assert_true (mend_queue_is_full (f->queue));
  forget_events (f);

  g_assert_true (mend_queue_replace_text (f->queue, mend_queue_item_get_id (a), "b", &error));
  g_assert_no_error (error);
  assert_events (f, "changed(0,1,1)");
  assert_contents (f->queue, "b");
}

static void
test_line_ends_become_lf (Fixture       *f,
                          gconstpointer  data)
{
  MendQueueItem *item;
  g_autofree char *normalized = NULL;
  GError *error = NULL;

  item = push (f, "a\r\nb\rc\nd\r\r\n");
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "a\nb\nc\nd\n\n");

  /* Nothing else changes: white space around the text is kept. */
  item = push (f, "  indented\t\n");
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "  indented\t\n");

  item = mend_queue_insert_front (f->queue, "\r\nfront\r", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "\nfront\n");

  normalized = mend_queue_normalize_text (f->queue, "x\r\ny\r", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (normalized, ==, "x\ny\n");
}

static void
test_blank_text_is_refused (Fixture       *f,
                            gconstpointer  data)
{
  const char *blanks[] = {
    "",
    " ",
    "\t \n",
    "\r\n\r",
    "\xc2\xa0",          /* NO-BREAK SPACE */
    "\xe3\x80\x80",      /* IDEOGRAPHIC SPACE */
    "\xe2\x80\xa8 \xe2\x80\x83", /* LINE SEPARATOR, EM SPACE */
  };
  GError *error = NULL;
  char *normalized;

  push (f, "kept");
  forget_events (f);

  for (guint i = 0; i < G_N_ELEMENTS (blanks); i++)
    {
      g_assert_null (mend_queue_push (f->queue, blanks[i], NULL, &error));
      g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
      g_clear_error (&error);

      g_assert_null (mend_queue_insert_front (f->queue, blanks[i], NULL, &error));
      g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
      g_clear_error (&error);

      normalized = mend_queue_normalize_text (f->queue, blanks[i], &error);
      g_assert_null (normalized);
      g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
      g_clear_error (&error);
    }

  /* NULL is blank text, not a programmer error. */
  g_assert_null (mend_queue_push (f->queue, NULL, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_clear_error (&error);
  g_assert_null (mend_queue_normalize_text (f->queue, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_clear_error (&error);

  /* A zero-width space is not white space: the text is kept. */
  g_assert_nonnull (mend_queue_push (f->queue, "\xe2\x80\x8b", NULL, NULL));

  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 2);
  assert_events (f, "changed(1,0,1) n-items(2)");
}

static void
test_too_large_counts_bytes_after_normalizing (Fixture       *f,
                                               gconstpointer  data)
{
  GError *error = NULL;
  MendQueueItem *item;

  mend_queue_set_max_item_bytes (f->queue, 10);
  forget_events (f);

  /* Exactly the limit fits. */
  g_assert_nonnull (mend_queue_push (f->queue, "0123456789", NULL, &error));
  g_assert_no_error (error);

  /* One byte more is refused. */
  g_assert_null (mend_queue_push (f->queue, "0123456789a", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);
  g_assert_null (mend_queue_insert_front (f->queue, "0123456789a", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);

  /* 11 bytes as given, 10 once CRLF became LF. */
  item = mend_queue_push (f->queue, "0123\r\n56789", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "0123\n56789");
  g_assert_null (mend_queue_push (f->queue, "0123\r\n567890", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);

  /* Bytes, not characters: five two-byte characters fit, one more byte does not. */
  g_assert_nonnull (mend_queue_push (f->queue, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", NULL, NULL));
  g_assert_null (mend_queue_push (f->queue, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9!", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);

  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 3);
  assert_events (f, "changed(0,0,1) n-items(1) changed(1,0,1) n-items(2) changed(2,0,1) n-items(3)");
}

static void
test_invalid_utf8_text_is_refused (Fixture       *f,
                                   gconstpointer  data)
{
  GError *error = NULL;
  char *normalized;

  push (f, "kept");
  forget_events (f);

  g_assert_null (mend_queue_push (f->queue, "ab\xff" "cd", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_clear_error (&error);

  g_assert_null (mend_queue_insert_front (f->queue, "\xc3(", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_clear_error (&error);

  /* Invalid even when the rest is white space. */
  normalized = mend_queue_normalize_text (f->queue, "  \xed\xa0\x80  ", &error);
  g_assert_null (normalized);
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_clear_error (&error);

  assert_contents (f->queue, "kept");
  assert_events (f, "");
}

static void
test_invalid_utf8_provenance_is_refused (Fixture       *f,
                                         gconstpointer  data)
{
  GError *error = NULL;
  MendQueueItem *item;

  forget_events (f);

  g_assert_null (mend_queue_push (f->queue, "text", "{\"kind\":\"\xfe\"}", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_assert_nonnull (strstr (error->message, "provenance"));
  g_clear_error (&error);

  g_assert_null (mend_queue_insert_front (f->queue, "text", "\x80", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT);
  g_clear_error (&error);

  assert_events (f, "");
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 0);

  /* Valid provenance is kept as given, line ends and all. */
  item = mend_queue_push (f->queue, "text", "{\"kind\": \"subagent_retry\"}\r\n", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (mend_queue_item_get_provenance (item), ==, "{\"kind\": \"subagent_retry\"}\r\n");
}

static void
test_full_queue_refuses_push_and_insert_front (Fixture       *f,
                                               gconstpointer  data)
{
  GError *error = NULL;
  GString *before = g_string_new (NULL);
  GString *after = g_string_new (NULL);

  mend_queue_set_max_items (f->queue, 3);
  push (f, "a");
  push (f, "b");
  g_assert_false (mend_queue_is_full (f->queue));
  push (f, "c");
  g_assert_true (mend_queue_is_full (f->queue));
  forget_events (f);

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (f->queue), i);

      g_string_append_printf (before, "%s ", mend_queue_item_get_id (item));
    }

  g_assert_null (mend_queue_push (f->queue, "d", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);
  g_clear_error (&error);

  g_assert_null (mend_queue_insert_front (f->queue, "Continue", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);
  g_clear_error (&error);

  /* Untouched: same items, same order, nothing emitted. */
  assert_events (f, "");
  assert_contents (f->queue, "a|b|c");
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (f->queue), i);

      g_string_append_printf (after, "%s ", mend_queue_item_get_id (item));
    }
  g_assert_cmpstr (before->str, ==, after->str);

  /* Room again after a pop. */
  g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_nonnull (mend_queue_insert_front (f->queue, "Continue", NULL, &error));
  g_assert_no_error (error);
  assert_contents (f->queue, "Continue|b|c");

  g_string_free (before, TRUE);
  g_string_free (after, TRUE);
}

static void
test_full_queue_refuses_the_default_limit (Fixture       *f,
                                           gconstpointer  data)
{
  GError *error = NULL;

  for (guint i = 0; i < MEND_QUEUE_DEFAULT_MAX_ITEMS; i++)
    push (f, "follow-up");
  g_assert_true (mend_queue_is_full (f->queue));

  g_assert_null (mend_queue_push (f->queue, "one more", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);
  g_clear_error (&error);
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, MEND_QUEUE_DEFAULT_MAX_ITEMS);
}

static void
test_ids_are_unique_and_never_reused (Fixture       *f,
                                      gconstpointer  data)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  MendQueueItem *item;
  const char *id;

  for (guint round = 0; round < 40; round++)
    {
      item = (round % 3 == 0) ? mend_queue_insert_front (f->queue, "x", NULL, NULL) : push (f, "y");
      id = mend_queue_item_get_id (item);
      g_assert_nonnull (id);
      g_assert_false (g_hash_table_contains (seen, id));
      g_hash_table_add (seen, g_strdup (id));

      /* Keep the queue short: remove the newest sometimes, pop otherwise. */
      if (round % 2 == 0)
        g_assert_true (mend_queue_remove (f->queue, id, NULL));
      else if (mend_queue_get_length (f->queue) > 3)
        g_assert_finalize_object (mend_queue_pop (f->queue));
    }

  g_assert_cmpuint (g_hash_table_size (seen), ==, 40);
}

static void
test_lowering_max_items_keeps_items (Fixture       *f,
                                     gconstpointer  data)
{
  GError *error = NULL;
  guint i;

  for (i = 0; i < 5; i++)
    push (f, "item");
  forget_events (f);

  mend_queue_set_max_items (f->queue, 2);
  assert_events (f, "max-items");
  g_assert_cmpuint (mend_queue_get_max_items (f->queue), ==, 2);
  g_assert_cmpuint (mend_queue_get_length (f->queue), ==, 5);
  g_assert_true (mend_queue_is_full (f->queue));

  g_assert_null (mend_queue_push (f->queue, "more", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);
  g_clear_error (&error);

  for (i = 0; i < 3; i++)
    g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_true (mend_queue_is_full (f->queue));
  g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_false (mend_queue_is_full (f->queue));
  g_assert_nonnull (mend_queue_push (f->queue, "more", NULL, &error));
  g_assert_no_error (error);
}

static void
test_setters_notify_only_on_change (Fixture       *f,
                                    gconstpointer  data)
{
  mend_queue_set_max_items (f->queue, 16);
  mend_queue_set_max_item_bytes (f->queue, 262144);
  assert_events (f, "");

  mend_queue_set_max_items (f->queue, 1024);
  mend_queue_set_max_item_bytes (f->queue, 1);
  assert_events (f, "max-items max-item-bytes");

  /* Through the property system too (one at a time: a frozen notify
   * queue has no set order). */
  g_object_set (f->queue, "max-items", 1, NULL);
  g_object_set (f->queue, "max-item-bytes", G_MAXINT, NULL);
  assert_events (f, "max-items max-item-bytes");
  g_assert_cmpuint (mend_queue_get_max_items (f->queue), ==, 1);
  g_assert_cmpuint (mend_queue_get_max_item_bytes (f->queue), ==, G_MAXINT);

  g_object_set (f->queue, "max-items", 1, NULL);
  assert_events (f, "");
}

static void
test_error_messages_mention_the_numbers (Fixture       *f,
                                         gconstpointer  data)
{
  GError *error = NULL;
  char *large;

  large = g_malloc (300000 + 1);
  memset (large, 'x', 300000);
  large[300000] = '\0';
  g_assert_null (mend_queue_push (f->queue, large, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_assert_cmpstr (error->message, ==, "The message is 300000 bytes; at most 262144 fit in the queue");
  g_clear_error (&error);
  g_free (large);

  g_assert_null (mend_queue_push (f->queue, "ok\xff", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The message is not valid UTF-8: bad byte at offset 2");
  g_clear_error (&error);

  g_assert_null (mend_queue_push (f->queue, "ok", "\xff", &error));
  g_assert_cmpstr (error->message, ==, "The provenance is not valid UTF-8: bad byte at offset 0");
  g_clear_error (&error);

  g_assert_null (mend_queue_push (f->queue, "", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The message is empty");
  g_clear_error (&error);

  g_assert_null (mend_queue_push (f->queue, " \n", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The message is only white space");
  g_clear_error (&error);

  g_assert_false (mend_queue_remove (f->queue, "q7", &error));
  g_assert_cmpstr (error->message, ==, "No queued message has the id “q7”");
  g_clear_error (&error);

  for (guint i = 0; i < 16; i++)
    push (f, "x");
  g_assert_null (mend_queue_push (f->queue, "x", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The queue is full (16 messages)");
  g_clear_error (&error);

  mend_queue_set_max_items (f->queue, 1);
  g_assert_null (mend_queue_push (f->queue, "x", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The queue is full (16 messages; at most 1)");
  g_clear_error (&error);

  while (mend_queue_get_length (f->queue) > 1)
    g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_null (mend_queue_push (f->queue, "x", NULL, &error));
  g_assert_cmpstr (error->message, ==, "The queue is full (1 message)");
  g_clear_error (&error);
}

static void
test_list_model (Fixture       *f,
                 gconstpointer  data)
{
  GListModel *model = G_LIST_MODEL (f->queue);
  MendQueueItem *a, *b;
  MendQueueItem *got;

  g_assert_true (g_list_model_get_item_type (model) == MEND_TYPE_QUEUE_ITEM);
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 0);
  g_assert_null (g_list_model_get_item (model, 0));

  a = push (f, "a");
  b = push (f, "b");
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 2);

  got = g_list_model_get_item (model, 0);
  g_assert_true (got == a);
  g_object_unref (got);
  got = g_list_model_get_item (model, 1);
  g_assert_true (got == b);
  g_object_unref (got);
  g_assert_null (g_list_model_get_item (model, 2));
  g_assert_null (g_list_model_get_item (model, G_MAXUINT));
}

static void
test_items_die_with_the_queue (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendQueue *queue = mend_queue_new (clock);
  gpointer weak_a, weak_b;

  weak_a = mend_queue_push (queue, "a", NULL, NULL);
  weak_b = mend_queue_insert_front (queue, "b", "{}", NULL);
  g_object_add_weak_pointer (weak_a, &weak_a);
  g_object_add_weak_pointer (weak_b, &weak_b);

  g_assert_finalize_object (queue);
  g_assert_null (weak_a);
  g_assert_null (weak_b);
  g_assert_finalize_object (clock);
}

static void
test_null_id_is_a_programmer_error (Fixture       *f,
                                    gconstpointer  data)
{
  push (f, "a");
  forget_events (f);

  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*id != NULL*");
  g_assert_false (mend_queue_remove (f->queue, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*id != NULL*");
  g_assert_false (mend_queue_replace_text (f->queue, NULL, "x", NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*id != NULL*");
  g_assert_null (mend_queue_find (f->queue, NULL));
  g_test_assert_expected_messages ();

  assert_events (f, "");
  assert_contents (f->queue, "a");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/Queue/defaults", test_defaults);
  ADD ("/Mend/Queue/push-appends-at-the-tail", test_push_appends_at_the_tail);
  ADD ("/Mend/Queue/insert-front-adds-at-the-head", test_insert_front_adds_at_the_head);
  ADD ("/Mend/Queue/remove-emits-its-position", test_remove_emits_its_position);
  ADD ("/Mend/Queue/remove-unknown-id-is-not-found", test_remove_unknown_id_is_not_found);
  ADD ("/Mend/Queue/pop-takes-the-head-with-full-transfer", test_pop_takes_the_head);
  ADD ("/Mend/Queue/peek-leaves-the-head", test_peek_leaves_the_head);
  ADD ("/Mend/Queue/find-by-id", test_find_by_id);
  ADD ("/Mend/Queue/replace-text-keeps-the-same-item-and-notifies", test_replace_text_keeps_the_same_item);
  ADD ("/Mend/Queue/replace-text-of-unknown-id-is-not-found", test_replace_text_of_unknown_id_is_not_found);
  ADD ("/Mend/Queue/replace-text-refuses-bad-text-and-keeps-the-old", test_replace_text_refuses_bad_text);
  ADD ("/Mend/Queue/replace-text-works-in-a-full-queue", test_replace_text_in_a_full_queue);
  ADD ("/Mend/Queue/line-ends-become-lf", test_line_ends_become_lf);
  ADD ("/Mend/Queue/blank-text-is-refused", test_blank_text_is_refused);
  ADD ("/Mend/Queue/too-large-counts-bytes-after-normalizing", test_too_large_counts_bytes_after_normalizing);
  ADD ("/Mend/Queue/invalid-utf8-text-is-refused", test_invalid_utf8_text_is_refused);
  ADD ("/Mend/Queue/invalid-utf8-provenance-is-refused", test_invalid_utf8_provenance_is_refused);
  ADD ("/Mend/Queue/full-queue-refuses-push-and-insert-front", test_full_queue_refuses_push_and_insert_front);
  ADD ("/Mend/Queue/full-at-the-default-limit", test_full_queue_refuses_the_default_limit);
  ADD ("/Mend/Queue/ids-are-unique-and-never-reused", test_ids_are_unique_and_never_reused);
  ADD ("/Mend/Queue/lowering-max-items-keeps-items", test_lowering_max_items_keeps_items);
  ADD ("/Mend/Queue/setters-notify-only-on-change", test_setters_notify_only_on_change);
  ADD ("/Mend/Queue/error-messages-mention-the-numbers", test_error_messages_mention_the_numbers);
  ADD ("/Mend/Queue/list-model", test_list_model);
  ADD ("/Mend/Queue/null-id-is-a-programmer-error", test_null_id_is_a_programmer_error);

#undef ADD

  g_test_add_func ("/Mend/Queue/default-clock-when-null", test_default_clock_when_null);
  g_test_add_func ("/Mend/Queue/items-die-with-the-queue", test_items_die_with_the_queue);

  return g_test_run ();
}
