/* test-acp-profile.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpProfile as an app meets it: what libmend knows of an ACP agent,
 * from mend_acp_profile_lookup () or made new, the app's to change, and
 * kept by its MendAcpAgent. Built only with -Dacp.
 */

#include <libmend.h>

#include "mend-test-utils.h"

#include "mend-acp-profile-private.h"

/* Codex's notice, as recorded in
 * tests/data/codex-acp-0.16.0/unknown-model-warning.jsonl. */
#define CODEX_NOTICE "Model metadata for `stub-model-9` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              GString    *log)
{
  g_string_append_printf (log, "%s%s", log->len > 0 ? " " : "", pspec->name);
}

/* Every property read through GObject is what its getter says. */
static void
assert_properties_match_getters (MendAcpProfile *profile)
{
  g_autofree char *name = NULL;
  g_auto(GStrv) prefixes = NULL;
  g_auto(GStrv) errors = NULL;
  const char * const *got;
  gboolean keeps;
  gboolean restreams;

  g_object_get (profile,
                "name", &name,
                "keeps-failed-prompt", &keeps,
                "restreams-partial", &restreams,
                "notice-prefixes", &prefixes,
                "error-prefixes", &errors,
                NULL);
  g_assert_cmpstr (name, ==, mend_acp_profile_get_name (profile));
  g_assert_cmpint (keeps, ==, mend_acp_profile_get_keeps_failed_prompt (profile));
  g_assert_cmpint (restreams, ==, mend_acp_profile_get_restreams_partial (profile));
  got = mend_acp_profile_get_notice_prefixes (profile);
  if (got == NULL)
    g_assert_null (prefixes);
  else
    g_assert_true (g_strv_equal ((const char * const *) prefixes, got));
  got = mend_acp_profile_get_error_prefixes (profile);
  if (got == NULL)
    g_assert_null (errors);
  else
    g_assert_true (g_strv_equal ((const char * const *) errors, got));
}

static void
test_properties (void)
{
  /* The name is given once; the rest are the app's to change, notified
   * when they change. */
  const GParamFlags changed = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY;
  const MendTestProperty expected[] = {
    { "name", G_TYPE_STRING, G_PARAM_READABLE | G_PARAM_CONSTRUCT_ONLY, 0 },
    { "keeps-failed-prompt", G_TYPE_BOOLEAN, changed, G_PARAM_CONSTRUCT_ONLY },
    { "restreams-partial", G_TYPE_BOOLEAN, changed, G_PARAM_CONSTRUCT_ONLY },
    { "notice-prefixes", G_TYPE_STRV, changed, G_PARAM_CONSTRUCT_ONLY },
    { "error-prefixes", G_TYPE_STRV, changed, G_PARAM_CONSTRUCT_ONLY },
  };
  g_autoptr(GTypeClass) klass = g_type_class_ref (MEND_TYPE_ACP_PROFILE);
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  g_assert_true (G_TYPE_IS_FINAL (MEND_TYPE_ACP_PROFILE));
  mend_test_assert_properties (MEND_TYPE_ACP_PROFILE, expected, G_N_ELEMENTS (expected));

  /* "default" unless given; a failed prompt kept, no restreaming. */
  g_assert_cmpstr (G_PARAM_SPEC_STRING (g_object_class_find_property (object_class, "name"))->default_value,
                   ==, "default");
  g_assert_true (G_PARAM_SPEC_BOOLEAN (g_object_class_find_property (object_class, "keeps-failed-prompt"))->default_value);
  g_assert_false (G_PARAM_SPEC_BOOLEAN (g_object_class_find_property (object_class, "restreams-partial"))->default_value);
}

/* A new profile has the defaults: keeps a failed prompt, does not
 * restream, no notices; named as given, or "default". */
