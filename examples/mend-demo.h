/* mend-demo.h — what the parts of mend-demo share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libmend.h>

typedef struct
{
  MendChat *chat;
  MendStreamObserver *observer;
  GArray *ended;        /* the MendTurnState of each turn that finished, in order */
  guint scenario_start; /* where the running scenario's turns begin in @ended */
  gboolean off_script;  /* a scenario did not play as scripted */
  GString *answer;      /* the running turn's answer, from the chat's text-delta */
} Demo;

/* A scenario of the story, played by every sender. */
typedef struct
{
  const char *name;
  void (*run) (Demo *demo);
} Scenario;

void   say            (const char *format, ...) G_GNUC_PRINTF (1, 2);
void   show_wait      (MendRetryWait *wait, const char *who);
void   run_until_idle (Demo *demo);
void   connect_chat   (Demo *demo);
double get_speed      (void);
void   begin_scenario (Demo *demo);
void   clear_queue    (Demo *demo);
void   expect_turns   (Demo                *demo,
                       const char          *scenario,
                       const MendTurnState *states,
                       guint                n_states);
const char *subagent_state_label (MendSubagentState state);

/* mend-demo-story.c: the story against the embedded flaky server. */
extern const Scenario story_scenarios[];
extern const guint n_story_scenarios;
const char *story_summary (guint i);
void        story_serve   (SoupServer *server);
guint       story_requests (void);

int    run_agent_demo (Demo       *demo,
                       MendClock  *clock,
                       const char *claude,
                       const char *scenario);
int    run_acp_demo   (Demo       *demo,
                       MendClock  *clock,
                       const char *adapter,
                       const char *scenario);
