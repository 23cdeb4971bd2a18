/* mend-subagent-list.c — the list model of a chat's subagents, and its one notification path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The subagents of a chat as a list: entries in order, indexes by id and
 * by agent id, and the announcements a list view binds to. Membership is
 * told by items-changed, once per add or removal; a subagent's own
 * changes by its property notifications.
 */

#include "config.h"

#include <string.h>

#include "mend-subagent-list-private.h"
#include "mend-subagent-private.h"
#include "mend-subagent-retry.h"

MendSubagentEntry *
mend_subagent_entry_ref (MendSubagentEntry *entry)
{
  entry->ref_count++;
  return entry;
}

void
mend_subagent_entry_unref (MendSubagentEntry *entry)
{
  MendRetryWait *wait;

  g_assert (entry->ref_count > 0);
  if (--entry->ref_count > 0)
    return;

  wait = mend_subagent_get_retry (entry->subagent);
  if (wait != NULL)
    g_signal_handlers_disconnect_by_data (wait, entry);
  g_clear_object (&entry->prompt_turn);
  g_clear_object (&entry->prompt_item);
  g_clear_pointer (&entry->prompt_id, g_free);
  g_clear_object (&entry->subagent);
  g_free (entry);
}

/* The list lets go of an entry: its subagent, which an app may hold on
 * to, no longer speaks for it. */
static void
entry_release (MendSubagentEntry *entry)
{
  entry->gone = TRUE;
  mend_subagent_entry_unref (entry);
}

void
mend_subagent_list_init (MendSubagentList *list,
                         GObject          *model)
{
  list->model = model;
  list->entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_release);
  /* The indexes are made with the first subagent: most chats have none. */
}

void
mend_subagent_list_clear (MendSubagentList *list)
{
  g_clear_pointer (&list->by_id, g_hash_table_unref);
  g_clear_pointer (&list->by_agent_id, g_hash_table_unref);
  g_clear_pointer (&list->entries, g_ptr_array_unref);
}

guint
mend_subagent_list_get_n_items (MendSubagentList *list)
{
  return list->entries->len;
}

MendSubagentEntry *
mend_subagent_list_get (MendSubagentList *list,
                        guint             position)
{
  if (position >= list->entries->len)
    return NULL;

  return g_ptr_array_index (list->entries, position);
}

static void
index_entry (GHashTable        *index,
             const char        *key,
             MendSubagentEntry *entry)
{
  /* The first entry with a key is the one found, as a scan in list order
   * would find it. */
  if (key != NULL && !g_hash_table_contains (index, key))
    g_hash_table_insert (index, g_strdup (key), entry);
}

static void
unindex_entry (MendSubagentList  *list,
               GHashTable        *index,
               const char        *key,
               MendSubagentEntry *entry)
{
  if (key == NULL || g_hash_table_lookup (index, key) != entry)
    return;

  g_hash_table_remove (index, key);
  /* Rarely another entry shares the key: it is found from now on. */
  for (guint i = 0; i < list->entries->len; i++)
    {
      MendSubagentEntry *other = g_ptr_array_index (list->entries, i);

      if (other != entry &&
          g_strcmp0 (index == list->by_id ? mend_subagent_get_id (other->subagent)
                                          : mend_subagent_get_agent_id (other->subagent), key) == 0)
        {
          g_hash_table_insert (index, g_strdup (key), other);
          break;
        }
    }
}

MendSubagentEntry *
mend_subagent_list_add (MendSubagentList *list,
                        gpointer          owner,
                        const char       *id,
                        const char       *agent_id,
                        const char       *name)
{
  MendSubagentEntry *entry = g_new0 (MendSubagentEntry, 1);
  g_autoptr(GObject) model = g_object_ref (list->model);
  g_autofree char *kept = NULL;

  if (name != NULL && strlen (name) > MEND_SUBAGENT_MAX_NAME_BYTES)
    {
      const char *end = name + MEND_SUBAGENT_MAX_NAME_BYTES;

      g_utf8_validate (name, MEND_SUBAGENT_MAX_NAME_BYTES, &end);
      kept = g_strndup (name, end - name);
      name = kept;
    }

  entry->ref_count = 1;
  entry->owner = owner;
  entry->list = list;
  entry->subagent = mend_subagent_new (id, agent_id, name);
  g_ptr_array_add (list->entries, mend_subagent_entry_ref (entry));
  if (list->by_id == NULL)
    {
      list->by_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      list->by_agent_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    }
  index_entry (list->by_id, id, entry);
  index_entry (list->by_agent_id, agent_id, entry);

  g_list_model_items_changed (G_LIST_MODEL (model), list->entries->len - 1, 0, 1);

  return entry;
}

void
mend_subagent_list_remove (MendSubagentList  *list,
                           MendSubagentEntry *entry)
{
  g_autoptr(GObject) model = NULL;
  guint position;

  if (entry->gone || !g_ptr_array_find (list->entries, entry, &position))
    return;

  model = g_object_ref (list->model);
  mend_subagent_entry_ref (entry);
  g_ptr_array_remove_index (list->entries, position);
  unindex_entry (list, list->by_id, mend_subagent_get_id (entry->subagent), entry);
  unindex_entry (list, list->by_agent_id, mend_subagent_get_agent_id (entry->subagent), entry);
  g_list_model_items_changed (G_LIST_MODEL (model), position, 1, 0);
  mend_subagent_entry_unref (entry);
}

MendSubagentEntry *
mend_subagent_list_find_by_id (MendSubagentList *list,
                               const char       *id)
{
  return id != NULL && list->by_id != NULL ? g_hash_table_lookup (list->by_id, id) : NULL;
}

MendSubagentEntry *
mend_subagent_list_find_by_agent_id (MendSubagentList *list,
                                     const char       *agent_id)
{
  return agent_id != NULL && list->by_agent_id != NULL ? g_hash_table_lookup (list->by_agent_id, agent_id) : NULL;
}

MendSubagentEntry *
mend_subagent_list_find (MendSubagentList *list,
                         const char       *id)
{
  MendSubagentEntry *entry = mend_subagent_list_find_by_id (list, id);

  return entry ? entry : mend_subagent_list_find_by_agent_id (list, id);
}

GPtrArray *
mend_subagent_list_snapshot (MendSubagentList *list)
{
  GPtrArray *copy = g_ptr_array_new_full (list->entries->len, (GDestroyNotify) mend_subagent_entry_unref);

  for (guint i = 0; i < list->entries->len; i++)
    g_ptr_array_add (copy, mend_subagent_entry_ref (g_ptr_array_index (list->entries, i)));

  return copy;
}
