// CUDA C++ references for the Rust benchmark kernels: the same algorithm,
// launch shape and memory access pattern as benches/gpu/kernels/src/lib.rs.
// Built on the GPU machine with `nvcc -O3 -arch=sm_90 -ptx` and launched by
// the same Rust host program, so both sides share one timing path.
#include <cstdint>
#include <cuda.h>
#include <cooperative_groups.h>

#define REF extern "C" __global__

// c[i] = a[i] + b[i]; 16-byte loads, grid-stride over float4s, scalar tail.
REF void vecadd_ref(const float* __restrict__ a, const float* __restrict__ b,
                    float* __restrict__ c, unsigned long long n) {
    unsigned long long n4 = n / 4;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 x = a4[i], y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (unsigned long long i = n4 * 4 + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}

// y[i] = alpha * x[i] + y[i]; same shape as vecadd.
REF void saxpy_ref(float alpha, const float* __restrict__ x, float* __restrict__ y, unsigned long long n) {
    unsigned long long n4 = n / 4;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 u = x4[i], v = y4[i];
        y4[i] = make_float4(fmaf(alpha, u.x, v.x), fmaf(alpha, u.y, v.y), fmaf(alpha, u.z, v.z), fmaf(alpha, u.w, v.w));
    }
    for (unsigned long long i = n4 * 4 + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaf(alpha, x[i], y[i]);
}

// y = alpha * x through shared memory with bulk copies (sm_90), as the Rust
// bulk_scale: 256 threads per block, 4 KiB tiles (256 float4s) k * grid +
// block, a 3-stage ring of shared buffers each filled by one cp.async.bulk
// completing on its mbarrier; thread 0 refills a stage after __syncthreads.
// Assumes x and y share their 16-byte alignment (cudaMalloc'd: both 0).
#define BULK_TB 256
#define BULK_STAGES 3
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
REF void bulk_scale_ref(float alpha, const float* __restrict__ x, float* __restrict__ y, unsigned long long n) {
    __shared__ __align__(128) float4 stages[BULK_TB * BULK_STAGES];
    __shared__ __align__(8) unsigned long long full[BULK_STAGES];
    unsigned tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < BULK_STAGES; s++)
            asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    unsigned long long nvec = n / 4;
    unsigned long long step = (unsigned long long)gridDim.x * BULK_TB;
    unsigned long long first = (unsigned long long)blockIdx.x * BULK_TB;
    unsigned long long tiles = first < nvec ? (nvec - first + step - 1) / step : 0;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    auto issue = [&](unsigned long long k) {
        unsigned s = k % BULK_STAGES;
        unsigned long long start = first + k * step;
        unsigned long long len = nvec - start < BULK_TB ? nvec - start : BULK_TB;
        unsigned bytes = (unsigned)(len * 16), bar = smem_addr(&full[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_addr(&stages[s * BULK_TB])), "l"(x4 + start), "r"(bytes), "r"(bar) : "memory");
    };
    if (tid == 0)
        for (unsigned long long k = 0; k < tiles && k < BULK_STAGES; k++) issue(k);
    unsigned phases = 0;
    for (unsigned long long k = 0; k < tiles; k++) {
        unsigned s = k % BULK_STAGES;
        unsigned bar = smem_addr(&full[s]), parity = (phases >> s) & 1, done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        phases ^= 1u << s;
        unsigned long long i = first + k * step + tid;
        if (i < nvec) {
            float4 v = stages[s * BULK_TB + tid];
            y4[i] = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
        }
        __syncthreads();
        if (tid == 0 && k + BULK_STAGES < tiles) issue(k + BULK_STAGES);
    }
    unsigned long long g = blockIdx.x * (unsigned long long)blockDim.x + tid;
    for (unsigned long long i = nvec * 4 + g; i < n; i += step) y[i] = alpha * x[i];
}

