/* mend-test-bounds.c — AddressSanitizer's bounds on the memory of the tests that attack it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Under AddressSanitizer the address space is mostly shadow, so that
 * mend_test_limit_memory () bounds nothing: the bound is ASan's own, an
 * allocation over 256 MB, or 1 GB in use, ends the process with a report.
 * Linked whole into the tests that need it (see tests/support/meson.build): ASan
 * looks the options up, nothing else refers to them.
 */

#include "mend-test-bounds.h"

#ifdef MEND_TEST_ASAN
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "max_allocation_size_mb=256:malloc_limit_mb=1024:allocator_may_return_null=0";
}
#endif
