/* bench-heap.c — the heap an idle chat takes, against a naive client's
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * N idle chats, each a MendChat with its own MendHttpSender (its default
 * clock and policies, as g_object_new () makes them), against N naive
 * clients, each a SoupSession and a JsonParser: the heap in use
 * (mallinfo2 ().uordblks, G_SLICE=always-malloc so that GSlice's blocks
 * count) after making them, minus before, divided by N; and the chats
 * again with the SoupSession their sender makes at its first request (an
 * idle chat that has sent). Each way runs
 * after one of its kind was made and freed, so that types and the default
 * clock are not counted.
 *
 * usage: bench-heap [N]
 *
 * Prints, and one machine-readable line:
 *   RESULT heap chats=… mend_bytes=… naive_bytes=… ratio=…
 * Exits 1 when libmend takes more than twice the naive heap.
 */

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <libmend.h>

/* At most this many times the naive client's heap. */
#define TARGET 2.0

static gsize
heap_in_use (void)
{
  struct mallinfo2 info = mallinfo2 ();

  return info.uordblks + info.hblkhd;
}

static gpointer
make_chat (void)
{
  g_autoptr(MendHttpSender) sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");

  return g_object_new (MEND_TYPE_CHAT, "sender", sender, NULL);
}

/* The same, with the SoupSession the sender makes at its first request. */
static gpointer
make_chat_with_session (void)
{
  MendChat *chat = make_chat ();

  mend_http_sender_get_session (MEND_HTTP_SENDER (mend_chat_get_sender (chat)));
  return chat;
}

static void
free_chat (gpointer chat)
{
  mend_chat_close (chat);
  g_object_unref (chat);
}

typedef struct
{
  SoupSession *session;
  JsonParser  *parser;
} Naive;

static gpointer
make_naive (void)
{
  Naive *naive = g_new (Naive, 1);

  naive->session = soup_session_new ();
  naive->parser = json_parser_new ();
  return naive;
}

static void
free_naive (gpointer data)
{
  Naive *naive = data;

  g_object_unref (naive->session);
  g_object_unref (naive->parser);
  g_free (naive);
}

static double
bytes_each (guint      n,
            gpointer (*make) (void),
            void     (*destroy) (gpointer))
{
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func (destroy);
  gsize before;

  destroy (make ());
  while (g_main_context_iteration (NULL, FALSE))
    ;
  malloc_trim (0);
  before = heap_in_use ();
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (made, make ());
  return ((double) heap_in_use () - (double) before) / n;
}

int
main (int   argc,
      char *argv[])
{
  guint n = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 200;
  double mend, naive, sent;

  /* GSlice's blocks count as the mallocs they are: GLib reads G_SLICE
   * before main (), hence the exec. */
  if (g_strcmp0 (g_getenv ("G_SLICE"), "always-malloc") != 0)
    {
      g_setenv ("G_SLICE", "always-malloc", TRUE);
      execv ("/proc/self/exe", argv);
      return 1;
    }
  if (n == 0)
    return 2;
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

  naive = bytes_each (n, make_naive, free_naive);
  mend = bytes_each (n, make_chat, free_chat);
  sent = bytes_each (n, make_chat_with_session, free_chat);
  printf ("heap of an idle chat with an HTTP sender: %.0f bytes (%.0f with the session of a first request); "
          "a SoupSession and a JsonParser: %.0f bytes (%.2fx, %.2fx)\n", mend, sent, naive, mend / naive,
          sent / naive);
  printf ("RESULT heap chats=%u mend_bytes=%.0f naive_bytes=%.0f ratio=%.2f sent_bytes=%.0f sent_ratio=%.2f\n",
          n, mend, naive, mend / naive, sent, sent / naive);
  if (mend > TARGET * naive)
    {
      printf ("bench-heap: target not met: %.2fx the naive heap > %.1fx\n", mend / naive, TARGET);
      return 1;
    }
  return 0;
}