// out = in^T with tensor copies, as the Rust transpose_tma: one 64 x 64 box per block
// (16 KiB each way), 32 x 8 threads, element (row (l + k) % 64, column l + 32 h) per
// lane l, for h in 0..2 and k = w, w + 8, ...; load on one mbarrier, one bulk group
// for the store.
// Two entry points: the maps in global memory (as the Rust kernel takes them) and
// by value as __grid_constant__ parameters (CUDA C++'s usual form), to measure what
// keeping the map in global memory costs.
__device__ __forceinline__ void transpose_tma_body(const void* in_map, const void* out_map) {
    __shared__ __align__(128) float a[4096];
    __shared__ __align__(128) float b[4096];
    __shared__ __align__(8) unsigned long long bar;
    unsigned lane = threadIdx.x, warp = threadIdx.y;
    bool leader = lane == 0 && warp == 0;
    unsigned bar_a = smem_addr(&bar);
    if (leader) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(bar_a));
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    int bx = 64 * blockIdx.x, by = 64 * blockIdx.y;
    if (leader) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16384;" :: "r"(bar_a) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(smem_addr(a)), "l"(in_map), "r"(bx), "r"(by), "r"(bar_a) : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar_a) : "memory");
#pragma unroll
    for (unsigned h = 0; h < 2; h++) {
        unsigned c = lane + 32 * h;
#pragma unroll
        for (unsigned k = warp; k < 64; k += 8) {
            unsigned r = (lane + k) % 64;
            b[c * 64 + r] = a[r * 64 + c];
        }
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (leader) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(out_map), "r"(by), "r"(bx), "r"(smem_addr(b)) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
REF void transpose_tma_ref(const CUtensorMap* in_map, const CUtensorMap* out_map) {
    transpose_tma_body(in_map, out_map);
}
REF void transpose_tma_param_ref(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map) {
    transpose_tma_body(&in_map, &out_map);
}

// The 65,536-bin histograms of u16 values (bins added to; the host zeroes them), as
// the Rust kernels: 16-byte loads of eight values, the unaligned head and tail one by
// one. The 128 KiB of bins per block are dynamic shared memory here (C++ caps static
// shared memory at 48 KiB): launch with 131072 bytes and the attribute that allows it.
template <typename F>
__device__ __forceinline__ void for_each_u16(const unsigned short* data, unsigned long long n, F f) {
    unsigned long long head = ((16 - (reinterpret_cast<uintptr_t>(data) & 15)) & 15) / 2;
    if (head > n) head = n;
    unsigned long long n8 = (n - head) / 8;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    const uint4* d8 = reinterpret_cast<const uint4*>(data + head);
    for (unsigned long long i = tid; i < n8; i += stride) {
        uint4 v = d8[i];
        unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            f(w[k] & 0xffff);
            f(w[k] >> 16);
        }
    }
    for (unsigned long long i = tid; i < head; i += stride) f(data[i]);
    for (unsigned long long i = head + n8 * 8 + tid; i < n; i += stride) f(data[i]);
}

// Bins split over a cluster of two: CTA rank r holds bins 32768 r .., every value
// added in the owning CTA through distributed shared memory; the input read once.
REF void __cluster_dims__(2, 1, 1) cluster_histogram_wide_ref(const unsigned short* __restrict__ data, unsigned* __restrict__ bins, unsigned long long n) {
    namespace cg = cooperative_groups;
    extern __shared__ unsigned wide_local[];
    cg::cluster_group cluster = cg::this_cluster();
    for (unsigned b = threadIdx.x; b < 32768; b += blockDim.x) wide_local[b] = 0;
    cluster.sync();
    unsigned* low = cluster.map_shared_rank(wide_local, 0);
    unsigned* high = cluster.map_shared_rank(wide_local, 1);
    for_each_u16(data, n, [&](unsigned v) { atomicAdd((v < 32768 ? low : high) + (v & 32767), 1u); });
    cluster.sync();
    unsigned base = cluster.block_rank() * 32768;
    for (unsigned b = threadIdx.x; b < 32768; b += blockDim.x)
        if (wide_local[b]) atomicAdd(bins + base + b, wide_local[b]);
}

