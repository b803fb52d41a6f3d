// The CPUs a container's quota lets this process use (cgroup v2 cpu.max, or v1's CFS quota), so
// the default thread count does not exceed what the scheduler will run at once.
#pragma once

#include <string>

namespace tensorlet {

// ceil(quota / period) of this process's cgroup, or 0 when it sets no limit (or none is readable).
int cgroup_cpu_limit();

// The CPUs of a cgroup v2 cpu.max line ("max 100000": 0, "250000 100000": 3); 0 when malformed.
int cpus_of_cpu_max(const std::string& line);

}  // namespace tensorlet
