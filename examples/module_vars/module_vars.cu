// CUDA C++ twin of examples/module_vars' filter, for the timing comparison: the same
// 9-tap filter with the edges clamped, one output per thread in blocks of 256, the
// taps in __constant__ memory (conv_const) or in a global buffer (conv_global).
//
//   nvcc -O3 -arch=sm_90 -o module_vars-nvcc examples/module_vars/module_vars.cu
//   ./module_vars-nvcc [N]                                     (default 2^24)
//
// Checks both outputs against a CPU reference in the kernels' order of fused
// multiply-adds (bit for bit), then prints
//   TIME module_vars nvcc: n = N, conv_const M ms, conv_global G ms (global/const R)
// each the median of 21 launches timed with CUDA events after 3 untimed ones, the two
// kernels one after the other (as the Rust host measures). Exit code 0 on PASS.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

constexpr int TAPS_LEN = 9;
__constant__ float TAPS[TAPS_LEN];

__device__ __forceinline__ float at(const float* in, size_t n, size_t i, int k) {
    size_t j = i + k;
    j = j < TAPS_LEN / 2 ? 0 : j - TAPS_LEN / 2;
    return in[j < n - 1 ? j : n - 1];
}

__global__ void conv_const(const float* in, float* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS_LEN; k++) acc = __fmaf_rn(TAPS[k], at(in, n, i, k), acc);
    out[i] = acc;
}

__global__ void conv_global(const float* in, const float* taps, float* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS_LEN; k++) acc = __fmaf_rn(taps[k], at(in, n, i, k), acc);
    out[i] = acc;
}

template <class F>
static float median_ms(F launch) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) launch();
    std::vector<float> t;
    for (int i = 0; i < 21; i++) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char** argv) {
    size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)1 << 24;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> in(n), taps(TAPS_LEN), want(n), got(n);
    for (auto& x : in) x = u(rng);
    for (auto& x : taps) x = u(rng);
    for (size_t i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS_LEN; k++) {
            size_t j = i + k;
            j = j < TAPS_LEN / 2 ? 0 : j - TAPS_LEN / 2;
            acc = std::fmaf(taps[k], in[std::min(j, n - 1)], acc);
        }
        want[i] = acc;
    }
    float *d_in, *d_taps, *d_out;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_taps, TAPS_LEN * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    CHECK(cudaMemcpy(d_in, in.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_taps, taps.data(), TAPS_LEN * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(TAPS, taps.data(), TAPS_LEN * 4));
    unsigned grid = (unsigned)((n + 255) / 256);
    auto run_const = [&] { conv_const<<<grid, 256>>>(d_in, d_out, n); };
    auto run_global = [&] { conv_global<<<grid, 256>>>(d_in, d_taps, d_out, n); };
    bool pass = true;
    for (auto run : {0, 1}) {
        CHECK(cudaMemset(d_out, 0xff, n * 4));
        if (run == 0) run_const(); else run_global();
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += got[i] != want[i];
        printf("%s module_vars nvcc %s: %zu of %zu differ\n", bad ? "FAIL" : "PASS",
               run == 0 ? "conv_const" : "conv_global", bad, n);
        pass &= bad == 0;
    }
    float c = median_ms(run_const), g = median_ms(run_global);
    printf("TIME module_vars nvcc: n = %zu, conv_const %.4f ms, conv_global %.4f ms (global/const %.2f)\n",
           n, c, g, g / c);
    return pass ? 0 : 1;
}
