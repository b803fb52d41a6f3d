// tl::data: TensorDataset's rows and batches; the DataLoader's epochs (order, last batch,
// drop_last, a seeded shuffle that is a permutation and differs between epochs, the same batches
// with and without the background thread, a loop left early, an error raised in the thread
// reaching the loop, batches on the asked device); MNIST-format folders written here (plain and
// gzip'd) and, when Debian's dataset-fashion-mnist is installed, Fashion-MNIST itself; bad input.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#if defined(TL_TEST_WITH_ZLIB)
#include <zlib.h>
#endif

#include "test_util.h"

namespace data = tl::data;
namespace fs = std::filesystem;
using tl::Tensor;
using tl_test::check_throws;

namespace {

std::shared_ptr<data::TensorDataset> numbered(int64_t n) {
  return std::make_shared<data::TensorDataset>(tl::arange(n, tl::kFloat32).view({n, 1}) * 10.0,
                                               tl::arange(n, tl::kInt64));
}

// The targets of every batch of one epoch, in order.
std::vector<std::vector<int64_t>> epoch(data::DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const data::Example& b : loader) {
    const Tensor t = b.target.cpu();
    out.emplace_back(static_cast<const int64_t*>(t.data_ptr()),
                     static_cast<const int64_t*>(t.data_ptr()) + t.numel());
    CHECK(tl::equal(b.data.cpu().view({-1}), t.to(tl::kFloat32) * 10.0));
  }
  return out;
}

// A dataset whose example `bad` throws.
struct Faulty : data::Dataset {
  size_t bad;
  explicit Faulty(size_t b) : bad(b) {}
  data::Example get(size_t i) const override {
    if (i == bad) tl::fail<tl::IndexError>("Faulty::get", "example ", i, " is unreadable");
    return {tl::full({2}, static_cast<double>(i)), tl::scalar_tensor(static_cast<int64_t>(i))};
  }
  size_t size() const override { return 10; }
};

std::string temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("tl_data_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d.string();
}

