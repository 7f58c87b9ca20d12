// properties/support/threads_test.cpp — posenc's worker threads (lib/src/core/parallel.*) as a host program
// sees them: calls from several host threads at once, a call after fork(), and the same bytes in every case as
// the single-threaded call (the values never depend on which thread computes them). Its own small program
// (posenc_api_tests: the library and GoogleTest only), so that scripts/sanitize.sh can build and run it
// under ThreadSanitizer in a minute.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "posenc/rope.hpp"
#include "posenc/sinusoidal.hpp"

namespace {

constexpr std::int64_t kFirst = -1000;
constexpr std::size_t kCount = 3000, kDim = 256;  // 768 000 values: split over threads

std::vector<float> table(int threads) {
  posenc::SinusoidalSpec spec;
  spec.dim = kDim;
  spec.signed_positions = true;
  std::vector<float> out(kCount * kDim);
  posenc::SinusoidalPlan(spec).table(kFirst, kCount, std::span<float>(out), posenc::TableOptions{.threads = threads});
  return out;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// `hosts` host threads at once, each calling make() `reps` times (asking for two workers); the last result of each.
template <class Make>
std::vector<std::vector<float>> from_host_threads(std::size_t hosts, int reps, Make make) {
  std::vector<std::vector<float>> got(hosts);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < hosts; ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < reps; ++rep) got[i] = make();
    });
  for (auto& t : threads) t.join();
  return got;
}

TEST(Threads, ConcurrentHostCallsGiveTheSingleThreadedBytes) {
  const auto want = table(1);
  ASSERT_TRUE(same_bytes(table(2), want));
  // Four host threads at once, each asking for two workers: one call gets the pool, the others run on their own
  // thread (parallel.hpp); every result is the same.
  for (const auto& g : from_host_threads(4, 5, [] { return table(2); })) EXPECT_TRUE(same_bytes(g, want));
}

TEST(Threads, ACallAfterForkWorksInTheChild) {
  const auto want = table(2);  // the parent's pool now has a worker; the child does not inherit it
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);  // a child that waits for the parent's (absent) worker would hang: end it instead
    _exit(same_bytes(table(2), want) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's table differs (1) or the child failed otherwise";
}

// RoPE caches and in-place application, through the same workers: every host thread's result is the bytes of the
// single-threaded call.
TEST(Threads, RopeCachesAndRotationsFromConcurrentHostThreads) {
  posenc::RopeSpec spec;
  spec.head_dim = 128;
  spec.rotary_dim = 96;
  const posenc::RopePlan plan(spec);
  constexpr std::size_t kTokens = 700, kHeads = 4;
  std::vector<std::int64_t> pos(kTokens);
  for (std::size_t i = 0; i < kTokens; ++i) pos[i] = static_cast<std::int64_t>((i * 7919) % 100003) - 5000;
  auto run = [&](int threads) {
    std::vector<float> cache(kTokens * posenc::cache_values_per_position(spec, posenc::RopeCacheForm::hf));
    plan.cache(posenc::RopeCacheForm::hf, pos, std::span<float>(cache), posenc::TableOptions{.threads = threads});
    std::vector<float> x(kTokens * kHeads * spec.head_dim);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 251) / 125.0f - 1.0f;
    plan.apply(posenc::dense_rope_tensor(std::span<float>(x), kTokens, kHeads, spec.head_dim), pos,
               posenc::RopeDirection::forward, posenc::TableOptions{.threads = threads});
    cache.insert(cache.end(), x.begin(), x.end());
    return cache;
  };
  const auto want = run(1);
  for (const auto& g : from_host_threads(3, 4, [&] { return run(2); })) EXPECT_TRUE(same_bytes(g, want));
}

}  // namespace
