/* test-http-sender-scan.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The byte scan that reads each wire format's text deltas without a parse
 * reads them exactly as the parse does: for every event here, an answer
 * fed the way MendHttpSender feeds it (the scan, else the parse) and one
 * fed by the parse alone give the same event, the same text piece, and in
 * the end the same message. Events in the shapes the scan reads
 * (escapes, surrogate pairs, members it skips, members in other orders)
 * must be read by the scan; the others (a lone surrogate, a \u0000, bytes
 * that are not UTF-8, a duplicate member, a member of another type, a
 * finish reason, a tool call…) must be left to the parse, the answer
 * untouched.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-http-answer-private.h"
#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

typedef enum
{
  SCANNED,    /* the scan reads it */
  PARSED,     /* the scan leaves it to the parse */
} Way;

typedef struct
{
  const char *name;   /* the SSE event name, or NULL */
  const char *data;
  Way         way;
} Case;

static char *
answer_state (MendHttpAnswer *answer)
{
  g_autoptr(JsonNode) content = mend_http_answer_dup_content (answer);
  g_autofree char *json = content != NULL ? mend_json_to_string (content) : g_strdup ("null");

  return g_strdup_printf ("text=%s empty=%d blocks=%u content=%s", mend_http_answer_get_text (answer),
                          mend_http_answer_is_empty (answer), mend_http_answer_get_n_blocks (answer), json);
}

/* As the sender reads an event the scan leaves; *@text is a copy. */
static MendHttpEvent
read_parsed (const MendHttpDialectClass  *wire,
             MendHttpAnswer              *answer,
             const Case                  *c,
             char                       **text)
{
  g_autoptr(JsonNode) node = mend_json_parse (c->data, strlen (c->data), NULL);
  const char *piece = NULL;
  MendHttpEvent event;

  event = wire->read_event (answer, c->name, c->data, strlen (c->data),
                            node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL,
                            &piece);
  *text = g_strdup (piece);
  return event;
}

/* Each case after @setup, through the scan and through the parse. */
static void
check_cases (const MendHttpDialectClass *wire,
             const Case                 *setup,
             const Case                 *cases,
             guint                       n_cases)
{
  MendJsonTemplate memo;

  mend_json_template_init (&memo);
  for (guint i = 0; i < n_cases; i++)
    {
      g_autoptr(MendHttpAnswer) quick = mend_http_answer_new ();
      g_autoptr(MendHttpAnswer) slow = mend_http_answer_new ();
      g_autoptr(GString) scratch = g_string_new (NULL);
      g_autofree char *before = NULL;
      g_autofree char *quick_state = NULL;
      g_autofree char *slow_state = NULL;
      g_autofree char *quick_text = NULL;
      g_autofree char *slow_text = NULL;
      const char *text = NULL;
      MendHttpEvent quick_event = MEND_HTTP_EVENT_OTHER;
      MendHttpEvent slow_event;
      gboolean scanned;

      for (const Case *s = setup; s != NULL && s->data != NULL; s++)
        {
          g_autofree char *ignored = NULL;
          g_autofree char *ignored_too = NULL;

          read_parsed (wire, quick, s, &ignored);
          read_parsed (wire, slow, s, &ignored_too);
        }

      {
        g_autofree char *shown = g_strescape (cases[i].data, NULL);

        g_test_message ("case %u: %s", i, shown);
      }
      before = answer_state (quick);
      /* As the sender reads them: each case after the one before, so
       * that a case like the last text delta is read by its template. */
      scanned = mend_http_dialect_scan (wire, quick, &memo, cases[i].name, cases[i].data, strlen (cases[i].data),
                                        scratch, &quick_event, &text);
      if (cases[i].way == SCANNED)
        g_assert_true (scanned);
      else
        {
          g_autofree char *after = answer_state (quick);

          g_assert_false (scanned);
          /* Left to the parse, untouched. */
          g_assert_cmpstr (after, ==, before);
          quick_event = read_parsed (wire, quick, &cases[i], &quick_text);
        }
      if (scanned)
        quick_text = g_strdup (text);

      slow_event = read_parsed (wire, slow, &cases[i], &slow_text);
      g_assert_cmpint (quick_event, ==, slow_event);
      g_assert_cmpstr (quick_text, ==, slow_text);

      quick_state = answer_state (quick);
      slow_state = answer_state (slow);
      g_assert_cmpstr (quick_state, ==, slow_state);
    }
  mend_json_template_clear (&memo);
}

