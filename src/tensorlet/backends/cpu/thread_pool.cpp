// The CPU worker pool behind parallel_for (thread_pool.h). Why not an OpenMP parallel region: a
// region ends with a barrier that waits for every thread of its team, so on a loaded machine one
// unscheduled thread stalls a 20 µs op for a whole scheduler slice (milliseconds), and libgomp
// ends and re-creates threads whenever consecutive regions ask for teams of different sizes. Here
// a loop is a count of unclaimed chunks: whoever runs takes the next one, the caller included,
// and the caller waits only for chunks already taken.
#include "tensorlet/backends/cpu/thread_pool.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {
namespace {

// How long an idle worker polls for the next loop before sleeping: long enough to catch the next
// op of a loop of ops (a few µs apart), short enough not to take a loaded machine's CPU from
// threads with work to do.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);
// How long a caller polls for chunks that workers are still running before sleeping.
constexpr auto kCallerSpin = std::chrono::microseconds(20);
// Small loops' admission (run_chunks' `small`): a loop counts as slow when it took longer than
// its caller alone would have (chunks x the caller's mean chunk time, with this much slack for
// waking workers), and small loops stay on their caller while most recent loops were slow; one
// goes to the pool every kProbeInterval to notice when workers run promptly again.
constexpr int kSlowSlackPercent = 25;
constexpr auto kSlowSlack = std::chrono::microseconds(2);
constexpr auto kProbeInterval = std::chrono::milliseconds(50);
// slow_score_: 8 x an exponential average (1/8 per loop) of 32 per slow loop, out of 256.
constexpr int kSlowScoreStep = 32, kSlowScoreLimit = 128;

using Clock = std::chrono::steady_clock;

thread_local bool t_in_chunk = false;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Sleeps while word == expected (or returns at once); wakes up to `count` sleepers.
void wait_while(std::atomic<uint32_t>& word, uint32_t expected) {
#ifdef __linux__
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
#else
  word.wait(expected);
#endif
}
void wake(std::atomic<uint32_t>& word, int count) {
#ifdef __linux__
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
#else
  (void)count;
  word.notify_all();
#endif
}

// Polls until word != value or `budget` has passed; returns the last value read.
template <typename Rep, typename Period>
uint32_t spin_while(const std::atomic<uint32_t>& word, uint32_t value,
                    std::chrono::duration<Rep, Period> budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int i = 1;; ++i) {
    const uint32_t now = word.load(std::memory_order_acquire);
    if (now != value) return now;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return now;
  }
}

// Runs every chunk on the calling thread, itself marked as inside a chunk so loops in the chunks
// run inline too.
void run_inline(int64_t chunks, ChunkFn fn) {
  const bool outer = t_in_chunk;
  t_in_chunk = true;
  try {
    for (int64_t c = 0; c < chunks; ++c) fn(c);
  } catch (...) {
    t_in_chunk = outer;
    throw;
  }
  t_in_chunk = outer;
}

class Pool {
 public:
  void run(int64_t chunks, int threads, ChunkFn fn, bool small) {
    if (small && !admits_small()) return run_inline(chunks, fn);
    std::unique_lock<std::mutex> lock(job_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return run_inline(chunks, fn);
    jobs_.fetch_add(1, std::memory_order_relaxed);
    grow(threads - 1);
    const Clock::time_point start = Clock::now();
    fn_ = &fn;
    chunks_ = chunks;
    error_ = nullptr;
    unfinished_.store(static_cast<uint32_t>(chunks), std::memory_order_relaxed);
    ++generation_;
    // Publishes the job: everything above happens before any claim of it.
    ticket_.store(static_cast<uint64_t>(generation_) << 32 | static_cast<uint64_t>(chunks),
                  std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) > 0)
      wake(wake_, static_cast<int>(std::min<int64_t>(chunks - 1, threads - 1)));
    const Share mine = work(true);
    wait_for_chunks();
    // Only small loops tell whether workers start within a small loop's time: a large loop
    // gains from workers that start milliseconds late.
    if (small) learn(Clock::now() - start, mine, chunks);
    if (error_) std::rethrow_exception(error_);
  }

  int64_t jobs() const { return jobs_.load(std::memory_order_relaxed); }

 private:
  // The chunks a thread ran in one job and the time they took.
  struct Share {
    int64_t chunks = 0;
    Clock::duration time{};
  };

  bool admits_small() {
    if (slow_score_.load(std::memory_order_relaxed) < kSlowScoreLimit) return true;
    const int64_t now = Clock::now().time_since_epoch().count();
    int64_t probe = next_probe_.load(std::memory_order_relaxed);
    return now >= probe &&
           next_probe_.compare_exchange_strong(
               probe, now + std::chrono::duration_cast<Clock::duration>(kProbeInterval).count());
  }

