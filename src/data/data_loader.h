// tl::data::DataLoader: batches of a dataset in order or shuffled (a Generator's permutation per
// epoch); for a GPU the next batch prepared by a background thread (gathered and pinned) while
// the caller works on the current one, then copied non_blocking to the device.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tensorlet/data/dataset.h"
#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/generator.h"

namespace tensorlet::data {

struct DataLoaderOptions {
  DataLoaderOptions& batch_size(size_t v) {
    batch_size_ = v;
    return *this;
  }
  DataLoaderOptions& shuffle(bool v) {
    shuffle_ = v;
    return *this;
  }
  DataLoaderOptions& drop_last(bool v) {
    drop_last_ = v;
    return *this;
  }
  // The shuffle's generator (default: tensorlet's).
  DataLoaderOptions& generator(Generator g) {
    generator_ = std::move(g);
    return *this;
  }
  // Where batches go (default: where the dataset keeps them). A CUDA device gets batches staged
  // in pinned memory and copied non_blocking on the current stream.
  DataLoaderOptions& device(Device d) {
    device_ = d;
    return *this;
  }
  // Batches prepared ahead by the background thread (0: none, no thread). The default is 2 when
  // batches go to a CUDA device and 0 otherwise (torch's num_workers=0): CPU training keeps all
  // the cores for its OpenMP team, whose threads spin at each barrier, so that any other busy
  // thread stalls every parallel op (one busy process beside the book's LeNet on 2 cores: 51 s
  // an epoch instead of 2.7 s).
  DataLoaderOptions& prefetch(size_t v) {
    prefetch_ = v;
    return *this;
  }

  size_t batch_size_ = 1;
  bool shuffle_ = false;
  bool drop_last_ = false;
  std::optional<Generator> generator_;
  std::optional<Device> device_;
  // kAutoPrefetch: the default above. (A plain size_t: an std::optional here made GCC 12's ASan
  // build warn of an uninitialized Generator in the options' copy.)
  static constexpr size_t kAutoPrefetch = static_cast<size_t>(-1);
  size_t prefetch_ = kAutoPrefetch;
  // The prefetch depth in effect.
  size_t prefetch_depth() const {
    if (prefetch_ != kAutoPrefetch) return prefetch_;
    return device_ && device_->is_cuda() ? 2 : 0;
  }
};

class DataLoader {
 public:
  // Error naming tl::data::DataLoader for a null dataset or a batch size of 0.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Batches per epoch.
  size_t size() const;

  // One epoch: `for (const Example& batch : loader)`. begin() starts a new epoch (a new
  // permutation when shuffling), ending any epoch in progress. An error raised while a batch is
  // prepared is rethrown where the loop asks for that batch.
  class Iterator {
   public:
    const Example& operator*() const { return current_; }
    const Example* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done_ == other.done_; }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, bool done);
    DataLoader* loader_;
    Example current_;
    bool done_;
  };
  Iterator begin();
  Iterator end() { return Iterator(this, true); }

 private:
  void start_epoch();
  void stop();
  // The next batch on its way (gathered, pinned) or nullopt at the epoch's end.
  std::optional<Example> next_prepared();
  Example prepare(size_t batch) const;
  Example deliver(Example batch) const;

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::vector<size_t> order_;
  size_t next_batch_ = 0;  // without a thread: the next batch to prepare

  // The background thread's queue.
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Example> ready_;
  std::exception_ptr error_;
  bool worker_done_ = false;
  bool stopping_ = false;
};

}  // namespace tensorlet::data
