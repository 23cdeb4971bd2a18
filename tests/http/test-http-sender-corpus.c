/* test-http-sender-corpus.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The corpus of real failures (tests/data/failures) through MendHttpSender:
 * every HTTP case of a provider that speaks one of the sender's formats is
 * the answer of a SoupServer on 127.0.0.1, in that provider's format, to a
 * chat's turn; and so is every case that is a JSON error body of such a
 * provider when the case says with which status it came. The failure the
 * turn ends its first attempt with must have the case's kind, its reason
 * (unless the case says the reason is ambiguous) and its server hint when
 * the case pins one — the verdict test-failure-corpus gives the same facts
 * made into a MendFailure directly. Waits run in virtual time.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

/* The chat over a scripted SoupServer (tests/support/mend-test-server.c). */
typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;

#define MESSAGES "/v1/messages"
#define CHAT "/v1/chat/completions"
#define RESPONSES "/v1/responses"
#define GEMINI "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

/* The providers of the corpus and the format each answers in; a proxy's
 * answer is served in every format. */
static const struct {
  const char *family;
  const char *paths[4];
} families[] = {
  { "anthropic", { MESSAGES } },
  { "openai", { CHAT } },
  { "azure", { CHAT } },
  { "deepseek", { CHAT } },
  { "groq", { CHAT } },
  { "mistral", { CHAT } },
  { "openrouter", { CHAT } },
  { "ollama", { CHAT } },
  { "gemini", { GEMINI } },
  { "proxy", { MESSAGES, CHAT, RESPONSES, GEMINI } },
};

/* Cases that are an error body as text, with the status the case itself
 * names in its `why` (the others say none, and are not served). */
static const struct {
  const char *id;
  guint       status;
  const char *type;
} text_statuses[] = {
  { "anthropic-004", 500, "application/json" },   /* "the proxy reported it as 500" */
  { "azure-007", 429, "application/json" },       /* "a 429 names the seconds to wait" */
  { "gemini-013", 503, "application/json" },      /* "503 UNAVAILABLE is temporary" */
  { "gemini-014", 503, "application/json" },
  { "mistral-004", 429, "application/json" },     /* "429 is retried after a wait" */
  { "ollama-010", 404, "application/json" },      /* "Ollama 404 body" */
  { "openrouter-001", 429, "application/json" },  /* "429 is rate limiting" */
  { "openai-011", 200, "text/event-stream" },     /* "in response.failed": a stream's event */
};

typedef struct
{
  char            *name;
  char            *id;
  const char      *path;
  guint            status;
  char            *type;
  char            *headers;
  char            *body;
  MendFailureKind  kind;
  MendReason       reason;
  gint64           hint;
  gboolean         ambiguous;
} Case;

static GPtrArray *cases;
static guint skipped_text;   /* JSON error bodies of these providers that name no status */
static guint matched;
static GPtrArray *mismatches;

static void
case_free (Case *c)
{
  g_free (c->name);
  g_free (c->id);
  g_free (c->type);
  g_free (c->headers);
  g_free (c->body);
  g_free (c);
}

static int
nick_value (GType       type,
            const char *nick)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *value = g_enum_get_value_by_nick (klass, nick);
  int result = value != NULL ? value->value : -1;

  g_type_class_unref (klass);
  return result;
}

/* A stream's event quoted without its framing: each line of it a data
 * line, named by its type as the Responses API names its events. */
static char *
frame_event (const char *body)
{
  g_autoptr(JsonNode) node = json_from_string (body, NULL);
  g_auto(GStrv) lines = g_strsplit (body, "\n", -1);
  GString *framed = g_string_new (NULL);
  JsonObject *object = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;

  if (g_str_has_prefix (body, "data:") || g_str_has_prefix (body, "event:"))
    {
      g_string_append (framed, body);
      g_string_append (framed, "\n\n");
      return g_string_free (framed, FALSE);
    }
  if (object != NULL && json_object_get_string_member_with_default (object, "type", NULL) != NULL)
    g_string_append_printf (framed, "event: %s\n", json_object_get_string_member (object, "type"));
  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (framed, "data: %s\n", lines[i]);
  g_string_append (framed, "\n");
  return g_string_free (framed, FALSE);
}

