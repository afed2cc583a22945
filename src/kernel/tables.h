/* Private: the coefficients of the kernel integrators (src/kernel/), one
 * table per method, from the methods' papers. The steppers (ros.c,
 * erk.c) read only these, so a method is one table. */
#ifndef OT_SRC_KERNEL_TABLES_H
#define OT_SRC_KERNEL_TABLES_H

#include "odetensor/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tables' layout is the public kernel layer's (odetensor/kernel.h),
 * which compiled models build against. */
#define OT__ROS_MAX_STAGES OT_KERNEL_ROS_MAX_STAGES
#define OT__ERK_MAX_STAGES OT_KERNEL_ERK_MAX_STAGES
typedef ot_kernel_ros_table ot__ros_table;
typedef ot_kernel_erk_table ot__erk_table;

/* The methods (ros_tables.c, erk_tables.c). */
extern const ot__ros_table ot__kernel_rodas4; /* Hairer & Wanner, RODAS: 6 stages, 4(3) */
extern const ot__ros_table ot__kernel_rodas5p; /* Steinebach 2023: 8 stages, 5(4) */
extern const ot__ros_table
    ot__kernel_ros23; /* Shampine & Reichelt (ode23s): 3 stages, 2(3) */
extern const ot__erk_table ot__kernel_tsit5; /* Tsitouras 2011: 7 stages FSAL, 5(4) */
extern const ot__erk_table
    ot__kernel_vern7; /* Verner's efficient 7(6): 10 stages + 6 for dense */

/* Method's table into *ros or *erk (the other NULL): the one place a
 * kernel method names its coefficients (ros_tables.c). method is a kernel
 * method (the planner's row chose it). */
void ot__kernel_tables(int method, const ot__ros_table **ros, const ot__erk_table **erk);

#ifdef __cplusplus
}
#endif

#endif
