// tl::data::datasets::MNIST: the MNIST-format files of a folder (MNIST, Fashion-MNIST: Debian's
// dataset-fashion-mnist puts them in /usr/share/datasets/fashion-mnist), plain or gzip'd, as
// float32 images [N, 1, 28, 28] in [0, 1] and int64 labels, as LibTorch's datasets::MNIST.
#pragma once

#include <string>
#include <utility>

#include "tensorlet/data/dataset.h"

namespace tensorlet::data::datasets {

class MNIST : public TensorDataset {
 public:
  enum class Mode { kTrain, kTest };
  // Reads {train,t10k}-images-idx3-ubyte and {train,t10k}-labels-idx1-ubyte (each as is or with
  // .gz) from root. IOError naming the file for a missing or corrupt one, or images and labels
  // that do not fit (not [N, rows, cols] uint8, not N uint8 labels).
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  bool is_train() const noexcept { return train_; }
  const Tensor& images() const { return data(); }

 private:
  MNIST(std::pair<Tensor, Tensor> images_labels, bool train);
  bool train_;
};

// Where Debian's dataset-fashion-mnist installs Fashion-MNIST.
inline constexpr const char* kFashionMnistRoot = "/usr/share/datasets/fashion-mnist";

}  // namespace tensorlet::data::datasets
