// nvcc twin of texture-kernels' `resize_bilinear` (examples/texture): the same random
// RGBA8 image (splitmix64, seed 1), the same bilinear resize through a texture object
// (linear filtering, normalized coordinates, clamp), the same FNV-1a hash of the
// output, and a CUDA-event median of 21 launches.
//
//   nvcc -O3 -arch=sm_90 -o texture-nvcc examples/texture/texture.cu && ./texture-nvcc [SW SH DW DH]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

__global__ void resize_bilinear(cudaTextureObject_t src, uchar4* dst, unsigned w, unsigned h) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
  float4 p = tex2D<float4>(src, u, v);
  dst[(size_t)y * w + x] = make_uchar4((unsigned char)fmaf(p.x, 255.f, .5f), (unsigned char)fmaf(p.y, 255.f, .5f),
                                       (unsigned char)fmaf(p.z, 255.f, .5f), (unsigned char)fmaf(p.w, 255.f, .5f));
}

int main(int argc, char** argv) {
  size_t sw = 1920, sh = 1080, dw = 3840, dh = 2160;
  if (argc == 5) { sw = atoi(argv[1]); sh = atoi(argv[2]); dw = atoi(argv[3]); dh = atoi(argv[4]); }
  uint64_t s = 1;
  std::vector<uchar4> img(sw * sh);
  for (auto& p : img) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    p = make_uchar4(z & 0xff, (z >> 8) & 0xff, (z >> 16) & 0xff, (z >> 24) & 0xff);
  }
  cudaChannelFormatDesc cf = cudaCreateChannelDesc<uchar4>();
  cudaArray_t arr;
  CHECK(cudaMallocArray(&arr, &cf, sw, sh));
  CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), sw * 4, sw * 4, sh, cudaMemcpyHostToDevice));
  cudaResourceDesc rd = {};
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeNormalizedFloat;
  td.normalizedCoords = 1;
  cudaTextureObject_t tex;
  CHECK(cudaCreateTextureObject(&tex, &rd, &td, nullptr));
  uchar4* dst;
  CHECK(cudaMalloc(&dst, dw * dh * 4));
  dim3 block(32, 8), grid((dw + 31) / 32, (dh + 7) / 8);
  resize_bilinear<<<grid, block>>>(tex, dst, dw, dh);
  CHECK(cudaGetLastError());
  std::vector<uint8_t> out(dw * dh * 4);
  CHECK(cudaMemcpy(out.data(), dst, out.size(), cudaMemcpyDeviceToHost));
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t b : out) h = (h ^ b) * 0x00000100000001b3ULL;
  printf("PASS resize nvcc %zux%zu -> %zux%zu: hash %016llx\n", sw, sh, dw, dh, (unsigned long long)h);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++) resize_bilinear<<<grid, block>>>(tex, dst, dw, dh);
  std::vector<float> t;
  for (int i = 0; i < 21; i++) {
    CHECK(cudaEventRecord(a));
    resize_bilinear<<<grid, block>>>(tex, dst, dw, dh);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  printf("TIME resize nvcc: median %.4f ms, %.1f Gpixel/s (%zux%zu -> %zux%zu)\n", t[10], dw * dh / t[10] / 1e6, sw, sh, dw, dh);
  return 0;
}
