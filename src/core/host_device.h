/* Private: OT__HD marks a static inline function that host code and CUDA
 * kernels both call (nvcc compiles it __host__ __device__). */
#ifndef OT_SRC_CORE_HOST_DEVICE_H
#define OT_SRC_CORE_HOST_DEVICE_H

#ifdef __CUDACC__
#define OT__HD __host__ __device__
#else
#define OT__HD
#endif

#endif
