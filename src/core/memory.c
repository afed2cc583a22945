/* The memory this process may use, read from the system (and a test
 * override): the size checks of a solve and of the event records compare
 * their totals with it. */
#include "core/memory.h"

#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/test_hooks.h"

static _Thread_local uint64_t limit_override;

void ot__size_set_limit(uint64_t bytes) { limit_override = bytes; }

int ot__memory_limit_is_set(void) { return limit_override != 0; }

#ifndef __EMSCRIPTEN__
/* Physical memory in bytes (UINT64_MAX: unknown), read once: it does not
 * change while the process runs. */
static uint64_t physical_memory(void)
{
    static _Atomic uint64_t cached; /* 0: not read yet */
    uint64_t lim = cached;
    if (lim != 0)
        return lim;
    lim = UINT64_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0) {
        lim = (uint64_t)pages;
        lim = (uint64_t)psize > UINT64_MAX / lim ? UINT64_MAX : lim * (uint64_t)psize;
    }
    cached = lim;
    return lim;
}
#endif

uint64_t ot__memory_limit(const char **what)
{
#ifdef __EMSCRIPTEN__
    /* The module's memory grows to at most 2 GiB (emscripten's default
     * MAXIMUM_MEMORY): wasm32's limit, whatever the machine has. */
    const char *w = "in wasm32 memory (at most 2 GiB)";
    uint64_t lim = UINT64_C(2) << 30;
#else
    const char *w = "on this machine (physical memory)";
    uint64_t lim = physical_memory();
#endif
    struct rlimit rl; /* read at every call: a program may change them */
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < lim) {
        lim = (uint64_t)rl.rlim_cur;
        w = "allowed by RLIMIT_AS";
    }
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < lim) {
        lim = (uint64_t)rl.rlim_cur;
        w = "allowed by RLIMIT_DATA";
    }
    if (limit_override) {
        lim = limit_override;
        w = "set by the test limit";
    }
    if (what)
        *what = w;
    return lim;
}