// Without clusters: two passes, each counting one half of the bins in the block's
// shared memory over its grid-stride share of the input (the input read twice).
REF void histogram_wide_halves_ref(const unsigned short* __restrict__ data, unsigned* __restrict__ bins, unsigned long long n) {
    extern __shared__ unsigned wide_local[];
    for (unsigned half = 0; half < 2; half++) {
        for (unsigned b = threadIdx.x; b < 32768; b += blockDim.x) wide_local[b] = 0;
        __syncthreads();
        for_each_u16(data, n, [&](unsigned v) { if ((v >> 15) == half) atomicAdd(wide_local + (v & 32767), 1u); });
        __syncthreads();
        for (unsigned b = threadIdx.x; b < 32768; b += blockDim.x)
            if (wide_local[b]) atomicAdd(bins + half * 32768 + b, wide_local[b]);
        __syncthreads();
    }
}

// Straight into global memory: one atomicAdd per value.
REF void histogram_wide_global_ref(const unsigned short* __restrict__ data, unsigned* __restrict__ bins, unsigned long long n) {
    for_each_u16(data, n, [&](unsigned v) { atomicAdd(bins + v, 1u); });
}

// Sum of x into *out (zeroed by the host): grid-stride float4 loads, warp
// shuffles, one shared slot per warp, one atomicAdd per block.
REF void reduce_sum_ref(const float* __restrict__ x, float* __restrict__ out, unsigned long long n) {
    __shared__ float warp_sums[32];
    unsigned long long n4 = n / 4;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float acc = 0.0f;
    for (unsigned long long i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    for (unsigned long long i = n4 * 4 + tid; i < n; i += stride) acc += x[i];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (lane == 0) atomicAdd(out, acc);
    }
}

// out = in^T for an n x n matrix (n a multiple of 32): 32x32 tile padded to
// 33 columns, 32x8 threads, each thread moves 4 elements.
REF void transpose_ref(const float* __restrict__ in, float* __restrict__ out, unsigned n) {
    __shared__ float tile[32][33];
    unsigned x = blockIdx.x * 32 + threadIdx.x;
    unsigned y = blockIdx.y * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// 256-bin histogram of bytes: per-block shared bins with shared atomics,
// 16-byte loads, then one global atomicAdd per non-zero bin.
REF void histogram_ref(const unsigned char* __restrict__ data, unsigned* __restrict__ bins, unsigned long long n) {
    __shared__ unsigned local[256];
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    unsigned long long n16 = n / 16;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const uint4* d16 = reinterpret_cast<const uint4*>(data);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n16; i += stride) {
        uint4 v = d16[i];
        unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int b = 0; b < 4; ++b) atomicAdd(&local[(w[k] >> (8 * b)) & 0xff], 1u);
    }
    for (unsigned long long i = n16 * 16 + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        if (local[i]) atomicAdd(&bins[i], local[i]);
}

// Row softmax, one block of 256 threads per row of `cols` floats: the row is
// read once into dynamic shared memory while an online (max, sum) pair is
// kept per thread; the pairs are merged with warp shuffles and shared slots;
// the output is written once from shared memory.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    float mx = fmaxf(m, m2);
    if (mx == -INFINITY) { m = mx; s = 0.0f; return; }  // two empty states
    s = s * __expf(m - mx) + s2 * __expf(m2 - mx);
    m = mx;
}
// One float4's state; a warp's and a block's merge; a float4 normalised: shared by
// softmax_ref and the wide-row kernels after it.
__device__ __forceinline__ void vector_state(float4 v, float& vm, float& vs) {
    vm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    vs = __expf(v.x - vm) + __expf(v.y - vm) + __expf(v.z - vm) + __expf(v.w - vm);
}
__device__ __forceinline__ void warp_merge(float& m, float& s) {
    for (int off = 16; off > 0; off >>= 1)
        merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
}
// The block's state in every thread (1D block).
__device__ __forceinline__ void block_merge(float& m, float& s) {
    __shared__ float red_m[32], red_s[32];
    warp_merge(m, s);
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    if (lane == 0) { red_m[warp] = m; red_s[warp] = s; }
    __syncthreads();
    m = lane < warps ? red_m[lane] : -INFINITY;
    s = lane < warps ? red_s[lane] : 0.0f;
    warp_merge(m, s);
}
// Copies `c4` vectors of `src` into `kept` (shared memory) and merges their states
// into (m, s), thread by thread.
__device__ __forceinline__ void keep_and_merge(const float4* src, float4* kept, unsigned c4, float& m, float& s) {
    for (unsigned i = threadIdx.x; i < c4; i += blockDim.x) {
        float4 v = src[i];
        kept[i] = v;
        float vm, vs;
        vector_state(v, vm, vs);
        merge(m, s, vm, vs);
    }
}
__device__ __forceinline__ float4 normalised(float4 v, float m, float inv) {
    return make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv, __expf(v.z - m) * inv, __expf(v.w - m) * inv);
}

