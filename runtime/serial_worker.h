// One background thread that runs tasks in the order they were submitted (the runtime's fast start:
// the better configurations of problems that run their built-in one for now, prepared one at a time so
// that a driver which builds one program at a time per process is asked for one at a time).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ocltune {

class SerialWorker {
 public:
  SerialWorker() = default;
  // Drops the tasks not started, waits for the running one and joins the thread.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues `task` (which must not throw; the thread starts with the first task).
  void submit(std::function<void()> task);
  // Blocks until every task submitted so far has run (tests, and a caller that wants the upgrades).
  void drain();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;  // a task or the stop
  std::condition_variable idle_;  // the queue ran empty
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ocltune
