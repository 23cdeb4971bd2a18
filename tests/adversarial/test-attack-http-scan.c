/* test-attack-http-scan.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the reading of a stream without a parse: the SSE reader fed
 * the same stream cut at every byte (a CRLF split between two chunks,
 * CR, LF and CRLF mixed, "data:" with no space, comments), its bounds
 * met exactly and passed; and the dialects' byte scans against the parse
 * on texts json-glib reads its own way (a BOM, comments, single quotes,
 * octal and hex numbers, a skipped member nested deep, a skipped string
 * of 10 MB, NUL bytes, keys with escapes, trailing garbage).
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-http-answer-private.h"
#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-sse-private.h"

/* The SSE reader */

static gboolean
collect (const char *name,
         const char *data,
         gsize       length,
         gpointer    user_data)
{
  GString *out = user_data;
  g_autofree char *shown = g_strescape (data, NULL);

  g_assert_cmpuint (strlen (data), <=, length);
  g_string_append_printf (out, "[%s|%s|%" G_GSIZE_FORMAT "]", name != NULL ? name : "-", shown, length);
  return TRUE;
}

/* The events of @stream fed in pieces: @cut bytes first (unless 0),
 * then @step at a time. */
static char *
read_stream (const char *stream,
             gsize       length,
             gsize       cut,
             gsize       step,
             gsize       max_line,
             gsize       max_event,
             MendSseStatus *status)
{
  GString *out = g_string_new (NULL);
  MendSseReader reader;
  gsize at = 0;

  mend_sse_reader_init (&reader, max_line, max_event, collect, out);
  *status = MEND_SSE_MORE;
  while (at < length && *status == MEND_SSE_MORE)
    {
      gsize n = at == 0 && cut > 0 ? cut : step;

      n = MIN (n, length - at);
      *status = mend_sse_reader_feed (&reader, stream + at, n);
      at += n;
    }
  if (*status == MEND_SSE_MORE)
    *status = mend_sse_reader_finish (&reader);
  mend_sse_reader_clear (&reader);
  return g_string_free (out, FALSE);
}

static void
test_sse_split_everywhere (void)
{
  static const char stream[] =
    ": a comment\r\n"
    "event: content_block_delta\r\n"
    "data: {\"a\":1}\r\n"
    "\r\n"
    "data:no space\n"
    "data:  two spaces\r"
    "\r"
    "id: 7\n"
    "retry: 100\n"
    "event:  padded \n"
    "data\n"
    "data: x\r\n"
    "\n"
    "\r\n"
    "\n"
    "data: last, no blank line after";
  gsize length = sizeof stream - 1;
  g_autofree char *whole = NULL;
  MendSseStatus status;

  whole = read_stream (stream, length, 0, length, 1024, 4096, &status);
  g_test_message ("%s", whole);
  g_assert_cmpint (status, ==, MEND_SSE_MORE);
  g_assert_cmpstr (whole, ==,
                   "[content_block_delta|{\\\"a\\\":1}|7]"
                   "[-|no space\\n two spaces|20]"
                   "[padded|x|1]"
                   "[-|last, no blank line after|25]");

  for (gsize cut = 1; cut < length; cut++)
    {
      g_autofree char *two = read_stream (stream, length, cut, length, 1024, 4096, &status);

      g_assert_cmpint (status, ==, MEND_SSE_MORE);
      g_assert_cmpstr (two, ==, whole);
    }
  for (gsize step = 1; step < 8; step++)
    {
      g_autofree char *pieces = read_stream (stream, length, 0, step, 1024, 4096, &status);

      g_assert_cmpint (status, ==, MEND_SSE_MORE);
      g_assert_cmpstr (pieces, ==, whole);
    }
}

/* A line of exactly the limit is read, one byte more is not, however the
 * chunks cut it; the same for an event's data. */
