// CUDA C++ twin of examples/nbody, for the timing comparison: one all-pairs step of
// NVIDIA's CUDA sample nbody (bodyBodyInteraction with CUDA's rsqrtf, the
// computeBodyAccel shared-memory tiling, integrateBodies without damping), with the
// Rust kernel's launch: blocks of 256 threads, one body per thread, tiles of 256
// bodies in shared memory, the inner loop unrolled by 4 (the Rust kernel's; the sample
// writes `#pragma unroll 128`), a zero-mass body padding the last tile. A standalone
// program:
//
//   nvcc -O3 -arch=sm_90 -o nbody-nvcc examples/nbody/nbody.cu
//   ./nbody-nvcc [--n N] [--runs R] [--seed S]         (defaults 16384, 20, 1)
//
// Bodies as the Rust host places them (NBODY_CONFIG_RANDOM: positions in a ball of
// radius 1.54 max(1, n/1024), velocities in one 8 times larger, masses in [0.5, 1.5)),
// dt = 0.016, softening 0.1. Checks every 64th body against a double reference with
// the Rust host's tolerance (acceleration (v' - v)/dt within 1e-3 |a| + 1e-5 sum|terms|
// + 2^-23 |v'|/dt per component) and prints
//   PASS|FAIL nbody nvcc: ...
//   TIME nbody nvcc: median M ms of R launches, G Ginteractions/s (n = N)
// (n^2 interactions a step; the median of R launches timed with CUDA events after 3
// untimed ones). Exit code 0 on PASS.
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

#define BLOCK 256
static const float DT = 0.016f, SOFTENING_SQ = 0.01f;

// The sample's bodyBodyInteraction: bj's pull on bi added to ai.
__device__ __forceinline__ float3 body_body(float3 ai, float4 bi, float4 bj, float eps2) {
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float dist_sqr = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
    float inv_dist = rsqrtf(dist_sqr);
    float inv_dist_cube = inv_dist * inv_dist * inv_dist;
    float s = bj.w * inv_dist_cube;
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;
    return ai;
}

__global__ void __launch_bounds__(BLOCK)
nbody_step(const float4* __restrict__ pos, const float4* __restrict__ vel, float dt, float eps2,
           float4* __restrict__ new_pos, float4* __restrict__ new_vel, unsigned n) {
    __shared__ float4 tile[BLOCK];
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float3 acc = make_float3(0.f, 0.f, 0.f);
    for (unsigned base = 0; base < n; base += BLOCK) {
        unsigned j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll 4
        for (int k = 0; k < BLOCK; k++) acc = body_body(acc, me, tile[k], eps2);
        __syncthreads();
    }
    if (i < n) {
        float4 v = vel[i];
        v.x += acc.x * dt;
        v.y += acc.y * dt;
        v.z += acc.z * dt;
        new_vel[i] = v;
        new_pos[i] = make_float4(me.x + v.x * dt, me.y + v.y * dt, me.z + v.z * dt, me.w);
    }
}

int main(int argc, char** argv) {
    size_t n = 16384;
    int runs = 20;
    unsigned long long seed = 1;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--n")) n = strtoull(argv[a + 1], nullptr, 10);
        else if (!strcmp(argv[a], "--runs")) runs = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--seed")) seed = strtoull(argv[a + 1], nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", argv[a]); return 2; }
    }
    if (n == 0 || n > (1u << 24) || runs < 1) { fprintf(stderr, "bad --n or --runs\n"); return 2; }

    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), mass(0.5f, 1.5f);
    auto in_ball = [&](float r) {
        for (;;) {
            float x = unit(rng), y = unit(rng), z = unit(rng);
            if (x * x + y * y + z * z <= 1.0f) return make_float3(x * r, y * r, z * r);
        }
    };
    float scale = 1.54f * std::max(1.0f, float(n) / 1024.0f), vscale = 8.0f * scale;
    std::vector<float4> pos(n), vel(n);
    for (size_t i = 0; i < n; i++) {
        float3 p = in_ball(scale), v = in_ball(vscale);
        pos[i] = make_float4(p.x, p.y, p.z, mass(rng));
        vel[i] = make_float4(v.x, v.y, v.z, 1.0f);
    }

    float4 *d_pos, *d_vel, *d_new_pos, *d_new_vel;
    size_t bytes = n * sizeof(float4);
    CHECK(cudaMalloc(&d_pos, bytes));
    CHECK(cudaMalloc(&d_vel, bytes));
    CHECK(cudaMalloc(&d_new_pos, bytes));
    CHECK(cudaMalloc(&d_new_vel, bytes));
    CHECK(cudaMemcpy(d_pos, pos.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_vel, vel.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_new_pos, 0xff, bytes)); // NaN poison
    CHECK(cudaMemset(d_new_vel, 0xff, bytes));

    unsigned grid = unsigned((n + BLOCK - 1) / BLOCK);
    auto launch = [&] {
        nbody_step<<<grid, BLOCK>>>(d_pos, d_vel, DT, SOFTENING_SQ, d_new_pos, d_new_vel, unsigned(n));
    };
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float4> got_vel(n);
    CHECK(cudaMemcpy(got_vel.data(), d_new_vel, bytes, cudaMemcpyDeviceToHost));

    size_t bad = 0, checked = 0;
    const double u = 1.0 / double(1u << 23), dt = DT;
    for (size_t i = 0; i < n; i += 64) {
        double a[3] = {0, 0, 0}, sum = 0;
        for (size_t j = 0; j < n; j++) {
            double r[3] = {double(pos[j].x) - pos[i].x, double(pos[j].y) - pos[i].y, double(pos[j].z) - pos[i].z};
            double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
            double inv = 1.0 / sqrt(d2 + double(SOFTENING_SQ));
            double s = double(pos[j].w) * inv * inv * inv;
            for (int c = 0; c < 3; c++) a[c] += r[c] * s;
            sum += sqrt(d2) * s;
        }
        double norm = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        double v0[3] = {vel[i].x, vel[i].y, vel[i].z}, v1[3] = {got_vel[i].x, got_vel[i].y, got_vel[i].z};
        bool ok = true;
        for (int c = 0; c < 3; c++) {
            double err = fabs((v1[c] - v0[c]) / dt - a[c]);
            ok &= err <= 1e-3 * norm + 1e-5 * sum + u * fabs(v1[c]) / dt;
        }
        if (!ok) {
            if (bad < 5) fprintf(stderr, "body %zu: vel (%g, %g, %g), a (%g, %g, %g)\n", i, v1[0], v1[1], v1[2], a[0], a[1], a[2]);
            bad++;
        }
        checked++;
    }
    printf("%s nbody nvcc: %zu of %zu bodies (every 64th) beyond tolerance (n = %zu, seed %llu)\n",
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
    printf("TIME nbody nvcc: median %.4f ms of %d launches, %.2f Ginteractions/s (n = %zu)\n",
           ms, runs, double(n) * double(n) / ms / 1e6, n);
    return bad ? 1 : 0;
}
