/* The allocation-failure injector (test builds only; see fault_inject.h). */
#include "core/fault_inject.h"
#include "core/test_hooks.h"

#include <stdatomic.h>

static atomic_long next_point;
static atomic_long fail_at = -1;
static atomic_int fail_sticky;
static atomic_long failed;

int ot__inject_fail(void)
{
    const long k = atomic_fetch_add(&next_point, 1);
    const long at = atomic_load(&fail_at);
    if (at < 0 || k < at || (k > at && !atomic_load(&fail_sticky)))
        return 0;
    atomic_fetch_add(&failed, 1);
    return 1;
}

void ot__inject_arm(long k, int sticky)
{
    atomic_store(&fail_at, -1);
    atomic_store(&next_point, 0);
    atomic_store(&failed, 0);
    atomic_store(&fail_sticky, sticky != 0);
    atomic_store(&fail_at, k);
}

long ot__inject_points(void) { return atomic_load(&next_point); }

long ot__inject_failed(void) { return atomic_load(&failed); }
