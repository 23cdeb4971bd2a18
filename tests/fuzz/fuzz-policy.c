/* fuzz-policy.c: policy JSON
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The input, as a C string, is read by mend_error_policy_new_from_json ()
 * and applied by mend_error_policy_update_from_json () to a resume policy.
 * Checked besides crashes and leaks:
 * - a policy read back from its own to_json () is the same policy;
 * - a refused update changes nothing;
 * - every scheduled delay is within [0, max-delay-ms], a server's hint
 *   over retry-after-max-ms gives up (-1), and the stagger is below
 *   stagger-ms.
 */

#include "fuzz-common.h"

#include "mend-error-policy-private.h"

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static void
check_round_trip (MendErrorPolicy *policy)
{
  g_autofree char *json = mend_error_policy_to_json (policy);
  g_autofree char *again = NULL;
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *copy;

  copy = mend_error_policy_new_from_json (json, &error);
  if (copy == NULL)
    fuzz_fail ("to_json () does not read back (%s): %s", error->message, json);
  again = mend_error_policy_to_json (copy);
  if (strcmp (json, again) != 0)
    fuzz_fail ("to_json () reads back to another policy:\n%s\n%s", json, again);
  g_assert_finalize_object (copy);
}

static void
check_delays (MendErrorPolicy *policy,
              MendFailure     *hinted)
{
  guint max_retries = mend_error_policy_get_max_retries (policy);
  gint64 cap = mend_error_policy_get_max_delay_ms (policy);
  gint64 hint_max = mend_error_policy_get_retry_after_max_ms (policy);
  gint64 jitter_ms = mend_error_policy_get_jitter_ms (policy);
  gint64 hint = mend_failure_get_retry_after_ms (hinted);
  guint stagger_ms = mend_error_policy_get_stagger_ms (policy);
  guint retries[] = { 0, 1, 2, 3, 4, 5, 8, 13, max_retries, max_retries + 1, G_MAXUINT };

  /* Jitter is random: seed it, so that a crash replays. */
  mend_error_policy_set_seed (policy, 7);

  for (guint i = 0; i < G_N_ELEMENTS (retries); i++)
    {
      gboolean server_hint = TRUE;
      gint64 delay;

      delay = mend_error_policy_delay_for (policy, retries[i], NULL, &server_hint);
      fuzz_check (delay >= 0 && delay <= cap && !server_hint,
                  "retry %u: delay %" G_GINT64_FORMAT " outside [0, %" G_GINT64_FORMAT "]",
                  retries[i], delay, cap);

      delay = mend_error_policy_delay_for (policy, retries[i], hinted, &server_hint);
      if (hint > hint_max)
        fuzz_check (delay == -1 && server_hint, "hint %" G_GINT64_FORMAT " over %" G_GINT64_FORMAT
                    " gave %" G_GINT64_FORMAT, hint, hint_max, delay);
      else
        fuzz_check (delay >= 0 && delay <= MAX (cap, hint + jitter_ms),
                    "retry %u, hint %" G_GINT64_FORMAT ": delay %" G_GINT64_FORMAT,
                    retries[i], hint, delay);
    }

  fuzz_check (stagger_ms == 0 || mend_error_policy_get_stagger_for (policy, "chat-1") < stagger_ms,
              "stagger");
  fuzz_check (mend_error_policy_get_stagger_for (policy, "") <= MAX (stagger_ms, 1) - 1 ||
              stagger_ms == 0, "stagger of an empty key");

  {
    gsize n_delays = 0;
    const guint *delays = mend_error_policy_get_delays (policy, &n_delays);

    fuzz_check (n_delays == 0 || delays != NULL, "delays");
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = fuzz_strndup (data, size);
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy;
  MendFailure *hinted;

  /* A server's hint of a minute, to mix with the policy's schedule. */
  hinted = mend_failure_new_from_text ("API Error: 429 rate_limit_error (retry after 60s)");

  policy = mend_error_policy_new_from_json (text, &error);
  fuzz_check ((policy == NULL) == (error != NULL), "a result and an error, or neither");
  if (policy != NULL)
    {
      check_round_trip (policy);
      check_delays (policy, hinted);
      fuzz_classify (policy, hinted);
      g_assert_finalize_object (policy);
    }
  else
    fuzz_check (error->domain == MEND_POLICY_ERROR, "error of domain %s",
                g_quark_to_string (error->domain));
  g_clear_error (&error);

  /* An update over another policy: all or nothing. */
  policy = mend_error_policy_new_for_resume ();
  {
    g_autofree char *before = mend_error_policy_to_json (policy);
    g_autofree char *after = NULL;
    gboolean ok = mend_error_policy_update_from_json (policy, text, &error);

    fuzz_check (ok == (error == NULL), "a result and an error, or neither");
    after = mend_error_policy_to_json (policy);
    if (!ok && strcmp (before, after) != 0)
      fuzz_fail ("a refused update (%s) changed the policy:\n%s\n%s", error->message, before, after);
    if (ok)
      {
        check_round_trip (policy);
        check_delays (policy, hinted);
      }
  }
  g_assert_finalize_object (policy);

  g_assert_finalize_object (hinted);
  return 0;
}