static const char *
path_of_body (const char *path,
              const char *body)
{
  /* An OpenAI family's Responses event is a Responses answer. */
  if (g_strcmp0 (path, CHAT) == 0 && body != NULL && strstr (body, "\"type\":\"response.") != NULL)
    return RESPONSES;
  return path;
}

static const char *
format_name (const char *path)
{
  return g_str_equal (path, MESSAGES) ? "messages"
         : g_str_equal (path, CHAT) ? "chat-completions"
         : g_str_equal (path, RESPONSES) ? "responses" : "gemini";
}

static void
add_case (JsonObject *obj,
          const char *path,
          guint       status,
          const char *type,
          const char *headers,
          const char *body)
{
  Case *c = g_new0 (Case, 1);

  c->id = g_strdup (json_object_get_string_member (obj, "id"));
  c->path = path_of_body (path, body);
  c->name = g_strdup_printf ("/Mend/HttpCorpus/%s/%s", format_name (c->path), c->id);
  c->status = status;
  c->type = g_strdup (type);
  c->headers = g_strdup (headers);
  c->body = status == 200 && g_strcmp0 (type, "text/event-stream") == 0 ? frame_event (body) : g_strdup (body);
  c->kind = nick_value (MEND_TYPE_FAILURE_KIND, json_object_get_string_member (obj, "kind"));
  c->reason = nick_value (MEND_TYPE_REASON, json_object_get_string_member (obj, "reason"));
  c->hint = json_object_get_int_member_with_default (obj, "retryAfterMs", -1);
  c->ambiguous = json_object_has_member (obj, "ambiguous");
  g_ptr_array_add (cases, c);
}

static void
load_case (JsonObject *obj,
           const char *family)
{
  const char *input = json_object_get_string_member (obj, "input");
  const char *id = json_object_get_string_member (obj, "id");
  guint f;

  for (f = 0; f < G_N_ELEMENTS (families); f++)
    if (g_str_equal (families[f].family, family))
      break;
  if (f == G_N_ELEMENTS (families))
    return;

  if (g_strcmp0 (input, "http") == 0)
    {
      JsonObject *h = json_object_get_object_member (obj, "headers");
      g_autoptr(GList) names = h != NULL ? json_object_get_members (h) : NULL;
      g_autoptr(GString) headers = g_string_new (NULL);
      const char *type = "application/json";
      const char *body = json_object_get_null_member (obj, "body") ? "" : json_object_get_string_member (obj, "body");

      for (GList *l = names; l != NULL; l = l->next)
        {
          if (g_ascii_strcasecmp (l->data, "content-type") == 0)
            type = json_object_get_string_member (h, l->data);
          else
            g_string_append_printf (headers, "%s: %s\n", (char *) l->data, json_object_get_string_member (h, l->data));
        }
      for (guint p = 0; p < G_N_ELEMENTS (families[f].paths) && families[f].paths[p] != NULL; p++)
        add_case (obj, families[f].paths[p], (guint) json_object_get_int_member (obj, "status"),
                  type, headers->str, body);
      return;
    }

  if (g_strcmp0 (input, "text") == 0)
    {
      const char *text = json_object_get_string_member (obj, "text");
      g_autoptr(JsonNode) node = json_from_string (text, NULL);

      /* A body as a server sends it, not a Python dict's repr (which
       * json-glib would read too). */
      if (node == NULL || strstr (text, "{'") != NULL)
        return;
      for (guint t = 0; t < G_N_ELEMENTS (text_statuses); t++)
        if (g_str_equal (text_statuses[t].id, id))
          {
            add_case (obj, families[f].paths[0], text_statuses[t].status, text_statuses[t].type, NULL, text);
            return;
          }
      skipped_text++;
    }
}

static void
load_corpus (void)
{
  g_autofree char *dir_path = g_build_filename (MEND_TEST_SRCDIR, "data", "failures", NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *family = NULL;
      g_autofree char *contents = NULL;
      g_auto(GStrv) lines = NULL;

      if (!g_str_has_suffix (name, ".jsonl"))
        continue;
      path = g_build_filename (dir_path, name, NULL);
      family = g_strndup (name, strlen (name) - strlen (".jsonl"));
      g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      lines = g_strsplit (contents, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          g_autoptr(JsonParser) parser = json_parser_new ();

          if (*lines[i] == '\0')
            continue;
          g_assert_true (json_parser_load_from_data (parser, lines[i], -1, NULL));
          load_case (json_node_get_object (json_parser_get_root (parser)), family);
        }
    }
}