static void
test_sse_bounds (void)
{
  g_autoptr(GString) line = g_string_new ("data: ");
  MendSseStatus status;

  while (line->len < 64)
    g_string_append_c (line, 'a' + line->len % 26);
  g_string_append (line, "\n\n");

  for (gsize step = 1; step <= line->len; step++)
    {
      g_autofree char *at_limit = read_stream (line->str, line->len, 0, step, 64, 4096, &status);
      g_autofree char *over = NULL;

      g_assert_cmpint (status, ==, MEND_SSE_MORE);
      g_assert_cmpuint (strlen (at_limit), >, 0);
      over = read_stream (line->str, line->len, 0, step, 63, 4096, &status);
      g_assert_cmpint (status, ==, MEND_SSE_LINE_TOO_LONG);
      g_assert_cmpstr (over, ==, "");
    }

  /* Data of 58 bytes: read with room for it, refused with one byte less. */
  {
    g_autofree char *fits = read_stream (line->str, line->len, 0, 5, 1024, 59, &status);
    g_autofree char *refused = NULL;

    g_assert_cmpint (status, ==, MEND_SSE_MORE);
    g_assert_cmpstr (fits, !=, "");
    refused = read_stream (line->str, line->len, 0, 5, 1024, 58, &status);
    g_assert_cmpint (status, ==, MEND_SSE_EVENT_TOO_LARGE);
  }
}

/* The scans against the parse */

static char *
answer_state (MendHttpAnswer *answer)
{
  g_autoptr(JsonNode) content = mend_http_answer_dup_content (answer);
  g_autofree char *json = content != NULL ? mend_json_to_string (content) : g_strdup ("null");

  return g_strdup_printf ("text=%s empty=%d blocks=%u content=%s", mend_http_answer_get_text (answer),
                          mend_http_answer_is_empty (answer), mend_http_answer_get_n_blocks (answer), json);
}

/* @data read the sender's way (the scan, else the parse) and by the parse
 * alone give the same event, text and message. */
static void
check_same (const MendHttpDialectClass *wire,
            const char                 *setup,
            const char                 *data,
            gsize                       length)
{
  g_autoptr(MendHttpAnswer) quick = mend_http_answer_new ();
  g_autoptr(MendHttpAnswer) slow = mend_http_answer_new ();
  g_autoptr(GString) scratch = g_string_new (NULL);
  g_auto(MendJsonTemplate) memo = { NULL };
  g_autofree char *quick_text = NULL;
  g_autofree char *quick_state = NULL;
  g_autofree char *slow_state = NULL;
  g_autoptr(JsonNode) node = NULL;
  const char *text = NULL;
  const char *slow_text = NULL;
  MendHttpEvent quick_event, slow_event;

  if (setup != NULL)
    {
      g_autoptr(JsonNode) root = mend_json_parse (setup, -1, NULL);
      const char *ignored;

      wire->read_event (quick, NULL, setup, strlen (setup), json_node_get_object (root), &ignored);
      wire->read_event (slow, NULL, setup, strlen (setup), json_node_get_object (root), &ignored);
    }

  if (mend_http_dialect_scan (wire, quick, &memo, NULL, data, length, scratch, &quick_event, &text))
    quick_text = g_strdup (text);
  else
    {
      g_autoptr(JsonNode) parsed = mend_json_parse (data, length, NULL);

      quick_event = wire->read_event (quick, NULL, data, length,
                                      parsed != NULL && JSON_NODE_HOLDS_OBJECT (parsed) ? json_node_get_object (parsed) : NULL,
                                      &text);
      quick_text = g_strdup (text);
    }
  node = mend_json_parse (data, length, NULL);
  slow_event = wire->read_event (slow, NULL, data, length,
                                 node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL,
                                 &slow_text);
  g_assert_cmpint (quick_event, ==, slow_event);
  g_assert_cmpstr (quick_text, ==, slow_text);
  quick_state = answer_state (quick);
  slow_state = answer_state (slow);
  g_assert_cmpstr (quick_state, ==, slow_state);
}

#define MESSAGES_START "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"

