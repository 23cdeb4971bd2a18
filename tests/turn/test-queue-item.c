/* test-queue-item.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendQueueItem as an app meets it: made by its queue, read-only to
 * everyone else, the same object for its whole life, its text notified
 * when the queue edits it.
 */

#include <libmend.h>

#include "mend-test-utils.h"

typedef struct
{
  MendClock *clock;
  MendQueue *queue;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->queue = mend_queue_new (f->clock);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->queue);
  g_assert_finalize_object (f->clock);
}

static MendQueueItem *
push (Fixture    *f,
      const char *text,
      const char *provenance)
{
  g_autoptr(GError) error = NULL;
  MendQueueItem *item = mend_queue_push (f->queue, text, provenance, &error);

  g_assert_no_error (error);
  g_assert_nonnull (item);
  return item;
}

/* Each notification, by property name, "name name ...". */
static void
note_notify (GObject    *object,
             GParamSpec *pspec,
             GString    *log)
{
  g_string_append_printf (log, "%s%s", log->len > 0 ? " " : "", pspec->name);
}

/* Every property read through GObject is what its getter says. */
static void
assert_properties_match_getters (MendQueueItem *item)
{
  g_autofree char *id = NULL;
  g_autofree char *text = NULL;
  g_autofree char *provenance = NULL;
  gint64 queued_at = 0;

  g_object_get (item,
                "id", &id,
                "text", &text,
                "provenance", &provenance,
                "queued-at", &queued_at,
                NULL);
  g_assert_cmpstr (id, ==, mend_queue_item_get_id (item));
  g_assert_cmpstr (text, ==, mend_queue_item_get_text (item));
  g_assert_cmpstr (provenance, ==, mend_queue_item_get_provenance (item));
  g_assert_cmpint (queued_at, ==, mend_queue_item_get_queued_at (item));
}

static void
test_properties_are_read_only (void)
{
  /* Only its queue makes and changes it. */
  const GParamFlags lacks = G_PARAM_WRITABLE | G_PARAM_CONSTRUCT | G_PARAM_CONSTRUCT_ONLY;
  const MendTestProperty expected[] = {
    { "id", G_TYPE_STRING, G_PARAM_READABLE, lacks },
    { "text", G_TYPE_STRING, G_PARAM_READABLE, lacks },
    { "provenance", G_TYPE_STRING, G_PARAM_READABLE, lacks },
    { "queued-at", G_TYPE_INT64, G_PARAM_READABLE, lacks },
  };

  g_assert_true (G_TYPE_IS_FINAL (MEND_TYPE_QUEUE_ITEM));
  mend_test_assert_properties (MEND_TYPE_QUEUE_ITEM, expected, G_N_ELEMENTS (expected));
}

/* A push makes the item: an id, the text, the provenance as given, and
 * the time on the queue's clock. */
static void
test_push_makes_the_item (Fixture       *f,
                          gconstpointer  data)
{
  const char *provenance = "{ \"kind\" : \"subagent_retry\",\"attempt\":1 }";
  MendQueueItem *typed;
  MendQueueItem *sent;

  typed = push (f, "Fix the failing build", NULL);
  g_assert_nonnull (mend_queue_item_get_id (typed));
  g_assert_cmpstr (mend_queue_item_get_id (typed), !=, "");
  g_assert_cmpstr (mend_queue_item_get_text (typed), ==, "Fix the failing build");
  g_assert_null (mend_queue_item_get_provenance (typed));
  g_assert_cmpint (mend_queue_item_get_queued_at (typed), ==, MEND_TEST_WALL_START);
  assert_properties_match_getters (typed);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1500);
  sent = push (f, "Resume the subagent", provenance);
  /* Kept as given, not rewritten. */
  g_assert_cmpstr (mend_queue_item_get_provenance (sent), ==, provenance);
  g_assert_cmpint (mend_queue_item_get_queued_at (sent), ==, MEND_TEST_WALL_START + 1500 * 1000);
  g_assert_cmpint (mend_queue_item_get_queued_at (sent), ==, mend_clock_get_real_time (f->clock));
  g_assert_cmpstr (mend_queue_item_get_id (sent), !=, mend_queue_item_get_id (typed));
  assert_properties_match_getters (sent);

  /* The one at the head too. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1);
  {
    g_autoptr(GError) error = NULL;
    MendQueueItem *head = mend_queue_insert_front (f->queue, "first", "{}", &error);

    g_assert_no_error (error);
    g_assert_cmpstr (mend_queue_item_get_text (head), ==, "first");
    g_assert_cmpstr (mend_queue_item_get_provenance (head), ==, "{}");
    g_assert_cmpint (mend_queue_item_get_queued_at (head), ==, MEND_TEST_WALL_START + 1501 * 1000);
    assert_properties_match_getters (head);
  }
}

/* The text is kept with its line ends as LF, nothing else changed. */
static void
test_text_line_ends_are_lf (Fixture       *f,
                            gconstpointer  data)
{
  MendQueueItem *item = push (f, "  one\r\ntwo\rthree\n\tfour  ", NULL);
  g_autofree char *text = NULL;

  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "  one\ntwo\nthree\n\tfour  ");
  g_object_get (item, "text", &text, NULL);
  g_assert_cmpstr (text, ==, "  one\ntwo\nthree\n\tfour  ");
}

