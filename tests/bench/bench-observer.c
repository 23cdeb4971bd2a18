/* bench-observer.c — what MendStreamObserver costs per line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Feeds a large synthetic Claude Code transcript, mostly token deltas, to
 * MendStreamObserver, and measures in the same run the naive way (a full
 * json-glib parse of every line) and the physical floor (splitting the
 * text into lines with memchr). Also counts the mallocs made while token
 * deltas are fed: the target is none.
 *
 * usage: bench-observer [LINES] [ROUNDS]
 *        bench-observer --only split|parse|deltas|all|none LINES
 *
 * --only runs one way once, for instruction counts under callgrind; "none"
 * only builds the transcript, the baseline to subtract.
 */

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "bench-common.h"

#include "mend-stream-observer-private.h"

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

/* A transcript: per 100 lines, 96 token deltas, a tool call, a task line,
 * an assistant message and a result. */
static GString *
make_transcript (guint n_lines,
                 guint *n_deltas)
{
  GString *text = g_string_new (NULL);

  *n_deltas = 0;
  for (guint i = 0; i < n_lines; i++)
    {
      switch (i % 100)
        {
        case 0:
          g_string_append (text, "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"5f0c6a4e\","
                                 "\"tools\":[\"Task\",\"Bash\",\"Read\"],\"model\":\"claude-sonnet-4-5\"}\n");
          break;
        case 40:
          g_string_append (text, "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":"
                                 "[{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Task\",\"input\":"
                                 "{\"description\":\"Push relay\"}}]},\"session_id\":\"5f0c6a4e\"}\n");
          break;
        case 41:
          g_string_append_printf (text, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a%u\","
                                        "\"tool_use_id\":\"toolu_%u\",\"description\":\"Push relay\","
                                        "\"session_id\":\"5f0c6a4e\"}\n", i, i);
          break;
        case 99:
          g_string_append (text, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                                 "\"result\":\"Done.\",\"session_id\":\"5f0c6a4e\"}\n");
          break;
        default:
          (*n_deltas)++;
          g_string_append_printf (text, "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\","
                                        "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %u of the "
                                        "system result \\\"system\\\"\"}},\"session_id\":\"5f0c6a4e\","
                                        "\"parent_tool_use_id\":null,\"uuid\":\"9a8b7c6d-%08u\"}\n", i, i);
          break;
        }
    }

  return text;
}

typedef void (*LineFunc) (const char *line,
                          gsize       length,
                          gpointer    data);

static void
for_each_line (GString  *text,
               LineFunc  func,
               gpointer  data)
{
  const char *p = text->str;
  const char *end = text->str + text->len;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', end - p);
      gsize len = (nl ? nl : end) - p;

      func (p, len, data);
      p += len + 1;
    }
}

static void
count_line (const char *line,
            gsize       length,
            gpointer    data)
{
  (*(gsize *) data) += length > 0;
}

static void
parse_line (const char *line,
            gsize       length,
            gpointer    data)
{
  JsonParser *parser = data;

  json_parser_load_from_data (parser, line, length, NULL);
}

static void
observe_line (const char *line,
              gsize       length,
              gpointer    data)
{
  mend_stream_observer_feed_line (data, line, length);
}

static void
observe_delta (const char *line,
               gsize       length,
               gpointer    data)
{
  /* Only the token deltas, the hot path. */
  if (length > 22 && memcmp (line, "{\"type\":\"stream_event\"", 22) == 0)
    mend_stream_observer_feed_line (data, line, length);
}

static int
run_only (const char *mode,
          guint       n_lines)
{
  g_autoptr(GString) text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  MendClock *clock = mend_manual_clock_new (1764500000000000);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);
  guint n_deltas = 0;
  gsize sink = 0;

  text = make_transcript (n_lines, &n_deltas);
  if (g_str_equal (mode, "split"))
    for_each_line (text, count_line, &sink);
  else if (g_str_equal (mode, "parse"))
    for_each_line (text, parse_line, parser);
  else if (g_str_equal (mode, "deltas"))
    for_each_line (text, observe_delta, observer);
  else if (g_str_equal (mode, "all"))
    for_each_line (text, observe_line, observer);

  g_object_unref (observer);
  mend_chat_close (chat);
  g_object_unref (chat);
  g_object_unref (clock);
  return 0;
}