static void
case_set_up (Fixture       *f,
             gconstpointer  data)
{
  const Case *c = data;

  mend_test_http_chat_set_up_at (f, c->path);
  mend_http_sender_set_model (f->sender, "the-model");
}

/* Until the first attempt has ended: the turn waits, or it is over. */
static void
run_first_attempt (Fixture *f)
{
  guint id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());

  for (;;)
    {
      MendTurn *turn = mend_chat_get_turn (f->chat);

      if (f->served >= 1 && (turn == NULL || mend_turn_get_state (turn) == MEND_TURN_WAITING))
        break;
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (id);
}

static void
test_case (Fixture       *f,
           gconstpointer  data)
{
  const Case *c = data;
  Reply script[1] = { { c->status, c->type, c->body, c->headers } };
  MendTurn *turn;
  MendFailure *failure;
  gboolean kind_ok, reason_ok, hint_ok;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_first_attempt (f);
  turn = mend_chat_get_turn (f->chat);
  if (turn == NULL)
    turn = g_ptr_array_index (f->finished, 0);
  failure = mend_turn_get_last_failure (turn);
  g_assert_nonnull (failure);

  kind_ok = mend_failure_get_kind (failure) == c->kind;
  reason_ok = mend_failure_get_reason (failure) == c->reason;
  hint_ok = c->hint < 0 || mend_failure_get_retry_after_ms (failure) == c->hint;
  g_test_message ("%s: want %s/%s, got %s/%s (%" G_GINT64_FORMAT " ms): %s", c->id,
                  mend_failure_kind_to_nick (c->kind), mend_reason_to_nick (c->reason),
                  mend_failure_kind_to_nick (mend_failure_get_kind (failure)),
                  mend_reason_to_nick (mend_failure_get_reason (failure)),
                  mend_failure_get_retry_after_ms (failure), mend_failure_get_message (failure));
  if (kind_ok && reason_ok && hint_ok)
    matched++;
  else
    g_ptr_array_add (mismatches, g_strdup_printf ("%s (%s): want %s/%s%s, got %s/%s %" G_GINT64_FORMAT " ms",
                                                  c->id, format_name (c->path),
                                                  mend_failure_kind_to_nick (c->kind), mend_reason_to_nick (c->reason),
                                                  c->ambiguous ? " (ambiguous)" : "",
                                                  mend_failure_kind_to_nick (mend_failure_get_kind (failure)),
                                                  mend_reason_to_nick (mend_failure_get_reason (failure)),
                                                  mend_failure_get_retry_after_ms (failure)));

  g_assert_cmpstr (mend_failure_kind_to_nick (mend_failure_get_kind (failure)), ==, mend_failure_kind_to_nick (c->kind));
  if (!c->ambiguous)
    g_assert_cmpstr (mend_reason_to_nick (mend_failure_get_reason (failure)), ==, mend_reason_to_nick (c->reason));
  if (c->hint >= 0)
    g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, c->hint);
  g_assert_cmpuint (f->served, ==, 1);

  if (mend_chat_get_turn (f->chat) != NULL)
    mend_chat_stop (f->chat);
}

static void
test_score (void)
{
  g_test_message ("corpus through the sender: %u cases run, %u matched, %u JSON error bodies "
                  "that name no status not served", cases->len, matched, skipped_text);
  for (guint i = 0; i < mismatches->len; i++)
    g_test_message ("mismatch: %s", (char *) g_ptr_array_index (mismatches, i));
  g_assert_cmpuint (cases->len, >=, 20);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

  cases = g_ptr_array_new_with_free_func ((GDestroyNotify) case_free);
  mismatches = g_ptr_array_new_with_free_func (g_free);
  load_corpus ();

  for (guint i = 0; i < cases->len; i++)
    {
      Case *c = g_ptr_array_index (cases, i);

      g_test_add (c->name, Fixture, c, case_set_up, test_case, mend_test_http_chat_tear_down);
    }
  /* Last, when every case has run. */
  g_test_add_func ("/Mend/HttpCorpus/zz-score/report", test_score);

  ret = g_test_run ();
  g_ptr_array_unref (cases);
  g_ptr_array_unref (mismatches);
  return ret;
}