/* Messages */

#define DELTA(text) "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":" text "}}"

static void
test_messages (void)
{
  static const Case setup[] = {
    { "content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}", 0 },
    { "content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}", 0 },
    { NULL, NULL, 0 },
  };
  static const Case cases[] = {
    { "content_block_delta", DELTA ("\"Hello\""), SCANNED },
    { NULL, DELTA ("\"Hello\""), SCANNED },
    { "content_block_delta", DELTA ("\"\""), SCANNED },
    /* Every escape JSON has, exactly. */
    { "content_block_delta", DELTA ("\"a\\nb\\tc\\\"d\\\\e\\/f\\bg\\fh\\ri\""), SCANNED },
    { "content_block_delta", DELTA ("\"caf\\u00e9 caf\\u00E9 \\u4e2d\\u6587 \\u2028\""), SCANNED },
    { "content_block_delta", DELTA ("\"\\ud83d\\ude00 and \\uD83D\\uDE00\""), SCANNED },
    { "content_block_delta", DELTA ("\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\""), SCANNED },
    { "content_block_delta", DELTA ("\"\\u0001\\u001f\\u007f\""), SCANNED },
    /* Members in another order, others skipped, whitespace. */
    { "content_block_delta", "{\"delta\":{\"text\":\"b\",\"type\":\"text_delta\"},\"index\":0,\"type\":\"content_block_delta\"}", SCANNED },
    { "content_block_delta", " { \"type\" : \"content_block_delta\" ,\r\n\t\"index\" : 0 , \"delta\" : { \"type\" : \"text_delta\" , \"text\" : \"c\" } } \n", SCANNED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"x\":[1,-2.5e+3,true,false,null,{\"y\":\"z\\\"\"}],\"index\":0,"
                             "\"delta\":{\"type\":\"text_delta\",\"extra\":{},\"text\":\"d\"},\"usage\":null}", SCANNED },
    /* Another block: the thinking one is no text block, and one far away. */
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"t\"}}", SCANNED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"t\"}}", SCANNED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":5000,\"delta\":{\"type\":\"text_delta\",\"text\":\"far\"}}", SCANNED },
    /* Left to the parse */
    { "content_block_delta", DELTA ("\"\\ud83d alone\""), PARSED },
    { "content_block_delta", DELTA ("\"\\ude00 alone\""), PARSED },
    { "content_block_delta", DELTA ("\"nul \\u0000 inside\""), PARSED },
    { "content_block_delta", DELTA ("\"bad \\x escape\""), PARSED },
    { "content_block_delta", DELTA ("\"raw\ttab\""), PARSED },
    { "content_block_delta", DELTA ("\"not UTF-8 \xff\""), PARSED },
    { "content_block_delta", DELTA ("\"overlong \xc0\xaf\""), PARSED },
    { "content_block_delta", DELTA ("5"), PARSED },
    { "content_block_delta", DELTA ("null"), PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"text\":\"b\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"t\\u0065xt\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":\"0\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0.0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":01,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}", PARSED },
    { "content_block_delta", DELTA ("\"a\"") "x", PARSED },
    { "content_block_delta", DELTA ("\"a\"") DELTA ("\"b\""), PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"},}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"deep\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]],"
                             "\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"n\":123456789012345678901234,"
                             "\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"c\":/* no */1,"
                             "\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}", PARSED },
    { "content_block_delta", "not json", PARSED },
    { "ping", "{\"type\": \"ping\"}", PARSED },
    { "message_stop", "{\"type\":\"message_stop\"}", PARSED },
    { "error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", PARSED },
  };

  check_cases (&mend_http_dialect_messages, setup, cases, G_N_ELEMENTS (cases));
}

