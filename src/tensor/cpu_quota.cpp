// cgroup_cpu_limit: reads the CPU bandwidth limit of the cgroup this process runs in.
//
// Why: a container may see 16 CPUs but be allowed 8 CPUs' worth of time per period. OpenMP then
// starts 16 threads that spin between parallel regions (libgomp's busy wait, sized by the CPUs it
// sees), the quota is spent spinning, and the whole group is throttled until the next period: a
// LeNet epoch took 47 s on 16 threads where 8 took 3.3 s (bench/RESULTS.md, T5).
#include "tensorlet/tensor/cpu_quota.h"

#include <fstream>
#include <sstream>
#include <string>

namespace tensorlet {
namespace {

// The cgroup v2 path of this process ("0::/path"), "" when not on v2.
std::string cgroup_v2_path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

int ceil_ratio(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>((quota + period - 1) / period);
}

int from_cpu_max(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  return std::getline(in, line) ? cpus_of_cpu_max(line) : 0;
}

int from_cfs(const std::string& folder) {
  std::ifstream q(folder + "/cpu.cfs_quota_us"), p(folder + "/cpu.cfs_period_us");
  long long quota = 0, period = 0;
  if (!(q >> quota) || !(p >> period)) return 0;
  return ceil_ratio(quota, period);  // quota -1: no limit
}

}  // namespace

int cpus_of_cpu_max(const std::string& line) {
  std::istringstream in(line);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max") return 0;
  try {
    return ceil_ratio(std::stoll(quota), period);
  } catch (...) {
    return 0;
  }
}

int cgroup_cpu_limit() {
  // v2: the group's own file (seen at the root of a container's namespace, or under its path),
  // then the root's; the tightest limit of the two wins.
  int limit = 0;
  auto tighten = [&](int l) {
    if (l > 0 && (limit == 0 || l < limit)) limit = l;
  };
  const std::string path = cgroup_v2_path();
  if (!path.empty() && path != "/") tighten(from_cpu_max("/sys/fs/cgroup" + path + "/cpu.max"));
  tighten(from_cpu_max("/sys/fs/cgroup/cpu.max"));
  if (limit == 0) {
    tighten(from_cfs("/sys/fs/cgroup/cpu"));
    tighten(from_cfs("/sys/fs/cgroup/cpu,cpuacct"));
  }
  return limit;
}

}  // namespace tensorlet
