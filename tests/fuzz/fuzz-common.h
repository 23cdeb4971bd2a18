/* fuzz-common.h: what every libFuzzer harness of libmend shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * - GLib allocates through malloc (G_SLICE=always-malloc), so that
 *   LeakSanitizer sees a leaked GObject: the harness re-executes itself
 *   once with it set, since GLib's slice allocator is configured before
 *   LLVMFuzzerInitialize () runs.
 * - A warning or critical, from libmend or from a library it calls, is a
 *   crash: the harnesses pass only input the API accepts, so such a message
 *   is a bug. Debug messages are formatted (their code runs) but never
 *   printed, and nothing else is printed per input.
 */

#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmend.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REEXEC_GUARD "MEND_FUZZ_REEXECUTED"

static GLogWriterOutput
fuzz_log_writer (GLogLevelFlags   log_level,
                 const GLogField *fields,
                 gsize            n_fields,
                 gpointer         user_data)
{
  if ((log_level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) == 0)
    return G_LOG_WRITER_HANDLED;

  g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
  abort ();
}

static void G_GNUC_UNUSED
fuzz_init (int    *argc,
           char ***argv)
{
  if (g_strcmp0 (getenv ("G_SLICE"), "always-malloc") != 0 &&
      getenv (FUZZ_REEXEC_GUARD) == NULL)
    {
      setenv ("G_SLICE", "always-malloc", 1);
      setenv (FUZZ_REEXEC_GUARD, "1", 1);
      execv ("/proc/self/exe", *argv);
      fprintf (stderr, "fuzz: cannot re-execute with G_SLICE=always-malloc; leaks of GObjects may go unseen\n");
    }

  g_log_set_writer_func (fuzz_log_writer, NULL, NULL);
  g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  /* The library's debug messages are built (and dropped by the writer). */
  g_log_set_debug_enabled (TRUE);
}

/* A failed invariant: report it and crash, so that libFuzzer keeps the
 * input. */
#define fuzz_fail(...) \
  G_STMT_START { \
    fprintf (stderr, "fuzz: %s:%d: ", __FILE__, __LINE__); \
    fprintf (stderr, __VA_ARGS__); \
    fputc ('\n', stderr); \
    abort (); \
  } G_STMT_END

#define fuzz_check(cond, ...) \
  G_STMT_START { \
    if (G_UNLIKELY (!(cond))) \
      fuzz_fail ("check failed: " #cond ": " __VA_ARGS__); \
  } G_STMT_END

/* A nul-terminated copy of the input; it stops at the first nul, as a C
 * string would. */
static char * G_GNUC_UNUSED
fuzz_strndup (const uint8_t *data,
              size_t         size)
{
  char *text = g_malloc (size + 1);

  if (size > 0)
    memcpy (text, data, size);
  text[size] = '\0';
  return text;
}

/* What every failure must satisfy, whatever it was made from. */
static void G_GNUC_UNUSED
fuzz_check_failure (MendFailure *failure)
{
  const char *message;

  fuzz_check (MEND_IS_FAILURE (failure), "no failure");

  message = mend_failure_get_message (failure);
  fuzz_check (message != NULL, "a failure without a message");
  fuzz_check (g_utf8_validate (message, -1, NULL), "message not UTF-8: %s", message);
  fuzz_check (strlen (message) <= MEND_FAILURE_MAX_MESSAGE_BYTES,
              "message of %zu bytes", strlen (message));
  fuzz_check (mend_reason_to_nick (mend_failure_get_reason (failure)) != NULL, "bad reason");
  fuzz_check (mend_failure_kind_to_nick (mend_failure_get_kind (failure)) != NULL, "bad kind");
  fuzz_check (mend_failure_get_retry_after_ms (failure) >= -1, "retry-after-ms %" G_GINT64_FORMAT,
              mend_failure_get_retry_after_ms (failure));
  {
    const char *type = mend_failure_get_api_error_type (failure);

    fuzz_check (type == NULL || g_utf8_validate (type, -1, NULL), "api-error-type not UTF-8");
  }
  mend_failure_get_should_retry (failure, NULL);
  mend_failure_get_status (failure);
  mend_failure_get_error (failure);
}

/* Runs a failure through a policy as a turn would. */
static void G_GNUC_UNUSED
fuzz_classify (MendErrorPolicy *policy,
               MendFailure     *failure)
{
  gboolean server_hint = FALSE;
  gint64 hint = mend_failure_get_retry_after_ms (failure);
  gint64 delay;

  fuzz_check (mend_failure_kind_to_nick (mend_error_policy_classify (policy, failure)) != NULL,
              "bad verdict");

  delay = mend_error_policy_delay_for (policy, 1, failure, &server_hint);
  if (hint > (gint64) mend_error_policy_get_retry_after_max_ms (policy))
    fuzz_check (delay == -1 && server_hint, "a hint of %" G_GINT64_FORMAT " ms over the policy's "
                "retry-after-max-ms gave %" G_GINT64_FORMAT, hint, delay);
  else
    fuzz_check (delay >= 0, "delay %" G_GINT64_FORMAT " for hint %" G_GINT64_FORMAT, delay, hint);
}
