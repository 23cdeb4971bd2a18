/* mend-subagent-list-private.h — the list model of a chat's subagents
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "mend-queue-item.h"
#include "mend-subagent.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* One subagent of a chat and its retry under way. An entry is counted: a
 * loop that emits signals holds its entries, so that a handler that
 * forgets one (or starts one that replaces it) cannot free what the loop
 * still reads; a forgotten entry is marked gone. */
typedef struct _MendSubagentEntry MendSubagentEntry;
typedef struct _MendSubagentList  MendSubagentList;

struct _MendSubagentEntry
{
  guint          ref_count;
  gboolean       gone;           /* no longer in the list */
  MendSubagentList *list;
  gpointer       owner;          /* the MendSubagentScheduler */
  MendSubagent  *subagent;
  guint64        settled;        /* order in which it became settled */
  gboolean       held;           /* fired during the agent's own turn */
  char          *prompt_id;      /* the resume prompt out, if any */
  MendQueueItem *prompt_item;    /* that prompt, until its turn starts */
  MendTurn      *prompt_turn;    /* the turn that runs it, if started */
  gboolean       manual;         /* a person's Retry: never re-armed */
  gboolean       stopped;        /* Stop ended the automatic attempts */
  gboolean       sending;        /* its prompt's fired is being told */
  gboolean       exhausted;      /* given up on, and told so, until it runs again */
  gboolean       never_retried;  /* its last failure is one the policy never retries */
};

/* The subagents of a chat, in list order, found by id and by agent id.
 * @model announces membership (items-changed). */
struct _MendSubagentList
{
  GObject    *model;
  GPtrArray  *entries;          /* MendSubagentEntry*, in list order */
  GHashTable *by_id;            /* subagent id → entry (borrowed) */
  GHashTable *by_agent_id;      /* agent id → entry (borrowed) */
};

MendSubagentEntry *mend_subagent_entry_ref   (MendSubagentEntry *entry);
void               mend_subagent_entry_unref (MendSubagentEntry *entry);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendSubagentEntry, mend_subagent_entry_unref)

void               mend_subagent_list_init      (MendSubagentList  *list,
                                                 GObject           *model);
void               mend_subagent_list_clear     (MendSubagentList  *list);
guint              mend_subagent_list_get_n_items (MendSubagentList *list);
MendSubagentEntry *mend_subagent_list_get       (MendSubagentList  *list,
                                                 guint              position);
/* Adds an entry and returns it held: list views hear of it first, and
 * their handlers may make it gone. */
MendSubagentEntry *mend_subagent_list_add       (MendSubagentList  *list,
                                                 gpointer           owner,
                                                 const char        *id,
                                                 const char        *agent_id,
                                                 const char        *name);
/* Takes an entry out of the list, the indexes and the list model. */
void               mend_subagent_list_remove    (MendSubagentList  *list,
                                                 MendSubagentEntry *entry);
MendSubagentEntry *mend_subagent_list_find_by_id       (MendSubagentList *list,
                                                        const char       *id);
MendSubagentEntry *mend_subagent_list_find_by_agent_id (MendSubagentList *list,
                                                        const char       *agent_id);
/* By subagent id, or else by agent id. */
MendSubagentEntry *mend_subagent_list_find      (MendSubagentList  *list,
                                                 const char        *id);
/* The entries as they are now, each held: what a loop that emits walks,
 * skipping those a handler made gone. */
GPtrArray         *mend_subagent_list_snapshot  (MendSubagentList  *list);

G_END_DECLS