static void
test_new_has_the_defaults (void)
{
  MendAcpProfile *profiles[] = {
    mend_acp_profile_new ("my-agent"),
    mend_acp_profile_new (NULL),
    /* As introspection makes it, with nothing given. */
    g_object_new (MEND_TYPE_ACP_PROFILE, NULL),
    g_object_new (MEND_TYPE_ACP_PROFILE, "name", NULL, NULL),
    /* A known agent's name alone does not give what libmend knows. */
    mend_acp_profile_new ("gemini-cli"),
  };
  const char *names[] = { "my-agent", "default", "default", "default", "gemini-cli" };

  for (guint i = 0; i < G_N_ELEMENTS (profiles); i++)
    {
      g_test_message ("profile %u", i);
      g_assert_true (MEND_IS_ACP_PROFILE (profiles[i]));
      g_assert_cmpstr (mend_acp_profile_get_name (profiles[i]), ==, names[i]);
      g_assert_true (mend_acp_profile_get_keeps_failed_prompt (profiles[i]));
      g_assert_false (mend_acp_profile_get_restreams_partial (profiles[i]));
      g_assert_null (mend_acp_profile_get_notice_prefixes (profiles[i]));
      g_assert_false (mend_acp_profile_is_notice (profiles[i], CODEX_NOTICE));
      assert_properties_match_getters (profiles[i]);
      g_assert_finalize_object (profiles[i]);
    }
}

/* lookup () gives what the class's table says of each agent libmend
 * knows, and the default profile for any other. */
