// Vendor-library references for gpu-bench: CUB DeviceReduce::Sum over 2^28
// f32 (the same size as the reduce_sum case). Prints `cub_reduce_sum MEDIAN_MS`.
// Built on the GPU machine: nvcc -O3 -arch=sm_90 vendor.cu -o vendor
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

int main() {
    const size_t n = size_t(1) << 28;
    std::vector<float> h(n);
    std::mt19937 gen(12345);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    double want = 0;
    for (auto& v : h) { v = dist(gen); want += v; }
    float *x, *out;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, x, out, n));
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    std::vector<float> times;
    for (int i = 0; i < 28; ++i) {
        CHECK(cudaEventRecord(start));
        CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, x, out, n));
        CHECK(cudaEventRecord(end));
        CHECK(cudaEventSynchronize(end));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        if (i >= 3) times.push_back(ms);
    }
    float got;
    CHECK(cudaMemcpy(&got, out, sizeof(float), cudaMemcpyDeviceToHost));
    if (std::abs(got - want) > 1e-5 * n) { fprintf(stderr, "CUB sum %f, want %f\n", got, want); return 1; }
    std::sort(times.begin(), times.end());
    printf("cub_reduce_sum %.5f\n", times[times.size() / 2]);
    return 0;
}
