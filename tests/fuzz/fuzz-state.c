/* fuzz-state.c: saved chat state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The input, as a C string, is restored into a new chat on a manual clock.
 * Checked besides crashes and leaks:
 * - a refused state changes nothing: the chat saves as it did before;
 * - a restored chat saves a state that restores again, into another chat,
 *   and its waits fire without harm when time runs on.
 */

#include "fuzz-common.h"
#include "mend-test-utils.h"

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static MendChat *
new_chat (MendClock *clock)
{
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "id", "fuzz", "clock", clock, NULL);

  /* Restored turns run by hand: nothing ends them here, as in an app's
   * chat between their attempts. */
  mend_test_run_turns_by_hand (chat);
  return chat;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = fuzz_strndup (data, size);
  MendClock *clock = mend_manual_clock_new (1764500000000000);
  MendChat *chat = new_chat (clock);
  g_autofree char *before = mend_chat_save_state (chat);
  g_autoptr(GError) error = NULL;

  if (!mend_chat_restore_state (chat, text, &error))
    {
      g_autofree char *after = mend_chat_save_state (chat);

      fuzz_check (error != NULL, "refused without an error");
      fuzz_check (strcmp (before, after) == 0, "a refused state changed the chat:\n%s\n%s", before, after);
    }
  else
    {
      g_autofree char *saved = mend_chat_save_state (chat);
      MendChat *again = new_chat (clock);
      g_autoptr(GError) again_error = NULL;

      if (!mend_chat_restore_state (again, saved, &again_error))
        fuzz_fail ("a saved state does not restore (%s): %s", again_error->message, saved);

      /* Let every restored wait fire, into chats that take what comes. */
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 4 * 3600 * 1000);
      mend_chat_close (again);
      g_assert_finalize_object (again);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  return 0;
}
