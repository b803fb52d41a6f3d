// DLPack with LibTorch in the same process (built and run by scripts/gpu-check where python3 has
// torch): tensors made by either side are read and written by the other without a copy (same
// data pointer), for every dtype, contiguous and strided, on the CPU and on cuda:0, with
// LibTorch's default stream and tensorlet's own stream ordered by the exchange.
// Torch's headers come first: their DLPack definitions (1.x) are the ones this file sees.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

// c10's logging defines CHECK too; the tests mean doctest's.
#undef CHECK
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cstring>
#include <filesystem>
#include <vector>

namespace {

namespace tl = tensorlet;

struct DTypePair {
  tl::DType ours;
  at::ScalarType theirs;
};
const DTypePair kPairs[] = {
    {tl::kBool, at::kBool},      {tl::kUInt8, at::kByte},        {tl::kInt8, at::kChar},
    {tl::kInt16, at::kShort},    {tl::kInt32, at::kInt},         {tl::kInt64, at::kLong},
    {tl::kFloat16, at::kHalf},   {tl::kBFloat16, at::kBFloat16}, {tl::kFloat32, at::kFloat},
    {tl::kFloat64, at::kDouble},
};

// Random values of a dtype made by tensorlet (never zeros for the numeric types).
tl::Tensor random_ours(const tl::Shape& shape, tl::DType dtype) {
  if (dtype == tl::kBool) return tl::randint(0, 2, shape, tl::kBool);
  if (tl::is_floating_point(dtype)) return (tl::rand(shape) * 4.0 + 0.5).to(dtype);
  return tl::randint(1, 100, shape, dtype);
}

at::Tensor random_theirs(at::IntArrayRef shape, at::ScalarType dtype) {
  if (dtype == at::kBool) return at::randint(0, 2, shape).to(at::kBool);
  if (at::isFloatingType(dtype)) return (at::rand(shape) * 4.0 + 0.5).to(dtype);
  return at::randint(1, 100, shape).to(dtype);
}

// The elements' bytes in row-major order, read on the host.
std::vector<unsigned char> bytes_of(const tl::Tensor& t) {
  tl::Tensor h = t.cpu().contiguous();
  const auto* p = static_cast<const unsigned char*>(h.data_ptr());
  return {p, p + h.nbytes()};
}
std::vector<unsigned char> bytes_of(const at::Tensor& t) {
  at::Tensor h = t.cpu().contiguous();
  const auto* p = static_cast<const unsigned char*>(h.data_ptr());
  return {p, p + h.nbytes()};
}

// In place on either side: x -> !x for bool, x + 1 otherwise.
void bump(const tl::Tensor& t) {
  tl::Tensor target = t;  // shares t's memory
  if (t.dtype() == tl::kBool)
    target.copy_(t.logical_not());
  else
    target.add_(1);
}
void bump(at::Tensor t) {
  if (t.scalar_type() == at::kBool)
    t.logical_not_();
  else
    t.add_(1);
}

void ours_to_torch(tl::Device device, const DTypePair& d) {
  CAPTURE(device);
  CAPTURE(d.ours);
  tl::Tensor base = random_ours({64, 48}, d.ours).to(device);
  for (const tl::Tensor& t : {base, base.t(), base.slice(0, 3, 60, 2).slice(1, 5)}) {
    at::Tensor theirs = at::fromDLPack(tl::to_dlpack(t));
    CHECK((theirs.data_ptr() == t.data_ptr()));
    CHECK((theirs.sizes().vec() == t.shape().vec()));
    CHECK((theirs.strides().vec() == t.strides().vec()));
    CHECK((theirs.scalar_type() == d.theirs));
    CHECK(theirs.is_cuda() == t.is_cuda());
    CHECK((bytes_of(theirs) == bytes_of(t)));
    // Torch writes on its stream; reading its result back (a synchronous copy there) comes
    // first, so tensorlet's read on its own stream sees the finished write.
    const std::vector<unsigned char> before = bytes_of(t);
    bump(theirs);
    const std::vector<unsigned char> theirs_after = bytes_of(theirs);
    const std::vector<unsigned char> ours_after = bytes_of(t);
    CHECK((ours_after == theirs_after));
    CHECK((ours_after != before));
  }
}

void torch_to_ours(tl::Device device, const DTypePair& d) {
  CAPTURE(device);
  CAPTURE(d.ours);
  const at::Device where = device.is_cuda() ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  at::Tensor base = random_theirs({64, 48}, d.theirs).to(where);
  for (const at::Tensor& theirs : {base, base.t(), base.slice(0, 3, 60, 2).slice(1, 5)}) {
    // Torch's pending kernels on its default stream must be done before ours read.
    at::Tensor fresh = theirs.clone(at::MemoryFormat::Preserve);
    tl::Tensor ours = tl::from_dlpack(at::toDLPack(fresh));
    CHECK((ours.data_ptr() == fresh.data_ptr()));
    CHECK((ours.shape().vec() == fresh.sizes().vec()));
    CHECK((ours.strides().vec() == fresh.strides().vec()));
    CHECK((ours.dtype() == d.ours));
    CHECK((bytes_of(ours) == bytes_of(fresh)));
    bump(ours);  // tensorlet writes on its stream; torch reads on its own
    at::Tensor back = at::fromDLPack(tl::to_dlpack(ours));
    CHECK((bytes_of(back) == bytes_of(fresh)));
    // The memory outlives torch's handle while ours holds it.
    std::vector<unsigned char> expected = bytes_of(fresh);
    fresh = at::Tensor();
    back = at::Tensor();
    CHECK((bytes_of(ours) == expected));
  }
}

TEST_CASE("tensorlet -> LibTorch without a copy, every dtype, CPU") {
  for (const DTypePair& d : kPairs) ours_to_torch(tl::Device::cpu(), d);
}
TEST_CASE("LibTorch -> tensorlet without a copy, every dtype, CPU") {
  for (const DTypePair& d : kPairs) torch_to_ours(tl::Device::cpu(), d);
}
TEST_CASE("tensorlet -> LibTorch without a copy, every dtype, cuda:0") {
  if (!tl::cuda::is_available() || !at::hasCUDA()) return;
  for (const DTypePair& d : kPairs) ours_to_torch(tl::Device::cuda(0), d);
}
TEST_CASE("LibTorch -> tensorlet without a copy, every dtype, cuda:0") {
  if (!tl::cuda::is_available() || !at::hasCUDA()) return;
  for (const DTypePair& d : kPairs) torch_to_ours(tl::Device::cuda(0), d);
}

TEST_CASE("stream ordering: a long kernel on one side is finished before the other reads") {
  if (!tl::cuda::is_available() || !at::hasCUDA()) return;
  // Torch: a chain of big matmuls on its default stream, whose last result tensorlet reads at
  // once on its own (non-blocking) stream.
  at::Tensor a = at::rand({2048, 2048}, at::Device(at::kCUDA, 0));
  for (int round = 0; round < 3; ++round) {
    at::Tensor c = a;
    for (int i = 0; i < 20; ++i) c = at::mm(c, a) / 2048.0;
    tl::Tensor ours = tl::from_dlpack(at::toDLPack(c));
    tl::Tensor sum_ours = ours.sum();
    const double expected = c.sum().item<double>();
    CHECK(sum_ours.item<double>() == doctest::Approx(expected).epsilon(1e-5));
  }
  // Tensorlet: a long chain on its stream, read by torch at once on the legacy default stream.
  tl::Tensor b = tl::rand({2048, 2048}, tl::Device::cuda(0));
  for (int round = 0; round < 3; ++round) {
    tl::Tensor c = b;
    for (int i = 0; i < 20; ++i) c = tl::matmul(c, b) / 2048.0;
    at::Tensor theirs = at::fromDLPack(tl::to_dlpack(c));
    const double got = theirs.sum().item<double>();
    CHECK(got == doctest::Approx(c.sum().item<double>()).epsilon(1e-5));
  }
}

TEST_CASE("README: weights from a safetensors file onto the GPU, then to LibTorch and back") {
  if (!tl::cuda::is_available() || !at::hasCUDA()) return;
  const std::string path =
      (std::filesystem::temp_directory_path() / "tl_readme_model.safetensors").string();
  tl::save_safetensors(path,
                       {{"layer0.weight", tl::randn({16, 32})}, {"layer0.bias", tl::randn({16})}});
  // The README's lines.
  tl::TensorMap weights = tl::load_safetensors(path, tl::Device::cuda(0));
  tl::Tensor w = weights.at("layer0.weight");
  at::Tensor tw = at::fromDLPack(tl::to_dlpack(w));
  at::Tensor y = at::matmul(tw, at::randn({w.size(1), 8}, tw.options()));
  tl::Tensor back = tl::from_dlpack(at::toDLPack(y));
  // What they promise.
  CHECK(w.is_cuda());
  CHECK((tw.data_ptr() == w.data_ptr()));
  CHECK((back.data_ptr() == y.data_ptr()));
  at::Tensor x = at::fromDLPack(tl::to_dlpack(tl::randn({32, 8}, tl::Device::cuda(0))));
  tl::Tensor ours = tl::matmul(w, tl::from_dlpack(at::toDLPack(x)));
  CHECK(
      tl::allclose(ours.cpu(), tl::from_dlpack(at::toDLPack(at::matmul(tw, x).cpu())), 1e-4, 1e-4));
  CHECK((back.shape().vec() == std::vector<int64_t>{16, 8}));
  std::filesystem::remove(path);
}

}  // namespace