static void
test_lookup_follows_the_table (void)
{
  static const struct {
    const char *agent;
    const char *name;
    gboolean    keeps;
    gboolean    restreams;
    const char *notice;
    const char *error;          /* a chunk of its error text, or NULL */
  } table[] = {
    { "@zed-industries/claude-code-acp", "@zed-industries/claude-code-acp", TRUE, FALSE, NULL, NULL },
    { "@zed-industries/claude-agent-acp", "@zed-industries/claude-agent-acp", TRUE, FALSE, NULL, NULL },
    /* The chunk 0.101.0 wrote before its -32603 (REAL-AGENTS.md). */
    { "@agentclientprotocol/claude-agent-acp", "@agentclientprotocol/claude-agent-acp", TRUE, FALSE, NULL,
      "API Error: 529 Overloaded. This is a server-side issue, usually temporary" },
    { "gemini-cli", "gemini-cli", FALSE, TRUE, NULL, NULL },
    { "codex-acp", "codex-acp", TRUE, TRUE, "Model metadata for `", NULL },
    /* The chunk 2.6.0 wrote before its end_turn on a 503. */
    { "@agentclientprotocol/codex-acp", "@agentclientprotocol/codex-acp", TRUE, TRUE, "Model metadata for `",
      "unexpected status 503 Service Unavailable: That model is currently overloaded" },
    { "an-agent-nobody-knows", "default", TRUE, FALSE, NULL, NULL },
    { "Gemini-CLI", "default", TRUE, FALSE, NULL, NULL },
    { "", "default", TRUE, FALSE, NULL, NULL },
    { NULL, "default", TRUE, FALSE, NULL, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    {
      MendAcpProfile *profile = mend_acp_profile_lookup (table[i].agent);
      const char * const *prefixes = mend_acp_profile_get_notice_prefixes (profile);

      g_test_message ("agent %s", table[i].agent ? table[i].agent : "(null)");
      g_assert_cmpstr (mend_acp_profile_get_name (profile), ==, table[i].name);
      g_assert_cmpint (mend_acp_profile_get_keeps_failed_prompt (profile), ==, table[i].keeps);
      g_assert_cmpint (mend_acp_profile_get_restreams_partial (profile), ==, table[i].restreams);
      if (table[i].notice == NULL)
        {
          g_assert_null (prefixes);
          g_assert_false (mend_acp_profile_is_notice (profile, CODEX_NOTICE));
        }
      else
        {
          g_assert_nonnull (prefixes);
          g_assert_cmpstr (prefixes[0], ==, table[i].notice);
          g_assert_null (prefixes[1]);
          g_assert_true (mend_acp_profile_is_notice (profile, CODEX_NOTICE));
          g_assert_false (mend_acp_profile_is_notice (profile, "Build fixed."));
        }
      /* Its errors are known, the model's words are not taken for one. */
      g_assert_cmpint (mend_acp_profile_is_error (profile, "API Error: 529 Overloaded. This is a server-side issue, usually temporary") ||
                       mend_acp_profile_is_error (profile, "unexpected status 503 Service Unavailable: That model is currently overloaded"),
                       ==, table[i].error != NULL);
      if (table[i].error != NULL)
        g_assert_true (mend_acp_profile_is_error (profile, table[i].error));
      g_assert_false (mend_acp_profile_is_error (profile, "Build fixed."));
      assert_properties_match_getters (profile);
      g_assert_finalize_object (profile);
    }
}

/* Each lookup is a new profile, the app's to change: changing one changes
 * no other, and not what the next lookup gives. */
static void
test_lookup_gives_the_app_its_own (void)
{
  const char *mine[] = { "Warning: ", NULL };
  MendAcpProfile *first = mend_acp_profile_lookup ("codex-acp");
  MendAcpProfile *second = mend_acp_profile_lookup ("codex-acp");
  MendAcpProfile *third;

  g_assert_true (first != second);
  mend_acp_profile_set_keeps_failed_prompt (first, FALSE);
  mend_acp_profile_set_restreams_partial (first, FALSE);
  mend_acp_profile_set_notice_prefixes (first, mine);

  g_assert_true (mend_acp_profile_get_keeps_failed_prompt (second));
  g_assert_true (mend_acp_profile_get_restreams_partial (second));
  g_assert_cmpstr (mend_acp_profile_get_notice_prefixes (second)[0], ==, "Model metadata for `");
  third = mend_acp_profile_lookup ("codex-acp");
  g_assert_true (mend_acp_profile_get_keeps_failed_prompt (third));
  g_assert_true (mend_acp_profile_get_restreams_partial (third));
  g_assert_true (mend_acp_profile_is_notice (third, CODEX_NOTICE));
  g_assert_false (mend_acp_profile_is_notice (third, "Warning: disk almost full"));
  g_assert_true (mend_acp_profile_is_notice (first, "Warning: disk almost full"));
  g_assert_false (mend_acp_profile_is_notice (first, CODEX_NOTICE));
  /* Its name stays the agent's. */
  g_assert_cmpstr (mend_acp_profile_get_name (first), ==, "codex-acp");

  g_assert_finalize_object (first);
  g_assert_finalize_object (second);
  g_assert_finalize_object (third);
}

/* The flags: each setter, and g_object_set (), notifies once when the value
 * changes and never when it does not; any true value is TRUE. */
static void
test_flags_notify_on_change_only (void)
{
  MendAcpProfile *profile = mend_acp_profile_new ("my-agent");
  g_autoptr(GString) log = g_string_new (NULL);

  g_signal_connect (profile, "notify", G_CALLBACK (count_notify), log);

  mend_acp_profile_set_keeps_failed_prompt (profile, TRUE);
  mend_acp_profile_set_keeps_failed_prompt (profile, 2);
  g_assert_cmpstr (log->str, ==, "");
  mend_acp_profile_set_keeps_failed_prompt (profile, FALSE);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt");
  g_assert_false (mend_acp_profile_get_keeps_failed_prompt (profile));
  mend_acp_profile_set_keeps_failed_prompt (profile, FALSE);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt");

  mend_acp_profile_set_restreams_partial (profile, 7);
  g_assert_cmpint (mend_acp_profile_get_restreams_partial (profile), ==, TRUE);
  mend_acp_profile_set_restreams_partial (profile, TRUE);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt restreams-partial");

  /* The same through GObject. */
  g_string_truncate (log, 0);
  g_object_set (profile, "keeps-failed-prompt", TRUE, "restreams-partial", TRUE, NULL);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt");
  g_object_set (profile, "keeps-failed-prompt", TRUE, NULL);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt");
  g_object_set (profile, "restreams-partial", FALSE, NULL);
  g_assert_cmpstr (log->str, ==, "keeps-failed-prompt restreams-partial");
  g_assert_true (mend_acp_profile_get_keeps_failed_prompt (profile));
  g_assert_false (mend_acp_profile_get_restreams_partial (profile));
  assert_properties_match_getters (profile);

  g_signal_handlers_disconnect_by_data (profile, log);
  g_assert_finalize_object (profile);
}

/* The notice prefixes: copied, empty ones left out (all empty is none),
 * read back equal through GObject, notified when set. */
static void
test_notice_prefixes_are_kept_as_set (void)
{
  MendAcpProfile *profile = mend_acp_profile_new ("my-agent");
  g_autoptr(GString) log = g_string_new (NULL);
  char *given[] = { g_strdup ("Warning: "), g_strdup (""), g_strdup ("Note: "), NULL };
  const char *empties[] = { "", "", NULL };
  const char *set_by_gobject[] = { "Info: ", NULL };
  const char * const *kept;

  g_signal_connect (profile, "notify", G_CALLBACK (count_notify), log);

  mend_acp_profile_set_notice_prefixes (profile, (const char * const *) given);
  g_assert_cmpstr (log->str, ==, "notice-prefixes");
  for (guint i = 0; given[i] != NULL; i++)
    g_clear_pointer (&given[i], g_free);
  kept = mend_acp_profile_get_notice_prefixes (profile);
  g_assert_cmpstr (kept[0], ==, "Warning: ");
  g_assert_cmpstr (kept[1], ==, "Note: ");
  g_assert_null (kept[2]);
  assert_properties_match_getters (profile);
  g_assert_true (mend_acp_profile_is_notice (profile, "Note: the model is slow"));
  g_assert_false (mend_acp_profile_is_notice (profile, ""));

  /* Empty prefixes would make every chunk a notice: left out. */
  mend_acp_profile_set_notice_prefixes (profile, empties);
  g_assert_null (mend_acp_profile_get_notice_prefixes (profile));
  g_assert_false (mend_acp_profile_is_notice (profile, "anything"));
  g_assert_false (mend_acp_profile_is_notice (profile, ""));

  g_object_set (profile, "notice-prefixes", set_by_gobject, NULL);
  g_assert_cmpstr (mend_acp_profile_get_notice_prefixes (profile)[0], ==, "Info: ");
  assert_properties_match_getters (profile);
  mend_acp_profile_set_notice_prefixes (profile, NULL);
  g_assert_null (mend_acp_profile_get_notice_prefixes (profile));
  assert_properties_match_getters (profile);
  g_assert_cmpstr (log->str, ==, "notice-prefixes notice-prefixes notice-prefixes notice-prefixes");

  g_signal_handlers_disconnect_by_data (profile, log);
  g_assert_finalize_object (profile);
}

/* Setting the prefixes it has already is no change: the house rule is
 * that setters notify only on change. */
static void
test_same_notice_prefixes_notify_nothing (void)
{
  MendAcpProfile *profile = mend_acp_profile_lookup ("codex-acp");
  const char *same[] = { "Model metadata for `", NULL };
  g_autoptr(GString) log = g_string_new (NULL);

  g_signal_connect (profile, "notify", G_CALLBACK (count_notify), log);
  mend_acp_profile_set_notice_prefixes (profile, same);
  g_assert_cmpstr (mend_acp_profile_get_notice_prefixes (profile)[0], ==, "Model metadata for `");

  g_assert_cmpstr (log->str, ==, "");
  mend_acp_profile_set_error_prefixes (profile, NULL);
  g_assert_cmpstr (log->str, ==, "");
  mend_acp_profile_set_error_prefixes (profile, same);
  g_assert_cmpstr (log->str, ==, "error-prefixes");

  g_signal_handlers_disconnect_by_data (profile, log);
  g_assert_finalize_object (profile);
}

/* What it tells for notices: a chunk that starts with a prefix, nothing
 * else. */
static void
test_is_notice_matches_the_start_only (void)
{
  MendAcpProfile *profile = mend_acp_profile_lookup ("codex-acp");

  g_assert_true (mend_acp_profile_is_notice (profile, CODEX_NOTICE));
  g_assert_true (mend_acp_profile_is_notice (profile, "Model metadata for `"));
  g_assert_false (mend_acp_profile_is_notice (profile, "Model metadata for "));
  g_assert_false (mend_acp_profile_is_notice (profile, " " CODEX_NOTICE));
  g_assert_false (mend_acp_profile_is_notice (profile, "The answer: " CODEX_NOTICE));
  g_assert_false (mend_acp_profile_is_notice (profile, "model metadata for `stub-model-9`"));
  g_assert_false (mend_acp_profile_is_notice (profile, ""));

  g_assert_finalize_object (profile);
}

/* The name is given once: setting it afterwards is refused. */
static void
test_the_name_is_given_once (void)
{
  MendAcpProfile *profile = mend_acp_profile_new ("my-agent");
  g_autoptr(GString) log = g_string_new (NULL);

  g_signal_connect (profile, "notify", G_CALLBACK (count_notify), log);
  g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING, "*name*can't be set after construction*");
  g_object_set (profile, "name", "other", NULL);
  g_test_assert_expected_messages ();
  g_assert_cmpstr (mend_acp_profile_get_name (profile), ==, "my-agent");
  g_assert_cmpstr (log->str, ==, "");

  g_signal_handlers_disconnect_by_data (profile, log);
  g_assert_finalize_object (profile);
}

/* Its methods given no profile, or no text, say so and return what their
 * documentation gives. */
static void
test_methods_refuse_bad_arguments (void)
{
  MendAcpProfile *profile = mend_acp_profile_new (NULL);
  const char *prefixes[] = { "x", NULL };

  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  g_assert_null (mend_acp_profile_get_name (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  g_assert_true (mend_acp_profile_get_keeps_failed_prompt (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  g_assert_false (mend_acp_profile_get_restreams_partial (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  g_assert_null (mend_acp_profile_get_notice_prefixes (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  mend_acp_profile_set_keeps_failed_prompt (NULL, FALSE);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  mend_acp_profile_set_restreams_partial (NULL, TRUE);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  mend_acp_profile_set_notice_prefixes (NULL, prefixes);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_ACP_PROFILE*");
  g_assert_false (mend_acp_profile_is_notice (NULL, "x"));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*text != NULL*");
  g_assert_false (mend_acp_profile_is_notice (profile, NULL));
  g_test_assert_expected_messages ();

  g_assert_finalize_object (profile);
}

/* An agent keeps the app's profile as the very object: the app's later
 * changes are the agent's; NULL gives it back to the agent's own. */
static void
test_an_agent_keeps_the_apps_profile (void)
{
  const char *argv[] = { "my-agent", "--acp", NULL };
  MendAcpAgent *agent = mend_acp_agent_new (argv);
  MendAcpProfile *profile = mend_acp_profile_new ("my-agent");
  g_autoptr(GString) log = g_string_new (NULL);
  MendAcpProfile *got = NULL;

  /* None before the agent's initialize answer. */
  g_assert_null (mend_acp_agent_get_profile (agent));
  g_signal_connect (agent, "notify::profile", G_CALLBACK (count_notify), log);

  mend_acp_agent_set_profile (agent, profile);
  g_assert_true (mend_acp_agent_get_profile (agent) == profile);
  g_object_get (agent, "profile", &got, NULL);
  g_assert_true (got == profile);
  g_clear_object (&got);
  mend_acp_agent_set_profile (agent, profile);
  g_assert_cmpstr (log->str, ==, "profile");

  mend_acp_profile_set_keeps_failed_prompt (profile, FALSE);
  g_assert_false (mend_acp_profile_get_keeps_failed_prompt (mend_acp_agent_get_profile (agent)));

  mend_acp_agent_set_profile (agent, NULL);
  g_assert_null (mend_acp_agent_get_profile (agent));
  g_assert_cmpstr (log->str, ==, "profile profile");

  g_signal_handlers_disconnect_by_data (agent, log);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (profile);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/AcpProfile/properties", test_properties);
  g_test_add_func ("/Mend/AcpProfile/new-has-the-defaults", test_new_has_the_defaults);
  g_test_add_func ("/Mend/AcpProfile/lookup-follows-the-table", test_lookup_follows_the_table);
  g_test_add_func ("/Mend/AcpProfile/lookup-gives-the-app-its-own", test_lookup_gives_the_app_its_own);
  g_test_add_func ("/Mend/AcpProfile/flags-notify-on-change-only", test_flags_notify_on_change_only);
  g_test_add_func ("/Mend/AcpProfile/notice-prefixes-are-kept-as-set", test_notice_prefixes_are_kept_as_set);
  g_test_add_func ("/Mend/AcpProfile/same-notice-prefixes-notify-nothing", test_same_notice_prefixes_notify_nothing);
  g_test_add_func ("/Mend/AcpProfile/is-notice-matches-the-start-only", test_is_notice_matches_the_start_only);
  g_test_add_func ("/Mend/AcpProfile/the-name-is-given-once", test_the_name_is_given_once);
  g_test_add_func ("/Mend/AcpProfile/methods-refuse-bad-arguments", test_methods_refuse_bad_arguments);
  g_test_add_func ("/Mend/AcpProfile/an-agent-keeps-the-apps-profile", test_an_agent_keeps_the_apps_profile);

  return g_test_run ();
}