/* An edit through the queue: the same object, its text notified once and
 * nothing else; the same text, or a refused one, notifies nothing. */
static void
test_replace_text_notifies_the_text_alone (Fixture       *f,
                                           gconstpointer  data)
{
  MendQueueItem *item = push (f, "draft", "{\"kind\":\"user\"}");
  g_autoptr(GString) log = g_string_new (NULL);
  g_autofree char *id = g_strdup (mend_queue_item_get_id (item));
  g_autoptr(GError) error = NULL;

  g_signal_connect (item, "notify", G_CALLBACK (note_notify), log);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 60000);
  g_assert_true (mend_queue_replace_text (f->queue, id, "final\r\nversion", &error));
  g_assert_no_error (error);
  g_assert_cmpstr (log->str, ==, "text");
  g_assert_true (mend_queue_find (f->queue, id) == item);
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "final\nversion");
  g_assert_cmpstr (mend_queue_item_get_id (item), ==, id);
  g_assert_cmpstr (mend_queue_item_get_provenance (item), ==, "{\"kind\":\"user\"}");
  /* When it was queued, not when it was edited. */
  g_assert_cmpint (mend_queue_item_get_queued_at (item), ==, MEND_TEST_WALL_START);
  assert_properties_match_getters (item);

  /* The same text once normalized: nothing changes. */
  g_assert_true (mend_queue_replace_text (f->queue, id, "final\rversion", &error));
  g_assert_no_error (error);
  g_assert_cmpstr (log->str, ==, "text");

  /* Refused: the text stays, nothing is notified. */
  g_assert_false (mend_queue_replace_text (f->queue, id, "   ", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "final\nversion");
  g_assert_cmpstr (log->str, ==, "text");

  g_signal_handlers_disconnect_by_data (item, log);
}

/* The class's own example: a row bound to the item's text follows each
 * edit, as long as the item lives. */
static void
test_a_bound_row_follows_the_text (Fixture       *f,
                                   gconstpointer  data)
{
  MendQueueItem *item = push (f, "first words", NULL);
  /* Any object with a writable string property stands for the row's label. */
  GTlsPassword *label = g_tls_password_new (G_TLS_PASSWORD_NONE, "");
  GBinding *binding;

  binding = g_object_bind_property (item, "text", label, "description", G_BINDING_SYNC_CREATE);
  g_object_add_weak_pointer (G_OBJECT (binding), (gpointer *) &binding);
  g_assert_cmpstr (g_tls_password_get_description (label), ==, "first words");

  g_assert_true (mend_queue_replace_text (f->queue, mend_queue_item_get_id (item), "second words", NULL));
  g_assert_cmpstr (g_tls_password_get_description (label), ==, "second words");

  /* The item leaves the queue and dies with its last reference: the
   * binding goes with it. */
  g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_null (binding);
  g_assert_cmpstr (g_tls_password_get_description (label), ==, "second words");
  g_assert_finalize_object (label);
}

/* The queue hands out the same object wherever the app meets it: the
 * push, the list model, find, peek and pop. */
