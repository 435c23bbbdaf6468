// The runtime's background thread for fast start: tasks run one at a time in submission order,
// drain() waits for all of them, and destruction drops the ones not started.
#include "runtime/serial_worker.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ocltune {
namespace {

TEST(SerialWorker, RunsTasksOneAtATimeInOrder) {
  SerialWorker worker;
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<int> running{0}, most{0};
  for (int i = 0; i < 20; ++i) {
    worker.submit([&, i] {
      most = std::max(most.load(), ++running);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      {
        std::lock_guard lock(mutex);
        order.push_back(i);
      }
      --running;
    });
  }
  worker.drain();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(most.load(), 1);
  worker.drain();  // nothing queued: returns at once
}

TEST(SerialWorker, DestructionWaitsForTheRunningTaskAndDropsTheRest) {
  std::atomic<int> finished{0};
  std::atomic<bool> started{false}, leaving{false}, release{false};
  // Lets the running task finish 200 ms after this thread starts destroying the worker (which drops
  // the queued tasks at once), so that the task is still running when they are dropped.
  std::thread releaser([&] {
    while (!leaving) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    release = true;
  });
  {
    SerialWorker worker;
    worker.submit([&] {
      started = true;
      while (!release) std::this_thread::yield();
      ++finished;
    });
    for (int i = 0; i < 5; ++i) worker.submit([&] { ++finished; });
    while (!started) std::this_thread::yield();
    leaving = true;
  }
  releaser.join();
  EXPECT_EQ(finished.load(), 1) << "the running task finished; the queued ones were dropped";
}

TEST(SerialWorker, ANeverUsedWorkerHasNoThreadToJoin) {
  SerialWorker worker;
  worker.drain();
}

}  // namespace
}  // namespace ocltune
