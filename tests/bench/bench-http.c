/* bench-http.c — what MendHttpSender costs per streamed delta, per request body, per trim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Three measures, each against the naive way or the floor in the same run:
 *
 * 1. Per streamed text delta, for each wire format (Messages, Chat
 *    Completions, Responses, Gemini): a real MendHttpSender under a MendChat
 *    against a loopback SoupServer, and a naive libsoup + json-glib client
 *    that reads the same event stream, parses every event into a JsonParser
 *    tree (one parser, reused) and takes its text. Both hand each delta's
 *    text to the app (a GString). Per delta is (a turn of N + 1 deltas − a
 *    turn of 1 delta) ÷ N, so that the request, the headers and the turn
 *    cancel out; instructions under callgrind (tools/bench) and mallocs with
 *    a counting allocator (G_SLICE=always-malloc, so that GSlice's
 *    allocations count too).
 *
 *    The server runs in a process of its own (bench-http --serve), so
 *    that neither its instructions nor its CPU time count, and streams in
 *    one of two ways. "whole": it writes the stream at once, so the client
 *    reads it in chunks of up to 16 KiB, as it reads a fast server's or
 *    one it lags behind; the per-read cost of libsoup and GIO (thousands
 *    of instructions, a dozen allocations) is then spread over many
 *    deltas, and what is left is the sender's. "paced": each event is an
 *    HTTP chunk of its own, written a millisecond after the one before, as
 *    a model streams: each delta is then a wakeup of the main loop and a
 *    read, whose cost both clients pay, the sender with a pollable read
 *    and the naive client with g_input_stream_read_bytes_async ();
 *    under callgrind, ~50 times slower, a client may find more than one
 *    event at a wakeup. tools/bench checks the targets for both ways.
 *
 *    The real sender is measured, not its reading path fed the bytes: with
 *    the server in a process of its own and the turn of one delta taken
 *    away, what the socket adds is libsoup's reads, which both clients
 *    pay and which stay well under the difference between them.
 *
 * 2. Building a request body for a transcript of K committed messages
 *    (mend_http_sender_build_body () for a new turn), against writing the
 *    same bytes (g_string_append () of the body), CPU time, with the main
 *    context owned as an app's main loop owns it when it sends.
 *
 * 3. mend_transcript_trim () from T turns to T / 2, CPU time per turn
 *    dropped, at T = 1 000, 4 000 and 16 000: linear when flat.
 *
 * usage: bench-http [DELTAS [ROUNDS]]
 *        bench-http --serve                      (the server; prints its port)
 *        bench-http --only mend|naive|soup FORMAT DELTAS PORT [whole|events|paced]
 *                                                (soup: libsoup's reads and a memchr split)
 *        bench-http --only floor|none FORMAT DELTAS (a memchr split of the stream's bytes, or not)
 *        bench-http --only body FORMAT MESSAGES  (1 000 bodies, for callgrind)
 *        bench-http --only first-body cold|load|generate|parse FORMAT MESSAGES
 *                                                (the first body after a load, for callgrind)
 *
 * --only runs one turn of one client once, for instruction counts under
 * callgrind against a server started with --serve.
 *
 * The streams and their server are in bench-http-server.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <libmend.h>

#include "bench-common.h"
#include "bench-http.h"

#include "mend-http-sender-private.h"

/* Counting allocator: every malloc in the process goes through these
 * (not under AddressSanitizer, whose own allocator they would bypass:
 * then nothing is counted). */
static volatile gboolean counting;
static volatile gsize n_allocs;

#if !defined (__SANITIZE_ADDRESS__)
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t size);

void *
malloc (size_t size)
{
  if (counting)
    n_allocs++;
  return __libc_malloc (size);
}

void *
calloc (size_t n,
        size_t size)
{
  if (counting)
    n_allocs++;
  return __libc_calloc (n, size);
}

void *
realloc (void   *p,
         size_t  size)
{
  if (counting)
    n_allocs++;
  return __libc_realloc (p, size);
}
#endif

static double
thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The two clients */

