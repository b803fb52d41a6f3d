// The C++ half of the file round trips against NumPy and safetensors (io_roundtrip.py): loads
// every .npy, .npz and .safetensors file of IN_DIR, moves the tensors to DEVICE, and saves them
// again under the same names in OUT_DIR, so Python can check we read what they wrote and they
// read what we wrote, bit for bit. usage: io_roundtrip IN_DIR OUT_DIR DEVICE
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace tl = tensorlet;
namespace fs = std::filesystem;

namespace {

tl::TensorMap to_device(const tl::TensorMap& tensors, tl::Device device) {
  tl::TensorMap out;
  for (const auto& [name, t] : tensors) out.emplace(name, t.to(device));
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: io_roundtrip IN_DIR OUT_DIR DEVICE\n");
    return 2;
  }
  const fs::path in = argv[1], out = argv[2];
  const tl::Device device = tl::Device::parse(argv[3]);
  fs::create_directories(out);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(in)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  int npy = 0, npz = 0, safetensors = 0;
  try {
    for (const fs::path& path : files) {
      const std::string name = path.filename().string();
      const std::string target = (out / name).string();
      if (ends_with(name, ".npy")) {
        tl::save(target, tl::load(path.string()).to(device));
        ++npy;
      } else if (ends_with(name, ".npz")) {
        const bool compressed = name.find("compressed") != std::string::npos;
        tl::save_npz(target, to_device(tl::load_npz(path.string()), device), compressed);
        ++npz;
      } else if (ends_with(name, ".safetensors")) {
        tl::TensorMap loaded = tl::load_safetensors(path.string(), device);
        for (const auto& [key, t] : loaded)
          if (t.device() != device) {
            std::fprintf(stderr, "%s: %s loaded on the wrong device\n", name.c_str(), key.c_str());
            return 1;
          }
        tl::save_safetensors(target, loaded, tl::load_safetensors_metadata(path.string()));
        ++safetensors;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_roundtrip: %s\n", e.what());
    return 1;
  }
  std::printf("io_roundtrip %s: %d .npy, %d .npz, %d .safetensors re-saved\n", argv[3], npy, npz,
              safetensors);
  return 0;
}