static int
run_rounds (guint n_lines,
            guint rounds)
{
  g_autoptr(GString) text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  MendClock *clock = mend_manual_clock_new (1764500000000000);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);
  gint64 t_split = G_MAXINT64, t_parse = G_MAXINT64, t_mend = G_MAXINT64, t_mend_deltas = G_MAXINT64;
  guint n_deltas = 0;
  gsize sink = 0;
  double floor_ns, parse_ns, mend_ns, delta_ns;

  text = make_transcript (n_lines, &n_deltas);

  /* The best of several rounds: this machine is shared. */
  for (guint r = 0; r < rounds; r++)
    {
      gint64 t0 = bench_cpu_time_us ();

      for_each_line (text, count_line, &sink);
      t_split = MIN (t_split, bench_cpu_time_us () - t0);

      t0 = bench_cpu_time_us ();
      for_each_line (text, parse_line, parser);
      t_parse = MIN (t_parse, bench_cpu_time_us () - t0);

      t0 = bench_cpu_time_us ();
      for_each_line (text, observe_line, observer);
      t_mend = MIN (t_mend, bench_cpu_time_us () - t0);

      t0 = bench_cpu_time_us ();
      for_each_line (text, observe_delta, observer);
      t_mend_deltas = MIN (t_mend_deltas, bench_cpu_time_us () - t0);
      mend_chat_end_external_turn (chat);
    }

  /* Allocations while token deltas are fed. */
  n_allocs = 0;
  counting = TRUE;
  for_each_line (text, observe_delta, observer);
  counting = FALSE;

  floor_ns = 1000.0 * t_split / n_lines;
  parse_ns = 1000.0 * t_parse / n_lines;
  mend_ns = 1000.0 * t_mend / n_lines;
  delta_ns = 1000.0 * (t_mend_deltas - t_split * (double) n_deltas / n_lines) / MAX (n_deltas, 1);

  printf ("observer: %u lines (%u token deltas), best of %u rounds, CPU time\n", n_lines, n_deltas, rounds);
  printf ("  line split (memchr), the floor:  %8.1f ns/line\n", floor_ns);
  printf ("  full json-glib parse per line:   %8.1f ns/line\n", parse_ns);
  printf ("  MendStreamObserver, all lines:   %8.1f ns/line  (%.1fx cheaper than a parse, %.2fx the floor)\n",
          mend_ns, parse_ns / mend_ns, mend_ns / MAX (floor_ns, 0.001));
  printf ("  MendStreamObserver, deltas only: %8.1f ns/line beyond the split\n", delta_ns);
  printf ("  parses: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " lines; mallocs while feeding %u deltas: %" G_GSIZE_FORMAT "\n",
          mend_stream_observer_get_n_parsed (observer), mend_stream_observer_get_n_lines (observer),
          n_deltas, (gsize) n_allocs);
  printf ("RESULT observer lines=%u floor_ns=%.1f parse_ns=%.1f mend_ns=%.1f parse_over_mend=%.1f mend_over_floor=%.2f delta_allocs=%" G_GSIZE_FORMAT "\n",
          n_lines, floor_ns, parse_ns, mend_ns, parse_ns / mend_ns, mend_ns / MAX (floor_ns, 0.001), (gsize) n_allocs);

  g_object_unref (observer);
  mend_chat_close (chat);
  g_object_unref (chat);
  g_object_unref (clock);

  return n_allocs == 0 && sink > 0 ? 0 : 1;
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 4 && g_str_equal (argv[1], "--only"))
    return run_only (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));

  return run_rounds (argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 200000,
                     argc > 2 ? (guint) g_ascii_strtoull (argv[2], NULL, 10) : 5);
}
