/* mend-demo.c — what libmend does with a failure
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Classifies failure texts (given on the command line, or a built-in set of
 * real error shapes) and shows the retry schedule each implies, driving the
 * waits on a manual clock so that the whole schedule prints at once.
 */

#include <locale.h>
#include <stdio.h>

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <libmend.h>

static const char * const samples[] = {
  "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
  "API Error: 503 no non-exhausted claude accounts available; next account frees up in 47m (retry after 2820s)",
  "Connection error: ECONNRESET",
  "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}} (retry after 7s)",
  "Request timed out.",
  "You've hit your usage limit · resets 3pm",
  "invalid x-api-key",
  "API Error: 400 prompt is too long: 210000 tokens > 200000 maximum",
  "Request cancelled by user",
  "something nobody has seen before",
};

static const char *
verdict_text (MendFailureKind kind)
{
  switch (kind)
    {
    case MEND_FAILURE_TRANSIENT:
      return "transient: retried";
    case MEND_FAILURE_LIMIT:
      return "limit: never retried automatically";
    case MEND_FAILURE_STOPPED:
      return "stopped: never retried";
    case MEND_FAILURE_PERMANENT:
    default:
      return "permanent: never retried";
    }
}

static void
print_json_line (const char      *text,
                 MendFailure     *failure,
                 MendErrorPolicy *policy)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  MendFailureKind kind = mend_error_policy_classify (policy, failure);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder, mend_reason_to_nick (mend_failure_get_reason (failure)));
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, mend_failure_kind_to_nick (kind));
  json_builder_set_member_name (builder, "retryAfterMs");
  json_builder_add_int_value (builder, mend_failure_get_retry_after_ms (failure));
  json_builder_set_member_name (builder, "delaysMs");
  json_builder_begin_array (builder);
  if (kind == MEND_FAILURE_TRANSIENT)
    for (guint retry = 1; retry <= mend_error_policy_get_max_retries (policy); retry++)
      {
        gint64 delay = mend_error_policy_delay_for (policy, retry, failure, NULL);

        if (delay < 0)
          break;
        json_builder_add_int_value (builder, delay);
      }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  out = json_generator_to_data (generator, NULL);
  g_print ("%s\n", out);
}

static void
show (const char      *text,
      MendErrorPolicy *policy,
      gboolean         as_json)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (text);
  g_autoptr(MendClock) clock = NULL;
  MendFailureKind kind;
  guint of;

  if (as_json)
    {
      print_json_line (text, failure, policy);
      return;
    }

  kind = mend_error_policy_classify (policy, failure);
  g_print ("“%s”\n", text);
  g_print ("  reason %s · %s", mend_reason_to_nick (mend_failure_get_reason (failure)),
           verdict_text (kind));
  if (mend_failure_get_retry_after_ms (failure) >= 0)
    g_print (" · server asks to wait %" G_GINT64_FORMAT " ms",
             mend_failure_get_retry_after_ms (failure));
  g_print ("\n");

  if (kind != MEND_FAILURE_TRANSIENT)
    {
      g_print ("\n");
      return;
    }

  clock = mend_manual_clock_new (g_get_real_time ());
  of = mend_error_policy_get_max_retries (policy);
  for (guint retry = 1; retry <= of; retry++)
    {
      gboolean server_hint = FALSE;
      gint64 delay = mend_error_policy_delay_for (policy, retry, failure, &server_hint);
      g_autoptr(MendRetryWait) wait = NULL;
      g_autofree char *line = NULL;

      if (delay < 0)
        {
          g_print ("  gives up at once: the server's wait is above the policy's %u ms\n\n",
                   mend_error_policy_get_retry_after_max_ms (policy));
          return;
        }

      wait = mend_retry_wait_new (clock, delay, retry, of, mend_failure_get_reason (failure));
      line = mend_retry_wait_describe (wait);
      g_print ("  ⟳ %5" G_GINT64_FORMAT " ms  %s%s\n", delay, line,
               server_hint ? " — the server's hint" : "");
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), delay);
    }
  g_print ("  then gives up if every retry fails\n\n");
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(MendErrorPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *policy_file = NULL;
  g_auto(GStrv) texts = NULL;
  gboolean as_json = FALSE;
  gboolean no_jitter = FALSE;
  const GOptionEntry entries[] = {
    { "policy", 'p', 0, G_OPTION_ARG_FILENAME, &policy_file,
      "Load the error policy from a JSON FILE", "FILE" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &as_json,
      "Print one JSON object per failure", NULL },
    { "no-jitter", 0, 0, G_OPTION_ARG_NONE, &no_jitter,
      "Show the schedule without jitter", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &texts,
      NULL, "[ERROR-TEXT…]" },
    { NULL }
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
    "Shows how libmend classifies a failure and the retries it implies.\n"
    "With no ERROR-TEXT, a set of real error shapes is shown.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }

  if (policy_file != NULL)
    policy = mend_error_policy_new_from_file (policy_file, &error);
  else
    policy = mend_error_policy_new ();
  if (policy == NULL)
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }
  if (no_jitter)
    mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);

  if (!as_json)
    g_print ("libmend %s — what happens to a failed turn (%u retries at most)\n\n",
             MEND_VERSION_S, mend_error_policy_get_max_retries (policy));

  if (texts != NULL)
    for (guint i = 0; texts[i] != NULL; i++)
      show (texts[i], policy, as_json);
  else
    for (guint i = 0; i < G_N_ELEMENTS (samples); i++)
      show (samples[i], policy, as_json);

  return 0;
}
