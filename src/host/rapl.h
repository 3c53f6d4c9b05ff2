#pragma once
// CPU package energy from Linux RAPL through the powercap sysfs interface, and the
// cgroup CPU time of tasks it is split by.
//
// Every reader takes a root directory (powercap root, cgroup directory) so tests can
// point it at a fake tree. See docs/design-accounting.md, "CPU energy (RAPL)".

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace rota::host {

// One top-level RAPL package zone, e.g. <root>/intel-rapl:0 named "package-0".
struct RaplDomain {
  std::string zone;  // directory name: "intel-rapl:0"
  std::string name;  // contents of `name`: "package-0", "package-1-die-0"
  std::string path;  // <powercap_root>/<zone>
  uint64_t max_energy_range_uj = 0;
  // Why the energy of this package cannot be read ("" when it can), naming the file:
  // e.g. "<path>/energy_uj: permission denied (readable by root only since Linux
  // 5.10...)". Such a domain is listed, never dropped silently.
  std::string unavailable;

  bool readable() const { return unavailable.empty(); }
};

// The RAPL package zones under powercap_root, in zone-number order:
//  - top-level zones `intel-rapl:N` and `amd-rapl:N` whose name starts with "package-"
//    (one per package, or per die on multi-die parts; AMD CPUs appear as intel-rapl
//    on mainline kernels);
//  - left out: subzones (`intel-rapl:0:0`: core, uncore, dram — part of the package or
//    not CPU), `psys` (platform energy, which includes the package: it would count
//    twice), the `intel-rapl-mmio:N` zones (the same package counter read through
//    MMIO: it would count twice) and the control-type directories themselves.
// A package zone whose name, max_energy_range_uj or energy_uj cannot be read or parsed
// is listed with `unavailable` set. Errors (code Unavailable, message "RAPL not
// available: <why>"): powercap_root does not exist or cannot be listed, or holds no
// package zone. Thread-safe (no state).
Result<std::vector<RaplDomain>> FindRaplPackages(
    const std::string& powercap_root = "/sys/class/powercap");

struct RaplReading {
  // Energy of all packages since the meter's first successful Read, in millijoules.
  // The sub-millijoule remainder is kept by the meter, so nothing is lost to rounding.
  uint64_t energy_mj = 0;
  // Packages whose counter was read this time.
  uint32_t packages = 0;
  // One line per package that added nothing this time although it was known before
  // or is listed: unreadable, disappeared, counter reset or implausible jump (its
  // baseline restarted). Empty in the normal case.
  std::vector<std::string> notes;
};

// Cumulative CPU package energy from the powercap counters. Not thread-safe: one
// caller (the agent's sampling loop) owns it. `clock` must outlive the meter.
//
// Per package, between two reads:
//  - energy_uj went forward: the difference;
//  - energy_uj went back: the counter wrapped (it counts 0..max_energy_range_uj and
//    starts again at 0), so (max_energy_range_uj - prev) + cur. The true step from
//    max_energy_range_uj to 0 is one hardware energy unit (15-61 uJ, not exposed in
//    sysfs), so each wrap undercounts by at most that: < 1e-9 of the wrapped range;
//  - implausible (more than max_package_watts over the time since the last read plus
//    one second, a value above max_energy_range_uj, or the range changed): the counter
//    was reset or the zone replaced; nothing is added and the baseline restarts there.
//    A counter reset looks like a wrap and is caught by this check unless it happened
//    close to the top of the range (then the error is small).
//  - a package that cannot be read, disappears or appears adds nothing this time and
//    starts from a new baseline on its next read.
// The counter wraps after max_energy_range_uj (about 262 kJ, or 65 kJ on parts with a
// 15.3 uJ unit: ~130 s at 500 W); Read must be called more often than that, or
// whole wraps are missed.
class RaplMeter {
 public:
  // Package power above which a counter step is not believed (watts).
  static constexpr double kDefaultMaxPackageWatts = 1000;

  explicit RaplMeter(std::string powercap_root = "/sys/class/powercap",
                     Clock& clock = RealClock::Get(),
                     double max_package_watts = kDefaultMaxPackageWatts);
  RaplMeter(const RaplMeter&) = delete;
  RaplMeter& operator=(const RaplMeter&) = delete;

  // Lists the package zones again (packages may come and go) and reads each counter.
  // The first successful call returns energy_mj 0. Error (code Unavailable, "RAPL not
  // available: <why>", naming the file) when the zones cannot be listed or no
  // package's counter can be read; the baselines of packages not read are dropped.
  Result<RaplReading> Read();

 private:
  struct Baseline {
    std::string name;
    uint64_t max_uj = 0;
    uint64_t energy_uj = 0;
    int64_t read_ms = 0;  // clock's monotonic time of the read
  };

  std::string root_;
  Clock& clock_;
  double max_package_watts_;
  std::map<std::string, Baseline> baselines_;  // by zone
  uint64_t total_uj_ = 0;
};

// Parses the text of a cgroup v2 `cpu.stat` and returns its `usage_usec`: the CPU
// time of the cgroup's processes since it was created. InvalidArgument when the line is
// missing or its value is not a decimal number.
Result<uint64_t> ParseCpuStatUsageUsec(std::string_view text);

// The CPU time of the cgroup at cgroup_dir since it was made, in microseconds:
//  - cgroup v1 with the cpuacct controller: <cgroup_dir>/cpuacct.usage (nanoseconds,
//    rounded down), when that file exists;
//  - else cgroup v2: usage_usec of <cgroup_dir>/cpu.stat (the file exists whether or
//    not the cpu controller is enabled).
// Errors name the file: NotFound when the cgroup is gone, IoError when unreadable,
// InvalidArgument when malformed (a v1 cpu-only cgroup's cpu.stat has no usage_usec).
Result<uint64_t> ReadCgroupCpuUsageUsec(const std::string& cgroup_dir);

// The CPU time of a task from the first of its cgroup directories that counts it
// (v1: the cpuacct one; v2: the only one). Error when none does: NotFound when the
// first is gone (the task ended), else the reasons of each, joined by "; ".
Result<uint64_t> ReadTaskCpuUsageUsec(const std::vector<std::string>& cgroup_dirs);

// (How package energy is split between tasks by CPU time is accounting's:
// accounting/cpu_energy.h.)

}  // namespace rota::host