REF void softmax_ref(const float* __restrict__ in, float* __restrict__ out, unsigned cols) {
    extern __shared__ float4 row4[];
    __shared__ float red_m[32], red_s[32];
    const float4* src = reinterpret_cast<const float4*>(in + (size_t)blockIdx.x * cols);
    float4* dst = reinterpret_cast<float4*>(out + (size_t)blockIdx.x * cols);
    unsigned c4 = cols / 4;
    float m = -INFINITY, s = 0.0f;
    keep_and_merge(src, row4, c4, m, s);
    warp_merge(m, s);
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (lane == 0) { red_m[warp] = m; red_s[warp] = s; }
    __syncthreads();
    m = lane < warps ? red_m[lane] : -INFINITY;
    s = lane < warps ? red_s[lane] : 0.0f;
    warp_merge(m, s);
    float inv = 1.0f / s;
    for (unsigned i = threadIdx.x; i < c4; i += blockDim.x) dst[i] = normalised(row4[i], m, inv);
}

// Wide rows (softmax_wide.rs): each row split into `parts` parts of cols / parts
// floats, one block per part (block b: part b % parts of row b / parts).
// One row per cluster of 8 CTAs: each keeps its part in shared memory, publishes its
// state there, and merges the 8 states through distributed shared memory.
REF void __cluster_dims__(8, 1, 1) __launch_bounds__(1024) softmax_cluster_ref(const float* __restrict__ in, float* __restrict__ out, unsigned cols) {
    namespace cg = cooperative_groups;
    extern __shared__ float4 kept[];
    __shared__ float published[2];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned parts = cluster.num_blocks(), c4 = cols / 4 / parts;
    const float4* src = reinterpret_cast<const float4*>(in) + (size_t)blockIdx.x * c4;
    float4* dst = reinterpret_cast<float4*>(out) + (size_t)blockIdx.x * c4;
    float m = -INFINITY, s = 0.0f;
    keep_and_merge(src, kept, c4, m, s);
    block_merge(m, s);
    if (threadIdx.x == 0) { published[0] = m; published[1] = s; }
    cluster.sync();
    unsigned lane = threadIdx.x & 31;
    m = -INFINITY; s = 0.0f;
    if (lane < parts) {
        float* theirs = cluster.map_shared_rank(published, lane);
        m = theirs[0]; s = theirs[1];
    }
    warp_merge(m, s);
    cluster.barrier_arrive();
    float inv = 1.0f / s;
    for (unsigned i = threadIdx.x; i < c4; i += blockDim.x) dst[i] = normalised(kept[i], m, inv);
    cluster.barrier_wait();
}

// The split without a cluster, first launch: each part's state into maxes[b], sums[b].
REF void __launch_bounds__(1024) softmax_split_stats_ref(const float* __restrict__ in, float* __restrict__ maxes, float* __restrict__ sums, unsigned cols, unsigned parts) {
    unsigned c4 = cols / 4 / parts;
    const float4* src = reinterpret_cast<const float4*>(in) + (size_t)blockIdx.x * c4;
    float m = -INFINITY, s = 0.0f;
    for (unsigned i = threadIdx.x; i < c4; i += blockDim.x) {
        float vm, vs;
        vector_state(src[i], vm, vs);
        merge(m, s, vm, vs);
    }
    block_merge(m, s);
    if (threadIdx.x == 0) { maxes[blockIdx.x] = m; sums[blockIdx.x] = s; }
}

