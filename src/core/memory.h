/* Private: the memory a solve may use. */
#ifndef OT_SRC_CORE_MEMORY_H
#define OT_SRC_CORE_MEMORY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The memory a solve may use on this thread: the test override when set,
 * else physical memory or a lower RLIMIT_AS / RLIMIT_DATA. *what (may be
 * NULL) gets which of them it is. */
uint64_t ot__memory_limit(const char **what);

/* Nonzero while a test limit is set: then even small requests are compared. */
int ot__memory_limit_is_set(void);

#ifdef __cplusplus
}
#endif

#endif
