// CUDA C++ twin of examples/grid_sync, for the timing comparison: the same one-launch
// reduction (u32 in, u64 sum; grid-stride partial sums, a shared-memory tree per block,
// grid.sync() from cooperative groups, then block 0 sums the partials), launched with
// cudaLaunchCooperativeKernel on as many blocks of 256 as are resident at once.
//
//   nvcc -O3 -arch=sm_90 -o grid_sync-nvcc examples/grid_sync/grid_sync.cu
//   ./grid_sync-nvcc [N]                                       (default 2^24)
//
// Prints PASS|FAIL against the CPU's exact sum, then
//   TIME sum_grid nvcc: median M ms, G GB/s (n = N, B blocks)
// (the Rust host's TIME line): the median of 21 launches after 3, CUDA events.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

constexpr unsigned BLOCK = 256;

__device__ unsigned long long block_sum(unsigned long long* tile, unsigned t, unsigned long long v) {
    tile[t] = v;
    __syncthreads();
    for (unsigned half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half) tile[t] += tile[t + half];
        __syncthreads();
    }
    unsigned long long s = tile[0];
    __syncthreads();
    return s;
}

__global__ void sum_grid(const unsigned* in, size_t n, unsigned long long* partials,
                         unsigned long long* total) {
    __shared__ unsigned long long tile[BLOCK];
    cg::grid_group grid = cg::this_grid();
    unsigned t = threadIdx.x, b = blockIdx.x, blocks = gridDim.x;
    unsigned long long acc = 0;
    for (size_t i = (size_t)b * BLOCK + t; i < n; i += (size_t)blocks * BLOCK) acc += in[i];
    unsigned long long s = block_sum(tile, t, acc);
    if (t == 0) partials[b] = s;
    grid.sync();
    if (b == 0) {
        unsigned long long a = 0;
        for (unsigned k = t; k < blocks; k += BLOCK) a += partials[k];
        unsigned long long s2 = block_sum(tile, t, a);
        if (t == 0) *total = s2;
    }
}

int main(int argc, char** argv) {
    size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)1 << 24;
    std::mt19937 rng(1);
    std::uniform_int_distribution<unsigned> u(0, (1u << 20) - 1);
    std::vector<unsigned> in(n);
    unsigned long long want = 0;
    for (auto& x : in) want += (x = u(rng));
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_grid, BLOCK, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned blocks = (unsigned)std::min<size_t>((size_t)per_sm * sms, (n + BLOCK - 1) / BLOCK);
    unsigned* d_in;
    unsigned long long *d_partials, *d_total;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_partials, blocks * 8));
    CHECK(cudaMalloc(&d_total, 8));
    CHECK(cudaMemcpy(d_in, in.data(), n * 4, cudaMemcpyHostToDevice));
    void* args[] = {&d_in, &n, &d_partials, &d_total};
    auto launch = [&] {
        CHECK(cudaLaunchCooperativeKernel((void*)sum_grid, blocks, BLOCK, args, 0, 0));
    };
    launch();
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, d_total, 8, cudaMemcpyDeviceToHost));
    bool pass = got == want;
    printf("%s sum_grid nvcc: %llu, want %llu (n = %zu, %u blocks)\n", pass ? "PASS" : "FAIL", got, want, n, blocks);
    cudaEvent_t a, e;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&e));
    for (int i = 0; i < 3; i++) launch();
    std::vector<float> t;
    for (int i = 0; i < 21; i++) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(e));
        CHECK(cudaEventSynchronize(e));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, e));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    float ms = t[t.size() / 2];
    printf("TIME sum_grid nvcc: median %.4f ms, %.1f GB/s (n = %zu, %u blocks)\n", ms, n * 4.0 / ms / 1e6, n, blocks);
    return pass ? 0 : 1;
}
