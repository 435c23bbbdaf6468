#include "runtime/serial_worker.h"

namespace ocltune {

SerialWorker::~SerialWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    tasks_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SerialWorker::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    tasks_.push_back(std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

void SerialWorker::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return (tasks_.empty() && !busy_) || stop_; });
}

void SerialWorker::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return !tasks_.empty() || stop_; });
    if (stop_) break;
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    busy_ = true;
    lock.unlock();
    task();
    lock.lock();
    busy_ = false;
    if (tasks_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

}  // namespace ocltune