typedef struct
{
  Format       format;
  guint        port;
  const char  *chunks;      /* "whole", "events" or "paced" */
  GString     *text;        /* what the app was given */

  /* libmend */
  MendClock      *clock;
  MendHttpSender *sender;
  MendChat       *chat;
  gboolean        finished;
  MendTurnState   state;

  /* naive */
  SoupSession  *session;
  GInputStream *stream;
  GString      *buffer;     /* bytes not yet split into lines */
  GString      *data;       /* the data lines of the event so far */
  JsonParser   *parser;
  gboolean      done;
} Client;

static char *
stream_uri (Client *c,
            guint   deltas)
{
  return g_strdup_printf ("http://127.0.0.1:%u%sdeltas=%u&chunks=%s", c->port, format_paths[c->format], deltas,
                          c->chunks);
}

static void
on_text_delta (MendHttpSender *sender,
               const char     *delta,
               Client         *c)
{
  g_string_append (c->text, delta);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Client   *c)
{
  c->state = mend_turn_get_state (turn);
  c->finished = TRUE;
}

/* One turn through a MendChat over a MendHttpSender of the format. */
static void
mend_turn (Client *c,
           guint   deltas)
{
  g_autofree char *uri = stream_uri (c, deltas);
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();

  mend_error_policy_set_max_retries (policy, 0);
  c->clock = mend_manual_clock_new (1764500000000000);
  c->sender = mend_http_sender_new (uri);
  g_signal_connect (c->sender, "text-delta", G_CALLBACK (on_text_delta), c);
  c->chat = g_object_new (MEND_TYPE_CHAT, "clock", c->clock, "policy", policy, "sender", c->sender, NULL);
  g_signal_connect (c->chat, "turn-finished", G_CALLBACK (on_turn_finished), c);

  c->finished = FALSE;
  if (!mend_chat_submit (c->chat, "Why does the build fail?", NULL, NULL))
    exit (1);
  while (!c->finished)
    g_main_context_iteration (NULL, TRUE);
  if (c->state != MEND_TURN_SUCCEEDED)
    {
      g_printerr ("bench-http: the %s turn did not succeed\n", format_names[c->format]);
      exit (1);
    }

  mend_chat_close (c->chat);
  g_clear_object (&c->chat);
  g_clear_object (&c->sender);
  g_clear_object (&c->clock);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* The naive client's text of one event's JSON, or NULL. */
static const char *
naive_text (Format      format,
            JsonObject *root,
            GString    *joined)
{
  JsonObject *object;
  JsonArray *array;

  switch (format)
    {
    case FORMAT_MESSAGES:
      if (g_strcmp0 (json_object_get_string_member_with_default (root, "type", NULL), "content_block_delta") != 0 ||
          (object = json_object_get_object_member (root, "delta")) == NULL)
        return NULL;
      return json_object_get_string_member_with_default (object, "text", NULL);
    case FORMAT_CHAT:
      if (!json_object_has_member (root, "choices") || (array = json_object_get_array_member (root, "choices")) == NULL ||
          json_array_get_length (array) == 0 || (object = json_array_get_object_element (array, 0)) == NULL ||
          (object = json_object_get_object_member (object, "delta")) == NULL)
        return NULL;
      return json_object_get_string_member_with_default (object, "content", NULL);
    case FORMAT_RESPONSES:
      if (g_strcmp0 (json_object_get_string_member_with_default (root, "type", NULL), "response.output_text.delta") != 0)
        return NULL;
      return json_object_get_string_member_with_default (root, "delta", NULL);
    case FORMAT_GEMINI:
    default:
      if (!json_object_has_member (root, "candidates") ||
          (array = json_object_get_array_member (root, "candidates")) == NULL ||
          json_array_get_length (array) == 0 || (object = json_array_get_object_element (array, 0)) == NULL ||
          (object = json_object_get_object_member (object, "content")) == NULL ||
          (array = json_object_get_array_member (object, "parts")) == NULL)
        return NULL;
      g_string_truncate (joined, 0);
      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonObject *part = json_array_get_object_element (array, i);
          const char *piece = part != NULL ? json_object_get_string_member_with_default (part, "text", NULL) : NULL;

          if (piece != NULL)
            g_string_append (joined, piece);
        }
      return joined->len > 0 ? joined->str : NULL;
    }
}