  // Scores the job that just ended (under job_mutex_). A job whose caller ran no chunk was
  // entirely the workers': not slow.
  void learn(Clock::duration wall, const Share& mine, int64_t chunks) {
    bool slow = false;
    if (mine.chunks > 0) {
      const Clock::duration alone = mine.time / mine.chunks * chunks;
      slow = wall > alone + alone * kSlowSlackPercent / 100 + kSlowSlack;
    }
    const int score = slow_score_.load(std::memory_order_relaxed);
    // A prompt probe counts double: two of them in a row give small loops the pool back.
    const int kept = score >= kSlowScoreLimit && !slow ? score / 2 : score - score / 8;
    slow_score_.store(kept + (slow ? kSlowScoreStep : 0), std::memory_order_relaxed);
  }

  // Starts workers until there are n (fewer if the system refuses threads: the caller and the
  // workers there are still run every chunk).
  void grow(int n) {
    while (workers_ < n) {
      try {
        std::thread([this] { worker_main(); }).detach();
      } catch (const std::system_error&) {
        return;
      }
      ++workers_;
    }
  }

  // Claims and runs chunks of the current job until none is left unclaimed; the caller times
  // its chunks (learn's estimate of the job alone).
  Share work(bool timed = false) {
    Share share;
    uint64_t t = ticket_.load(std::memory_order_acquire);
    while (static_cast<uint32_t>(t) != 0) {
      if (!ticket_.compare_exchange_weak(t, t - 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
        continue;
      // The claim keeps the job alive until this chunk is done, so its fields are this job's.
      const Clock::time_point begin = timed ? Clock::now() : Clock::time_point{};
      run_chunk(chunks_ - static_cast<uint32_t>(t));
      if (timed) {
        share.time += Clock::now() - begin;
        ++share.chunks;
      }
      t = ticket_.load(std::memory_order_acquire);
    }
    return share;
  }

  void run_chunk(int64_t chunk) {
    t_in_chunk = true;
    try {
      (*fn_)(chunk);
    } catch (...) {
      std::lock_guard<std::mutex> guard(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_chunk = false;
    if (unfinished_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst))
      wake(unfinished_, 1);
  }

  void wait_for_chunks() {
    uint32_t left = spin_while(unfinished_, 0, kCallerSpin);
    if (left == 0) left = unfinished_.load(std::memory_order_acquire);
    if (left == 0) return;
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    while ((left = unfinished_.load(std::memory_order_seq_cst)) != 0) wait_while(unfinished_, left);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  [[noreturn]] void worker_main() {
#ifdef __linux__
    pthread_setname_np(pthread_self(), "tl-cpu-worker");
#endif
#ifdef _OPENMP
    // An OpenMP-threaded library called from a chunk (Eigen's GEMM) sees one thread here. This is
    // the pool's own thread: the user's threads keep their setting.
    omp_set_num_threads(1);
#endif
    for (;;) {
      const uint32_t seen = wake_.load(std::memory_order_acquire);
      work();
      if (spin_while(wake_, seen, kWorkerSpin) != seen) continue;
      sleeping_.fetch_add(1, std::memory_order_seq_cst);
      while (wake_.load(std::memory_order_seq_cst) == seen) wait_while(wake_, seen);
      sleeping_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  std::mutex job_mutex_;  // one loop at a time; a second caller runs its loop inline
  int workers_ = 0;       // guarded by job_mutex_
  uint32_t generation_ = 0;
  const ChunkFn* fn_ = nullptr;
  uint32_t chunks_ = 0;
  std::exception_ptr error_;
  std::mutex error_mutex_;
  std::atomic<int64_t> jobs_{0};
  std::atomic<int> slow_score_{0};
  std::atomic<int64_t> next_probe_{0};  // Clock ticks
  // The job's generation (high half) and its count of unclaimed chunks (low half): a claim is
  // one compare-and-swap, and a late worker's stale value cannot claim a later job's chunk.
  alignas(64) std::atomic<uint64_t> ticket_{0};
  alignas(64) std::atomic<uint32_t> wake_{0};  // bumped per job; idle workers wait on it
  std::atomic<int> sleeping_{0};
  alignas(64) std::atomic<uint32_t> unfinished_{0};
  std::atomic<bool> caller_sleeping_{false};
};

// The pool lives as long as the process (its detached workers hold it). A forked child has none of
// the parent's threads: it starts a pool of its own.
std::atomic<Pool*> g_pool{nullptr};
std::mutex g_pool_mutex;

void forget_pool_in_child() {
  g_pool.store(nullptr, std::memory_order_relaxed);
  new (&g_pool_mutex) std::mutex;  // the parent may have held it while forking
}

Pool& pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p) return *p;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  p = g_pool.load(std::memory_order_acquire);
  if (!p) {
    static const bool registered = pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0;
    (void)registered;
    p = new Pool;
    g_pool.store(p, std::memory_order_release);
  }
  return *p;
}

}  // namespace

void run_chunks(int64_t chunks, int threads, ChunkFn fn, bool small) {
  if (chunks <= 0) return;
  // The ticket counts chunks in 32 bits; loops ask for about one chunk per thread.
  if (chunks == 1 || threads <= 1 || t_in_chunk || chunks > (int64_t{1} << 30))
    return run_inline(chunks, fn);
  pool().run(chunks, threads, fn, small);
}

bool in_chunk() { return t_in_chunk; }

int64_t pool_jobs() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  return p ? p->jobs() : 0;
}

}  // namespace tensorlet::cpu