/* Chat Completions */

#define CHUNK(delta, finish) \
  "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764500000,\"model\":\"llama3.2\"," \
  "\"choices\":[{\"index\":0,\"delta\":" delta ",\"logprobs\":null,\"finish_reason\":" finish "}]}"

static void
test_chat_completions (void)
{
  static const Case cases[] = {
    { NULL, CHUNK ("{\"content\":\"Hello\"}", "null"), SCANNED },
    { NULL, CHUNK ("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}", "null"), SCANNED },
    { NULL, CHUNK ("{\"role\":\"assistant\"}", "null"), SCANNED },
    { NULL, CHUNK ("{\"content\":null}", "null"), SCANNED },
    { NULL, CHUNK ("{\"content\":\"a\\\"b\\u00e9\\ud83d\\ude00\",\"tool_calls\":null}", "null"), SCANNED },
    { NULL, CHUNK ("{\"content\":\"c\",\"tool_calls\":[],\"reasoning_content\":null}", "null"), SCANNED },
    /* llama.cpp's order, Groq's extra member, "error":null, usage:null */
    { NULL, "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"d\"}}],\"created\":1,"
            "\"id\":\"x\",\"model\":\"m\",\"system_fingerprint\":\"b1\",\"object\":\"chat.completion.chunk\"}", SCANNED },
    { NULL, "{\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"e\"}}],\"x_groq\":{\"id\":\"req_1\"},"
            "\"usage\":null,\"error\":null}", SCANNED },
    { "message", CHUNK ("{\"content\":\"f\"}", "null"), SCANNED },
    /* The first choice is read, the others not. */
    { NULL, "{\"choices\":[{\"delta\":{\"content\":\"g\"}},{\"delta\":{\"content\":\"h\"}}]}", SCANNED },
    { NULL, "{\"choices\":[{\"index\":0}]}", SCANNED },
    /* Left to the parse */
    { NULL, CHUNK ("{}", "\"stop\""), PARSED },
    { NULL, CHUNK ("{\"content\":\"i\"}", "\"length\""), PARSED },
    { NULL, "{\"choices\":[{\"delta\":{\"content\":\"j\"},\"done_reason\":\"stop\"}]}", PARSED },
    { NULL, CHUNK ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}", "null"), PARSED },
    { NULL, CHUNK ("{\"content\":5}", "null"), PARSED },
    { NULL, CHUNK ("{\"content\":\"k\",\"content\":\"l\"}", "null"), PARSED },
    { NULL, CHUNK ("{\"content\":\"\\ud800\"}", "null"), PARSED },
    { "error", CHUNK ("{\"content\":\"m\"}", "null"), PARSED },
    { NULL, "{\"choices\":[{\"delta\":{\"content\":\"n\"}}],\"error\":{\"message\":\"overloaded\"}}", PARSED },
    { NULL, "{\"choices\":[{\"delta\":{\"content\":\"n\"}}],\"error\":\"overloaded\"}", PARSED },
    { NULL, "{\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12,\"total_tokens\":21}}", PARSED },
    { NULL, "{\"choices\":[null,{\"delta\":{\"content\":\"o\"}}]}", PARSED },
    { NULL, "{\"choices\":{\"0\":{\"delta\":{\"content\":\"p\"}}}}", PARSED },
    { NULL, "{\"choices\":[{\"delta\":\"q\"}]}", PARSED },
    { NULL, "[DONE]", PARSED },
    { NULL, "  [DONE] ", PARSED },
  };

  /* After a tool call: the text goes to a block after it, either way. */
  static const Case after_call[] = {
    { NULL, CHUNK ("{\"content\":\"Let me look.\"}", "null"), 0 },
    { NULL, CHUNK ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                   "\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}", "null"), 0 },
    { NULL, NULL, 0 },
  };
  static const Case after_cases[] = {
    { NULL, CHUNK ("{\"content\":\"Done\"}", "null"), SCANNED },
    { NULL, CHUNK ("{\"content\":\"\"}", "null"), SCANNED },
    { NULL, CHUNK ("{\"content\":null,\"tool_calls\":[]}", "null"), SCANNED },
  };

  check_cases (&mend_http_dialect_chat_completions, NULL, cases, G_N_ELEMENTS (cases));
  check_cases (&mend_http_dialect_chat_completions, after_call, after_cases, G_N_ELEMENTS (after_cases));
}