static void
test_the_same_object_for_its_whole_life (Fixture       *f,
                                         gconstpointer  data)
{
  GListModel *model = G_LIST_MODEL (f->queue);
  MendQueueItem *a = push (f, "a", NULL);
  MendQueueItem *b = push (f, "b", "{\"kind\":\"x\"}");
  g_autofree char *b_id = g_strdup (mend_queue_item_get_id (b));
  MendQueueItem *popped;

  g_assert_true (g_list_model_get_item_type (model) == MEND_TYPE_QUEUE_ITEM);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GObject) got = g_list_model_get_object (model, i);

      g_assert_true (MEND_IS_QUEUE_ITEM (got));
      g_assert_true (got == G_OBJECT (i == 0 ? a : b));
    }
  g_assert_true (mend_queue_find (f->queue, b_id) == b);
  g_assert_true (mend_queue_peek (f->queue) == a);

  /* Moving up the queue changes nothing of it. */
  g_assert_finalize_object (mend_queue_pop (f->queue));
  g_assert_true (mend_queue_peek (f->queue) == b);
  g_assert_cmpstr (mend_queue_item_get_id (b), ==, b_id);

  /* Out of the queue it is the app's, with everything it had. */
  popped = mend_queue_pop (f->queue);
  g_assert_true (popped == b);
  g_assert_null (mend_queue_find (f->queue, b_id));
  g_assert_cmpstr (mend_queue_item_get_id (popped), ==, b_id);
  g_assert_cmpstr (mend_queue_item_get_text (popped), ==, "b");
  g_assert_cmpstr (mend_queue_item_get_provenance (popped), ==, "{\"kind\":\"x\"}");
  g_assert_cmpint (mend_queue_item_get_queued_at (popped), ==, MEND_TEST_WALL_START);
  assert_properties_match_getters (popped);
  g_assert_finalize_object (popped);
}

/* An id is never given to another item of the same queue, even once the
 * first item is gone. */
static void
test_ids_are_never_given_again (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < 100; i++)
    {
      MendQueueItem *item = push (f, "again", NULL);

      g_assert_true (g_hash_table_add (seen, g_strdup (mend_queue_item_get_id (item))));
      if (i % 3 == 0)
        g_assert_true (mend_queue_remove (f->queue, mend_queue_item_get_id (item), NULL));
      else
        g_assert_finalize_object (mend_queue_pop (f->queue));
    }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 100);
}

/* Setting a property is refused: the item is read-only to its users. */
static void
test_setting_a_property_is_refused (Fixture       *f,
                                    gconstpointer  data)
{
  MendQueueItem *item = push (f, "mine", NULL);
  g_autoptr(GString) log = g_string_new (NULL);
  g_autofree char *id = g_strdup (mend_queue_item_get_id (item));

  g_signal_connect (item, "notify", G_CALLBACK (note_notify), log);

  g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING, "*property*text*is not writable*");
  g_object_set (item, "text", "theirs", NULL);
  g_test_assert_expected_messages ();
  g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING, "*property*id*is not writable*");
  g_object_set (item, "id", "q999", NULL);
  g_test_assert_expected_messages ();
  g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING, "*property*queued-at*is not writable*");
  g_object_set (item, "queued-at", (gint64) 0, NULL);
  g_test_assert_expected_messages ();

  g_assert_cmpstr (mend_queue_item_get_text (item), ==, "mine");
  g_assert_cmpstr (mend_queue_item_get_id (item), ==, id);
  g_assert_cmpint (mend_queue_item_get_queued_at (item), ==, MEND_TEST_WALL_START);
  g_assert_cmpstr (log->str, ==, "");
  g_signal_handlers_disconnect_by_data (item, log);
}

/* A getter given no item is a programmer's error: it says so and returns
 * what its documentation gives for none. */
