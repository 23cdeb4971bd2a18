/* fuzz-json.c: the one bounded JSON parser every door goes through
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The input is given as is to mend_json_parse (), the parser behind policy
 * JSON, saved state, stream-json lines, SSE events and error bodies.
 * Checked besides crashes and leaks: whatever it accepts — comments,
 * quotes and escapes in any mix — holds no nesting deeper than
 * MEND_JSON_MAX_DEPTH and no more than MEND_JSON_MAX_VALUES values, so no
 * input can hide nesting from the scan that stands before the recursive
 * parser.
 */

#include "fuzz-common.h"

#include "mend-json-private.h"

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

/* Depth and number of values of a tree the parser built; the tree is at
 * most MEND_JSON_MAX_DEPTH deep if the scan was right, so recursing here
 * is safe exactly when the property holds. */
static void
measure (JsonNode *node,
         guint     depth,
         guint    *max_depth,
         gsize    *values)
{
  (*values)++;
  fuzz_check (depth <= MEND_JSON_MAX_DEPTH + 1, "a parsed tree is %u levels deep", depth);

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      JsonNode *member;

      *max_depth = MAX (*max_depth, depth);
      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, NULL, &member))
        measure (member, depth + 1, max_depth, values);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      *max_depth = MAX (*max_depth, depth);
      for (guint i = 0; i < json_array_get_length (array); i++)
        measure (json_array_get_element (array, i), depth + 1, max_depth, values);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  JsonNode *root;
  guint max_depth = 0;
  gsize values = 0;

  root = mend_json_parse ((const char *) data, size, &error);
  fuzz_check ((root == NULL) == (error != NULL), "a parse gave %s and %s",
              root ? "a tree" : "no tree", error ? "an error" : "no error");
  if (root == NULL)
    return 0;

  measure (root, 1, &max_depth, &values);
  fuzz_check (max_depth <= MEND_JSON_MAX_DEPTH, "accepted JSON nested %u levels deep", max_depth);
  fuzz_check (values <= MEND_JSON_MAX_VALUES, "accepted JSON with %" G_GSIZE_FORMAT " values", values);

  json_node_unref (root);
  return 0;
}
