/* mend-demo.h — what mend-demo.c shares with mend-demo-agent.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libmend.h>

typedef struct
{
  MendChat *chat;
  MendStreamObserver *observer;
  guint turns_done;
  guint turns_wanted;
} Demo;

void   say            (const char *format, ...) G_GNUC_PRINTF (1, 2);
void   show_wait      (MendRetryWait *wait, const char *who);
void   run_until_idle (Demo *demo);
void   connect_chat   (Demo *demo);
double get_speed      (void);

int    run_agent_demo (Demo       *demo,
                       MendClock  *clock,
                       const char *claude,
                       const char *scenario);
int    run_acp_demo   (Demo       *demo,
                       MendClock  *clock,
                       const char *adapter,
                       const char *scenario);