/* Responses */

static void
test_responses (void)
{
  static const Case cases[] = {
    { "response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_1\","
                                    "\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\",\"logprobs\":[],\"obfuscation\":\"x1\"}", SCANNED },
    { "response.output_text.delta", "{\"delta\":\" there\\n\",\"output_index\":0,\"type\":\"response.output_text.delta\"}", SCANNED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"delta\":\"\\u00e9\"}", SCANNED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"\"}", SCANNED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":4096,\"delta\":\"far\"}", SCANNED },
    /* Left to the parse */
    { NULL, "{\"type\":\"response.output_text.delta\",\"delta\":\"no index\"}", PARSED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":\"0\",\"delta\":\"str\"}", PARSED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":-3,\"delta\":\"neg\"}", PARSED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":0}", PARSED },
    { NULL, "{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":7}", PARSED },
    { NULL, "{\"type\":\"response.output_text.done\",\"output_index\":0,\"text\":\"Hi there\"}", PARSED },
    { NULL, "{\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,\"delta\":\"{\"}", PARSED },
    { "response.output_text.delta", "{\"output_index\":0,\"delta\":\"no type\"}", PARSED },
    { NULL, "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}", PARSED },
    { "error", "{\"type\":\"error\",\"code\":\"server_error\",\"message\":\"The server had an error\"}", PARSED },
  };

  check_cases (&mend_http_dialect_responses, NULL, cases, G_N_ELEMENTS (cases));
}

/* Gemini */

static void
test_gemini (void)
{
  static const Case cases[] = {
    { NULL, "{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"The\"}],\"role\": \"model\"},\"index\": 0}],"
            "\"usageMetadata\": {\"promptTokenCount\": 9,\"totalTokenCount\": 9},\"modelVersion\": \"gemini-2.0-flash\","
            "\"responseId\": \"r1\"}", SCANNED },
    /* The parts of a chunk are one piece; a part with no text adds none. */
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"},{\"thought\":true,\"text\":\"b\"},{\"inlineData\":{}},"
            "{\"text\":\"c\\u00e9\"}],\"role\":\"model\"}}]}", SCANNED },
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[],\"role\":\"model\"}}]}", SCANNED },
    { NULL, "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]},\"finishReason\":null}]}", SCANNED },
    { NULL, "{\"candidates\":[{\"index\":0,\"safetyRatings\":[]}],\"promptFeedback\":{\"safetyRatings\":[]}}", SCANNED },
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"d\"}]}},{\"content\":{\"parts\":[{\"text\":\"e\"}]}}]}", SCANNED },
    /* Left to the parse */
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\".\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}]}", PARSED },
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"read\",\"args\":{}}}]}}]}", PARSED },
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":5}]}}]}", PARSED },
    { NULL, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"f\",\"text\":\"g\"}]}}]}", PARSED },
    { NULL, "{\"candidates\":[],\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}", PARSED },
    { NULL, "{\"promptFeedback\":{\"blockReason\":\"OTHER\"}}", PARSED },
    { NULL, "{\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}", PARSED },
    { NULL, "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"h\"}]}}]}]", PARSED },
  };

  check_cases (&mend_http_dialect_gemini, NULL, cases, G_N_ELEMENTS (cases));
}

