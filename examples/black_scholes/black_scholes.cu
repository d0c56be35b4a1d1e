// CUDA C++ twin of examples/black_scholes, for the timing comparison: the same
// algorithm (NVIDIA's CUDA sample BlackScholes, BlackScholesBodyGPU), the same launch
// (one option per thread, blocks of 128), the same input ranges, written with CUDA's
// full-precision logf, sqrtf, expf and normcdff. A standalone program:
//
//   nvcc -O3 -arch=sm_90 -o black_scholes-nvcc examples/black_scholes/black_scholes.cu
//   ./black_scholes-nvcc [--n N] [--runs R] [--seed S]        (defaults 2^24, 50, 1)
//
// Checks every 16th option against a double reference (erfc from <cmath>) with the
// Rust host's per-element tolerance, max(1e-4 |want|, 1e-4 S), and prints
//   PASS|FAIL black_scholes nvcc: ...
//   TIME black_scholes nvcc: median M ms of R launches, G Goptions/s (n = N)
// (the Rust host's TIME line), the median of R launches timed with CUDA events after
// 3 untimed ones. Exit code 0 on PASS.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

static const float RATE = 0.02f, VOLATILITY = 0.30f;
static const unsigned BLOCK = 128;

__global__ void __launch_bounds__(BLOCK)
black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
              const float* __restrict__ years, float r, float v, float* __restrict__ call,
              float* __restrict__ put, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = spot[i], x = strike[i], t = years[i];
    float v_sqrt_t = v * sqrtf(t);
    float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / v_sqrt_t;
    float d2 = d1 - v_sqrt_t;
    float discounted = x * expf(-r * t);
    call[i] = s * normcdff(d1) - discounted * normcdff(d2);
    put[i] = discounted * normcdff(-d2) - s * normcdff(-d1);
}

static double normcdf_ref(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }

int main(int argc, char** argv) {
    size_t n = size_t(1) << 24;
    int runs = 50;
    unsigned long long seed = 1;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--n")) n = strtoull(argv[a + 1], nullptr, 10);
        else if (!strcmp(argv[a], "--runs")) runs = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--seed")) seed = strtoull(argv[a + 1], nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", argv[a]); return 2; }
    }
    if (n == 0 || n > 0xffffffffull || runs < 1) { fprintf(stderr, "bad --n or --runs\n"); return 2; }

    std::mt19937_64 rng(seed);
    auto draw = [&](float lo, float hi) {
        std::uniform_real_distribution<float> d(lo, hi);
        std::vector<float> out(n);
        for (auto& x : out) x = d(rng);
        return out;
    };
    std::vector<float> spot = draw(5.0f, 30.0f), strike = draw(1.0f, 100.0f), years = draw(0.25f, 10.0f);

    float *d_spot, *d_strike, *d_years, *d_call, *d_put;
    size_t bytes = n * sizeof(float);
    CHECK(cudaMalloc(&d_spot, bytes));
    CHECK(cudaMalloc(&d_strike, bytes));
    CHECK(cudaMalloc(&d_years, bytes));
    CHECK(cudaMalloc(&d_call, bytes));
    CHECK(cudaMalloc(&d_put, bytes));
    CHECK(cudaMemcpy(d_spot, spot.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_strike, strike.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_years, years.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_call, 0xff, bytes)); // NaN poison
    CHECK(cudaMemset(d_put, 0xff, bytes));

    unsigned grid = unsigned((n + BLOCK - 1) / BLOCK);
    auto launch = [&] {
        black_scholes<<<grid, BLOCK>>>(d_spot, d_strike, d_years, RATE, VOLATILITY, d_call, d_put, unsigned(n));
    };
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> call(n), put(n);
    CHECK(cudaMemcpy(call.data(), d_call, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(put.data(), d_put, bytes, cudaMemcpyDeviceToHost));

    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < n; i += 16) {
        double s = spot[i], x = strike[i], t = years[i], r = RATE, v = VOLATILITY;
        double v_sqrt_t = v * sqrt(t);
        double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / v_sqrt_t, d2 = d1 - v_sqrt_t;
        double disc = x * exp(-r * t);
        double want[2] = {s * normcdf_ref(d1) - disc * normcdf_ref(d2),
                          disc * normcdf_ref(-d2) - s * normcdf_ref(-d1)};
        float got[2] = {call[i], put[i]};
        for (int k = 0; k < 2; k++) {
            double err = fabs(double(got[k]) - want[k]);
            if (!(err <= std::max(1e-4 * fabs(want[k]), 1e-4 * s))) {
                if (bad < 5) fprintf(stderr, "%s[%zu]: got %g, want %g\n", k ? "put" : "call", i, got[k], want[k]);
                bad++;
            }
            checked++;
        }
    }
    printf("%s black_scholes nvcc: %zu of %zu prices (every 16th option) beyond max(1e-4 relative, 1e-4*S) (n = %zu, seed %llu)\n",
           bad ? "FAIL" : "PASS", bad, checked, n, seed);

    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    for (int k = 0; k < 3; k++) launch();
    std::vector<float> times;
    for (int k = 0; k < runs; k++) {
        CHECK(cudaEventRecord(start));
        launch();
        CHECK(cudaEventRecord(end));
        CHECK(cudaEventSynchronize(end));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        times.push_back(ms);
    }
    CHECK(cudaGetLastError());
    std::sort(times.begin(), times.end());
    double ms = times[times.size() / 2];
    printf("TIME black_scholes nvcc: median %.4f ms of %d launches, %.2f Goptions/s (n = %zu)\n",
           ms, runs, double(n) / ms / 1e6, n);
    return bad ? 1 : 0;
}
