// Program builds on a pool of threads, ahead of the evaluation that needs them.
#include "tuner/compile_pool.h"

namespace ocltune {

CompilePool::CompilePool(ProgramCache& cache, int threads) : cache_(cache) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void CompilePool::submit(const ProgramSource& source) {
  if (workers_.empty() || cache_.contains(source)) return;
  {
    std::lock_guard lock(mutex_);
    for (const ProgramSource& queued : queue_) {
      if (queued.key() == source.key()) return;
    }
    queue_.push_back(source);
  }
  changed_.notify_one();
}

void CompilePool::pause() {
  std::unique_lock lock(mutex_);
  paused_ = true;
  changed_.wait(lock, [this] { return running_ == 0; });
}

void CompilePool::resume() {
  {
    std::lock_guard lock(mutex_);
    paused_ = false;
  }
  changed_.notify_all();
}

void CompilePool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || (!paused_ && !queue_.empty()); });
    if (stopping_) return;
    ProgramSource source = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    try {
      cache_.get(source);
    } catch (...) {
      // Remembered by the cache; the evaluation of this configuration reports it.
    }
    lock.lock();
    --running_;
    changed_.notify_all();
  }
}

}  // namespace ocltune
