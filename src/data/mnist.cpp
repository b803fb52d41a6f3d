// MNIST-format folders: the four IDX files found as is or gzip'd, checked against each other,
// converted to float32 images in [0, 1] and int64 labels.
#include "tensorlet/data/mnist.h"

#include <filesystem>

#include "tensorlet/io/idx.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::data::datasets {
namespace {

constexpr const char* kOp = "tl::data::datasets::MNIST";

// root/name, or root/name.gz when only that exists.
std::string find_file(const std::string& root, const std::string& name) {
  const std::filesystem::path plain = std::filesystem::path(root) / name;
  if (std::filesystem::exists(plain)) return plain.string();
  const std::filesystem::path gz = std::filesystem::path(root) / (name + ".gz");
  if (std::filesystem::exists(gz)) return gz.string();
  fail<IOError>(kOp, plain.string(), ": no such file (nor ", gz.filename().string(),
                "); Fashion-MNIST comes with Debian's dataset-fashion-mnist, in ",
                kFashionMnistRoot);
}

Tensor read_images(const std::string& root, bool train) {
  const std::string path =
      find_file(root, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte");
  const Tensor raw = load_idx(path);
  TL_CHECK(raw.dtype() == kUInt8 && raw.dim() == 3, IOError, kOp, path,
           ": expected uint8 images [N, rows, cols], got ", raw.dtype(), " ", raw.shape());
  return (raw.to(kFloat32) / 255.0).unsqueeze(1);
}

Tensor read_labels(const std::string& root, bool train, int64_t n) {
  const std::string path =
      find_file(root, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte");
  const Tensor raw = load_idx(path);
  TL_CHECK(raw.dtype() == kUInt8 && raw.dim() == 1 && raw.size(0) == n, IOError, kOp, path,
           ": expected ", n, " uint8 labels (one per image), got ", raw.dtype(), " ", raw.shape());
  return raw.to(kInt64);
}

std::pair<Tensor, Tensor> read_both(const std::string& root, bool train) {
  Tensor images = read_images(root, train);
  Tensor labels = read_labels(root, train, images.size(0));
  return {std::move(images), std::move(labels)};
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode)
    : MNIST(read_both(root, mode == Mode::kTrain), mode == Mode::kTrain) {}

MNIST::MNIST(std::pair<Tensor, Tensor> images_labels, bool train)
    : TensorDataset(std::move(images_labels.first), std::move(images_labels.second)),
      train_(train) {}

}  // namespace tensorlet::data::datasets
