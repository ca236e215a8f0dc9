#include "util/thread_pool.hpp"

#include "util/machine.hpp"

#include <algorithm>
#include <system_error>

namespace cuzk {

namespace {
thread_local bool t_inside_task = false;  // nested parallel_for runs inline
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = online_cpus();
  workers_.reserve(threads - 1);  // so that only the thread start itself can fail below
  for (unsigned i = 1; i < threads; i++) {
    try {
      workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& e) {
      start_error_ = "the OS refused thread " + std::to_string(i + 1) + " of " + std::to_string(threads) + " (" +
                     e.what() + ")";
      break;
    }
  }
}

std::unique_ptr<ThreadPool> ThreadPool::create(unsigned threads, std::string& err) {
  auto pool = std::make_unique<ThreadPool>(threads);
  if (!pool->start_error_.empty()) {
    err = pool->start_error_;
    return nullptr;  // the destructor stops and joins the threads that did start
  }
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_tasks() {
  t_inside_task = true;
  size_t done = 0;
  for (;;) {
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_tasks_) break;
    (*job_)(i);
    done++;
  }
  t_inside_task = false;
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ += done;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (job_ == nullptr) continue;  // woke after that region ended
      active_++;
    }
    run_tasks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      active_--;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(size_t n_tasks, const std::function<void(size_t)>& fn) {
  if (n_tasks == 0) return;
  if (t_inside_task || workers_.empty() || n_tasks == 1) {
    for (size_t i = 0; i < n_tasks; i++) fn(i);
    return;
  }
  std::lock_guard<std::mutex> region(region_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    n_tasks_ = n_tasks;
    next_.store(0);
    finished_ = 0;
    generation_++;
  }
  wake_.notify_all();
  run_tasks();
  std::unique_lock<std::mutex> lock(mutex_);
  // Every task finished and no worker still holds a reference to this job; a worker that wakes
  // later finds job_ cleared and goes back to sleep.
  done_.wait(lock, [&] { return finished_ == n_tasks_ && active_ == 0; });
  job_ = nullptr;
}

void ThreadPool::parallel_range(size_t n, const std::function<void(size_t, size_t)>& fn, size_t min_chunk,
                                unsigned chunks_per_thread) {
  if (n == 0) return;
  size_t chunks = std::max<size_t>(1, std::min<size_t>((size_t)size() * chunks_per_thread, n / std::max<size_t>(1, min_chunk)));
  size_t step = (n + chunks - 1) / chunks;
  chunks = (n + step - 1) / step;
  parallel_for(chunks, [&](size_t c) {
    size_t b = c * step, e = std::min(n, b + step);
    fn(b, e);
  });
}

ThreadPool& default_thread_pool() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace cuzk
