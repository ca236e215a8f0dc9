// A fixed pool of worker threads for the CPU backend. parallel_for splits [0, n) into tasks that
// the workers and the calling thread take in turn; it returns when all are done. Calls from
// several threads at once are serialised (one parallel region at a time per pool), and a
// parallel_for issued from inside a task runs inline, so kernels can nest without deadlock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuzk {

class ThreadPool {
 public:
  // threads = 0: online_cpus(). Starts as many of the threads as the OS allows: a refused thread
  // ends the start-up (start_error() says why) and the pool runs with those it has.
  explicit ThreadPool(unsigned threads = 0);
  // A pool of exactly `threads` threads, or nullptr (err names the refusal) when the OS refuses one.
  static std::unique_ptr<ThreadPool> create(unsigned threads, std::string& err);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return (unsigned)workers_.size() + 1; }  // workers + caller
  const std::string& start_error() const { return start_error_; }

  // Runs fn(i) for every i in [0, n_tasks), spread over the pool.
  void parallel_for(size_t n_tasks, const std::function<void(size_t)>& fn);

  // Splits [0, n) into about size()*chunks_per_thread ranges: fn(begin, end).
  void parallel_range(size_t n, const std::function<void(size_t, size_t)>& fn, size_t min_chunk = 1,
                      unsigned chunks_per_thread = 4);

 private:
  void worker_loop();
  void run_tasks();

  std::vector<std::thread> workers_;
  std::string start_error_;
  std::mutex region_mutex_;  // one parallel region at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t n_tasks_ = 0;
  std::atomic<size_t> next_{0};
  size_t finished_ = 0;
  unsigned active_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// The process-wide pool the CPU backend uses by default (every core).
ThreadPool& default_thread_pool();

}  // namespace cuzk