static const char *const hostile[] = {
  /* %s is where the text delta's value goes, or a member is put. */
  "\xef\xbb\xbf%s",
  "%s\xef\xbb\xbf",
  "%s // a comment",
  "/* a comment */ %s",
  "%s garbage",
  "%s,",
  "%s}",
  "%s\n\n",
  "  \t\r\n%s\t\r\n ",
};

static const char *const members[] = {
  "\"n\":0x10,", "\"n\":010,", "\"n\":$10,", "\"n\":0b1,", "\"n\":1e5,", "\"n\":1E+05,", "\"n\":-0,",
  "\"n\":-0.0e-00,", "\"n\":1.,", "\"n\":.5,", "\"n\":- 1,", "\"n\":1e,", "\"n\":+1,", "\"n\":1e999,",
  "\"s\":'single',", "\"s\":\"\\u00e9\",", "\"s\":\"\\uD83D\\uDE00\",", "\"s\":\"\\uDE00\\uD83D\",",
  "\"s\":\"\\ud83d\",", "\"s\":\"\\u12\",", "\"s\":\"\\u0000\",", "\"s\":\"\\0\",", "\"s\":\"\\a\",",
  "\"s\":\"\\'\",", "\"s\":\"\xc0\xaf\",", "\"s\":\"\xed\xa0\x80\",", "\"s\":\"\xf4\x90\x80\x80\",",
  "\"\\u0074ype\":\"x\",", "\"\":1,", "\"t\":true,", "\"t\":True,", "\"t\":truex,", "\"t\":nul,",
  "\"a\":[1 2],", "\"a\":[1,],", "\"o\":{\"a\":1 \"b\":2},", "\"o\":{\"a\":1,},", "\"o\":{a:1},",
  "\"dup\":1,\"dup\":2,", "x:1,", "\"index\":0,",
};

/* @format with its one "%s" replaced by @what. */
static char *
fill (const char *format,
      const char *what)
{
  const char *at = strstr (format, "%s");

  g_assert_nonnull (at);
  return g_strdup_printf ("%.*s%s%s", (int) (at - format), format, what, at + 2);
}

static void
check_all (const MendHttpDialectClass *wire,
           const char                 *setup,
           const char                 *format)
{
  /* Each member in plain whitespace, and in one of the other wrappers. */
  for (guint h = 0; h < G_N_ELEMENTS (hostile); h++)
    for (guint m = 0; m < G_N_ELEMENTS (members); m++)
      if (h == G_N_ELEMENTS (hostile) - 1 || m % (G_N_ELEMENTS (hostile) - 1) == h)
        {
          g_autofree char *inner = fill (format, members[m]);
          g_autofree char *data = fill (hostile[h], inner);

          check_same (wire, setup, data, strlen (data));
          /* Cut short: in the member, and before the last brace. */
          check_same (wire, setup, data, strlen (data) / 2);
          check_same (wire, setup, data, strlen (data) - 1);
        }
}

static void
test_scan_messages (void)
{
  check_all (&mend_http_dialect_messages, MESSAGES_START,
             "{%s\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}");
  check_all (&mend_http_dialect_messages, MESSAGES_START,
             "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{%s\"type\":\"text_delta\",\"text\":\"a\"}}");
}

static void
test_scan_chat (void)
{
  check_all (&mend_http_dialect_chat_completions, NULL, "{%s\"choices\":[{\"delta\":{\"content\":\"a\"}}]}");
  check_all (&mend_http_dialect_chat_completions, NULL, "{\"choices\":[{%s\"delta\":{\"content\":\"a\"}}]}");
  check_all (&mend_http_dialect_chat_completions, NULL, "{\"choices\":[{\"delta\":{%s\"content\":\"a\"}}]}");
}

static void
test_scan_responses (void)
{
  check_all (&mend_http_dialect_responses, NULL,
             "{%s\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"a\"}");
}

static void
test_scan_gemini (void)
{
  check_all (&mend_http_dialect_gemini, NULL, "{%s\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}");
  check_all (&mend_http_dialect_gemini, NULL, "{\"candidates\":[{\"content\":{\"parts\":[{%s\"text\":\"a\"}]}}]}");
}

