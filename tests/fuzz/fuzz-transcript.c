/* fuzz-transcript.c: a conversation's JSON, and the answers it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The input, as a C string, is read three ways. Checked besides crashes
 * and leaks:
 * - mend_transcript_load_json () into a small transcript (6 messages,
 *   2 KiB): a refused text changes nothing; an accepted one is within the
 *   bounds (or one turn), and writes JSON that loads again to the same;
 * - as a sender's saved state (mend_sender_restore_state ()): a refused
 *   state changes nothing; a restored one saves and restores again, the
 *   same;
 * - one Messages stream event per line, put together as MendHttpSender
 *   does (the first line, whatever its bytes, is also the turn's prompt),
 *   and then the whole text as a JSON answer; each answer is committed by
 *   a turn that succeeds: the text pieces join to the answer's text, and
 *   whatever the transcript kept restores into another sender.
 */

#include "fuzz-common.h"
#include "mend-test-utils.h"

#include "mend-http-answer-private.h"
#include "mend-json-private.h"
#include "mend-transcript-private.h"

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static MendTranscript *
small_transcript (void)
{
  MendTranscript *transcript = mend_transcript_new ();

  mend_transcript_set_max_messages (transcript, 6);
  mend_transcript_set_max_bytes (transcript, 2048);
  return transcript;
}

static void
check_load (const char *text)
{
  MendTranscript *transcript = small_transcript ();
  g_autofree char *before = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_transcript_load_json (transcript, "[{\"role\":\"user\",\"content\":\"before\"}]", NULL));
  before = mend_transcript_to_json (transcript);

  if (!mend_transcript_load_json (transcript, text, &error))
    {
      g_autofree char *after = mend_transcript_to_json (transcript);

      fuzz_check (error != NULL, "refused without an error");
      fuzz_check (strcmp (before, after) == 0, "a refused text changed the transcript");
    }
  else
    {
      MendTranscript *again = small_transcript ();
      g_autofree char *written = mend_transcript_to_json (transcript);
      g_autofree char *rewritten = NULL;
      g_autoptr(GError) again_error = NULL;

      if (!mend_transcript_load_json (again, written, &again_error))
        fuzz_fail ("what it wrote does not load (%s): %s", again_error->message, written);
      rewritten = mend_transcript_to_json (again);
      fuzz_check (strcmp (written, rewritten) == 0, "%s\n%s", written, rewritten);
      g_assert_finalize_object (again);

      /* Past a bound, only the newest turn is left. */
      if (mend_transcript_get_n_messages (transcript) > 6 || strlen (written) > 2048)
        {
          guint n = mend_transcript_get_n_messages (transcript);

          mend_transcript_trim (transcript, 1);
          fuzz_check (mend_transcript_get_n_messages (transcript) == n, "past the bounds: %s", written);
        }
    }

  g_assert_finalize_object (transcript);
}

/* The sender's state of @transcript restores into a new sender, the same. */
static void
check_restores (MendTranscript *transcript)
{
  g_autofree char *state = mend_transcript_save (transcript);
  MendTranscript *other = mend_transcript_new ();
  g_autofree char *saved_again = NULL;
  g_autoptr(GError) error = NULL;

  if (!mend_transcript_restore (other, state, &error))
    fuzz_fail ("a saved transcript does not restore (%s): %s", error->message, state);
  saved_again = mend_transcript_save (other);
  fuzz_check (strcmp (state, saved_again) == 0, "%s\n%s", state, saved_again);
  g_assert_finalize_object (other);
}

static void
check_state (const char *text)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autofree char *before = mend_sender_save_state (MEND_SENDER (sender));
  g_autoptr(GError) error = NULL;

  if (!mend_sender_restore_state (MEND_SENDER (sender), text, &error))
    {
      g_autofree char *after = mend_sender_save_state (MEND_SENDER (sender));

      fuzz_check (error != NULL, "refused without an error");
      fuzz_check (strcmp (before, after) == 0, "a refused state changed the sender");
    }
  else
    check_restores (mend_http_sender_get_transcript (sender));

  g_assert_finalize_object (sender);
}

/* A turn on @transcript with @prompt (any bytes) that succeeds with
 * @answer's content. */
static void
commit (MendTranscript  *transcript,
        MendErrorPolicy *policy,
        const char      *prompt,
        MendHttpAnswer  *answer)
{
  MendTurn *turn = mend_turn_new (prompt, policy);
  g_autoptr(MendTranscriptRequest) request = mend_transcript_request_for (transcript, turn, TRUE);
  g_autoptr(JsonNode) content = mend_http_answer_dup_content (answer);

  mend_test_run_by_hand (turn);
  fuzz_check (request != NULL && mend_transcript_request_get_n_entries (request) > 0, "no messages to send");
  mend_turn_start (turn, NULL);
  mend_transcript_answered (transcript, turn, content);
  mend_turn_succeed (turn);
  g_assert_finalize_object (turn);
}

static void
check_answers (const char *text)
{
  g_autoptr(MendHttpAnswer) streamed = mend_http_answer_new ();
  g_autoptr(MendHttpAnswer) whole = mend_http_answer_new ();
  g_autoptr(JsonNode) root = NULL;
  g_auto(GStrv) lines = g_strsplit (text, "\n", 64);
  g_autoptr(GString) pieces = g_string_new (NULL);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendTranscript *transcript = mend_transcript_new ();

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) event = mend_json_parse (lines[i], -1, NULL);
      const char *piece;

      if (event == NULL || !JSON_NODE_HOLDS_OBJECT (event))
        continue;
      mend_http_answer_feed_event (streamed, json_node_get_object (event), &piece);
      if (piece != NULL)
        g_string_append (pieces, piece);
    }
  fuzz_check (strcmp (pieces->str, mend_http_answer_get_text (streamed)) == 0,
              "pieces “%s”, text “%s”", pieces->str, mend_http_answer_get_text (streamed));
  commit (transcript, policy, lines[0] != NULL ? lines[0] : "", streamed);

  root = mend_json_parse (text, -1, NULL);
  if (root != NULL && mend_http_answer_read_message (whole, root))
    commit (transcript, policy, "fuzz", whole);

  check_restores (transcript);
  g_assert_finalize_object (transcript);
  g_assert_finalize_object (policy);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = fuzz_strndup (data, size);

  check_load (text);
  check_state (text);
  check_answers (text);

  return 0;
}