static void
test_getters_refuse_what_is_not_an_item (Fixture       *f,
                                         gconstpointer  data)
{
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_QUEUE_ITEM*");
  g_assert_null (mend_queue_item_get_id (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_QUEUE_ITEM*");
  g_assert_null (mend_queue_item_get_text (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_QUEUE_ITEM*");
  g_assert_null (mend_queue_item_get_provenance (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_QUEUE_ITEM*");
  g_assert_cmpint (mend_queue_item_get_queued_at (NULL), ==, 0);
  g_test_assert_expected_messages ();

  /* The queue itself is not an item. */
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_QUEUE_ITEM*");
  g_assert_null (mend_queue_item_get_text ((MendQueueItem *) f->queue));
  g_test_assert_expected_messages ();
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 gpointer  data)
{
  mend_test_run_by_hand (turn);
}

static MendChat *
new_chat (MendClock *clock)
{
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-1", "clock", clock, NULL);

  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), NULL);
  return chat;
}

/* A chat's saved state keeps its queue: the restored items have the ids,
 * texts, provenance and times they had, in order, and the restored queue
 * gives none of those ids to a new item. */
static void
test_items_come_back_from_the_saved_state (void)
{
  MendClock *clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  MendClock *later = mend_manual_clock_new (MEND_TEST_WALL_START + 3600000000);
  MendChat *chat = new_chat (clock);
  MendChat *restored;
  MendQueue *queue;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autoptr(GPtrArray) saved = g_ptr_array_new_with_free_func (g_object_unref);
  MendQueueItem *fresh;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 2000);
  g_assert_true (mend_chat_submit (chat, "then the docs\r\nplease", NULL, NULL));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3000);
  g_assert_true (mend_chat_submit (chat, "and the tests", "{\"kind\":\"app\",\"n\":2}", NULL));
  queue = mend_chat_get_queue (chat);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);
  for (guint i = 0; i < 2; i++)
    g_ptr_array_add (saved, g_list_model_get_item (G_LIST_MODEL (queue), i));

  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);

  restored = new_chat (later);
  g_assert_true (mend_chat_restore_state (restored, json, &error));
  g_assert_no_error (error);
  queue = mend_chat_get_queue (restored);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (queue)), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);
      MendQueueItem *before = g_ptr_array_index (saved, i);

      g_assert_true (item != before);
      g_assert_cmpstr (mend_queue_item_get_id (item), ==, mend_queue_item_get_id (before));
      g_assert_cmpstr (mend_queue_item_get_text (item), ==, mend_queue_item_get_text (before));
      g_assert_cmpstr (mend_queue_item_get_provenance (item), ==, mend_queue_item_get_provenance (before));
      g_assert_cmpint (mend_queue_item_get_queued_at (item), ==, mend_queue_item_get_queued_at (before));
      assert_properties_match_getters (item);
    }
  g_assert_cmpstr (mend_queue_item_get_text (g_ptr_array_index (saved, 0)), ==, "then the docs\nplease");
  g_assert_cmpint (mend_queue_item_get_queued_at (g_ptr_array_index (saved, 1)), ==, MEND_TEST_WALL_START + 5000 * 1000);
  g_assert_null (mend_queue_item_get_provenance (g_ptr_array_index (saved, 0)));

  /* A new one, on the restored chat's clock, with an id of its own. */
  g_assert_true (mend_chat_submit (restored, "one more", NULL, NULL));
  fresh = g_list_model_get_item (G_LIST_MODEL (queue), 2);
  g_assert_cmpint (mend_queue_item_get_queued_at (fresh), ==, MEND_TEST_WALL_START + 3600000000);
  for (guint i = 0; i < saved->len; i++)
    g_assert_cmpstr (mend_queue_item_get_id (fresh), !=, mend_queue_item_get_id (g_ptr_array_index (saved, i)));
  g_object_unref (fresh);

  mend_chat_close (restored);
  g_assert_finalize_object (restored);
  g_ptr_array_set_size (saved, 0);
  g_assert_finalize_object (later);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  g_test_add_func ("/Mend/QueueItem/properties-are-read-only", test_properties_are_read_only);
  ADD ("/Mend/QueueItem/push-makes-the-item", test_push_makes_the_item);
  ADD ("/Mend/QueueItem/text-line-ends-are-lf", test_text_line_ends_are_lf);
  ADD ("/Mend/QueueItem/replace-text-notifies-the-text-alone", test_replace_text_notifies_the_text_alone);
  ADD ("/Mend/QueueItem/a-bound-row-follows-the-text", test_a_bound_row_follows_the_text);
  ADD ("/Mend/QueueItem/the-same-object-for-its-whole-life", test_the_same_object_for_its_whole_life);
  ADD ("/Mend/QueueItem/ids-are-never-given-again", test_ids_are_never_given_again);
  ADD ("/Mend/QueueItem/setting-a-property-is-refused", test_setting_a_property_is_refused);
  ADD ("/Mend/QueueItem/getters-refuse-what-is-not-an-item", test_getters_refuse_what_is_not_an_item);
  g_test_add_func ("/Mend/QueueItem/items-come-back-from-the-saved-state", test_items_come_back_from_the_saved_state);

#undef ADD

  return g_test_run ();
}