/* Templates: an event like the last text delta but for its text and the
 * numbers no one reads is read by comparison; any other is not. */
typedef struct
{
  const char *data;
  const char *text;   /* the text it is read with, or NULL: not matched */
} Follow;

static void
check_template (const MendHttpDialectClass *wire,
                const char                 *name,
                const char                 *first,
                const Follow               *follows,
                guint                       n_follows)
{
  g_autoptr(MendHttpAnswer) answer = mend_http_answer_new ();
  g_autoptr(GString) scratch = g_string_new (NULL);
  g_auto(MendJsonTemplate) memo = { NULL };
  MendHttpEvent event;
  const char *text;

  g_assert_true (wire->scan_event (answer, name, first, strlen (first), scratch, &memo, &event, &text));
  for (guint i = 0; i < n_follows; i++)
    {
      guint tag;
      gboolean matched = mend_json_template_match (&memo, name, follows[i].data, strlen (follows[i].data),
                                                   scratch, &tag);

      g_test_message ("follow %u: %s", i, follows[i].data);
      g_assert_cmpint (matched, ==, follows[i].text != NULL);
      if (matched)
        g_assert_cmpstr (scratch->str, ==, follows[i].text);
    }
  /* An event of another name is another shape. */
  g_assert_false (mend_json_template_match (&memo, "other", first, strlen (first), scratch, &(guint) { 0 }));
}

#define RESPONSES(seq, delta) \
  "{\"type\":\"response.output_text.delta\",\"sequence_number\":" seq ",\"item_id\":\"msg_1\"," \
  "\"output_index\":0,\"content_index\":0,\"delta\":" delta ",\"logprobs\":[]}"
#define GEMINI(text, count) \
  "{\"candidates\": [{\"content\": {\"parts\": [{\"text\": " text "}],\"role\": \"model\"},\"index\": 0}]," \
  "\"usageMetadata\": {\"promptTokenCount\": 9,\"candidatesTokenCount\": " count "}}"

static void
test_templates (void)
{
  static const Follow messages[] = {
    { DELTA ("\"World\""), "World" },
    { DELTA ("\"a\\nb \\u00e9 \\ud83d\\ude00\""), "a\nb \xc3\xa9 \xf0\x9f\x98\x80" },
    { DELTA ("\"\""), "" },
    { DELTA ("\"nul \\u0000\""), NULL },
    { DELTA ("\"\\ud83d alone\""), NULL },
    { DELTA ("\"not UTF-8 \xff\""), NULL },
    { DELTA ("\"raw\ttab\""), NULL },
    { DELTA ("5"), NULL },
    { DELTA ("\"a\"") " ", NULL },
    { DELTA ("\"a\"") "x", NULL },
    { "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"t\"}}", NULL },
    { "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"text\":\"b\"}}", NULL },
  };
  static const Follow responses[] = {
    { RESPONSES ("5", "\" there\""), " there" },
    { RESPONSES ("123456789012", "\"x\""), "x" },
    { RESPONSES ("-1.5e3", "\"y\""), "y" },
    { RESPONSES ("\"5\"", "\"z\""), NULL },
    { RESPONSES ("1e400", "\"z\""), NULL },
    { RESPONSES ("01", "\"z\""), NULL },
    { RESPONSES (" 5", "\"z\""), NULL },
    { RESPONSES ("5", "7"), NULL },
  };
  static const Follow gemini[] = {
    { GEMINI ("\"cat\"", "10"), "cat" },
    { GEMINI ("\"\"", "11"), "" },
    { GEMINI ("\"dog\"", "null"), NULL },
  };
  static const Follow none[] = {
    { GEMINI ("\"a\"}, {\"text\": \"b\"", "9"), NULL },
  };

  check_template (&mend_http_dialect_messages, "content_block_delta", DELTA ("\"Hello\""), messages,
                  G_N_ELEMENTS (messages));
  check_template (&mend_http_dialect_responses, "response.output_text.delta", RESPONSES ("4", "\"Hi\""),
                  responses, G_N_ELEMENTS (responses));
  check_template (&mend_http_dialect_gemini, NULL, GEMINI ("\"The\"", "9"), gemini, G_N_ELEMENTS (gemini));
  /* Two parts' texts are not one string: no template. */
  check_template (&mend_http_dialect_gemini, NULL, GEMINI ("\"a\"}, {\"text\": \"b\"", "9"), none,
                  G_N_ELEMENTS (none));
}