// Second launch: merge the row's states, read the part again, write it normalised.
REF void __launch_bounds__(1024) softmax_split_finish_ref(const float* __restrict__ in, const float* __restrict__ maxes, const float* __restrict__ sums, float* __restrict__ out, unsigned cols, unsigned parts) {
    unsigned c4 = cols / 4 / parts, first = blockIdx.x / parts * parts, lane = threadIdx.x & 31;
    const float4* src = reinterpret_cast<const float4*>(in) + (size_t)blockIdx.x * c4;
    float4* dst = reinterpret_cast<float4*>(out) + (size_t)blockIdx.x * c4;
    float m = lane < parts ? maxes[first + lane] : -INFINITY;
    float s = lane < parts ? sums[first + lane] : 0.0f;
    warp_merge(m, s);
    float inv = 1.0f / s;
    for (unsigned i = threadIdx.x; i < c4; i += blockDim.x) dst[i] = normalised(src[i], m, inv);
}

// C = A * B, row-major n x n (n a multiple of 128): 128x128 block tile,
// BK = 8, 256 threads each computing an 8x8 register tile; A is stored
// transposed in shared memory so both operands are read as float4. Two
// shared buffers: the next tile's global loads are issued before the current
// tile's math and stored to the other buffer after it, one barrier per step.
REF void __launch_bounds__(256) sgemm_ref(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, unsigned n) {
    __shared__ __align__(16) float As[2][8][128];
    __shared__ __align__(16) float Bs[2][8][128];
    unsigned tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const float* a = A + (size_t)blockIdx.y * 128 * n;
    const float* b = B + blockIdx.x * 128;
    float acc[8][8] = {};
    unsigned ar = threadIdx.x / 2, ac = (threadIdx.x % 2) * 4;
    unsigned br = threadIdx.x / 32, bc = (threadIdx.x % 32) * 4;
    float4 av = *reinterpret_cast<const float4*>(a + (size_t)ar * n + ac);
    float4 bv = *reinterpret_cast<const float4*>(b + (size_t)br * n + bc);
    As[0][ac + 0][ar] = av.x; As[0][ac + 1][ar] = av.y; As[0][ac + 2][ar] = av.z; As[0][ac + 3][ar] = av.w;
    *reinterpret_cast<float4*>(&Bs[0][br][bc]) = bv;
    __syncthreads();
    unsigned cur = 0;
    for (unsigned k0 = 0; k0 < n; k0 += 8) {
        bool more = k0 + 8 < n;
        if (more) {
            av = *reinterpret_cast<const float4*>(a + (size_t)ar * n + k0 + 8 + ac);
            bv = *reinterpret_cast<const float4*>(b + (size_t)(k0 + 8 + br) * n + bc);
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            float ra[8], rb[8];
            *reinterpret_cast<float4*>(&ra[0]) = *reinterpret_cast<const float4*>(&As[cur][k][ty * 4]);
            *reinterpret_cast<float4*>(&ra[4]) = *reinterpret_cast<const float4*>(&As[cur][k][ty * 4 + 64]);
            *reinterpret_cast<float4*>(&rb[0]) = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * 4]);
            *reinterpret_cast<float4*>(&rb[4]) = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * 4 + 64]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        if (more) {
            unsigned nxt = cur ^ 1;
            As[nxt][ac + 0][ar] = av.x; As[nxt][ac + 1][ar] = av.y; As[nxt][ac + 2][ar] = av.z; As[nxt][ac + 3][ar] = av.w;
            *reinterpret_cast<float4*>(&Bs[nxt][br][bc]) = bv;
        }
        __syncthreads();
        cur ^= 1;
    }
    float* c = C + (size_t)blockIdx.y * 128 * n + blockIdx.x * 128;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        unsigned row = (i < 4 ? ty * 4 + i : ty * 4 + 64 + (i - 4));
        *reinterpret_cast<float4*>(c + (size_t)row * n + tx * 4) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(c + (size_t)row * n + tx * 4 + 64) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}