static void
naive_event (Client *c)
{
  static GString *joined;
  JsonNode *root;
  const char *text;

  if (joined == NULL)
    joined = g_string_new (NULL);
  /* The end of a Chat Completions stream, which then closes. */
  if (c->format == FORMAT_CHAT && g_str_has_prefix (c->data->str, "[DONE]"))
    return;
  if (!json_parser_load_from_data (c->parser, c->data->str, c->data->len, NULL) ||
      (root = json_parser_get_root (c->parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  text = naive_text (c->format, json_node_get_object (root), joined);
  if (text != NULL && text[0] != '\0')
    g_string_append (c->text, text);
}

/* Server-sent events, split as the specification says (LF or CRLF). */
static void
naive_feed (Client     *c,
            const char *bytes,
            gsize       size)
{
  const char *p;
  const char *end;

  g_string_append_len (c->buffer, bytes, size);
  p = c->buffer->str;
  end = p + c->buffer->len;
  for (;;)
    {
      const char *nl = memchr (p, '\n', end - p);
      gsize length;

      if (nl == NULL)
        break;
      length = nl - p;
      if (length > 0 && p[length - 1] == '\r')
        length--;
      if (length == 0)
        {
          if (c->data->len > 0)
            naive_event (c);
          g_string_truncate (c->data, 0);
        }
      else if (length >= 5 && memcmp (p, "data:", 5) == 0)
        {
          const char *value = p + 5 + (length > 5 && p[5] == ' ');

          if (c->data->len > 0)
            g_string_append_c (c->data, '\n');
          g_string_append_len (c->data, value, p + length - value);
        }
      p = nl + 1;
    }
  g_string_erase (c->buffer, 0, p - c->buffer->str);
}

static void naive_read (Client *c);

static void
on_naive_read (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Client *c = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);
  gsize size = 0;
  const char *data;

  if (chunk == NULL)
    {
      g_printerr ("bench-http: %s\n", error->message);
      exit (1);
    }
  data = g_bytes_get_data (chunk, &size);
  if (size == 0)
    {
      c->done = TRUE;
      return;
    }
  naive_feed (c, data, size);
  naive_read (c);
}

static void
naive_read (Client *c)
{
  g_input_stream_read_bytes_async (c->stream, 16384, G_PRIORITY_DEFAULT, NULL, on_naive_read, c);
}

static void
on_naive_sent (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Client *c = user_data;
  g_autoptr(GError) error = NULL;

  c->stream = soup_session_send_finish (SOUP_SESSION (object), result, &error);
  if (c->stream == NULL)
    {
      g_printerr ("bench-http: %s\n", error->message);
      exit (1);
    }
  naive_read (c);
}

/* One request of the naive client: the same stream, every event parsed. */
static void
naive_turn (Client *c,
            guint   deltas)
{
  g_autofree char *uri = stream_uri (c, deltas);
  g_autoptr(SoupMessage) message = soup_message_new ("POST", uri);
  static const char body[] = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Why?\"}]}";
  g_autoptr(GBytes) bytes = g_bytes_new_static (body, strlen (body));

  soup_message_set_request_body_from_bytes (message, "application/json", bytes);
  c->session = soup_session_new ();
  c->parser = json_parser_new ();
  c->buffer = g_string_new (NULL);
  c->data = g_string_new (NULL);
  c->done = FALSE;
  soup_session_send_async (c->session, message, G_PRIORITY_DEFAULT, NULL, on_naive_sent, c);
  while (!c->done)
    g_main_context_iteration (NULL, TRUE);

  g_clear_object (&c->stream);
  g_clear_object (&c->parser);
  g_clear_object (&c->session);
  g_string_free (c->buffer, TRUE);
  g_string_free (c->data, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* The floor of a libsoup client: the same stream read as the sender
 * reads it (non-blocking reads of what is at hand, a source waiting for
 * the rest), its lines found by memchr () and nothing else done. */
static gboolean
on_floor_readable (GObject *stream,
                   gpointer user_data)
{
  Client *c = user_data;
  char buffer[16384];
  static volatile guint lines;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (stream), buffer,
                                                           sizeof buffer, NULL, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return G_SOURCE_CONTINUE;
      if (n <= 0)
        {
          c->done = TRUE;
          return G_SOURCE_REMOVE;
        }
      for (const char *p = buffer, *end = buffer + n, *nl; (nl = memchr (p, '\n', end - p)) != NULL; p = nl + 1)
        lines++;
    }
}

static void
on_floor_sent (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Client *c = user_data;
  g_autoptr(GError) error = NULL;
  GSource *source;

  c->stream = soup_session_send_finish (SOUP_SESSION (object), result, &error);
  if (c->stream == NULL)
    {
      g_printerr ("bench-http: %s\n", error->message);
      exit (1);
    }
  source = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (c->stream), NULL);
  g_source_set_callback (source, G_SOURCE_FUNC (on_floor_readable), c, NULL);
  g_source_attach (source, NULL);
  g_source_unref (source);
}

static void
floor_turn (Client *c,
            guint   deltas)
{
  g_autofree char *uri = stream_uri (c, deltas);
  g_autoptr(SoupMessage) message = soup_message_new ("POST", uri);

  c->session = soup_session_new ();
  c->done = FALSE;
  soup_session_send_async (c->session, message, G_PRIORITY_DEFAULT, NULL, on_floor_sent, c);
  while (!c->done)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&c->stream);
  g_clear_object (&c->session);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

typedef void (*TurnFunc) (Client *c,
                          guint   deltas);

/* Per delta: CPU time and mallocs of a turn of @n + 1 deltas beyond a
 * turn of 1, the best of @rounds for the time. */
static void
measure_turns (Client   *c,
               TurnFunc  turn,
               guint     n,
               guint     rounds,
               double   *ns,
               double   *allocs)
{
  double best = G_MAXDOUBLE;
  gsize base_allocs = G_MAXSIZE, full_allocs = G_MAXSIZE;

  turn (c, 2);   /* the warm-up: types, connections */
  for (guint r = 0; r < rounds; r++)
    {
      double t0, t1, t2;

      t0 = thread_cpu_ns ();
      turn (c, 1);
      t1 = thread_cpu_ns ();
      turn (c, n + 1);
      t2 = thread_cpu_ns ();
      best = MIN (best, ((t2 - t1) - (t1 - t0)) / n);
    }

  /* The fewest of five turns of each size: a turn that makes a new
   * connection, or wakes for every event, counts hundreds more. */
  for (guint r = 0; r < 5; r++)
    {
      n_allocs = 0;
      counting = TRUE;
      turn (c, 1);
      counting = FALSE;
      base_allocs = MIN (base_allocs, n_allocs);
      n_allocs = 0;
      counting = TRUE;
      turn (c, n + 1);
      counting = FALSE;
      full_allocs = MIN (full_allocs, n_allocs);
    }

  *ns = best;
  *allocs = ((double) full_allocs - (double) base_allocs) / n;
}

static void
check_text (Client *c,
            guint   n)
{
  g_autoptr(GString) expected = g_string_new (NULL);

  /* The text of the deltas, unescaped (the Gemini stream's last chunk
   * adds a period), once per turn. */
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *json = g_strdup_printf ("\"%s\"", delta_text (i));
      g_autoptr(JsonNode) node = json_from_string (json, NULL);

      g_string_append (expected, json_node_get_string (node));
    }
  if (c->format == FORMAT_GEMINI)
    g_string_append_c (expected, '.');
  if (!g_str_equal (c->text->str, expected->str))
    {
      g_printerr ("bench-http: the %s text is not the stream's:\n%s\n", format_names[c->format], c->text->str);
      exit (1);
    }
}

static gboolean failed;

static void
run_streams (const char *argv0,
             guint       n,
             guint       rounds)
{
  int to_server;
  GPid pid;
  guint port = start_server (argv0, &to_server, &pid);

  static const char *const ways[] = { "events", "whole", "paced" };

  for (guint way = 0; way < G_N_ELEMENTS (ways); way++)
    for (Format format = 0; format < N_FORMATS; format++)
      {
        gboolean paced = g_str_equal (ways[way], "paced");
        Client c = { .format = format, .port = port, .chunks = ways[way], .text = g_string_new (NULL) };
        /* A millisecond a delta: fewer of them. */
        guint deltas = paced ? MAX (n / 20, 50) : n;
        guint tries = paced ? MIN (rounds, 3) : rounds;
        double mend_ns, naive_ns, soup_ns, mend_allocs, naive_allocs, soup_allocs;

        /* Both give the app the same text. */
        mend_turn (&c, 40);
        check_text (&c, 40);
        g_string_truncate (c.text, 0);
        naive_turn (&c, 40);
        check_text (&c, 40);

        measure_turns (&c, mend_turn, deltas, tries, &mend_ns, &mend_allocs);
        measure_turns (&c, naive_turn, deltas, tries, &naive_ns, &naive_allocs);
        measure_turns (&c, floor_turn, deltas, tries, &soup_ns, &soup_allocs);
        printf ("http %s (%s): %u deltas, best of %u: libmend %.0f ns and %.1f mallocs per delta, "
                "naive %.0f ns and %.1f mallocs (libmend %.2fx the naive CPU)\n",
                format_names[format], ways[way], deltas, tries, mend_ns, mend_allocs,
                naive_ns, naive_allocs, mend_ns / naive_ns);
        printf ("RESULT http_stream format=%s chunks=%s deltas=%u mend_ns=%.0f naive_ns=%.0f "
                "mend_allocs=%.2f naive_allocs=%.2f soup_allocs=%.2f\n",
                format_names[format], ways[way], deltas, mend_ns, naive_ns, mend_allocs,
                naive_allocs, soup_allocs);
        fflush (stdout);
        g_string_free (c.text, TRUE);
        /* libsoup allocates per read (its buffers); libmend adds at most
         * one malloc a delta to that. Checked on the stream written
         * whole: one HTTP chunk per event makes as many wakeups, and
         * would-block errors, as the client keeps up with the server,
         * which the load of the machine decides (measured under a busy
         * test suite: 6 to 12 a delta, libmend's and libsoup's floor
         * alike, either ahead by up to 5). */
        if (g_str_equal (ways[way], "whole") && mend_allocs - soup_allocs > 1.0)
          {
            g_printerr ("bench-http: target not met: %s (%s): %.2f mallocs per delta beyond libsoup's %.2f\n",
                        format_names[format], ways[way], mend_allocs - soup_allocs, soup_allocs);
            failed = TRUE;
          }
      }

  close (to_server);
  g_spawn_close_pid (pid);
}

/* Request bodies */

/* A transcript of @k messages: questions of a few hundred bytes, answers
 * of one or two kilobytes, and one turn in four a tool call and its
 * result. */
static char *
make_transcript (guint k)
{
  GString *s = g_string_new ("[");

  for (guint i = 0; i < k; i++)
    {
      gboolean user = i % 2 == 0;
      gboolean tools = (i / 2) % 4 == 3;

      if (i > 0)
        g_string_append_c (s, ',');
      if (user && tools)
        g_string_append_printf (s, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_%u\","
                                   "\"content\":\"meson.build:12:0: ERROR: Dependency \\\"libsoup-3.0\\\" not found, "
                                   "tried pkgconfig and cmake\\nA full log can be found at build/meson-logs/meson-log.txt"
                                   "\"},{\"type\":\"text\",\"text\":\"Here is the log of run %u; what now?\"}]}", i - 1, i);
      else if (user)
        {
          g_string_append_printf (s, "{\"role\":\"user\",\"content\":\"Turn %u: ", i);
          for (guint j = 0; j < 3; j++)
            g_string_append (s, "The build of the project fails on the CI runner with a missing dependency; ");
          g_string_append (s, "what should I change in the \\\"meson.build\\\" file?\"}");
        }
      else
        {
          g_string_append (s, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"");
          for (guint j = 0; j < 12 + i % 7; j++)
            g_string_append (s, "The dependency is looked up with pkg-config, so install the development package "
                                "first.\\n");
          g_string_append (s, "\"}");
          if ((i / 2) % 4 == 2)
            g_string_append_printf (s, ",{\"type\":\"tool_use\",\"id\":\"toolu_%u\",\"name\":\"run\",\"input\":"
                                       "{\"command\":\"meson setup build --wipe\",\"timeout\":120}}", i);
          g_string_append (s, "]}");
        }
    }
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* The best of @rounds rounds of @repeat calls of each function, in turns
 * (this machine is shared), after one round of each to warm up. */
static void
best_of (guint     rounds,
         guint     repeat,
         void    (*func_a) (gpointer data),
         void    (*func_b) (gpointer data),
         gpointer  data,
         double   *best_a,
         double   *best_b)
{
  *best_a = *best_b = G_MAXDOUBLE;
  for (guint r = 0; r <= rounds; r++)
    {
      double t0 = thread_cpu_ns ();
      double t1;

      for (guint i = 0; i < repeat; i++)
        func_a (data);
      t1 = thread_cpu_ns ();
      for (guint i = 0; i < repeat; i++)
        func_b (data);
      if (r > 0)
        {
          *best_a = MIN (*best_a, (t1 - t0) / repeat);
          *best_b = MIN (*best_b, (thread_cpu_ns () - t1) / repeat);
        }
    }
}

typedef struct
{
  MendHttpSender *sender;
  MendTurn       *turn;
  const char     *body;
  gsize           length;
} BodyCase;

static void
build_once (gpointer data)
{
  BodyCase *b = data;

  g_free (mend_http_sender_build_body (b->sender, b->turn));
}

static void
write_once (gpointer data)
{
  BodyCase *b = data;
  GString *s = g_string_new (NULL);

  g_string_append_len (s, b->body, b->length);
  g_string_free (s, TRUE);
}

/* A sender of @format whose transcript holds @k messages. */
static MendHttpSender *
body_sender (Format format,
             guint  k)
{
  g_autofree char *json = make_transcript (k);
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:9%s", format_paths[format]);
  MendHttpSender *sender = mend_http_sender_new (uri);
  MendTranscript *transcript = mend_http_sender_get_transcript (sender);
  g_autoptr(GError) error = NULL;

  mend_transcript_set_max_messages (transcript, 100000);
  mend_transcript_set_max_bytes (transcript, 8 * 1024 * 1024);
  if (!mend_transcript_load_json (transcript, json, &error))
    {
      g_printerr ("bench-http: %s\n", error->message);
      exit (1);
    }
  return sender;
}

static void
run_bodies (guint rounds)
{
  static const guint sizes[] = { 50, 500 };

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (Format format = 0; format < N_FORMATS; format++)
      {
        g_autoptr(MendHttpSender) sender = body_sender (format, sizes[i]);
        g_autoptr(MendTurn) turn = mend_turn_new ("Why does the build still fail after that?", NULL);
        g_autofree char *body = NULL;
        BodyCase b = { sender, turn };
        guint repeat = sizes[i] >= 500 ? 50 : 500;
        double build_ns, write_ns;

        body = mend_http_sender_build_body (sender, turn);
        b.body = body;
        b.length = strlen (body);
        /* As in an app, whose main loop owns the context while it sends. */
        g_main_context_acquire (NULL);
        best_of (rounds, repeat, build_once, write_once, &b, &build_ns, &write_ns);
        g_main_context_release (NULL);
        printf ("http body %s: %u messages, %zu bytes: built in %.1f us, written in %.1f us (%.1fx)\n",
                format_names[format], sizes[i], b.length, build_ns / 1000, write_ns / 1000, build_ns / write_ns);
        printf ("RESULT http_body format=%s messages=%u bytes=%zu build_ns=%.0f write_ns=%.0f ratio=%.2f\n",
                format_names[format], sizes[i], b.length, build_ns, write_ns, build_ns / write_ns);
        fflush (stdout);
      }
}

/* 1 000 bodies of one format, for callgrind. */
static int
run_body_only (Format format,
               guint  k)
{
  g_autoptr(MendHttpSender) sender = body_sender (format, k);
  g_autoptr(MendTurn) turn = mend_turn_new ("Why does the build still fail after that?", NULL);

  g_main_context_acquire (NULL);
  for (guint i = 0; i < 1000; i++)
    g_free (mend_http_sender_build_body (sender, turn));
  g_main_context_release (NULL);
  return 0;
}

/* The first body after a load, for callgrind: "cold" loads a transcript
 * of @k messages and builds one body; "load" only loads it; "generate"
 * also parses the body it built and writes it with a JsonGenerator (the
 * naive way: one generator pass over the request's tree); "parse" stops
 * before the generator. */
static int
run_cold_body (const char *what,
               Format      format,
               guint       k)
{
  g_autoptr(MendHttpSender) sender = body_sender (format, k);
  g_autoptr(MendTurn) turn = mend_turn_new ("Why does the build still fail after that?", NULL);
  g_autofree char *body = NULL;
  g_autoptr(JsonNode) tree = NULL;

  if (g_str_equal (what, "load"))
    return 0;
  g_main_context_acquire (NULL);
  body = mend_http_sender_build_body (sender, turn);
  g_main_context_release (NULL);
  if (g_str_equal (what, "cold"))
    return 0;
  tree = json_from_string (body, NULL);
  if (tree == NULL)
    return 1;
  if (g_str_equal (what, "generate"))
    {
      g_autoptr(JsonGenerator) generator = json_generator_new ();
      g_autofree char *written = NULL;

      json_generator_set_root (generator, tree);
      written = json_generator_to_data (generator, NULL);
      return written == NULL;
    }
  return 0;
}

/* Trimming */

static char *
make_turns (guint turns)
{
  GString *s = g_string_new ("[");

  for (guint i = 0; i < turns; i++)
    g_string_append_printf (s, "%s{\"role\":\"user\",\"content\":\"Question %u\"},{\"role\":\"assistant\","
                               "\"content\":[{\"type\":\"text\",\"text\":\"Answer %u, short\"}]}",
                            i > 0 ? "," : "", i, i);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static double
trim_ns_per_turn (guint turns,
                  guint rounds)
{
  g_autofree char *json = make_turns (turns);
  double best = G_MAXDOUBLE;

  for (guint r = 0; r < rounds; r++)
    {
      g_autoptr(MendTranscript) transcript = mend_transcript_new ();
      g_autoptr(GError) error = NULL;
      double t0;

      mend_transcript_set_max_messages (transcript, 2 * turns);
      mend_transcript_set_max_bytes (transcript, 8 * 1024 * 1024);
      if (!mend_transcript_load_json (transcript, json, &error))
        {
          g_printerr ("bench-http: %s\n", error->message);
          exit (1);
        }
      g_main_context_acquire (NULL);
      t0 = thread_cpu_ns ();
      mend_transcript_trim (transcript, turns / 2);
      best = MIN (best, (thread_cpu_ns () - t0) / (turns - turns / 2));
      g_main_context_release (NULL);
      if (mend_transcript_get_n_messages (transcript) != turns / 2 * 2)
        exit (1);
    }
  return best;
}

static void
run_trims (guint rounds,
           guint max_turns)
{
  static const guint sizes[] = { 1000, 4000, 16000 };
  double first = 0, last = 0;
  guint from = 0, to = 0;

  for (guint i = 0; i < G_N_ELEMENTS (sizes) && sizes[i] <= max_turns; i++)
    {
      double ns = trim_ns_per_turn (sizes[i], rounds);

      printf ("trim %u turns to %u: %.0f ns per turn dropped\n", sizes[i], sizes[i] / 2, ns);
      printf ("RESULT http_trim turns=%u ns_per_turn=%.1f total_us=%.0f\n", sizes[i], ns,
              ns * (sizes[i] - sizes[i] / 2) / 1000);
      if (i == 0)
        first = ns, from = sizes[i];
      last = ns, to = sizes[i];
    }
  if (to > from)
    printf ("RESULT http_trim_growth from=%u to=%u growth=%.2f\n", from, to, last / first);
}

/* One turn of one client, for callgrind */
static int
run_only (const char *argv0,
          const char *who,
          const char *format,
          guint       deltas,
          guint       port,
          const char *chunks)
{
  Client c = { .format = format_from_name (format), .port = port, .chunks = chunks,
               .text = g_string_new (NULL) };

  if (g_str_equal (who, "mend"))
    mend_turn (&c, deltas);
  else if (g_str_equal (who, "soup"))
    floor_turn (&c, deltas);
  else
    naive_turn (&c, deltas);
  g_string_free (c.text, TRUE);
  return 0;
}

/* The floor, for callgrind: the stream's bytes split into lines by
 * memchr (), nothing else; "none" makes the same stream and does not
 * split it, so that the difference is the split alone. */
static int
run_floor (gboolean    split,
           const char *format,
           guint       deltas)
{
  g_autoptr(GPtrArray) events = make_stream (format_from_name (format), deltas);
  g_autoptr(GString) whole = g_string_new (NULL);
  volatile guint lines = 0;

  for (guint i = 0; i < events->len; i++)
    g_string_append (whole, events->pdata[i]);
  if (split)
    for (const char *p = whole->str, *end = p + whole->len, *nl; (nl = memchr (p, '\n', end - p)) != NULL;
         p = nl + 1)
      lines++;
  return lines == 0 && split;
}

int
main (int   argc,
      char *argv[])
{
  guint n, rounds;

  /* GSlice's allocations count as the mallocs they are under valgrind:
   * GLib reads G_SLICE before main (), hence the exec. */
  if (g_strcmp0 (g_getenv ("G_SLICE"), "always-malloc") != 0)
    {
      g_setenv ("G_SLICE", "always-malloc", TRUE);
      execv ("/proc/self/exe", argv);
      g_printerr ("bench-http: could not run again with G_SLICE=always-malloc\n");
      return 1;
    }
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

  if (argc == 2 && g_str_equal (argv[1], "--serve"))
    return run_server ();
  if (argc == 6 && g_str_equal (argv[1], "--only") && g_str_equal (argv[2], "first-body"))
    return run_cold_body (argv[3], format_from_name (argv[4]), (guint) g_ascii_strtoull (argv[5], NULL, 10));
  if (argc == 5 && g_str_equal (argv[1], "--only") && g_str_equal (argv[2], "body"))
    return run_body_only (format_from_name (argv[3]), (guint) g_ascii_strtoull (argv[4], NULL, 10));
  if (argc == 5 && g_str_equal (argv[1], "--only") && (g_str_equal (argv[2], "floor") || g_str_equal (argv[2], "none")))
    return run_floor (g_str_equal (argv[2], "floor"), argv[3], (guint) g_ascii_strtoull (argv[4], NULL, 10));
  if ((argc == 6 || argc == 7) && g_str_equal (argv[1], "--only"))
    return run_only (argv[0], argv[2], argv[3], (guint) g_ascii_strtoull (argv[4], NULL, 10),
                     (guint) g_ascii_strtoull (argv[5], NULL, 10), argc == 7 ? argv[6] : "whole");

  n = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 20000;
  rounds = argc > 2 ? (guint) g_ascii_strtoull (argv[2], NULL, 10) : 5;
  if (n == 0 || rounds == 0)
    return 2;

  run_streams (argv[0], n, rounds);
  run_bodies (rounds);
  run_trims (MIN (rounds, 3), n >= 10000 ? 16000 : n >= 1000 ? 4000 : 1000);
  return failed ? 1 : 0;
}
