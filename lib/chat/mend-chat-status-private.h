/* mend-chat-status-private.h — MendChat:status-text, one sentence for the chat's state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-failure.h"
#include "mend-retry-wait.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* What the chat shows, as far as the sentence goes. */
typedef struct
{
  gboolean       closed;
  MendTurn      *turn;          /* the turn that runs or waits, or NULL */
  gboolean       wait_shown;    /* its last wait is one to show */
  gboolean       gave_up;       /* no turn: the last one gave up */
  MendFailure   *failure;       /* what it gave up on */
  guint          retries;       /* the retries it made first */
  gint64         now_us;        /* the chat's wall time */
} MendChatStatusInput;

/* The sentence for @input: a new string, or NULL to keep the one shown
 * (a quick retry, which does not flash). */
char *mend_chat_status_compose (const MendChatStatusInput *input);

G_END_DECLS
