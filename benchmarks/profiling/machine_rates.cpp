// posenc_profile_machine — this core's clock (a dependent integer add chain: one cycle per add) and its throughput of
// 512-bit double FMAs and double -> float conversions (12 independent register chains each, so latency does not
// bound them): the arithmetic limits quoted in reports/profiles/. x86-64 with AVX-512 only.
#include <chrono>
#include <cstdio>

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

int main() {
  constexpr long kN = 200000000;
  long x = 0;
  double t0 = now();
  for (long i = 0; i < 4 * kN; ++i) asm volatile("add $1, %0" : "+r"(x));
  const double cycle = (now() - t0) * 1e9 / (4 * kN);
  t0 = now();
  for (long i = 0; i < kN; ++i)
    asm volatile(
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm0\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm1\n\t"
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm2\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm3\n\t"
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm4\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm5\n\t"
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm6\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm7\n\t"
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm8\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm9\n\t"
        "vfmadd231pd %%zmm30, %%zmm31, %%zmm10\n\tvfmadd231pd %%zmm30, %%zmm31, %%zmm11\n\t" ::
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11");
  const double fma = (now() - t0) * 1e9 / (12 * kN);
  t0 = now();
  for (long i = 0; i < kN; ++i)
    asm volatile(
        "vcvtpd2ps %%zmm30, %%ymm0\n\tvcvtpd2ps %%zmm30, %%ymm1\n\tvcvtpd2ps %%zmm30, %%ymm2\n\t"
        "vcvtpd2ps %%zmm30, %%ymm3\n\tvcvtpd2ps %%zmm30, %%ymm4\n\tvcvtpd2ps %%zmm30, %%ymm5\n\t"
        "vcvtpd2ps %%zmm30, %%ymm6\n\tvcvtpd2ps %%zmm30, %%ymm7\n\tvcvtpd2ps %%zmm30, %%ymm8\n\t"
        "vcvtpd2ps %%zmm30, %%ymm9\n\tvcvtpd2ps %%zmm30, %%ymm10\n\tvcvtpd2ps %%zmm30, %%ymm11\n\t" ::
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11");
  const double cvt = (now() - t0) * 1e9 / (12 * kN);
  std::printf("cycle %.3f ns (%.2f GHz); 512-bit FMA %.3f ns = %.2f cycles each; 512-bit vcvtpd2ps %.3f ns = %.2f cycles each\n",
              cycle, 1 / cycle, fma, fma / cycle, cvt, cvt / cycle);
}
