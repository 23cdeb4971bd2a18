/* mend-test-bounds.h — whether the program runs under AddressSanitizer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MEND_TEST_ASAN is defined under AddressSanitizer, whose bounds on memory
 * mend-test-bounds.c sets for the tests that link it whole; elsewhere
 * mend_test_limit_memory () (mend-test-hostile-server.h) bounds it.
 */

#pragma once

#if defined(__SANITIZE_ADDRESS__)
# define MEND_TEST_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define MEND_TEST_ASAN 1
# endif
#endif
