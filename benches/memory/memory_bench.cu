// CUDA C++ reference for host-loader's memory chapter: the same transfers and the same
// overlap pipeline as examples/memory_tour, measured the same way, so that
// scripts/gpu-memory.sh can put both side by side.
//
//   nvcc -O3 -arch=sm_90 -o memory_bench benches/memory/memory_bench.cu
//   ./memory_bench [--mib 256] [--reps 10] [--pipeline-mib 256] [--chunk-mib 8]
//
// Bandwidth: one non-blocking stream; each timed copy is cudaMemcpyAsync followed by
// cudaStreamSynchronize, host wall clock, median of `reps` after one warm-up; pageable
// memory is malloc'ed and touched, pinned memory comes from cudaMallocHost (no flags).
// Pipeline: u32 data in pinned memory, chunks of `chunk` elements; chunk k goes to
// stream k % depth: H2D, `iterate` kernel over the whole chunk buffer, D2H; `iters` is
// calibrated so the kernel takes about as long as one chunk's H2D copy. Results are
// checked against the CPU (the iterated LCG step composed into one affine map).
// Prints `BENCH name value unit` lines; exits 1 on a CUDA error or a wrong result.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CK(call)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,   \
                   cudaGetErrorString(e_));                                        \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

static const uint32_t LCG_A = 1664525u, LCG_B = 1013904223u;

__global__ void iterate(const uint32_t* x, uint32_t* y, size_t n, uint32_t iters, uint32_t a,
                        uint32_t b) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    uint32_t v = x[i];
    for (uint32_t k = 0; k < iters; ++k) v = v * a + b;
    y[i] = v;
  }
}

static double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

static double timed(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    double t = now();
    f();
    s.push_back(now() - t);
  }
  return median(s);
}

static void bench(const char* name, double value, const char* unit) {
  std::printf("BENCH %s %.4f %s\n", name, value, unit);
}