/* The scan's strings against json-glib's, one by one. */
static void
test_strings (void)
{
  static const char *const strings[] = {
    "\"\"", "\"plain\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0041\\u00e9\\u20ac\\uffff\"",
    "\"\\ud800\\udc00\\udbff\\udfff\"", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\\u0001\\u007f\x7f\"",
  };

  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    {
      g_autofree char *object = g_strdup_printf ("{\"a\":%s}", strings[i]);
      g_autoptr(JsonNode) node = mend_json_parse (object, -1, NULL);
      g_autoptr(GString) out = g_string_new (NULL);
      MendJsonScan scan;

      g_assert_nonnull (node);
      mend_json_scan_init (&scan, strings[i], strlen (strings[i]));
      g_assert_true (mend_json_scan_string (&scan, out));
      g_assert_true (mend_json_scan_end (&scan));
      g_assert_cmpstr (out->str, ==, mend_json_get_string (json_node_get_object (node), "a"));
    }
}

/* Strings written as json-glib's generator writes them, and read back by
 * the scan, with each byte that matters at each place of an eight-byte
 * word. */
static void
test_written_strings (void)
{
  static const char *const specials[] = { "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\t" };

  for (guint i = 0; i < G_N_ELEMENTS (specials); i++)
    for (guint at = 0; at < 17; at++)
      {
        g_autoptr(GString) value = g_string_new (NULL);
        g_autoptr(GString) written = g_string_new ("x");
        g_autoptr(GString) read = g_string_new (NULL);
        g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
        g_autoptr(JsonGenerator) generator = json_generator_new ();
        g_autofree char *expected = NULL;
        MendJsonScan scan;

        for (guint j = 0; j < at; j++)
          g_string_append_c (value, 'a' + j);
        g_string_append (value, specials[i]);
        g_string_append (value, "tail of the string, past a word");
        json_node_set_string (node, value->str);
        json_generator_set_root (generator, node);
        expected = json_generator_to_data (generator, NULL);

        mend_json_write_string (written, value->str);
        g_assert_cmpstr (written->str + 1, ==, expected);
        g_assert_cmpuint (mend_json_string_length (value->str), ==, strlen (expected));

        /* The generator writes 0x1f as it is, which strict JSON does not
         * allow: the scan leaves that to the parser. */
        mend_json_scan_init (&scan, expected, strlen (expected));
        g_assert_cmpint (mend_json_scan_string (&scan, read), ==, !g_str_equal (specials[i], "\x1f"));
        if (!g_str_equal (specials[i], "\x1f"))
          g_assert_cmpstr (read->str, ==, value->str);
      }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/HttpScan/strings", test_strings);
  g_test_add_func ("/Mend/HttpScan/written-strings", test_written_strings);
  g_test_add_func ("/Mend/HttpScan/messages", test_messages);
  g_test_add_func ("/Mend/HttpScan/chat-completions", test_chat_completions);
  g_test_add_func ("/Mend/HttpScan/responses", test_responses);
  g_test_add_func ("/Mend/HttpScan/gemini", test_gemini);
  g_test_add_func ("/Mend/HttpScan/templates", test_templates);

  return g_test_run ();
}
