// CUDA C++ side of node-bench (benches/gpu/host/src/bin/node_bench.rs): vecadd kernels
// whose cost as a graph node is compared with the Rust ones (issue 30, point 2).
// Built on the GPU machine: nvcc -O3 -arch=sm_90 -ptx node_reference.cu
#include "reference.cu"

// One element per thread, 64-bit index, bounds check on c only (the Rust
// vecadd_each_nocheck's algorithm).
REF void vecadd_each_ref(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// The same without __restrict__: plain (not .nc) global loads.
REF void vecadd_each_plain_ref(const float* a, const float* b, float* c,
                               unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