/* NUL bytes, in the text and around the object. */
static void
test_scan_nul (void)
{
  static const char with_nul[] = "{\"choices\":[{\"delta\":{\"content\":\"a\0b\"}}]}";
  static const char after[] = "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\0";

  check_same (&mend_http_dialect_chat_completions, NULL, with_nul, sizeof with_nul - 1);
  check_same (&mend_http_dialect_chat_completions, NULL, after, sizeof after - 1);
}

/* A skipped member nested as deep as a server likes, and one of 10 MB:
 * the scan gives up on the first without a deep stack and reads through
 * the second once. */
static void
test_scan_deep_and_large (void)
{
  g_autoptr(GString) deep = g_string_new ("{\"x\":");
  g_autoptr(GString) large = g_string_new ("{\"x\":\"");

  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, ",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}");
  {
    g_autoptr(MendHttpAnswer) answer = mend_http_answer_new ();
    g_autoptr(GString) scratch = g_string_new (NULL);
    g_auto(MendJsonTemplate) memo = { NULL };
    MendHttpEvent event;
    const char *text;

    g_assert_false (mend_http_dialect_scan (&mend_http_dialect_chat_completions, answer, &memo, NULL,
                                            deep->str, deep->len, scratch, &event, &text));
  }

  while (large->len < 10 * 1024 * 1024)
    g_string_append (large, "0123456789abcdef\\n\\u00e9");
  g_string_append (large, "\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}");
  check_same (&mend_http_dialect_chat_completions, NULL, large->str, large->len);
}

/* The parse behind the scan refuses a \u escape that is no character:
 * json-glib 1.6 read a lone surrogate as bytes that are not UTF-8 (the
 * next character eaten), and leaked a string on a broken pair. */
static void
test_parse_surrogates (void)
{
  static const char *const refused[] = {
    "{\"t\":\"\\ud83d alone\"}", "{\"t\":\"\\ude00\"}", "{\"t\":\"\\ude00\\ud83d\"}",
    "{\"t\":\"\\ud83d\\u0041\"}", "{\"t\":\"\\ud83d\\\"\"}", "{\"t\":\"\\u12\"}", "{\"t\":\"\\uzzzz\"}",
    "{\"t\":\"\\ud83d", "[\"\\ud83d\\ude0\"]",
  };
  static const char *const read[] = {
    "{\"t\":\"\\ud83d\\ude00\"}", "{\"t\":\"\\u00e9\\uFFFF\\u0041\"}", "{\"t\":\"\\\\ud83d\"}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = mend_json_parse (refused[i], -1, &error);

      g_test_message ("%s", refused[i]);
      g_assert_null (node);
      g_assert_nonnull (error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (read); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = mend_json_parse (read[i], -1, &error);

      g_assert_no_error (error);
      g_assert_true (g_utf8_validate (mend_json_get_string (json_node_get_object (node), "t"), -1, NULL));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/AttackHttpScan/sse/split-everywhere", test_sse_split_everywhere);
  g_test_add_func ("/Mend/AttackHttpScan/sse/bounds", test_sse_bounds);
  g_test_add_func ("/Mend/AttackHttpScan/scan/messages", test_scan_messages);
  g_test_add_func ("/Mend/AttackHttpScan/scan/chat-completions", test_scan_chat);
  g_test_add_func ("/Mend/AttackHttpScan/scan/responses", test_scan_responses);
  g_test_add_func ("/Mend/AttackHttpScan/scan/gemini", test_scan_gemini);
  g_test_add_func ("/Mend/AttackHttpScan/scan/nul", test_scan_nul);
  g_test_add_func ("/Mend/AttackHttpScan/scan/deep-and-large", test_scan_deep_and_large);
  g_test_add_func ("/Mend/AttackHttpScan/parse/surrogates", test_parse_surrogates);

  return g_test_run ();
}