void write_idx(const std::string& path, const std::vector<uint8_t>& header,
               const std::vector<uint8_t>& body, bool gz) {
  std::vector<uint8_t> bytes = header;
  bytes.insert(bytes.end(), body.begin(), body.end());
#if defined(TL_TEST_WITH_ZLIB)
  if (gz) {
    gzFile f = gzopen((path + ".gz").c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    return;
  }
#else
  (void)gz;
#endif
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("data::TensorDataset: rows and batches") {
  const auto ds = numbered(7);
  CHECK(ds->size() == 7);
  CHECK(ds->get(3).target.item<int64_t>() == 3);
  CHECK(ds->get(3).data.shape() == tl::Shape{1});
  const data::Example b = ds->get_batch({6, 0, 2});
  CHECK(tl::equal(b.target, tl::from_vector<int64_t>({6, 0, 2}, {3})));
  CHECK(b.data.shape() == tl::Shape{3, 1});
  // The default get_batch stacks get()'s.
  const Faulty f(100);
  CHECK(tl::equal(f.get_batch({1, 4}).target, tl::from_vector<int64_t>({1, 4}, {2})));
}

TEST_CASE("data::DataLoader: order, last batch, drop_last, seeded shuffles, prefetch") {
  const auto ds = numbered(10);
  data::DataLoader plain(ds, data::DataLoaderOptions().batch_size(4));
  CHECK(plain.size() == 3);
  CHECK(epoch(plain) == std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  data::DataLoader dropping(ds, data::DataLoaderOptions().batch_size(4).drop_last(true));
  CHECK(dropping.size() == 2);
  CHECK(epoch(dropping).size() == 2);

  auto shuffled = [&](uint64_t seed, size_t prefetch) {
    tl::Generator g(seed);
    data::DataLoader loader(
        ds, data::DataLoaderOptions().batch_size(3).shuffle(true).generator(g).prefetch(prefetch));
    return std::make_pair(epoch(loader), epoch(loader));
  };
  const auto [first, second] = shuffled(5, 2);
  std::multiset<int64_t> seen;
  for (const auto& b : first) seen.insert(b.begin(), b.end());
  CHECK(seen == std::multiset<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(first != second);                   // a new permutation each epoch
  CHECK(shuffled(5, 2) == shuffled(5, 0));  // the thread changes nothing but the timing
  CHECK(shuffled(5, 1).first != shuffled(6, 1).first);

  // A loop left early, then a new epoch from the start.
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(2));
  for (const data::Example& b : loader) {
    CHECK(b.target[0].item<int64_t>() == 0);
    break;
  }
  CHECK(epoch(loader).size() == 5);
  // An empty dataset has no batches.
  data::DataLoader none(numbered(0), data::DataLoaderOptions().batch_size(2));
  CHECK(epoch(none).empty());
}

TEST_CASE("data::DataLoader: an error in the background thread reaches the loop; devices") {
  for (size_t prefetch : {size_t{0}, size_t{2}}) {
    INFO("prefetch " << prefetch);
    data::DataLoader loader(std::make_shared<Faulty>(5),
                            data::DataLoaderOptions().batch_size(2).prefetch(prefetch));
    int batches = 0;
    check_throws<tl::IndexError>(
        [&] {
          for (const data::Example& b : loader) {
            (void)b;
            ++batches;
          }
        },
        "example 5 is unreadable");
    CHECK(batches == 2);
  }
  for (const tl::Device device : tl_test::test_devices()) {
    data::DataLoader loader(numbered(9), data::DataLoaderOptions().batch_size(4).device(device));
    for (const data::Example& b : loader) {
      CHECK(b.data.device() == device);
      CHECK(b.target.device() == device);
    }
    CHECK(epoch(loader).size() == 3);
  }
}

TEST_CASE("data::datasets::MNIST: a folder of IDX files, plain and gzip'd") {
  const std::string root = temp_dir();
  const int64_t n = 5;
  std::vector<uint8_t> pixels(static_cast<size_t>(n * 28 * 28));
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7 % 256);
  const std::vector<uint8_t> labels = {3, 1, 4, 1, 5};
  const std::vector<uint8_t> image_header = {0, 0, 8, 3, 0, 0, 0, n, 0, 0, 0, 28, 0, 0, 0, 28};
  write_idx(root + "/train-images-idx3-ubyte", image_header, pixels, false);
  write_idx(root + "/train-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, n}, labels, true);
  const data::datasets::MNIST train(root);
  CHECK(train.is_train());
  CHECK(train.size() == 5);
  CHECK(train.images().shape() == tl::Shape{5, 1, 28, 28});
  CHECK(train.images().dtype() == tl::kFloat32);
  CHECK(train.targets().dtype() == tl::kInt64);
  CHECK(tl::equal(train.targets(), tl::from_vector<int64_t>({3, 1, 4, 1, 5}, {5})));
  CHECK(train.images().view({-1})[29].item<float>() == doctest::Approx((29 * 7 % 256) / 255.0));
  // No test files: an IOError naming the one missing; labels that do not fit the images.
  check_throws<tl::IOError>(
      [&] { data::datasets::MNIST(root, data::datasets::MNIST::Mode::kTest); },
      "t10k-images-idx3-ubyte");
  write_idx(root + "/t10k-images-idx3-ubyte", image_header, pixels, false);
  write_idx(root + "/t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 2}, {1, 2}, false);
  check_throws<tl::IOError>(
      [&] { data::datasets::MNIST(root, data::datasets::MNIST::Mode::kTest); },
      "expected 5 uint8 labels");
  fs::remove_all(root);
}

TEST_CASE("data::datasets::MNIST reads Debian's Fashion-MNIST when it is installed") {
  if (!fs::exists(data::datasets::kFashionMnistRoot)) {
    MESSAGE("skipped: no " << data::datasets::kFashionMnistRoot
                           << " (apt-get install dataset-fashion-mnist)");
    return;
  }
  const data::datasets::MNIST test(data::datasets::kFashionMnistRoot,
                                   data::datasets::MNIST::Mode::kTest);
  CHECK(test.size() == 10000);
  CHECK(tl::amin(test.targets()).item<int64_t>() == 0);
  CHECK(tl::amax(test.targets()).item<int64_t>() == 9);
  CHECK(tl::amax(test.images()).item<float>() <= 1.0f);
}

TEST_CASE("bad input: tl::data") {
  check_throws<tl::ShapeError>(
      [] {
        data::TensorDataset(tl::ones({3, 2}), tl::ones({4}));
      },
      "[tl::data::TensorDataset]");
  check_throws<tl::ShapeError>([] { data::TensorDataset(tl::scalar_tensor(1.0), tl::ones({1})); },
                               "dim 0");
  check_throws<tl::Error>([] { data::TensorDataset(Tensor(), tl::ones({1})); },
                          "[tl::data::TensorDataset]");
  check_throws<tl::IndexError>([] { (void)numbered(3)->get(3); }, "out of range");
  check_throws<tl::IndexError>([] { (void)numbered(3)->get_batch({0, 9}); }, "out of range");
  check_throws<tl::Error>([] { data::DataLoader(nullptr); }, "[tl::data::DataLoader]");
  check_throws<tl::Error>(
      [] { data::DataLoader(numbered(3), data::DataLoaderOptions().batch_size(0)); }, "batch_size");
}
