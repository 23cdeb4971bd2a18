/* libmend.h — the one header apps include
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define MEND_INSIDE
# include "mend-version.h"
# include "mend-version-macros.h"
# include "mend-features.h"
# include "mend-types.h"
# include "mend-error.h"
# include "mend-enums.h"
# include "mend-enum-types.h"
# include "mend-clock.h"
# include "mend-manual-clock.h"
# include "mend-failure.h"
# include "mend-verdict.h"
# include "mend-gate.h"
# include "mend-error-policy.h"
# include "mend-retry-wait.h"
# include "mend-queue-item.h"
# include "mend-queue.h"
# include "mend-sender.h"
# include "mend-transcript.h"
# include "mend-http-sender.h"
# include "mend-turn.h"
# include "mend-chat.h"
# include "mend-subagent.h"
# include "mend-subagent-retry.h"
# include "mend-stream-observer.h"
# if MEND_HAS_AGENTS
#  include "mend-agent.h"
#  include "mend-agent-process.h"
# endif
# if MEND_HAS_ACP
#  include "mend-acp-profile.h"
#  include "mend-acp-agent.h"
# endif
#undef MEND_INSIDE

G_END_DECLS
