/* TEMPORARY local placeholder (untracked): Bogacki-Shampine 3(2) in every slot, to
 * exercise the driver. */
#include "kernel/tables.h"
#define BS32(nm)                                                                         \
    {                                                                                    \
        .name = nm, .stages = 4, .order = 3, .dense_order = 1, .fsal = 1,                \
        .dense_stages = 4, .dense_degree = 1, .c = {0, 0.5, 0.75, 1},                    \
        .a = {{0}, {0.5}, {0, 0.75}, {2.0 / 9, 1.0 / 3, 4.0 / 9}},                       \
        .b = {2.0 / 9, 1.0 / 3, 4.0 / 9, 0},                                             \
        .e = {2.0 / 9 - 7.0 / 24, 1.0 / 3 - 0.25, 4.0 / 9 - 1.0 / 3, -0.125}, .bt = {    \
            {2.0 / 9},                                                                   \
            {1.0 / 3},                                                                   \
            {4.0 / 9},                                                                   \
            {0}                                                                          \
        }                                                                                \
    }
const ot__erk_table ot__kernel_tsit5 = BS32("Tsit5");
const ot__erk_table ot__kernel_vern7 = BS32("Vern7");