int main(int argc, char** argv) {
  size_t mib = 256, pipeline_mib = 256, chunk_mib = 8;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mib")) mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--pipeline-mib")) pipeline_mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--chunk-mib")) chunk_mib = std::strtoull(argv[i + 1], nullptr, 10);
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("memory_bench (CUDA C++) on %s\n", prop.name);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // ---- bandwidth ----
  size_t bytes = mib << 20;
  unsigned char* dev;
  CK(cudaMalloc(&dev, bytes));
  std::vector<unsigned char> pageable(bytes, 1);
  unsigned char* pinned;
  CK(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 1, bytes);
  auto copy = [&](void* dst, const void* src, cudaMemcpyKind kind) {
    CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CK(cudaStreamSynchronize(s));
  };
  double h2d_pageable = timed(reps, [&] { copy(dev, pageable.data(), cudaMemcpyHostToDevice); });
  double d2h_pageable = timed(reps, [&] { copy(pageable.data(), dev, cudaMemcpyDeviceToHost); });
  double h2d_pinned = timed(reps, [&] { copy(dev, pinned, cudaMemcpyHostToDevice); });
  double d2h_pinned = timed(reps, [&] { copy(pinned, dev, cudaMemcpyDeviceToHost); });
  const char* names[] = {"h2d_pageable", "d2h_pageable", "h2d_pinned", "d2h_pinned"};
  double secs[] = {h2d_pageable, d2h_pageable, h2d_pinned, d2h_pinned};
  for (int i = 0; i < 4; ++i) {
    char key[64];
    std::snprintf(key, sizeof key, "%s_gbps", names[i]);
    std::printf("  %-13s %8.2f GB/s\n", names[i], bytes / secs[i] / 1e9);
    bench(key, bytes / secs[i] / 1e9, "GB/s");
  }
  CK(cudaFreeHost(pinned));
  CK(cudaFree(dev));

  // ---- overlap pipeline ----
  size_t total = (pipeline_mib << 20) / 4, chunk = (chunk_mib << 20) / 4;
  uint32_t *in, *out;
  CK(cudaMallocHost(&in, total * 4));
  CK(cudaMallocHost(&out, total * 4));
  uint64_t st = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < total; ++i) {
    st ^= st >> 12; st ^= st << 25; st ^= st >> 27;
    in[i] = (uint32_t)((st * 0x2545F4914F6CDD1Dull) >> 32);
  }
  unsigned grid = (unsigned)((chunk + 255) / 256);

  // Calibrate on one chunk: kernel time ~ H2D time.
  uint32_t *cx, *cy;
  CK(cudaMalloc(&cx, chunk * 4));
  CK(cudaMalloc(&cy, chunk * 4));
  CK(cudaMemset(cx, 0, chunk * 4));
  auto sync_timed = [&](const std::function<void()>& f) {
    return timed(5, [&] { f(); CK(cudaStreamSynchronize(s)); });
  };
  double h2d = sync_timed([&] { CK(cudaMemcpyAsync(cx, in, chunk * 4, cudaMemcpyHostToDevice, s)); });
  double d2h = sync_timed([&] { CK(cudaMemcpyAsync(out, cy, chunk * 4, cudaMemcpyDeviceToHost, s)); });
  auto kernel_time = [&](uint32_t iters) {
    return sync_timed([&] {
      iterate<<<grid, 256, 0, s>>>(cx, cy, chunk, iters, LCG_A, LCG_B);
      CK(cudaGetLastError());
    });
  };
  const uint32_t probe = 256;
  double t_probe = kernel_time(probe);
  uint32_t iters = std::max<uint32_t>(1, (uint32_t)(probe * h2d / t_probe + 0.5));
  double t_kernel = kernel_time(iters);
  std::printf("per chunk of %zu u32: H2D %.3f ms, D2H %.3f ms; kernel %.3f ms at %u -> %u iterations, %.3f ms\n",
              chunk, h2d * 1e3, d2h * 1e3, t_probe * 1e3, probe, iters, t_kernel * 1e3);
  bench("pipeline_iters", iters, "iterations");
  bench("chunk_h2d_ms", h2d * 1e3, "ms");
  bench("chunk_kernel_ms", t_kernel * 1e3, "ms");
  bench("chunk_d2h_ms", d2h * 1e3, "ms");
  CK(cudaFree(cx));
  CK(cudaFree(cy));

  uint32_t ma = 1, mb = 0;
  for (uint32_t k = 0; k < iters; ++k) { ma *= LCG_A; mb = mb * LCG_A + LCG_B; }
  int failed = 0;
  double serial = 0;
  for (int depth = 1; depth <= 3; ++depth) {
    std::vector<cudaStream_t> ss(depth);
    std::vector<uint32_t*> dx(depth), dy(depth);
    for (int k = 0; k < depth; ++k) {
      CK(cudaStreamCreateWithFlags(&ss[k], cudaStreamNonBlocking));
      CK(cudaMalloc(&dx[k], chunk * 4));
      CK(cudaMalloc(&dy[k], chunk * 4));
      CK(cudaMemset(dx[k], 0, chunk * 4));
    }
    CK(cudaDeviceSynchronize());
    auto run = [&] {
      for (size_t c = 0, k = 0; c < total; c += chunk, ++k) {
        size_t n = std::min(chunk, total - c);
        int j = (int)(k % depth);
        CK(cudaMemcpyAsync(dx[j], in + c, n * 4, cudaMemcpyHostToDevice, ss[j]));
        iterate<<<grid, 256, 0, ss[j]>>>(dx[j], dy[j], chunk, iters, LCG_A, LCG_B);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(out + c, dy[j], n * 4, cudaMemcpyDeviceToHost, ss[j]));
      }
      for (int j = 0; j < depth; ++j) CK(cudaStreamSynchronize(ss[j]));
    };
    std::fill(out, out + total, 0xFFFFFFFFu);
    run();
    size_t bad = 0;
    for (size_t i = 0; i < total; ++i) bad += out[i] != in[i] * ma + mb;
    if (bad) { std::printf("FAIL pipeline depth %d: %zu of %zu elements differ\n", depth, bad, total); failed = 1; }
    else std::printf("PASS pipeline depth %d: 0 of %zu elements differ\n", depth, total);
    double t = timed(5, run);
    if (depth == 1) serial = t;
    std::printf("depth %d: %.2f ms, speed-up over serial %.2fx\n", depth, t * 1e3, serial / t);
    char key[64];
    std::snprintf(key, sizeof key, "pipeline_depth%d_ms", depth);
    bench(key, t * 1e3, "ms");
    if (depth > 1) {
      std::snprintf(key, sizeof key, "pipeline_speedup_depth%d", depth);
      bench(key, serial / t, "x");
    }
    for (int k = 0; k < depth; ++k) {
      CK(cudaStreamDestroy(ss[k]));
      CK(cudaFree(dx[k]));
      CK(cudaFree(dy[k]));
    }
  }
  CK(cudaFreeHost(in));
  CK(cudaFreeHost(out));
  CK(cudaStreamDestroy(s));
  return failed;
}
