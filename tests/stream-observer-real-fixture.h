/* stream-observer-real-fixture.h — a stream observer fed lines the real Claude Code CLI wrote
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the tests that play recordings of the real CLI
 * (tests/record-claude-code.py against tests/model-server.py, in
 * tests/data/claude-code-VERSION/) to a MendStreamObserver on a chat with
 * a MendManualClock. The turns the chat finished and the records it
 * emitted are kept; every object is finalized at the end.
 */

#pragma once

#include <string.h>

#include <libmend.h>

#define WALL_START 1764500000000000

typedef struct
{
  MendClock *clock;
  MendChat *chat;
  MendStreamObserver *observer;
  GPtrArray *finished;   /* MendTurn, owned */
  GPtrArray *records;    /* char *, owned */
  char **lines;          /* the recording being fed */
  guint next;            /* its next line */
} Fixture;

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_record (GObject    *source,
           const char *json,
           Fixture    *f)
{
  g_ptr_array_add (f->records, g_strdup (json));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-1", "clock", f->clock, NULL);
  f->observer = mend_stream_observer_new (f->chat);
  f->finished = g_ptr_array_new ();
  f->records = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_record), f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->observer);
  g_assert_finalize_object (f->chat);
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->records);
  g_strfreev (f->lines);
  g_assert_finalize_object (f->clock);
}

/* Loads the recording of @scenario by CLI @version: its lines, without
 * the empty one after the last. */
static void
fixture_load (Fixture    *f,
              const char *version,
              const char *scenario)
{
  g_autofree char *dir = g_strconcat ("claude-code-", version, NULL);
  g_autofree char *name = g_strconcat (scenario, ".jsonl", NULL);
  g_autofree char *path = g_build_filename (MEND_TEST_SRCDIR, "data", dir, name, NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_no_error (error);
  g_strchomp (contents);
  g_strfreev (f->lines);
  f->lines = g_strsplit (contents, "\n", -1);
  f->next = 0;
}

/* Feeds the recording's lines up to and including the next one that
 * contains @until (all of them when NULL); says whether it was found. */
static gboolean
feed_until (Fixture    *f,
            const char *until)
{
  while (f->lines[f->next] != NULL)
    {
      const char *line = f->lines[f->next++];

      mend_stream_observer_feed_line (f->observer, line, -1);
      if (until != NULL && strstr (line, until) != NULL)
        return TRUE;
    }

  return until == NULL;
}

static MendTurn *
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
  turn = mend_chat_get_turn (f->chat);
  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  return turn;
}

static MendTurn *
last_finished (Fixture *f)
{
  g_assert_cmpuint (f->finished->len, >, 0);
  return g_ptr_array_index (f->finished, f->finished->len - 1);
}

static guint
n_subagents (Fixture *f)
{
  return g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat)));
}

static gboolean
records_contain (Fixture    *f,
                 const char *kind,
                 const char *outcome)
{
  g_autofree char *k = g_strdup_printf ("\"kind\":\"%s\"", kind);
  g_autofree char *o = g_strdup_printf ("\"outcome\":\"%s\"", outcome);

  for (guint i = 0; i < f->records->len; i++)
    {
      const char *record = g_ptr_array_index (f->records, i);

      if (strstr (record, k) != NULL && strstr (record, o) != NULL)
        return TRUE;
    }

  return FALSE;
}
